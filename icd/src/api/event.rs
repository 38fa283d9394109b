//! Event entry points (waiting, info, user events, callbacks, profiling), markers and barriers,
//! and the wait-list helpers every enqueue shares ([`check_wait_list`], [`return_event`]).

use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr::{self, AppPtr};
use softcl_runtime::cl::*;
use softcl_runtime::context::Context;
use softcl_runtime::event::{self, Event};
use softcl_runtime::handle::RefCount;
use softcl_runtime::queue::{Queue, SyncKind};
use std::ffi::c_void;
use std::sync::Arc;

/// Checks an enqueue's wait list (already turned into events by `handles::wait_list`, which
/// gives CL_INVALID_EVENT_WAIT_LIST for an inconsistent pointer/count or an invalid event)
/// against its queue.
pub(crate) fn check_wait_list(queue: &Queue, events: &[Arc<Event>]) -> Result<(), cl_int> {
    // "CL_INVALID_CONTEXT if the context associated with command_queue and events in
    // event_wait_list are not the same."
    if events.iter().any(|e| !Arc::ptr_eq(&e.context, &queue.context)) {
        return Err(CL_INVALID_CONTEXT);
    }
    Ok(())
}

/// Hands a command's event to the application when it asked for one (`out` non-NULL);
/// otherwise the event lives only as long as the runtime needs it.
pub(crate) fn return_event(event: Arc<Event>, out: *mut cl_event) {
    if !out.is_null() {
        ptr::write_opt(out, handles::new_handle::<Event, _>(event));
    }
}

/// The queue and wait list of an enqueue, validated.
fn queue_and_wait_list(
    command_queue: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
) -> Result<(Arc<Queue>, Vec<Arc<Event>>), cl_int> {
    // "CL_INVALID_COMMAND_QUEUE if command_queue is not a valid host command-queue."
    let queue: Arc<Queue> = handles::arc(command_queue)?;
    // "CL_INVALID_EVENT_WAIT_LIST if event_wait_list is NULL and num_events_in_wait_list > 0,
    // or event_wait_list is not NULL and num_events_in_wait_list is 0, or if event objects in
    // event_wait_list are not valid events."
    let wait_for = handles::wait_list(event_wait_list, num_events_in_wait_list)?;
    check_wait_list(&queue, &wait_for)?;
    Ok((queue, wait_for))
}

pub extern "C" fn clWaitForEvents(num_events: cl_uint, event_list: *const cl_event) -> cl_int {
    entry::code("clWaitForEvents", || {
        // "CL_INVALID_VALUE if num_events is zero or event_list is NULL."
        if num_events == 0 || event_list.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_EVENT if event objects specified in event_list are not valid event objects."
        let events: Vec<Arc<Event>> = handles::list(event_list, num_events, CL_INVALID_VALUE, None)?;
        // "CL_INVALID_CONTEXT if events specified in event_list do not belong to the same context."
        if events.iter().any(|e| !Arc::ptr_eq(&e.context, &events[0].context)) {
            return Err(CL_INVALID_CONTEXT);
        }
        // "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST if the execution status of any of the
        // events in event_list is a negative integer value."
        event::wait_for_all(&events)
    })
}

pub extern "C" fn clGetEventInfo(
    event: cl_event,
    param_name: cl_event_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetEventInfo", || {
        let event: &Event = handles::borrow(event)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            // NULL for a user event.
            CL_EVENT_COMMAND_QUEUE => {
                out.write(&event.queue.as_ref().map_or(std::ptr::null_mut(), handles::handle_of::<Queue, c_void>))
            }
            CL_EVENT_CONTEXT => out.write(&handles::handle_of::<Context, c_void>(&event.context)),
            CL_EVENT_COMMAND_TYPE => out.write(&event.command_type),
            CL_EVENT_COMMAND_EXECUTION_STATUS => out.write(&event.status()),
            CL_EVENT_REFERENCE_COUNT => out.write(&event.header_ref_count()),
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

pub extern "C" fn clCreateUserEvent(context: cl_context, errcode_ret: *mut cl_int) -> cl_event {
    entry::object("clCreateUserEvent", errcode_ret, || {
        // "CL_INVALID_CONTEXT if context is not a valid context."
        let context: Arc<Context> = handles::arc(context)?;
        Ok(handles::new_handle(Event::new_user(context)))
    })
}

pub extern "C" fn clSetUserEventStatus(event: cl_event, execution_status: cl_int) -> cl_int {
    entry::code("clSetUserEventStatus", || {
        // Held for the call: callbacks run now and may release the event.
        let event: Arc<Event> = handles::arc(event)?;
        // "CL_INVALID_EVENT if event is not a valid user event object"; "CL_INVALID_VALUE if
        // the execution_status is not CL_COMPLETE or a negative integer value";
        // "CL_INVALID_OPERATION if the execution_status for event has already been changed by
        // a previous call to clSetUserEventStatus".
        event.set_user_status(execution_status)
    })
}

type EventNotifyFn = unsafe extern "C" fn(cl_event, cl_int, *mut c_void);

pub extern "C" fn clSetEventCallback(
    event: cl_event,
    command_exec_callback_type: cl_int,
    pfn_notify: Option<EventNotifyFn>,
    user_data: *mut c_void,
) -> cl_int {
    entry::code("clSetEventCallback", || {
        // Held for the call: a callback whose status was reached runs at once and may release
        // the event.
        let ev: Arc<Event> = handles::arc(event)?;
        // "CL_INVALID_VALUE if pfn_event_notify is NULL or if command_exec_callback_type is not
        // CL_SUBMITTED, CL_RUNNING, or CL_COMPLETE."
        let f = pfn_notify.ok_or(CL_INVALID_VALUE)?;
        let (handle, user_data) = (AppPtr(event as *mut c_void), AppPtr(user_data));
        ev.add_callback(
            command_exec_callback_type,
            Box::new(move |status| {
                let (handle, user_data) = (handle, user_data);
                // SAFETY: the application registered this callback for this signature and owns
                // user_data; the event handle identifies the event the callback is about.
                unsafe { f(handle.0 as cl_event, status, user_data.0) }
            }),
        )
    })
}

pub extern "C" fn clRetainEvent(event: cl_event) -> cl_int {
    entry::code("clRetainEvent", || handles::retain::<Event, _>(event))
}

pub extern "C" fn clReleaseEvent(event: cl_event) -> cl_int {
    entry::code("clReleaseEvent", || handles::release::<Event, _>(event))
}

pub extern "C" fn clGetEventProfilingInfo(
    event: cl_event,
    param_name: cl_profiling_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetEventProfilingInfo", || {
        let event: &Event = handles::borrow(event)?;
        // "CL_PROFILING_INFO_NOT_AVAILABLE if the CL_QUEUE_PROFILING_ENABLE flag is not set for
        // the command-queue, if the execution status of the command identified by event is not
        // CL_COMPLETE or if event is a user event object."
        let t = event.timestamps()?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_PROFILING_COMMAND_QUEUED => out.write(&t.queued),
            CL_PROFILING_COMMAND_SUBMIT => out.write(&t.submit),
            CL_PROFILING_COMMAND_START => out.write(&t.start),
            CL_PROFILING_COMMAND_END => out.write(&t.end),
            // Commands have no child commands (no device-side enqueue): COMPLETE = END.
            CL_PROFILING_COMMAND_COMPLETE => out.write(&t.end),
            _ => Err(CL_INVALID_VALUE),
        }
    })
}

/// A marker or barrier: waits for `wait_for`, or (empty list) for every command enqueued
/// before it; a barrier also orders every later command of the queue after it (in-order
/// queues give both orders by themselves; out-of-order queues: `Queue::enqueue_marker`).
fn enqueue_wait(
    command_queue: cl_command_queue,
    command_type: cl_command_type,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> Result<(), cl_int> {
    let (queue, wait_for) = queue_and_wait_list(command_queue, num_events_in_wait_list, event_wait_list)?;
    let sync = if command_type == CL_COMMAND_BARRIER { SyncKind::Barrier } else { SyncKind::Marker };
    return_event(queue.enqueue_marker(command_type, wait_for, sync), event);
    Ok(())
}

pub extern "C" fn clEnqueueMarkerWithWaitList(
    command_queue: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueMarkerWithWaitList", || {
        enqueue_wait(command_queue, CL_COMMAND_MARKER, num_events_in_wait_list, event_wait_list, event)
    })
}

/// Every command enqueued after the barrier starts after it completes.
pub extern "C" fn clEnqueueBarrierWithWaitList(
    command_queue: cl_command_queue,
    num_events_in_wait_list: cl_uint,
    event_wait_list: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    entry::code("clEnqueueBarrierWithWaitList", || {
        enqueue_wait(command_queue, CL_COMMAND_BARRIER, num_events_in_wait_list, event_wait_list, event)
    })
}

/// OpenCL 1.1: a marker after every command enqueued so far.
pub extern "C" fn clEnqueueMarker(command_queue: cl_command_queue, event: *mut cl_event) -> cl_int {
    entry::code("clEnqueueMarker", || {
        handles::borrow::<Queue, _>(command_queue)?;
        // "CL_INVALID_VALUE if event is a NULL value."
        if event.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        enqueue_wait(command_queue, CL_COMMAND_MARKER, 0, std::ptr::null(), event)
    })
}

/// OpenCL 1.1: a barrier after every command enqueued so far.
pub extern "C" fn clEnqueueBarrier(command_queue: cl_command_queue) -> cl_int {
    entry::code("clEnqueueBarrier", || {
        enqueue_wait(command_queue, CL_COMMAND_BARRIER, 0, std::ptr::null(), std::ptr::null_mut())
    })
}

/// OpenCL 1.1: later commands wait for the given events.
pub extern "C" fn clEnqueueWaitForEvents(
    command_queue: cl_command_queue,
    num_events: cl_uint,
    event_list: *const cl_event,
) -> cl_int {
    entry::code("clEnqueueWaitForEvents", || {
        let queue: Arc<Queue> = handles::arc(command_queue)?;
        // "CL_INVALID_VALUE if num_events is zero or event_list is NULL."
        if num_events == 0 || event_list.is_null() {
            return Err(CL_INVALID_VALUE);
        }
        // "CL_INVALID_EVENT if event objects specified in event_list are not valid events."
        let wait_for: Vec<Arc<Event>> = handles::list(event_list, num_events, CL_INVALID_VALUE, None)?;
        // "CL_INVALID_CONTEXT if the context associated with command_queue and events in
        // event_list are not the same."
        check_wait_list(&queue, &wait_for)?;
        // Later commands wait for the events: a barrier on them.
        queue.enqueue_marker(CL_COMMAND_BARRIER, wait_for, SyncKind::Barrier);
        Ok(())
    })
}
