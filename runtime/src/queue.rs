//! Command queues.
//!
//! **In-order queues** have one worker thread that runs their commands in order: it waits for
//! a command's wait list, runs the command's work and completes its event. A command whose
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
//!
//! **Out-of-order queues** (CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) schedule by dependencies:
//! a command is *ready* once every event of its wait list and every command it is ordered
//! after has terminated (completed or failed), and any ready command may start. A command is
//! ordered after the queue's last barrier while that barrier has not completed; a marker or
//! barrier with an empty wait list is ordered after every command enqueued before it that
//! has not completed. Failure propagates through wait lists only: a command whose wait list
//! holds a failed event fails with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, while a
//! command ordered after a failed command by a barrier still runs. Ready commands are run by
//! a set of worker threads that grows on demand (a worker that takes a command while further
//! commands are waiting and no other worker is idle starts one more, up to
//! [`MAX_OOO_WORKERS`]) and shrinks when workers stay idle; threads blocked in clFinish /
//! clWaitForEvents help by running ready commands too. Events of other queues and user
//! events wake the workers through a completion callback registered at enqueue. Profiling:
//! START is no earlier than the END of every command the command depends on or is ordered
//! after, so modelled device times (the Gen device) keep dependent commands ordered on the
//! timeline while independent commands may overlap, as they do when they run concurrently.

use crate::cl::*;
use crate::context::Context;
use crate::device::Device;
use crate::event::Event;
use crate::handle::{ClObject, Header, ObjectKind};
use parking_lot::{Condvar, Mutex, MutexGuard};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

/// The work of a command: returns the device's time for it in ns when the device measures or
/// models it, or an error code that fails the event.
pub type Work = Box<dyn FnOnce() -> Result<Option<u64>, cl_int> + Send>;

/// How long the worker polls for a next command before it sleeps.
const WORKER_SPIN: Duration = Duration::from_micros(50);

/// The most worker threads an out-of-order queue runs commands on at once.
pub const MAX_OOO_WORKERS: usize = 16;

/// How many waiting commands a thread that takes a command looks at for another ready one
/// (see [`another_ready`]).
const SPAWN_SCAN: usize = 64;

/// How long an extra out-of-order worker stays idle before it ends.
const OOO_IDLE: Duration = Duration::from_millis(200);

/// How a command is ordered in an out-of-order queue besides its wait list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncKind {
    /// An ordinary command: ordered after the last barrier only.
    None,
    /// clEnqueueMarkerWithWaitList: with an empty wait list, ordered after every command
    /// enqueued before it.
    Marker,
    /// clEnqueueBarrierWithWaitList: as a marker, and every later command is ordered after it.
    Barrier,
}

struct Command {
    event: Arc<Event>,
    wait_for: Vec<Arc<Event>>,
    /// Out-of-order queues: commands this one runs after without inheriting their failure
    /// (the last barrier; for markers and barriers with an empty wait list, every command
    /// enqueued before).
    after: Vec<Arc<Event>>,
    work: Work,
    /// The command may run on an application thread that helps (see the module
    /// documentation); false for kernels whose private memory may not fit in the stack of an
    /// arbitrary thread, which only the worker runs.
    any_thread: bool,
    /// Sequence number (1, 2, ...).
    seq: u64,
}

impl Command {
    /// Out-of-order queues: every event the command waits for or is ordered after terminated.
    fn ready(&self) -> bool {
        self.wait_for.iter().chain(&self.after).all(|e| e.status() <= CL_COMPLETE as cl_int)
    }
}

/// The commands of a queue, shared by the queue and its worker thread(s).
struct Pending {
    commands: VecDeque<Command>,
    /// In-order queues: a command taken from `commands` is running (on the worker or a
    /// helping thread).
    busy: bool,
    /// Commands enqueued so far (their sequence numbers are 1, 2, ...).
    enqueued: u64,
    /// In-order queues: commands completed so far: all of 1..=done (they complete in order).
    done: u64,
    /// Out-of-order queues: the commands enqueued and not yet terminated, by sequence number.
    incomplete: BTreeMap<u64, Arc<Event>>,
    /// Out-of-order queues: the last barrier enqueued.
    barrier: Option<Arc<Event>>,
    /// Out-of-order queues: worker threads running, and how many of them wait for work.
    workers: usize,
    idle: usize,
    /// The queue was dropped: the worker ends once `commands` is empty.
    closed: bool,
}

struct Shared {
    out_of_order: bool,
    pending: Mutex<Pending>,
    /// Signalled when a command is enqueued, when a command completes (for out-of-order
    /// queues also when an event of another queue or a user event a command waits for
    /// terminates) and when the queue is closed.
    changed: Condvar,
    /// In-order queues: END of the queue's last completed command (host ns): the next one
    /// starts no earlier, so modelled command times (the Gen device) stay ordered on the
    /// queue's timeline.
    timeline: AtomicU64,
    /// The name of worker threads.
    thread_name: String,
}

impl Shared {
    /// Takes the next command that may run now (for a helping thread: one that may run on any
    /// thread); the caller must then pass it to [`Shared::run`].
    fn take(p: &mut Pending, out_of_order: bool, helper: bool) -> Option<Command> {
        if out_of_order {
            let i = p.commands.iter().position(|c| (!helper || c.any_thread) && c.ready())?;
            return p.commands.remove(i);
        }
        if p.busy || (helper && !p.commands.front()?.any_thread) {
            return None;
        }
        let cmd = p.commands.pop_front()?;
        p.busy = true;
        Some(cmd)
    }

    /// Runs a command taken with [`Shared::take`] (the lock is not held).
    fn run(&self, cmd: Command) {
        let seq = cmd.seq;
        // `run_command` catches the work's panics; this backstop (a panicking callback) keeps
        // the queue going: `busy` is always cleared.
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_command(cmd, &self.timeline, self.out_of_order)
        }))
        .is_err()
        {
            eprintln!("SoftCL: internal error while completing a command");
        }
        let mut p = self.pending.lock();
        if self.out_of_order {
            let event = p.incomplete.remove(&seq);
            if let Some(b) = &p.barrier {
                if b.status() <= CL_COMPLETE as cl_int {
                    p.barrier = None;
                }
            }
            drop(p);
            // Dropped outside the lock: the last reference to an event may end its queue.
            drop(event);
        } else {
            p.busy = false;
            p.done += 1;
            drop(p);
        }
        self.changed.notify_all();
    }

    /// Whether every command up to sequence number `target` has terminated.
    fn done_up_to(&self, p: &Pending, target: u64) -> bool {
        if self.out_of_order {
            p.incomplete.keys().next().is_none_or(|&first| first > target)
        } else {
            p.done >= target
        }
    }

    /// Runs commands on the calling thread until `until` holds; sleeps while none can run.
    fn help(self: &Arc<Self>, mut until: impl FnMut(&Shared, &Pending) -> bool) {
        let mut p = self.pending.lock();
        loop {
            if until(self, &p) {
                return;
            }
            match Shared::take(&mut p, self.out_of_order, true) {
                Some(cmd) => {
                    if self.out_of_order {
                        // As a worker does: another ready command gets a worker.
                        wake_ooo(self, p, another_ready);
                    } else {
                        drop(p);
                    }
                    self.run(cmd);
                    p = self.pending.lock();
                }
                None => self.changed.wait(&mut p),
            }
        }
    }
}

/// After a worker ran a command: polls for a while before the worker may sleep, since the
/// next command of a batch usually arrives within microseconds, sooner than a sleeping
/// thread wakes. Returns the lock once a command is pending, the queue is closed, or
/// [`WORKER_SPIN`] has passed.
fn spin_for_next(shared: &Shared) -> MutexGuard<'_, Pending> {
    let start = Instant::now();
    loop {
        let p = shared.pending.lock();
        if !p.commands.is_empty() || p.closed || start.elapsed() >= WORKER_SPIN {
            return p;
        }
        drop(p);
        std::hint::spin_loop();
        std::thread::yield_now();
    }
}

fn worker_main(shared: &Shared) {
    let mut p = shared.pending.lock();
    loop {
        if let Some(cmd) = Shared::take(&mut p, false, false) {
            drop(p);
            shared.run(cmd);
            p = spin_for_next(shared);
            continue;
        }
        if p.closed && p.commands.is_empty() {
            return;
        }
        shared.changed.wait(&mut p);
    }
}

/// Out-of-order queues: when a command can run (`runnable`), wakes the waiting threads and,
/// if no worker waits for work, starts one more worker (up to [`MAX_OOO_WORKERS`]), so
/// that a ready command never waits for busy workers. (Completions notify in
/// [`Shared::run`]; nothing else changes what a waiting thread waits for.)
fn wake_ooo(shared: &Arc<Shared>, mut p: MutexGuard<'_, Pending>, runnable: impl FnOnce(&Pending) -> bool) {
    if !runnable(&p) {
        return;
    }
    let more = p.idle == 0 && p.workers < MAX_OOO_WORKERS && !p.closed;
    if more {
        p.workers += 1;
    }
    drop(p);
    if more && !spawn_ooo_worker(shared, false) {
        shared.pending.lock().workers -= 1;
    }
    shared.changed.notify_all();
}

/// After a take: whether one of the first [`SPAWN_SCAN`] commands waiting is ready. Bounded,
/// as a take happens per command and a long list of commands that wait on each other would
/// make a full scan quadratic; the taking thread goes on taking ready commands after this
/// one, so a command further down is still run (only perhaps not at once on a new worker).
/// Events that make commands ready (completions, callbacks) look at the whole list.
fn another_ready(p: &Pending) -> bool {
    p.commands.iter().take(SPAWN_SCAN).any(Command::ready)
}

/// Starts one more out-of-order worker (the caller counted it in `Pending::workers`).
fn spawn_ooo_worker(shared: &Arc<Shared>, first: bool) -> bool {
    let worker_shared = shared.clone();
    std::thread::Builder::new()
        .name(shared.thread_name.clone())
        .stack_size(softcl_device_model::limits::KERNEL_THREAD_STACK_BYTES)
        .spawn(move || ooo_worker_main(&worker_shared, first))
        .is_ok()
}

/// An out-of-order queue's worker: runs ready commands; the first worker lives as long as the
/// queue, the others end after [`OOO_IDLE`] without work.
fn ooo_worker_main(shared: &Arc<Shared>, first: bool) {
    let mut p = shared.pending.lock();
    loop {
        if let Some(cmd) = Shared::take(&mut p, true, false) {
            // Another command is ready and no worker is idle: one more worker, so that
            // independent commands run concurrently.
            wake_ooo(shared, p, another_ready);
            shared.run(cmd);
            p = spin_for_next(shared);
            continue;
        }
        if p.closed && p.commands.is_empty() {
            p.workers -= 1;
            return;
        }
        p.idle += 1;
        let timed_out = if first {
            shared.changed.wait(&mut p);
            false
        } else {
            shared.changed.wait_for(&mut p, OOO_IDLE).timed_out()
        };
        p.idle -= 1;
        if timed_out && !p.commands.iter().any(Command::ready) {
            p.workers -= 1;
            return;
        }
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
        let out_of_order = properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as u64 != 0;
        let shared = Arc::new(Shared {
            out_of_order,
            pending: Mutex::new(Pending {
                commands: VecDeque::new(),
                busy: false,
                enqueued: 0,
                done: 0,
                incomplete: BTreeMap::new(),
                barrier: None,
                workers: 1,
                idle: 0,
                closed: false,
            }),
            changed: Condvar::new(),
            timeline: AtomicU64::new(0),
            thread_name: format!("softcl-queue-{}", device.info().name.chars().take(16).collect::<String>()),
        });
        let started = if out_of_order {
            spawn_ooo_worker(&shared, true)
        } else {
            let worker_shared = shared.clone();
            // The worker runs kernels itself (whole launches of one work-group, a launch's
            // share of its work-groups): it gets a kernel thread's stack.
            std::thread::Builder::new()
                .name(shared.thread_name.clone())
                .stack_size(softcl_device_model::limits::KERNEL_THREAD_STACK_BYTES)
                .spawn(move || worker_main(&worker_shared))
                .is_ok()
        };
        if !started {
            return Err(CL_OUT_OF_HOST_MEMORY);
        }
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

    pub fn out_of_order(&self) -> bool {
        self.shared.out_of_order
    }

    /// Enqueues a command; returns its event.
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
        self.enqueue_sync(command_type, wait_for, work, any_thread, SyncKind::None)
    }

    /// A marker (`SyncKind::Marker`) or barrier (`SyncKind::Barrier`) that waits for `wait_for`, or
    /// with an empty list for every command enqueued before it; a barrier orders every later
    /// command after it. (An in-order queue gives both orders by itself.)
    pub fn enqueue_marker(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_for: Vec<Arc<Event>>,
        sync: SyncKind,
    ) -> Arc<Event> {
        self.enqueue_sync(command_type, wait_for, Box::new(|| Ok(None)), true, sync)
    }

    fn enqueue_sync(
        self: &Arc<Self>,
        command_type: cl_command_type,
        wait_for: Vec<Arc<Event>>,
        work: Work,
        any_thread: bool,
        sync: SyncKind,
    ) -> Arc<Event> {
        let event = Event::new_command(self, command_type);
        if !self.shared.out_of_order {
            // Holding the lock while pushing keeps `last` and the list order consistent.
            let mut last = self.last.lock();
            *last = Arc::downgrade(&event);
            let mut p = self.shared.pending.lock();
            p.enqueued += 1;
            let seq = p.enqueued;
            p.commands.push_back(Command { event: event.clone(), wait_for, after: Vec::new(), work, any_thread, seq });
            drop(p);
            drop(last);
            self.shared.changed.notify_all();
            return event;
        }
        // Events that are not commands of this queue wake the workers when they terminate
        // (this queue's commands notify as they complete). Registered before the command is
        // listed: a callback may run at once, and takes the lock.
        for dep in &wait_for {
            if dep.queue.as_ref().is_some_and(|q| std::ptr::eq(Arc::as_ptr(q), Arc::as_ptr(self))) {
                continue;
            }
            let weak = Arc::downgrade(&self.shared);
            let _ = dep.add_callback(
                CL_COMPLETE as cl_int,
                Box::new(move |_| {
                    if let Some(shared) = weak.upgrade() {
                        let p = shared.pending.lock();
                        wake_ooo(&shared, p, |p| p.commands.iter().any(Command::ready));
                    }
                }),
            );
        }
        let mut last = self.last.lock();
        *last = Arc::downgrade(&event);
        let mut p = self.shared.pending.lock();
        p.enqueued += 1;
        let seq = p.enqueued;
        let mut after = Vec::new();
        if sync != SyncKind::None && wait_for.is_empty() {
            after.extend(p.incomplete.values().cloned());
        } else if let Some(b) = &p.barrier {
            after.push(b.clone());
        }
        if sync == SyncKind::Barrier {
            p.barrier = Some(event.clone());
        }
        p.incomplete.insert(seq, event.clone());
        let cmd = Command { event: event.clone(), wait_for, after, work, any_thread, seq };
        let ready = cmd.ready();
        p.commands.push_back(cmd);
        drop(last);
        // Handed to the scheduler: submitted (before a worker may complete it).
        event.mark_submitted();
        wake_ooo(&self.shared, p, |_| ready);
        event
    }

    /// clFlush: commands are handed to the worker as they are enqueued.
    pub fn flush(&self) {}

    /// clFinish: blocks until every command enqueued so far has completed, running pending
    /// commands on the calling thread when no worker has taken them yet.
    pub fn finish(&self) {
        let target = self.shared.pending.lock().enqueued;
        self.shared.help(|s, p| s.done_up_to(p, target));
    }

    /// Blocks until `event` (a command of this queue) has completed, running this queue's
    /// pending commands on the calling thread when no worker has taken them yet (in order up
    /// to it; on an out-of-order queue, whichever are ready).
    pub(crate) fn run_until(&self, event: &Event) {
        self.shared.help(|_, _| event.status() <= CL_COMPLETE as cl_int);
    }

    /// The event of the last command enqueued, while that command has not completed and been
    /// let go (None: every command enqueued so far has completed).
    pub fn last_event(&self) -> Option<Arc<Event>> {
        self.last.lock().upgrade()
    }
}

fn run_command(cmd: Command, timeline: &AtomicU64, out_of_order: bool) {
    let Command { event, wait_for, after, work, .. } = cmd;
    event.mark_submitted();
    let mut failed = false;
    for dep in &wait_for {
        failed |= dep.wait() < 0;
    }
    if failed {
        event.fail(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        return;
    }
    let not_before = if out_of_order {
        wait_for.iter().chain(&after).map(|e| e.end_ns()).max().unwrap_or(0)
    } else {
        timeline.load(Ordering::Acquire)
    };
    drop(after);
    event.mark_running(not_before);
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
        Ok(Ok(device_ns)) => event.mark_complete(device_ns),
        Ok(Err(e)) => event.fail(e),
        Err(_) => {
            eprintln!("SoftCL: internal error while running a command");
            event.fail(CL_OUT_OF_RESOURCES)
        }
    }
    if !out_of_order {
        timeline.fetch_max(event.end_ns(), Ordering::AcqRel);
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

    const OOO: cl_command_queue_properties = CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE as u64;
    const COMPLETE: cl_int = CL_COMPLETE as cl_int;

    /// Waits up to 10 s for `f`; false if it never held.
    fn eventually(mut f: impl FnMut() -> bool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(10) {
            if f() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    /// Work that pushes `name` to `order`.
    fn record(order: &Arc<Mutex<Vec<&'static str>>>, name: &'static str) -> Work {
        let order = order.clone();
        Box::new(move || {
            order.lock().push(name);
            Ok(None)
        })
    }

    #[test]
    fn out_of_order_commands_run_concurrently() {
        let q = test_queue(OOO);
        assert!(q.out_of_order());
        let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The first command waits (at most 10 s) for a flag the second sets: in order, it
        // would time out and fail.
        let f = flag.clone();
        let waiter = q.enqueue(
            CL_COMMAND_NDRANGE_KERNEL,
            Vec::new(),
            Box::new(move || {
                let start = Instant::now();
                while !f.load(Ordering::SeqCst) {
                    if start.elapsed() > Duration::from_secs(10) {
                        return Err(CL_OUT_OF_RESOURCES);
                    }
                    std::thread::yield_now();
                }
                Ok(None)
            }),
        );
        let f = flag.clone();
        let setter = q.enqueue(
            CL_COMMAND_NDRANGE_KERNEL,
            Vec::new(),
            Box::new(move || {
                f.store(true, Ordering::SeqCst);
                Ok(None)
            }),
        );
        q.finish();
        assert_eq!(setter.status(), COMPLETE);
        assert_eq!(waiter.status(), COMPLETE, "the waiting command never saw the flag");
    }

    #[test]
    fn out_of_order_wait_lists_order_commands_and_independent_ones_pass() {
        let q = test_queue(OOO);
        let gate = Event::new_user(q.context.clone());
        let order = Arc::new(Mutex::new(Vec::new()));
        let a = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], record(&order, "a"));
        let b = q.enqueue(CL_COMMAND_MARKER, vec![a.clone()], record(&order, "b"));
        let c = q.enqueue(CL_COMMAND_MARKER, Vec::new(), record(&order, "c"));
        // In order, `c` would wait for the gate.
        assert!(eventually(|| c.status() == COMPLETE), "an independent command waits");
        assert!(a.status() > COMPLETE && b.status() > COMPLETE);
        gate.set_user_status(COMPLETE).unwrap();
        q.finish();
        assert_eq!(*order.lock(), vec!["c", "a", "b"]);
        assert_eq!(b.status(), COMPLETE);
    }

    #[test]
    fn out_of_order_barrier_waits_for_all_before_and_blocks_all_after() {
        let q = test_queue(OOO | CL_QUEUE_PROFILING_ENABLE as u64);
        let gate = Event::new_user(q.context.clone());
        let order = Arc::new(Mutex::new(Vec::new()));
        let a = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], record(&order, "a"));
        let barrier = q.enqueue_marker(CL_COMMAND_BARRIER, Vec::new(), SyncKind::Barrier);
        // Independent of `a`, but after the barrier: does not overtake `a`.
        let c = q.enqueue(CL_COMMAND_MARKER, Vec::new(), record(&order, "c"));
        assert!(barrier.status() > COMPLETE && c.status() > COMPLETE);
        gate.set_user_status(COMPLETE).unwrap();
        q.finish();
        assert_eq!(*order.lock(), vec!["a", "c"]);
        let (ta, tb, tc) = (a.timestamps().unwrap(), barrier.timestamps().unwrap(), c.timestamps().unwrap());
        assert!(tb.start >= ta.end && tc.start >= tb.end, "{ta:?} {tb:?} {tc:?}");
    }

    #[test]
    fn out_of_order_barrier_with_wait_list_waits_for_the_list_only() {
        let q = test_queue(OOO);
        let slow_gate = Event::new_user(q.context.clone());
        let gate = Event::new_user(q.context.clone());
        let slow = q.enqueue(CL_COMMAND_MARKER, vec![slow_gate.clone()], Box::new(|| Ok(None)));
        let listed = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], Box::new(|| Ok(None)));
        let barrier = q.enqueue_marker(CL_COMMAND_BARRIER, vec![listed.clone()], SyncKind::Barrier);
        let after = q.enqueue(CL_COMMAND_MARKER, Vec::new(), Box::new(|| Ok(None)));
        gate.set_user_status(COMPLETE).unwrap();
        // The barrier does not wait for `slow`, which is not in its list.
        assert!(eventually(|| after.status() == COMPLETE));
        assert_eq!(barrier.status(), COMPLETE);
        assert!(slow.status() > COMPLETE);
        slow_gate.set_user_status(COMPLETE).unwrap();
        q.finish();
        assert_eq!(slow.status(), COMPLETE);
    }

    #[test]
    fn out_of_order_marker_waits_for_all_before_but_blocks_nothing() {
        let q = test_queue(OOO);
        let gate = Event::new_user(q.context.clone());
        let a = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], Box::new(|| Ok(None)));
        let marker = q.enqueue_marker(CL_COMMAND_MARKER, Vec::new(), SyncKind::Marker);
        let later = q.enqueue(CL_COMMAND_MARKER, Vec::new(), Box::new(|| Ok(None)));
        assert!(eventually(|| later.status() == COMPLETE), "a marker is not a barrier");
        assert!(marker.status() > COMPLETE, "the marker waits for `a`");
        gate.set_user_status(COMPLETE).unwrap();
        assert_eq!(marker.wait_helping(), COMPLETE);
        assert_eq!(a.status(), COMPLETE);
    }

    #[test]
    fn out_of_order_failure_goes_through_wait_lists_not_barriers() {
        let q = test_queue(OOO);
        let gate = Event::new_user(q.context.clone());
        let ran = Arc::new(AtomicUsize::new(0));
        let dependent = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], counting_work(&ran));
        let second = q.enqueue(CL_COMMAND_MARKER, vec![dependent.clone()], counting_work(&ran));
        let barrier = q.enqueue_marker(CL_COMMAND_BARRIER, Vec::new(), SyncKind::Barrier);
        let after = q.enqueue(CL_COMMAND_MARKER, Vec::new(), counting_work(&ran));
        gate.set_user_status(-12).unwrap();
        q.finish();
        assert_eq!(dependent.status(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        assert_eq!(second.status(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        assert_eq!(barrier.status(), COMPLETE);
        assert_eq!(after.status(), COMPLETE);
        assert_eq!(ran.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn out_of_order_waits_on_other_queues_and_finish_waits_for_all() {
        let q = test_queue(OOO);
        let other = Queue::new(q.context.clone(), q.device.clone(), 0, Vec::new()).unwrap();
        let gate = Event::new_user(q.context.clone());
        let order = Arc::new(Mutex::new(Vec::new()));
        let first = other.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], record(&order, "other"));
        let mine = q.enqueue(CL_COMMAND_MARKER, vec![first.clone()], record(&order, "mine"));
        let setter = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                gate.set_user_status(COMPLETE).unwrap();
            })
        };
        q.finish();
        assert_eq!(mine.status(), COMPLETE);
        assert_eq!(*order.lock(), vec!["other", "mine"]);
        setter.join().unwrap();
    }

    #[test]
    fn out_of_order_profiling_starts_after_dependencies_end() {
        let q = test_queue(OOO | CL_QUEUE_PROFILING_ENABLE as u64);
        // Modelled times far beyond the real ones: START follows the modelled END.
        let a = q.enqueue(CL_COMMAND_NDRANGE_KERNEL, Vec::new(), Box::new(|| Ok(Some(50_000_000))));
        let b = q.enqueue(CL_COMMAND_NDRANGE_KERNEL, vec![a.clone()], Box::new(|| Ok(Some(1000))));
        q.finish();
        let (ta, tb) = (a.timestamps().unwrap(), b.timestamps().unwrap());
        assert_eq!(ta.end - ta.start, 50_000_000);
        assert!(tb.start >= ta.end, "{ta:?} {tb:?}");
        assert!(tb.queued <= tb.submit && tb.submit <= tb.start && tb.start < tb.end, "{tb:?}");
    }

    /// Many commands with random wait lists, barriers and helping threads: each command runs
    /// after every command of its wait list and every barrier before it, exactly once.
    #[test]
    fn out_of_order_random_dependencies_are_respected() {
        let q = test_queue(OOO);
        let clock = Arc::new(AtomicUsize::new(0));
        let mut stamps: Vec<Arc<AtomicUsize>> = Vec::new();
        let mut events: Vec<Arc<Event>> = Vec::new();
        let mut deps: Vec<Vec<usize>> = Vec::new();
        let mut last_barrier: Option<usize> = None;
        let mut is_barrier: Vec<bool> = Vec::new();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let helpers: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        q.finish();
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        for i in 0..600 {
            let stamp = Arc::new(AtomicUsize::new(0));
            let r = next();
            if r % 37 == 0 {
                // A barrier's own time is not recorded (its event completes without work): the
                // check below stands for it with every command before it.
                events.push(q.enqueue_marker(CL_COMMAND_BARRIER, Vec::new(), SyncKind::Barrier));
                deps.push(Vec::new());
                last_barrier = Some(i);
                is_barrier.push(true);
                stamps.push(stamp);
                continue;
            }
            let mut mine: Vec<usize> = Vec::new();
            if i > 0 {
                for _ in 0..(r % 3) {
                    mine.push((next() as usize) % i);
                }
            }
            let wait_for = mine.iter().map(|&d| events[d].clone()).collect();
            let (clock, s) = (clock.clone(), stamp.clone());
            let e = q.enqueue(
                CL_COMMAND_MARKER,
                wait_for,
                Box::new(move || {
                    assert_eq!(s.load(Ordering::SeqCst), 0, "ran twice");
                    s.store(clock.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                    Ok(None)
                }),
            );
            mine.extend(last_barrier);
            deps.push(mine);
            is_barrier.push(false);
            stamps.push(stamp);
            events.push(e);
        }
        q.finish();
        for h in helpers {
            h.join().unwrap();
        }
        for (i, d) in deps.iter().enumerate() {
            assert_eq!(events[i].status(), COMPLETE);
            if is_barrier[i] {
                continue;
            }
            let mine = stamps[i].load(Ordering::SeqCst);
            assert!(mine > 0, "command {i} never ran");
            for &j in d {
                // After a barrier: after every command enqueued before the barrier.
                let before: Vec<usize> =
                    if is_barrier[j] { (0..j).filter(|&k| !is_barrier[k]).collect() } else { vec![j] };
                for k in before {
                    assert!(stamps[k].load(Ordering::SeqCst) < mine, "command {i} ran before {k}");
                }
            }
        }
    }

    #[test]
    fn out_of_order_queue_is_freed_and_long_chains_run() {
        let q = test_queue(OOO);
        let gate = Event::new_user(q.context.clone());
        let mut prev = gate.clone();
        for i in 0..5_000 {
            let sync = if i % 1000 == 999 { SyncKind::Barrier } else { SyncKind::None };
            prev = if sync == SyncKind::Barrier {
                q.enqueue_marker(CL_COMMAND_BARRIER, Vec::new(), sync)
            } else {
                q.enqueue(CL_COMMAND_MARKER, vec![prev.clone()], Box::new(|| Ok(None)))
            };
        }
        gate.set_user_status(COMPLETE).unwrap();
        assert_eq!(prev.wait_helping(), COMPLETE);
        drop(prev);
        q.finish();
        // Only the workers' transient references may remain; give them a moment to let go.
        assert!(eventually(|| Arc::strong_count(&q) == 1), "no reference cycle between the queue and its events");
        assert!(q.last_event().is_none());
    }
}
