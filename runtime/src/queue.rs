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
use std::sync::{Arc, Weak};

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
    /// The property list as given to clCreateCommandQueueWithProperties, with its terminating
    /// 0 (CL_QUEUE_PROPERTIES_ARRAY); empty for clCreateCommandQueue or a NULL list.
    pub properties_list: Vec<cl_queue_properties>,
    sender: Sender<Command>,
    /// The event of the last command enqueued (what clFinish waits for). Weak: an event holds
    /// its queue, so a strong reference here would keep the queue (and its worker) alive
    /// forever. While the command is pending its event is held by the worker's channel; once
    /// dropped, the command has completed.
    last: Mutex<Weak<Event>>,
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
            last: Mutex::new(Weak::new()),
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
        // Holding the lock while sending keeps `last` and the channel order consistent.
        let mut last = self.last.lock();
        *last = Arc::downgrade(&event);
        // The receiver lives as long as the worker, which lives as long as this sender.
        let sent = self.sender.send(Command { event: event.clone(), wait_for, work });
        if sent.is_err() {
            event.fail(CL_OUT_OF_RESOURCES);
        }
        event
    }

    /// clFlush: commands are handed to the worker as they are enqueued.
    pub fn flush(&self) {}

    /// clFinish: blocks until every command enqueued so far has completed (the worker runs
    /// commands in order, so the last one completes after all the others).
    pub fn finish(&self) {
        if let Some(e) = self.last_event() {
            e.wait();
        }
    }

    /// The event of the last command enqueued, while that command has not completed and been
    /// let go by the worker (None: every command enqueued so far has completed).
    pub fn last_event(&self) -> Option<Arc<Event>> {
        self.last.lock().upgrade()
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

/// A queue on the platform's first device, for unit tests.
#[cfg(test)]
pub(crate) fn test_queue(properties: cl_command_queue_properties) -> Arc<Queue> {
    let device = crate::platform::platform().devices[0].clone();
    let context = Context::new(vec![device.clone()], Vec::new(), None).expect("context");
    Queue::new(context, device, properties, Vec::new()).expect("queue")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    fn counting_work(counter: &Arc<AtomicUsize>) -> Work {
        let counter = counter.clone();
        Box::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(None)
        })
    }

    #[test]
    fn commands_run_in_order_and_finish_waits_for_all() {
        let q = test_queue(0);
        let order = Arc::new(Mutex::new(Vec::new()));
        for i in 0..50 {
            let order = order.clone();
            q.enqueue(
                CL_COMMAND_MARKER,
                Vec::new(),
                Box::new(move || {
                    if i % 10 == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    order.lock().push(i);
                    Ok(None)
                }),
            );
        }
        q.finish();
        assert_eq!(*order.lock(), (0..50).collect::<Vec<_>>());
        assert!(q.last_event().is_none(), "every command completed and was let go");
    }

    #[test]
    fn work_error_fails_the_event() {
        let q = test_queue(0);
        let e = q.enqueue(CL_COMMAND_NDRANGE_KERNEL, Vec::new(), Box::new(|| Err(CL_OUT_OF_RESOURCES)));
        assert_eq!(e.wait(), CL_OUT_OF_RESOURCES);
    }

    #[test]
    fn released_queue_still_runs_enqueued_work() {
        let q = test_queue(0);
        let gate = Event::new_user(q.context.clone());
        let ran = Arc::new(AtomicUsize::new(0));
        let e = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], counting_work(&ran));
        for _ in 0..10 {
            q.enqueue(CL_COMMAND_MARKER, Vec::new(), counting_work(&ran));
        }
        let weak = Arc::downgrade(&q);
        drop(q);
        assert!(weak.upgrade().is_some(), "pending commands keep the queue alive");
        gate.set_user_status(CL_COMPLETE as cl_int).unwrap();
        assert_eq!(e.wait(), CL_COMPLETE as cl_int);
        let queue = e.queue.clone().unwrap();
        queue.finish();
        assert_eq!(ran.load(Ordering::SeqCst), 11);
    }

    #[test]
    fn queue_is_freed_once_its_commands_are_done() {
        let q = test_queue(0);
        let ran = Arc::new(AtomicUsize::new(0));
        let e = q.enqueue(CL_COMMAND_MARKER, Vec::new(), counting_work(&ran));
        e.wait();
        drop(e);
        q.finish();
        // Only the worker's transient references may remain; give it a moment to let go.
        for _ in 0..1000 {
            if Arc::strong_count(&q) == 1 {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(Arc::strong_count(&q), 1, "no reference cycle between the queue and its events");
    }

    #[test]
    fn long_dependency_chain_runs_and_drops_without_deep_recursion() {
        let q = test_queue(0);
        let gate = Event::new_user(q.context.clone());
        let mut prev = gate.clone();
        let mut events = Vec::new();
        for _ in 0..20_000 {
            let e = q.enqueue(CL_COMMAND_MARKER, vec![prev.clone()], Box::new(|| Ok(None)));
            prev = e.clone();
            events.push(e);
        }
        gate.set_user_status(-42).unwrap();
        assert_eq!(prev.wait(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        drop(events);
        drop(prev);
        q.finish();
    }
}
