//! Command queues. Each queue has a worker thread that runs its commands in order: it waits
//! for a command's wait list, runs the command's work and completes its event. A command whose
//! wait list holds a failed event fails with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
//! without running, and so do the commands that wait on it.

use crate::cl::*;
use crate::context::Context;
use crate::device::Device;
use crate::event::Event;
use crate::handle::{ClObject, Header, ObjectKind};
use crossbeam::channel::{unbounded, Sender};
use parking_lot::Mutex;
use std::sync::Arc;

/// The work of a command: returns the device's time for it in ns when the device measures or
/// models it, or an error code that fails the event.
pub type Work = Box<dyn FnOnce() -> Result<Option<u64>, cl_int> + Send>;

struct Command {
    event: Arc<Event>,
    wait_for: Vec<Arc<Event>>,
    work: Work,
}

#[repr(C)]
pub struct Queue {
    header: Header,
    pub context: Arc<Context>,
    pub device: Arc<Device>,
    pub properties: cl_command_queue_properties,
    /// The property list as given to clCreateCommandQueueWithProperties (without the 0).
    pub properties_list: Vec<cl_queue_properties>,
    sender: Sender<Command>,
    /// The event of the last command enqueued (what clFinish and barriers wait for).
    last: Mutex<Option<Arc<Event>>>,
}

impl ClObject for Queue {
    const KIND: ObjectKind = ObjectKind::Queue;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Queue {
    pub fn new(
        context: Arc<Context>,
        device: Arc<Device>,
        properties: cl_command_queue_properties,
        properties_list: Vec<cl_queue_properties>,
    ) -> Result<Arc<Self>, cl_int> {
        if !context.has_device(&device) {
            return Err(CL_INVALID_DEVICE);
        }
        let supported = (CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) as u64;
        if properties & !supported != 0 {
            return Err(CL_INVALID_VALUE);
        }
        let (sender, receiver) = unbounded::<Command>();
        std::thread::Builder::new()
            .name(format!("softcl-queue-{}", device.info().name.chars().take(16).collect::<String>()))
            .spawn(move || {
                // The worker ends when the queue (the only sender) is dropped.
                for cmd in receiver {
                    run_command(cmd);
                }
            })
            .map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
        Ok(Arc::new(Self {
            header: Header::new(ObjectKind::Queue),
            context,
            device,
            properties,
            properties_list,
            sender,
            last: Mutex::new(None),
        }))
    }

    pub fn profiling(&self) -> bool {
        self.properties & CL_QUEUE_PROFILING_ENABLE as u64 != 0
    }

    /// Enqueues a command; returns its event. Out-of-order queues run in order too, which the
    /// specification allows.
    pub fn enqueue(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_for: Vec<Arc<Event>>,
        work: Work,
    ) -> Arc<Event> {
        let event = Event::new_command(self, command_type);
        let mut last = self.last.lock();
        *last = Some(event.clone());
        // The receiver lives as long as the worker, which lives as long as this sender.
        let sent = self.sender.send(Command { event: event.clone(), wait_for, work });
        if sent.is_err() {
            event.fail(CL_OUT_OF_RESOURCES);
        }
        event
    }

    /// clFlush: commands are handed to the worker as they are enqueued.
    pub fn flush(&self) {}

    /// clFinish: blocks until every command enqueued so far has completed.
    pub fn finish(&self) {
        let last = self.last.lock().clone();
        if let Some(e) = last {
            e.wait();
        }
    }

    /// The event of the last command enqueued.
    pub fn last_event(&self) -> Option<Arc<Event>> {
        self.last.lock().clone()
    }
}

fn run_command(cmd: Command) {
    let Command { event, wait_for, work } = cmd;
    event.mark_submitted();
    let mut failed = false;
    for dep in &wait_for {
        failed |= dep.wait() < 0;
    }
    if failed {
        event.fail(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        return;
    }
    event.mark_running();
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(Ok(device_ns)) => event.mark_complete(device_ns),
        Ok(Err(e)) => event.fail(e),
        Err(_) => {
            eprintln!("SoftCL: internal error while running a command");
            event.fail(CL_OUT_OF_RESOURCES)
        }
    }
}
