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

    pub(crate) fn mark_running(&self) {
        self.advance(CL_RUNNING as cl_int, |t, now| t.start = now);
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
        failed |= e.wait() < 0;
    }
    if failed {
        Err(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    } else {
        Ok(())
    }
}
