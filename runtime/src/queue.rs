//! Command queues. Each queue has a worker thread that runs its commands in order: it waits
//! for a command's wait list, runs the command's work and completes its event. A command whose
//! wait list holds a failed event fails with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
//! without running, and so do the commands that wait on it.
//!
//! Latency: the pending commands sit in one list that the worker and any thread blocked in
//! clFinish, clWaitForEvents or a blocking transfer on this queue take commands from, one at a
//! time and in order (a `busy` flag: at most one command of a queue runs at any moment, so the
//! queue stays in order and profiling intervals never overlap). A thread that would otherwise
//! sleep until the worker wakes up and runs the command runs it itself (except kernels with
//! more private memory than any application thread's stack surely holds). The worker spins
//! briefly before sleeping, so that back-to-back enqueues do not each pay a thread wake-up.

use crate::cl::*;
use crate::context::Context;
use crate::device::Device;
use crate::event::Event;
use crate::handle::{ClObject, Header, ObjectKind};
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The work of a command: returns the device's time for it in ns when the device measures or
/// models it, or an error code that fails the event.
pub type Work = Box<dyn FnOnce() -> Result<Option<u64>, cl_int> + Send>;

/// How long the worker polls for a next command before it sleeps.
const WORKER_SPIN: Duration = Duration::from_micros(50);

struct Command {
    event: Arc<Event>,
    wait_for: Vec<Arc<Event>>,
    work: Work,
    /// The command may run on an application thread that helps (see the module
    /// documentation); false for kernels whose private memory may not fit in the stack of an
    /// arbitrary thread, which only the worker runs.
    any_thread: bool,
}

/// The commands of a queue, shared by the queue and its worker thread.
struct Pending {
    commands: VecDeque<Command>,
    /// A command taken from `commands` is running (on the worker or a helping thread).
    busy: bool,
    /// Commands enqueued so far (their sequence numbers are 1, 2, ...).
    enqueued: u64,
    /// Commands completed so far: all of 1..=done (they complete in order).
    done: u64,
    /// The queue was dropped: the worker ends once `commands` is empty.
    closed: bool,
}

struct Shared {
    pending: Mutex<Pending>,
    /// Signalled when a command is enqueued, when a command completes and when the queue is
    /// closed.
    changed: Condvar,
    /// END of the queue's last completed command (host ns): the next one starts no earlier,
    /// so modelled command times (the Gen device) stay ordered on the queue's timeline.
    timeline: AtomicU64,
}

impl Shared {
    /// Takes the next command if no other is running (for a helping thread: if it may run
    /// on any thread); the caller must then pass it to [`Shared::run`].
    fn take(p: &mut Pending, helper: bool) -> Option<Command> {
        if p.busy || (helper && !p.commands.front()?.any_thread) {
            return None;
        }
        let cmd = p.commands.pop_front()?;
        p.busy = true;
        Some(cmd)
    }

    /// Runs a command taken with [`Shared::take`] (the lock is not held).
    fn run(&self, cmd: Command) {
        // `run_command` catches the work's panics; this backstop (a panicking callback) keeps
        // the queue going: `busy` is always cleared.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_command(cmd, &self.timeline))).is_err() {
            eprintln!("SoftCL: internal error while completing a command");
        }
        let mut p = self.pending.lock();
        p.busy = false;
        p.done += 1;
        drop(p);
        self.changed.notify_all();
    }

    /// Runs commands on the calling thread, in order, until `until` holds; sleeps while another
    /// thread runs one.
    fn help(&self, mut until: impl FnMut(&Pending) -> bool) {
        let mut p = self.pending.lock();
        loop {
            if until(&p) {
                return;
            }
            match Shared::take(&mut p, true) {
                Some(cmd) => {
                    drop(p);
                    self.run(cmd);
                    p = self.pending.lock();
                }
                None => self.changed.wait(&mut p),
            }
        }
    }
}

fn worker_main(shared: &Shared) {
    let mut p = shared.pending.lock();
    loop {
        if let Some(cmd) = Shared::take(&mut p, false) {
            drop(p);
            shared.run(cmd);
            // Poll for a while before sleeping: the next command of a batch usually arrives
            // within microseconds, sooner than a sleeping thread wakes.
            let start = Instant::now();
            loop {
                p = shared.pending.lock();
                if !p.commands.is_empty() || p.closed || start.elapsed() >= WORKER_SPIN {
                    break;
                }
                drop(p);
                std::hint::spin_loop();
                std::thread::yield_now();
            }
            continue;
        }
        if p.closed && p.commands.is_empty() {
            return;
        }
        shared.changed.wait(&mut p);
    }
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
    shared: Arc<Shared>,
    /// The event of the last command enqueued. Weak: an event holds its queue, so a strong
    /// reference here would keep the queue (and its worker) alive forever. While the command
    /// is pending its event is held by the pending list; once dropped, it has completed.
    last: Mutex<Weak<Event>>,
}

impl ClObject for Queue {
    const KIND: ObjectKind = ObjectKind::Queue;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Pending commands hold their events, which hold the queue: nothing is pending now.
        self.shared.pending.lock().closed = true;
        self.shared.changed.notify_all();
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
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                commands: VecDeque::new(),
                busy: false,
                enqueued: 0,
                done: 0,
                closed: false,
            }),
            changed: Condvar::new(),
            timeline: AtomicU64::new(0),
        });
        let worker_shared = shared.clone();
        std::thread::Builder::new()
            .name(format!("softcl-queue-{}", device.info().name.chars().take(16).collect::<String>()))
            .spawn(move || worker_main(&worker_shared))
            .map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
        Ok(Arc::new(Self {
            header: Header::new(ObjectKind::Queue),
            context,
            device,
            properties,
            properties_list,
            shared,
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
        self.enqueue_command(command_type, wait_for, work, true)
    }

    /// [`Queue::enqueue`]; `any_thread` false keeps the command off helping application
    /// threads (it runs on the queue's worker).
    pub fn enqueue_command(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_for: Vec<Arc<Event>>,
        work: Work,
        any_thread: bool,
    ) -> Arc<Event> {
        let event = Event::new_command(self, command_type);
        // Holding the lock while pushing keeps `last` and the list order consistent.
        let mut last = self.last.lock();
        *last = Arc::downgrade(&event);
        let mut p = self.shared.pending.lock();
        p.commands.push_back(Command { event: event.clone(), wait_for, work, any_thread });
        p.enqueued += 1;
        drop(p);
        drop(last);
        self.shared.changed.notify_all();
        event
    }

    /// clFlush: commands are handed to the worker as they are enqueued.
    pub fn flush(&self) {}

    /// clFinish: blocks until every command enqueued so far has completed, running pending
    /// commands on the calling thread when the worker has not taken them yet.
    pub fn finish(&self) {
        let target = self.shared.pending.lock().enqueued;
        self.shared.help(|p| p.done >= target);
    }

    /// Blocks until `event` (a command of this queue) has completed, running this queue's
    /// pending commands up to it on the calling thread when the worker has not taken them yet.
    pub(crate) fn run_until(&self, event: &Event) {
        self.shared.help(|_| event.status() <= CL_COMPLETE as cl_int);
    }

    /// The event of the last command enqueued, while that command has not completed and been
    /// let go (None: every command enqueued so far has completed).
    pub fn last_event(&self) -> Option<Arc<Event>> {
        self.last.lock().upgrade()
    }
}

fn run_command(cmd: Command, timeline: &AtomicU64) {
    let Command { event, wait_for, work, .. } = cmd;
    event.mark_submitted();
    let mut failed = false;
    for dep in &wait_for {
        failed |= dep.wait() < 0;
    }
    if failed {
        event.fail(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        return;
    }
    event.mark_running(timeline.load(Ordering::Acquire));
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(Ok(device_ns)) => event.mark_complete(device_ns),
        Ok(Err(e)) => event.fail(e),
        Err(_) => {
            eprintln!("SoftCL: internal error while running a command");
            event.fail(CL_OUT_OF_RESOURCES)
        }
    }
    timeline.fetch_max(event.end_ns(), Ordering::AcqRel);
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
    fn helping_threads_keep_commands_in_order_and_one_at_a_time() {
        let q = test_queue(0);
        let running = Arc::new(AtomicUsize::new(0));
        let order = Arc::new(Mutex::new(Vec::new()));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        q.finish();
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        for i in 0..2000 {
            let (running, order) = (running.clone(), order.clone());
            q.enqueue(
                CL_COMMAND_MARKER,
                Vec::new(),
                Box::new(move || {
                    assert_eq!(running.fetch_add(1, Ordering::SeqCst), 0, "two commands of a queue overlap");
                    order.lock().push(i);
                    running.fetch_sub(1, Ordering::SeqCst);
                    Ok(None)
                }),
            );
            if i % 100 == 0 {
                q.finish();
            }
        }
        q.finish();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*order.lock(), (0..2000).collect::<Vec<_>>());
    }

    #[test]
    fn worker_only_commands_never_run_on_a_waiting_thread() {
        let q = test_queue(0);
        let names = Arc::new(Mutex::new(Vec::new()));
        let mut events = Vec::new();
        for _ in 0..300 {
            let names = names.clone();
            let work: Work = Box::new(move || {
                names.lock().push(std::thread::current().name().unwrap_or("").to_string());
                Ok(None)
            });
            events.push(q.enqueue_command(CL_COMMAND_NDRANGE_KERNEL, Vec::new(), work, false));
        }
        events[150].wait_helping();
        q.finish();
        let names = names.lock();
        assert_eq!(names.len(), 300);
        assert!(names.iter().all(|n| n.starts_with("softcl-queue-")), "{names:?}");
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
