//! Events: the status of a command (or a user event), its profiling timestamps, callbacks and
//! the condition variable waiters block on.
//!
//! Status only moves down: CL_QUEUED (3) -> CL_SUBMITTED (2) -> CL_RUNNING (1) -> CL_COMPLETE
//! (0), or to a negative error code, which counts as complete for waiting and callbacks.

use crate::cl::*;
use crate::clock::now_ns;
use crate::context::Context;
use crate::handle::{ClObject, Header, ObjectKind};
use crate::queue::Queue;
use parking_lot::{Condvar, Mutex};
use std::sync::Arc;

/// A callback registered with clSetEventCallback, wrapped by the icd crate; receives the
/// event's status (CL_COMPLETE or the error) when it reaches the registered status.
pub type EventCallback = Box<dyn FnOnce(cl_int) + Send>;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timestamps {
    pub queued: u64,
    pub submit: u64,
    pub start: u64,
    pub end: u64,
}

struct State {
    status: cl_int,
    callbacks: Vec<(cl_int, EventCallback)>,
    times: Timestamps,
}

#[repr(C)]
pub struct Event {
    header: Header,
    pub context: Arc<Context>,
    /// The queue of a command's event; None for user events.
    pub queue: Option<Arc<Queue>>,
    pub command_type: cl_command_type,
    state: Mutex<State>,
    changed: Condvar,
}

impl ClObject for Event {
    const KIND: ObjectKind = ObjectKind::Event;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl Event {
    /// The event of a command just enqueued (status CL_QUEUED, queued time now).
    pub fn new_command(queue: &Arc<Queue>, command_type: cl_command_type) -> Arc<Self> {
        Arc::new(Self {
            header: Header::new(ObjectKind::Event),
            context: queue.context.clone(),
            queue: Some(queue.clone()),
            command_type,
            state: Mutex::new(State {
                status: CL_QUEUED as cl_int,
                callbacks: Vec::new(),
                times: Timestamps { queued: now_ns(), ..Default::default() },
            }),
            changed: Condvar::new(),
        })
    }

    /// clCreateUserEvent: status CL_SUBMITTED until the application sets it.
    pub fn new_user(context: Arc<Context>) -> Arc<Self> {
        Arc::new(Self {
            header: Header::new(ObjectKind::Event),
            context,
            queue: None,
            command_type: CL_COMMAND_USER,
            state: Mutex::new(State {
                status: CL_SUBMITTED as cl_int,
                callbacks: Vec::new(),
                times: Timestamps::default(),
            }),
            changed: Condvar::new(),
        })
    }

    pub fn status(&self) -> cl_int {
        self.state.lock().status
    }

    pub fn is_user(&self) -> bool {
        self.queue.is_none()
    }

    /// Profiling timestamps; CL_PROFILING_INFO_NOT_AVAILABLE unless the event is a command of
    /// a profiling queue that has completed.
    pub fn timestamps(&self) -> Result<Timestamps, cl_int> {
        let profiling = self.queue.as_ref().is_some_and(|q| q.profiling());
        let st = self.state.lock();
        if !profiling || st.status != CL_COMPLETE as cl_int {
            return Err(CL_PROFILING_INFO_NOT_AVAILABLE);
        }
        Ok(st.times)
    }

    pub(crate) fn mark_submitted(&self) {
        self.advance(CL_SUBMITTED as cl_int, |t, now| t.submit = now);
    }

    /// The command starts running: START is now, or `not_before` (the END of the previous
    /// command of its queue) if that is later, so that a device whose commands take modelled
    /// time keeps its commands in order on its own timeline.
    pub(crate) fn mark_running(&self, not_before: u64) {
        self.advance(CL_RUNNING as cl_int, |t, now| t.start = now.max(not_before));
    }

    /// END of the command (0 until it completed or failed).
    pub(crate) fn end_ns(&self) -> u64 {
        self.state.lock().times.end
    }

    /// Completes the event; `device_ns` (the device's own measure or model of the command's
    /// time) sets END = START + device_ns, otherwise END is now.
    pub(crate) fn mark_complete(&self, device_ns: Option<u64>) {
        self.advance(CL_COMPLETE as cl_int, |t, now| {
            t.end = match device_ns {
                Some(ns) => t.start + ns.max(1),
                None => now.max(t.start + 1),
            }
        });
    }

    /// Fails the event with a negative error code.
    pub fn fail(&self, error: cl_int) {
        debug_assert!(error < 0);
        self.advance(error, |t, now| {
            if t.end == 0 {
                t.end = now;
            }
        });
    }

    /// clSetUserEventStatus: CL_COMPLETE or a negative error, once.
    pub fn set_user_status(&self, status: cl_int) -> Result<(), cl_int> {
        if !self.is_user() {
            return Err(CL_INVALID_EVENT);
        }
        if status > CL_COMPLETE as cl_int {
            return Err(CL_INVALID_VALUE);
        }
        if self.status() <= CL_COMPLETE as cl_int {
            // "CL_INVALID_OPERATION if the execution_status for event has already been changed".
            return Err(CL_INVALID_OPERATION);
        }
        self.advance(status, |t, now| t.end = now);
        Ok(())
    }

    fn advance(&self, status: cl_int, stamp: impl FnOnce(&mut Timestamps, u64)) {
        let ready: Vec<(cl_int, EventCallback)> = {
            let mut st = self.state.lock();
            if st.status <= CL_COMPLETE as cl_int || status >= st.status {
                return;
            }
            st.status = status;
            let now = now_ns();
            stamp(&mut st.times, now);
            let (ready, pending): (Vec<_>, Vec<_>) =
                std::mem::take(&mut st.callbacks).into_iter().partition(|(when, _)| status <= *when);
            st.callbacks = pending;
            ready
        };
        self.changed.notify_all();
        for (when, cb) in ready {
            // The callback receives the status it was registered for, or the error.
            cb(if status < 0 { status } else { when });
        }
    }

    /// clSetEventCallback for CL_SUBMITTED, CL_RUNNING or CL_COMPLETE. A callback whose status
    /// was already reached runs at once.
    pub fn add_callback(&self, when: cl_int, cb: EventCallback) -> Result<(), cl_int> {
        if when != CL_SUBMITTED as cl_int && when != CL_RUNNING as cl_int && when != CL_COMPLETE as cl_int {
            return Err(CL_INVALID_VALUE);
        }
        let mut st = self.state.lock();
        if st.status <= when {
            let status = st.status;
            drop(st);
            cb(if status < 0 { status } else { when });
        } else {
            st.callbacks.push((when, cb));
        }
        Ok(())
    }

    /// Blocks an application thread until the event completes, running the pending commands
    /// of its queue up to it on this thread when the queue's worker has not taken them yet
    /// (clWaitForEvents, blocking enqueues); returns the final status.
    pub fn wait_helping(&self) -> cl_int {
        if let Some(q) = &self.queue {
            q.run_until(self);
        }
        self.wait()
    }

    /// Blocks until the event completes; returns its final status (CL_COMPLETE or an error).
    pub fn wait(&self) -> cl_int {
        let mut st = self.state.lock();
        while st.status > CL_COMPLETE as cl_int {
            self.changed.wait(&mut st);
        }
        st.status
    }
}

/// clWaitForEvents: waits for all; CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if any failed.
pub fn wait_for_all(events: &[Arc<Event>]) -> Result<(), cl_int> {
    let mut failed = false;
    for e in events {
        if let Some(q) = &e.queue {
            q.flush();
        }
        failed |= e.wait_helping() < 0;
    }
    if failed {
        Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::test_queue;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    /// Every callback call as (registered status, received status).
    type Calls = Arc<Mutex<Vec<(cl_int, cl_int)>>>;

    /// Records every callback call; the closure makes a callback registered for a status.
    fn recorder() -> (Calls, impl Fn(cl_int) -> EventCallback) {
        let calls = Arc::new(Mutex::new(Vec::new()));
        let c = calls.clone();
        (calls, move |when: cl_int| {
            let c = c.clone();
            Box::new(move |status| c.lock().push((when, status))) as EventCallback
        })
    }

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

    const SUBMITTED: cl_int = CL_SUBMITTED as cl_int;
    const RUNNING: cl_int = CL_RUNNING as cl_int;
    const COMPLETE: cl_int = CL_COMPLETE as cl_int;

    #[test]
    fn user_event_status_transitions() {
        let q = test_queue(0);
        let u = Event::new_user(q.context.clone());
        assert!(u.is_user());
        assert_eq!(u.status(), SUBMITTED);
        assert_eq!(u.set_user_status(RUNNING), Err(CL_INVALID_VALUE));
        assert_eq!(u.set_user_status(SUBMITTED), Err(CL_INVALID_VALUE));
        assert_eq!(u.status(), SUBMITTED);
        assert_eq!(u.set_user_status(COMPLETE), Ok(()));
        assert_eq!(u.status(), COMPLETE);
        assert_eq!(u.set_user_status(COMPLETE), Err(CL_INVALID_OPERATION));
        assert_eq!(u.set_user_status(-5), Err(CL_INVALID_OPERATION));
        assert_eq!(u.wait(), COMPLETE);
        assert_eq!(u.timestamps(), Err(CL_PROFILING_INFO_NOT_AVAILABLE), "user events have no profiling");

        let failed = Event::new_user(q.context.clone());
        failed.set_user_status(-5).unwrap();
        assert_eq!(failed.wait(), -5);

        let cmd = q.enqueue(CL_COMMAND_MARKER, Vec::new(), Box::new(|| Ok(None)));
        assert_eq!(cmd.set_user_status(COMPLETE), Err(CL_INVALID_EVENT), "not a user event");
        assert_eq!(cmd.wait(), COMPLETE);
    }

    #[test]
    fn command_status_goes_through_every_state() {
        let q = test_queue(0);
        let gate = Event::new_user(q.context.clone());
        let release = Arc::new(Event::new_user(q.context.clone()));
        let inside = release.clone();
        let e = q.enqueue(
            CL_COMMAND_MARKER,
            vec![gate.clone()],
            Box::new(move || {
                inside.wait();
                Ok(None)
            }),
        );
        assert!(e.status() == CL_QUEUED as cl_int || e.status() == SUBMITTED);
        assert!(eventually(|| e.status() == SUBMITTED), "picked up by the worker, waiting for the gate");
        gate.set_user_status(COMPLETE).unwrap();
        assert!(eventually(|| e.status() == RUNNING));
        release.set_user_status(COMPLETE).unwrap();
        assert_eq!(e.wait(), COMPLETE);
        assert_eq!(e.status(), COMPLETE);
    }

    #[test]
    fn callbacks_fire_once_at_their_status() {
        let q = test_queue(0);
        let gate = Event::new_user(q.context.clone());
        let e = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], Box::new(|| Ok(None)));
        let (calls, cb) = recorder();
        assert_eq!(e.add_callback(CL_QUEUED as cl_int, cb(0)), Err(CL_INVALID_VALUE));
        assert_eq!(e.add_callback(-1, cb(0)), Err(CL_INVALID_VALUE));
        e.add_callback(COMPLETE, cb(COMPLETE)).unwrap();
        e.add_callback(RUNNING, cb(RUNNING)).unwrap();
        e.add_callback(SUBMITTED, cb(SUBMITTED)).unwrap();
        assert!(eventually(|| calls.lock().contains(&(SUBMITTED, SUBMITTED))));
        assert!(!calls.lock().iter().any(|(w, _)| *w != SUBMITTED), "RUNNING/COMPLETE wait for the gate");
        gate.set_user_status(COMPLETE).unwrap();
        e.wait();
        assert!(eventually(|| calls.lock().len() == 3));
        let mut got = calls.lock().clone();
        got.sort();
        assert_eq!(got, vec![(COMPLETE, COMPLETE), (RUNNING, RUNNING), (SUBMITTED, SUBMITTED)]);
        // A callback for a status already reached runs at once, once.
        e.add_callback(SUBMITTED, cb(SUBMITTED)).unwrap();
        e.add_callback(COMPLETE, cb(COMPLETE)).unwrap();
        assert_eq!(calls.lock().len(), 5);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(calls.lock().len(), 5);
    }

    #[test]
    fn user_event_callbacks_get_the_status_or_the_error() {
        let q = test_queue(0);
        let ok = Event::new_user(q.context.clone());
        let (calls, cb) = recorder();
        ok.add_callback(SUBMITTED, cb(SUBMITTED)).unwrap(); // already submitted: at once
        ok.add_callback(COMPLETE, cb(COMPLETE)).unwrap();
        assert_eq!(*calls.lock(), vec![(SUBMITTED, SUBMITTED)]);
        ok.set_user_status(COMPLETE).unwrap();
        assert_eq!(*calls.lock(), vec![(SUBMITTED, SUBMITTED), (COMPLETE, COMPLETE)]);

        let bad = Event::new_user(q.context.clone());
        let (calls, cb) = recorder();
        bad.add_callback(RUNNING, cb(RUNNING)).unwrap();
        bad.add_callback(COMPLETE, cb(COMPLETE)).unwrap();
        bad.set_user_status(-7).unwrap();
        let mut got = calls.lock().clone();
        got.sort();
        assert_eq!(got, vec![(COMPLETE, -7), (RUNNING, -7)]);
    }

    #[test]
    fn failed_wait_list_fails_dependents_without_running_them() {
        let q = test_queue(0);
        let gate = Event::new_user(q.context.clone());
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        let dependent = q.enqueue(
            CL_COMMAND_NDRANGE_KERNEL,
            vec![gate.clone()],
            Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(None)
            }),
        );
        let r = ran.clone();
        let second = q.enqueue(
            CL_COMMAND_MARKER,
            vec![dependent.clone()],
            Box::new(move || {
                r.fetch_add(1, Ordering::SeqCst);
                Ok(None)
            }),
        );
        // Not in a failed wait list: runs.
        let r = ran.clone();
        let independent = q.enqueue(
            CL_COMMAND_MARKER,
            Vec::new(),
            Box::new(move || {
                r.fetch_add(100, Ordering::SeqCst);
                Ok(None)
            }),
        );
        let (calls, cb) = recorder();
        dependent.add_callback(COMPLETE, cb(COMPLETE)).unwrap();
        gate.set_user_status(CL_INVALID_VALUE).unwrap();
        assert_eq!(dependent.wait(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        assert_eq!(second.wait(), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
        assert_eq!(independent.wait(), COMPLETE);
        assert_eq!(ran.load(Ordering::SeqCst), 100);
        assert_eq!(*calls.lock(), vec![(COMPLETE, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)]);
        assert_eq!(wait_for_all(std::slice::from_ref(&independent)), Ok(()));
        assert_eq!(wait_for_all(&[independent, second]), Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST));
    }

    #[test]
    fn wait_for_all_returns_when_a_gating_user_event_is_set_from_another_thread() {
        let q = test_queue(0);
        let gate = Event::new_user(q.context.clone());
        let e = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], Box::new(|| Ok(None)));
        let setter = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                gate.set_user_status(COMPLETE).unwrap();
            })
        };
        assert_eq!(wait_for_all(&[e, gate]), Ok(()));
        setter.join().unwrap();
    }

    #[test]
    fn profiling_timestamps_are_monotone() {
        let q = test_queue(CL_QUEUE_PROFILING_ENABLE as u64);
        let mut events = Vec::new();
        for i in 0..20u64 {
            events.push(q.enqueue(
                CL_COMMAND_MARKER,
                Vec::new(),
                Box::new(move || {
                    if i % 5 == 0 {
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    Ok(None)
                }),
            ));
        }
        // A modelled device time sets END = START + time.
        let modelled = q.enqueue(CL_COMMAND_NDRANGE_KERNEL, Vec::new(), Box::new(|| Ok(Some(1234))));
        q.finish();
        let mut prev_end = 0;
        for e in &events {
            let t = e.timestamps().unwrap();
            assert!(t.queued > 0 && t.queued <= t.submit && t.submit <= t.start && t.start < t.end, "{t:?}");
            assert!(t.start >= prev_end, "in-order commands do not overlap");
            prev_end = t.end;
        }
        let t = modelled.timestamps().unwrap();
        assert_eq!(t.end - t.start, 1234);

        let plain = test_queue(0);
        let e = plain.enqueue(CL_COMMAND_MARKER, Vec::new(), Box::new(|| Ok(None)));
        e.wait();
        assert_eq!(e.timestamps(), Err(CL_PROFILING_INFO_NOT_AVAILABLE), "queue without profiling");

        let gate = Event::new_user(q.context.clone());
        let pending = q.enqueue(CL_COMMAND_MARKER, vec![gate.clone()], Box::new(|| Ok(None)));
        assert_eq!(pending.timestamps(), Err(CL_PROFILING_INFO_NOT_AVAILABLE), "not complete yet");
        gate.set_user_status(-1).unwrap();
        pending.wait();
        assert_eq!(pending.timestamps(), Err(CL_PROFILING_INFO_NOT_AVAILABLE), "failed command");
    }
}
