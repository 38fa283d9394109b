//! Buffers, sub-buffers and memory commands through the entry points.

use softcl::api::context::{clCreateContextFromType, clGetContextInfo, clReleaseContext};
use softcl::api::enqueue::*;
use softcl::api::event::{clCreateUserEvent, clGetEventInfo, clReleaseEvent, clSetUserEventStatus, clWaitForEvents};
use softcl::api::image::clGetSupportedImageFormats;
use softcl::api::memory::*;
use softcl::api::queue::{clCreateCommandQueueWithProperties, clFinish, clReleaseCommandQueue};
use softcl_runtime::cl::*;
use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::Mutex;

const SUCCESS: cl_int = CL_SUCCESS as cl_int;

struct Env {
    ctx: cl_context,
    queue: cl_command_queue,
    device: cl_device_id,
}

impl Env {
    fn new() -> Self {
        let mut err = 0;
        let ctx = clCreateContextFromType(null(), CL_DEVICE_TYPE_ALL as u64, None, null_mut(), &mut err);
        assert_eq!(err, SUCCESS, "context (does the platform have devices yet?)");
        let mut devices: Vec<cl_device_id> = vec![null_mut(); 16];
        let size = std::mem::size_of_val(devices.as_slice());
        let devp = devices.as_mut_ptr() as *mut c_void;
        assert_eq!(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, size, devp, null_mut()), SUCCESS);
        let device = devices[0];
        let queue = clCreateCommandQueueWithProperties(ctx, device, null(), &mut err);
        assert_eq!(err, SUCCESS);
        Self { ctx, queue, device }
    }

    fn buffer(&self, flags: u32, size: usize, host: *mut c_void) -> cl_mem {
        let mut err = 0;
        let b = clCreateBuffer(self.ctx, flags as u64, size, host, &mut err);
        assert_eq!(err, SUCCESS);
        assert!(!b.is_null());
        b
    }

    fn create_err(&self, flags: u64, size: usize, host: *mut c_void) -> cl_int {
        let mut err = 0;
        let b = clCreateBuffer(self.ctx, flags, size, host, &mut err);
        if !b.is_null() {
            clReleaseMemObject(b);
        }
        err
    }

    fn write(&self, b: cl_mem, offset: usize, data: &[u8]) {
        let p = data.as_ptr() as *const c_void;
        assert_eq!(clEnqueueWriteBuffer(self.queue, b, CL_TRUE, offset, data.len(), p, 0, null(), null_mut()), SUCCESS);
    }

    fn read(&self, b: cl_mem, offset: usize, len: usize) -> Vec<u8> {
        let mut out = vec![0u8; len];
        let p = out.as_mut_ptr() as *mut c_void;
        assert_eq!(clEnqueueReadBuffer(self.queue, b, CL_TRUE, offset, len, p, 0, null(), null_mut()), SUCCESS);
        out
    }

    fn read_err(&self, b: cl_mem, offset: usize, len: usize) -> cl_int {
        let mut out = vec![0u8; len.min(1 << 16)];
        let p = out.as_mut_ptr() as *mut c_void;
        clEnqueueReadBuffer(self.queue, b, CL_TRUE, offset, len, p, 0, null(), null_mut())
    }

    fn align(&self) -> usize {
        let mut bits: cl_uint = 0;
        let p = &mut bits as *mut cl_uint as *mut c_void;
        let r = softcl::api::device::clGetDeviceInfo(self.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 4, p, null_mut());
        assert_eq!(r, SUCCESS);
        bits as usize / 8
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        clReleaseCommandQueue(self.queue);
        clReleaseContext(self.ctx);
    }
}

fn info<T: Default + Copy>(m: cl_mem, name: cl_mem_info) -> T {
    let mut v = T::default();
    let p = &mut v as *mut T as *mut c_void;
    assert_eq!(clGetMemObjectInfo(m, name, std::mem::size_of::<T>(), p, null_mut()), SUCCESS, "query {name:#x}");
    v
}

fn info_size(m: cl_mem, name: cl_mem_info) -> usize {
    let mut n = usize::MAX;
    assert_eq!(clGetMemObjectInfo(m, name, 0, null_mut(), &mut n), SUCCESS);
    n
}

#[test]
fn flag_and_argument_errors_of_create_buffer() {
    let env = Env::new();
    let mut host = [0u8; 64];
    let h = host.as_mut_ptr() as *mut c_void;
    let inv = CL_INVALID_VALUE;
    let cases: &[(u32, i32)] = &[
        (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, inv),
        (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY, inv),
        (CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, inv),
        (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR, inv),
        (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR, inv),
        (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY, inv),
        (CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_NO_ACCESS, inv),
        (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS, inv),
        (CL_MEM_KERNEL_READ_AND_WRITE, inv),
    ];
    for &(flags, want) in cases {
        assert_eq!(env.create_err(flags as u64, 64, null_mut()), want, "flags {flags:#x}");
    }
    assert_eq!(env.create_err(1 << 40, 64, null_mut()), inv, "unknown flag bit");
    // Host pointer rules.
    assert_eq!(env.create_err(CL_MEM_USE_HOST_PTR as u64, 64, null_mut()), CL_INVALID_HOST_PTR);
    assert_eq!(env.create_err(CL_MEM_COPY_HOST_PTR as u64, 64, null_mut()), CL_INVALID_HOST_PTR);
    assert_eq!(env.create_err(CL_MEM_READ_WRITE as u64, 64, h), CL_INVALID_HOST_PTR);
    assert_eq!(env.create_err(CL_MEM_ALLOC_HOST_PTR as u64, 64, h), CL_INVALID_HOST_PTR);
    // Sizes.
    assert_eq!(env.create_err(0, 0, null_mut()), CL_INVALID_BUFFER_SIZE);
    assert_eq!(env.create_err(0, usize::MAX, null_mut()), CL_INVALID_BUFFER_SIZE);
    // Valid combinations.
    assert_eq!(env.create_err((CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR) as u64, 64, h), SUCCESS);
    assert_eq!(env.create_err((CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS) as u64, 64, null_mut()), SUCCESS);
    // Context.
    let mut err = 0;
    assert!(clCreateBuffer(null_mut(), 0, 64, null_mut(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
    assert!(clCreateBuffer(env.queue as cl_context, 0, 64, null_mut(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_CONTEXT);
}

#[test]
fn buffer_with_properties() {
    let env = Env::new();
    let mut err = 0;
    let bad: [cl_mem_properties; 3] = [0x1234, 1, 0];
    assert!(clCreateBufferWithProperties(env.ctx, bad.as_ptr(), 0, 64, null_mut(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_PROPERTY);

    let empty: [cl_mem_properties; 1] = [0];
    let b = clCreateBufferWithProperties(env.ctx, empty.as_ptr(), 0, 64, null_mut(), &mut err);
    assert_eq!(err, SUCCESS);
    assert_eq!(info_size(b, CL_MEM_PROPERTIES), std::mem::size_of::<cl_mem_properties>());
    assert_eq!(info::<cl_mem_properties>(b, CL_MEM_PROPERTIES), 0);
    clReleaseMemObject(b);

    let b = clCreateBufferWithProperties(env.ctx, null(), 0, 64, null_mut(), &mut err);
    assert_eq!(err, SUCCESS);
    assert_eq!(info_size(b, CL_MEM_PROPERTIES), 0);
    clReleaseMemObject(b);
    let b = env.buffer(0, 64, null_mut());
    assert_eq!(info_size(b, CL_MEM_PROPERTIES), 0);
    clReleaseMemObject(b);
}

#[test]
fn info_queries_and_reference_counts() {
    let env = Env::new();
    let mut host = vec![0u8; 256];
    let h = host.as_mut_ptr() as *mut c_void;
    let b = env.buffer(CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, 256, h);
    assert_eq!(info::<cl_mem_object_type>(b, CL_MEM_TYPE), CL_MEM_OBJECT_BUFFER);
    assert_eq!(info::<cl_mem_flags>(b, CL_MEM_FLAGS), (CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY) as u64);
    assert_eq!(info::<usize>(b, CL_MEM_SIZE), 256);
    assert_eq!(info::<*mut c_void>(b, CL_MEM_HOST_PTR), h);
    assert_eq!(info::<cl_uint>(b, CL_MEM_MAP_COUNT), 0);
    assert_eq!(info::<cl_context>(b, CL_MEM_CONTEXT), env.ctx);
    assert_eq!(info::<cl_mem>(b, CL_MEM_ASSOCIATED_MEMOBJECT), null_mut());
    assert_eq!(info::<usize>(b, CL_MEM_OFFSET), 0);
    assert_eq!(info::<cl_bool>(b, CL_MEM_USES_SVM_POINTER), CL_FALSE);
    assert_eq!(info::<cl_uint>(b, CL_MEM_REFERENCE_COUNT), 1);
    assert_eq!(clRetainMemObject(b), SUCCESS);
    assert_eq!(info::<cl_uint>(b, CL_MEM_REFERENCE_COUNT), 2);
    assert_eq!(clReleaseMemObject(b), SUCCESS);
    assert_eq!(info::<cl_uint>(b, CL_MEM_REFERENCE_COUNT), 1);
    assert_eq!(clGetMemObjectInfo(b, 0x7777, 0, null_mut(), null_mut()), CL_INVALID_VALUE);
    assert_eq!(clGetMemObjectInfo(b, CL_MEM_SIZE, 4, host.as_mut_ptr() as *mut c_void, null_mut()), CL_INVALID_VALUE);

    let c = env.buffer(CL_MEM_COPY_HOST_PTR, 256, h);
    assert_eq!(info::<*mut c_void>(c, CL_MEM_HOST_PTR), null_mut(), "only USE_HOST_PTR reports it");
    assert_eq!(info::<cl_mem_flags>(env.buffer(0, 8, null_mut()), CL_MEM_FLAGS), CL_MEM_READ_WRITE as u64);
    clReleaseMemObject(c);
    clReleaseMemObject(b);
    assert_eq!(clRetainMemObject(null_mut()), CL_INVALID_MEM_OBJECT);
    assert_eq!(clReleaseMemObject(env.queue as cl_mem), CL_INVALID_MEM_OBJECT);
}

fn sub(parent: cl_mem, flags: u32, origin: usize, size: usize) -> Result<cl_mem, cl_int> {
    let region = cl_buffer_region { origin, size };
    let mut err = 0;
    let p = &region as *const cl_buffer_region as *const c_void;
    let m = clCreateSubBuffer(parent, flags as u64, CL_BUFFER_CREATE_TYPE_REGION, p, &mut err);
    if err == SUCCESS {
        Ok(m)
    } else {
        assert!(m.is_null());
        Err(err)
    }
}

#[test]
fn sub_buffers() {
    let env = Env::new();
    let a = env.align();
    let mut host = vec![0u8; a * 4];
    let h = host.as_mut_ptr() as *mut c_void;
    let p = env.buffer(CL_MEM_USE_HOST_PTR | CL_MEM_WRITE_ONLY, a * 4, h);
    let s = sub(p, 0, a, a * 2).unwrap();
    assert_eq!(info::<usize>(s, CL_MEM_OFFSET), a);
    assert_eq!(info::<usize>(s, CL_MEM_SIZE), a * 2);
    assert_eq!(info::<cl_mem>(s, CL_MEM_ASSOCIATED_MEMOBJECT), p);
    assert_eq!(info::<*mut c_void>(s, CL_MEM_HOST_PTR) as usize, h as usize + a);
    assert_eq!(info::<cl_mem_flags>(s, CL_MEM_FLAGS), (CL_MEM_USE_HOST_PTR | CL_MEM_WRITE_ONLY) as u64);
    assert_eq!(info_size(s, CL_MEM_PROPERTIES), 0);
    // Writes through the sub-buffer land at the origin of the parent's (host) memory.
    env.write(s, 1, &[7, 8]);
    assert_eq!(&host[a..a + 4], &[0, 7, 8, 0]);

    assert_eq!(sub(s, 0, 0, a).err(), Some(CL_INVALID_MEM_OBJECT), "no sub-buffer of a sub-buffer");
    assert_eq!(sub(p, 0, 1, a).err(), Some(CL_MISALIGNED_SUB_BUFFER_OFFSET));
    assert_eq!(sub(p, 0, a * 3, a * 2).err(), Some(CL_INVALID_VALUE), "out of bounds");
    assert_eq!(sub(p, 0, 0, 0).err(), Some(CL_INVALID_BUFFER_SIZE));
    assert_eq!(sub(p, CL_MEM_READ_WRITE, 0, a).err(), Some(CL_INVALID_VALUE), "parent is write-only");
    assert_eq!(sub(p, CL_MEM_COPY_HOST_PTR, 0, a).err(), Some(CL_INVALID_VALUE));
    assert_eq!(sub(p, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, 0, a).err(), Some(CL_INVALID_VALUE));
    let mut err = 0;
    let region = cl_buffer_region { origin: 0, size: a };
    let rp = &region as *const cl_buffer_region as *const c_void;
    assert!(clCreateSubBuffer(p, 0, 0x9999, rp, &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);
    assert!(clCreateSubBuffer(p, 0, CL_BUFFER_CREATE_TYPE_REGION, null(), &mut err).is_null());
    assert_eq!(err, CL_INVALID_VALUE);

    let q = env.buffer(CL_MEM_HOST_NO_ACCESS, a * 2, null_mut());
    assert_eq!(sub(q, CL_MEM_HOST_READ_ONLY, 0, a).err(), Some(CL_INVALID_VALUE));
    let qs = sub(q, CL_MEM_READ_ONLY, a, a).unwrap();
    assert_eq!(info::<cl_mem_flags>(qs, CL_MEM_FLAGS), (CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS) as u64);

    // The parent lives while a sub-buffer does.
    clReleaseMemObject(p);
    env.write(s, 0, &[1]);
    assert_eq!(host[a], 1);
    for m in [s, q, qs] {
        clReleaseMemObject(m);
    }
}

static ORDER: Mutex<Vec<usize>> = Mutex::new(Vec::new());

extern "C" fn record(_mem: cl_mem, user_data: *mut c_void) {
    ORDER.lock().unwrap().push(user_data as usize);
}

#[test]
fn destructor_callbacks_and_release_while_a_command_is_pending() {
    let env = Env::new();
    let b = env.buffer(0, 1024, null_mut());
    assert_eq!(clSetMemObjectDestructorCallback(b, None, null_mut()), CL_INVALID_VALUE);
    assert_eq!(clSetMemObjectDestructorCallback(null_mut(), Some(record), null_mut()), CL_INVALID_MEM_OBJECT);
    for i in 1..=3usize {
        assert_eq!(clSetMemObjectDestructorCallback(b, Some(record), i as *mut c_void), SUCCESS);
    }
    // A write waiting on a user event keeps the buffer alive after its release.
    let mut err = 0;
    let gate = clCreateUserEvent(env.ctx, &mut err);
    assert_eq!(err, SUCCESS);
    let data = vec![5u8; 1024];
    let mut ev: cl_event = null_mut();
    let dp = data.as_ptr() as *const c_void;
    assert_eq!(clEnqueueWriteBuffer(env.queue, b, CL_FALSE, 0, 1024, dp, 1, &gate, &mut ev), SUCCESS);
    assert_eq!(clReleaseMemObject(b), SUCCESS);
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(ORDER.lock().unwrap().is_empty(), "destroyed while its command is pending");
    assert_eq!(clSetUserEventStatus(gate, CL_COMPLETE as cl_int), SUCCESS);
    assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
    assert_eq!(clFinish(env.queue), SUCCESS);
    // The command's Arc is dropped with the command, right after its event completed.
    for _ in 0..200 {
        if ORDER.lock().unwrap().len() == 3 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(*ORDER.lock().unwrap(), vec![3, 2, 1], "reverse order of registration");
    clReleaseEvent(ev);
    clReleaseEvent(gate);
}

#[test]
fn read_write_copy_fill_round_trips() {
    let env = Env::new();
    let data: Vec<u8> = (0..=255).collect();
    let a = env.buffer(0, 256, null_mut());
    let b = env.buffer(CL_MEM_COPY_HOST_PTR, 256, data.as_ptr() as *mut c_void);
    assert_eq!(env.read(a, 0, 256), vec![0; 256], "zero-initialised");
    assert_eq!(env.read(b, 0, 256), data);
    env.write(a, 10, &data[..20]);
    assert_eq!(env.read(a, 10, 20), data[..20].to_vec());

    let mut ev: cl_event = null_mut();
    assert_eq!(clEnqueueCopyBuffer(env.queue, b, a, 100, 0, 50, 0, null(), &mut ev), SUCCESS);
    assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
    let mut ty: cl_command_type = 0;
    let tp = &mut ty as *mut cl_command_type as *mut c_void;
    assert_eq!(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, 4, tp, null_mut()), SUCCESS);
    assert_eq!(ty, CL_COMMAND_COPY_BUFFER);
    clReleaseEvent(ev);
    assert_eq!(env.read(a, 0, 50), data[100..150].to_vec());
    // Copy within one buffer without overlap.
    assert_eq!(clEnqueueCopyBuffer(env.queue, b, b, 0, 128, 128, 0, null(), null_mut()), SUCCESS);
    assert_eq!(env.read(b, 128, 128), data[..128].to_vec());

    for size in [1usize, 2, 4, 8, 16, 32, 64, 128] {
        let pattern: Vec<u8> = (1..=size as u8).collect();
        let pp = pattern.as_ptr() as *const c_void;
        assert_eq!(clEnqueueFillBuffer(env.queue, a, pp, size, 0, 256, 0, null(), null_mut()), SUCCESS);
        let got = env.read(a, 0, 256);
        assert!(got.chunks(size).all(|c| c == pattern.as_slice()), "pattern of {size}");
    }
    let p = [0xabu8; 256];
    let pp = p.as_ptr() as *const c_void;
    let fill =
        |ps: usize, off: usize, sz: usize| clEnqueueFillBuffer(env.queue, a, pp, ps, off, sz, 0, null(), null_mut());
    assert_eq!(fill(3, 0, 6), CL_INVALID_VALUE);
    assert_eq!(fill(0, 0, 6), CL_INVALID_VALUE);
    assert_eq!(fill(256, 0, 256), CL_INVALID_VALUE);
    assert_eq!(fill(4, 2, 8), CL_INVALID_VALUE);
    assert_eq!(fill(4, 0, 6), CL_INVALID_VALUE);
    assert_eq!(fill(4, 252, 8), CL_INVALID_VALUE);
    assert_eq!(clEnqueueFillBuffer(env.queue, a, null(), 4, 0, 8, 0, null(), null_mut()), CL_INVALID_VALUE);

    // Non-blocking read with an event.
    let mut out = vec![0u8; 256];
    let op = out.as_mut_ptr() as *mut c_void;
    assert_eq!(clEnqueueReadBuffer(env.queue, b, CL_FALSE, 0, 256, op, 0, null(), &mut ev), SUCCESS);
    assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
    clReleaseEvent(ev);
    assert_eq!(&out[..128], &data[..128]);
    for m in [a, b] {
        clReleaseMemObject(m);
    }
}

#[test]
fn bounds_host_access_context_and_wait_list_errors() {
    let env = Env::new();
    let b = env.buffer(0, 64, null_mut());
    let mut out = [0u8; 64];
    let op = out.as_mut_ptr() as *mut c_void;
    assert_eq!(env.read_err(b, 60, 8), CL_INVALID_VALUE);
    assert_eq!(env.read_err(b, usize::MAX, 2), CL_INVALID_VALUE);
    assert_eq!(clEnqueueReadBuffer(env.queue, b, CL_TRUE, 0, 8, null_mut(), 0, null(), null_mut()), CL_INVALID_VALUE);
    assert_eq!(clEnqueueWriteBuffer(env.queue, b, CL_TRUE, 0, 8, null(), 0, null(), null_mut()), CL_INVALID_VALUE);
    assert_eq!(clEnqueueReadBuffer(null_mut(), b, CL_TRUE, 0, 8, op, 0, null(), null_mut()), CL_INVALID_COMMAND_QUEUE);
    assert_eq!(
        clEnqueueReadBuffer(env.queue, null_mut(), CL_TRUE, 0, 8, op, 0, null(), null_mut()),
        CL_INVALID_MEM_OBJECT
    );
    assert_eq!(clEnqueueReadBuffer(env.queue, b, CL_TRUE, 0, 8, op, 1, null(), null_mut()), CL_INVALID_EVENT_WAIT_LIST);
    let bogus: cl_event = b as cl_event;
    assert_eq!(clEnqueueReadBuffer(env.queue, b, CL_TRUE, 0, 8, op, 1, &bogus, null_mut()), CL_INVALID_EVENT_WAIT_LIST);
    assert_eq!(clEnqueueCopyBuffer(env.queue, b, b, 0, 32, 40, 0, null(), null_mut()), CL_INVALID_VALUE);

    // Host access flags.
    let wo = env.buffer(CL_MEM_HOST_WRITE_ONLY, 64, null_mut());
    let ro = env.buffer(CL_MEM_HOST_READ_ONLY, 64, null_mut());
    let na = env.buffer(CL_MEM_HOST_NO_ACCESS, 64, null_mut());
    let wr = |m: cl_mem| clEnqueueWriteBuffer(env.queue, m, CL_TRUE, 0, 8, op, 0, null(), null_mut());
    assert_eq!(env.read_err(wo, 0, 8), CL_INVALID_OPERATION);
    assert_eq!(env.read_err(na, 0, 8), CL_INVALID_OPERATION);
    assert_eq!(env.read_err(ro, 0, 8), SUCCESS);
    assert_eq!(wr(ro), CL_INVALID_OPERATION);
    assert_eq!(wr(na), CL_INVALID_OPERATION);
    assert_eq!(wr(wo), SUCCESS);
    // Copies and fills are device accesses.
    assert_eq!(clEnqueueCopyBuffer(env.queue, na, wo, 0, 0, 64, 0, null(), null_mut()), SUCCESS);

    // A buffer of another context.
    let other = Env::new();
    let ob = other.buffer(0, 64, null_mut());
    assert_eq!(env.read_err(ob, 0, 8), CL_INVALID_CONTEXT);
    assert_eq!(clEnqueueCopyBuffer(env.queue, b, ob, 0, 0, 8, 0, null(), null_mut()), CL_INVALID_CONTEXT);
    let mut err = 0;
    let foreign = clCreateUserEvent(other.ctx, &mut err);
    assert_eq!(clEnqueueReadBuffer(env.queue, b, CL_TRUE, 0, 8, op, 1, &foreign, null_mut()), CL_INVALID_CONTEXT);

    // A blocking command whose wait list failed.
    let gate = clCreateUserEvent(env.ctx, &mut err);
    assert_eq!(clSetUserEventStatus(gate, -42), SUCCESS);
    let r = clEnqueueReadBuffer(env.queue, b, CL_TRUE, 0, 8, op, 1, &gate, null_mut());
    assert_eq!(r, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    for e in [foreign, gate] {
        clReleaseEvent(e);
    }
    for m in [b, wo, ro, na, ob] {
        clReleaseMemObject(m);
    }
}

#[test]
fn copy_overlap() {
    let env = Env::new();
    let a = env.align();
    let b = env.buffer(0, a * 4, null_mut());
    let copy = |s: cl_mem, d: cl_mem, so: usize, dof: usize, n: usize| {
        clEnqueueCopyBuffer(env.queue, s, d, so, dof, n, 0, null(), null_mut())
    };
    assert_eq!(copy(b, b, 0, 8, 16), CL_MEM_COPY_OVERLAP);
    assert_eq!(copy(b, b, 8, 0, 16), CL_MEM_COPY_OVERLAP);
    assert_eq!(copy(b, b, 0, 16, 16), SUCCESS);
    let s1 = sub(b, 0, 0, a * 2).unwrap();
    let s2 = sub(b, 0, a, a * 2).unwrap();
    assert_eq!(copy(s1, s2, a, 0, 8), CL_MEM_COPY_OVERLAP, "sub-buffers of one buffer");
    assert_eq!(copy(s1, s2, 0, 0, 8), SUCCESS);

    // Rect: interleaved columns of one buffer do not overlap; shifted rows do.
    let region = [4usize, 4, 1];
    let rect = |so: [usize; 3], dof: [usize; 3]| {
        clEnqueueCopyBufferRect(
            env.queue,
            b,
            b,
            so.as_ptr(),
            dof.as_ptr(),
            region.as_ptr(),
            16,
            0,
            16,
            0,
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(rect([0, 0, 0], [8, 0, 0]), SUCCESS);
    assert_eq!(rect([0, 0, 0], [2, 1, 0]), CL_MEM_COPY_OVERLAP);
    assert_eq!(rect([0, 0, 0], [0, 4, 0]), SUCCESS);
    for m in [s1, s2, b] {
        clReleaseMemObject(m);
    }
}

#[test]
fn rect_read_write_copy_with_pitches() {
    let env = Env::new();
    // A 16 x 4 x 2 buffer (row pitch 16, slice pitch 64).
    let b = env.buffer(0, 128, null_mut());
    let host: Vec<u8> = (0..128).collect();
    env.write(b, 0, &host);

    // Read a 3 x 2 x 2 box at (1, 1, 0) into a host array with row pitch 5, slice pitch 15,
    // at host origin (1, 0, 0).
    let (bo, ho, region) = ([1usize, 1, 0], [1usize, 0, 0], [3usize, 2, 2]);
    let mut out = vec![0xffu8; 30];
    let op = out.as_mut_ptr() as *mut c_void;
    let r = clEnqueueReadBufferRect(
        env.queue,
        b,
        CL_TRUE,
        bo.as_ptr(),
        ho.as_ptr(),
        region.as_ptr(),
        16,
        64,
        5,
        15,
        op,
        0,
        null(),
        null_mut(),
    );
    assert_eq!(r, SUCCESS);
    let mut want = vec![0xffu8; 30];
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..3 {
                want[z * 15 + y * 5 + 1 + x] = ((z) * 64 + (y + 1) * 16 + 1 + x) as u8;
            }
        }
    }
    assert_eq!(out, want);

    // Write it back shifted to (10, 0, 0) with default buffer pitches given explicitly.
    let bo2 = [10usize, 0, 0];
    let r = clEnqueueWriteBufferRect(
        env.queue,
        b,
        CL_TRUE,
        bo2.as_ptr(),
        ho.as_ptr(),
        region.as_ptr(),
        16,
        64,
        5,
        15,
        op,
        0,
        null(),
        null_mut(),
    );
    assert_eq!(r, SUCCESS);
    let all = env.read(b, 0, 128);
    assert_eq!(&all[10..13], &[17, 18, 19]);
    assert_eq!(&all[64 + 26..64 + 29], &[64 + 33, 64 + 34, 64 + 35]);

    // Copy rect between buffers, then check.
    let c = env.buffer(0, 64, null_mut());
    let (so, dof, region) = ([0usize, 0, 0], [0usize, 0, 0], [4usize, 4, 1]);
    let r = clEnqueueCopyBufferRect(
        env.queue,
        b,
        c,
        so.as_ptr(),
        dof.as_ptr(),
        region.as_ptr(),
        16,
        0,
        4,
        0,
        0,
        null(),
        null_mut(),
    );
    assert_eq!(r, SUCCESS);
    let got = env.read(c, 0, 16);
    let want: Vec<u8> = (0..4).flat_map(|y| all[y * 16..y * 16 + 4].to_vec()).collect();
    assert_eq!(got, want);

    // Errors: zero region, small pitches, out of bounds, NULL arguments.
    let rd = |bo: [usize; 3], region: [usize; 3], brp: usize, bsp: usize, hrp: usize| {
        clEnqueueReadBufferRect(
            env.queue,
            b,
            CL_TRUE,
            bo.as_ptr(),
            ho.as_ptr(),
            region.as_ptr(),
            brp,
            bsp,
            hrp,
            0,
            op,
            0,
            null(),
            null_mut(),
        )
    };
    assert_eq!(rd([0; 3], [0, 1, 1], 0, 0, 0), CL_INVALID_VALUE);
    assert_eq!(rd([0; 3], [4, 1, 1], 3, 0, 0), CL_INVALID_VALUE);
    assert_eq!(rd([0; 3], [4, 1, 1], 0, 0, 3), CL_INVALID_VALUE);
    assert_eq!(rd([0; 3], [4, 2, 1], 16, 20, 0), CL_INVALID_VALUE);
    assert_eq!(rd([0, 0, 1], [4, 4, 2], 16, 64, 0), CL_INVALID_VALUE, "past the end");
    assert_eq!(rd([0, 0, 1], [4, 4, 1], 16, 64, 0), SUCCESS);
    let r = clEnqueueReadBufferRect(
        env.queue,
        b,
        CL_TRUE,
        null(),
        ho.as_ptr(),
        region.as_ptr(),
        0,
        0,
        0,
        0,
        op,
        0,
        null(),
        null_mut(),
    );
    assert_eq!(r, CL_INVALID_VALUE);
    let r = clEnqueueReadBufferRect(
        env.queue,
        b,
        CL_TRUE,
        so.as_ptr(),
        ho.as_ptr(),
        region.as_ptr(),
        0,
        0,
        0,
        0,
        null_mut(),
        0,
        null(),
        null_mut(),
    );
    assert_eq!(r, CL_INVALID_VALUE);
    // Same buffer with both pitches different.
    let r = clEnqueueCopyBufferRect(
        env.queue,
        b,
        b,
        so.as_ptr(),
        [0usize, 0, 1].as_ptr(),
        [4usize, 2, 1].as_ptr(),
        16,
        32,
        8,
        16,
        0,
        null(),
        null_mut(),
    );
    assert_eq!(r, CL_INVALID_VALUE);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
}

#[test]
fn map_and_unmap() {
    let env = Env::new();
    let b = env.buffer(0, 256, null_mut());
    let mut err = 0;
    // Blocking map: a pointer into the buffer; writes through it are the buffer's contents.
    let p = clEnqueueMapBuffer(env.queue, b, CL_TRUE, CL_MAP_WRITE as u64, 16, 32, 0, null(), null_mut(), &mut err);
    assert_eq!(err, SUCCESS);
    assert!(!p.is_null());
    assert_eq!(info::<cl_uint>(b, CL_MEM_MAP_COUNT), 1);
    // SAFETY: p maps 32 bytes of the buffer, mapped for writing.
    unsafe { std::slice::from_raw_parts_mut(p as *mut u8, 32).fill(9) };
    assert_eq!(
        clEnqueueUnmapMemObject(env.queue, b, (p as usize + 1) as *mut c_void, 0, null(), null_mut()),
        CL_INVALID_VALUE
    );
    assert_eq!(clEnqueueUnmapMemObject(env.queue, b, p, 0, null(), null_mut()), SUCCESS);
    assert_eq!(clEnqueueUnmapMemObject(env.queue, b, p, 0, null(), null_mut()), CL_INVALID_VALUE, "already unmapped");
    assert_eq!(info::<cl_uint>(b, CL_MEM_MAP_COUNT), 0);
    let got = env.read(b, 0, 64);
    assert!(got[16..48].iter().all(|&x| x == 9) && got[..16].iter().all(|&x| x == 0));

    // Non-blocking map behind a user event: the pointer comes back at once, the event completes
    // once the gate opens.
    let gate = clCreateUserEvent(env.ctx, &mut err);
    let mut ev: cl_event = null_mut();
    let q = clEnqueueMapBuffer(env.queue, b, CL_FALSE, CL_MAP_READ as u64, 0, 64, 1, &gate, &mut ev, &mut err);
    assert_eq!(err, SUCCESS);
    let mut status: cl_int = 0;
    let sp = &mut status as *mut cl_int as *mut c_void;
    assert_eq!(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, 4, sp, null_mut()), SUCCESS);
    assert!(status > CL_COMPLETE as cl_int, "waits for the gate");
    assert_eq!(clSetUserEventStatus(gate, CL_COMPLETE as cl_int), SUCCESS);
    assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
    // SAFETY: q maps 64 bytes of the buffer for reading and the map has completed.
    assert_eq!(unsafe { *(q as *const u8).add(20) }, 9);
    let mut uev: cl_event = null_mut();
    assert_eq!(clEnqueueUnmapMemObject(env.queue, b, q, 0, null(), &mut uev), SUCCESS);
    assert_eq!(clWaitForEvents(1, &uev), SUCCESS);
    for e in [gate, ev, uev] {
        clReleaseEvent(e);
    }

    // Flag and range errors.
    let map = |flags: u32, off: usize, size: usize, m: cl_mem| {
        let mut err = 0;
        let p = clEnqueueMapBuffer(env.queue, m, CL_TRUE, flags as u64, off, size, 0, null(), null_mut(), &mut err);
        if err == SUCCESS {
            clEnqueueUnmapMemObject(env.queue, m, p, 0, null(), null_mut());
        } else {
            assert!(p.is_null());
        }
        err
    };
    assert_eq!(map(CL_MAP_READ, 0, 0, b), CL_INVALID_VALUE);
    assert_eq!(map(CL_MAP_READ, 200, 64, b), CL_INVALID_VALUE);
    assert_eq!(map(CL_MAP_WRITE_INVALIDATE_REGION | CL_MAP_READ, 0, 8, b), CL_INVALID_VALUE);
    assert_eq!(map(1 << 7, 0, 8, b), CL_INVALID_VALUE);
    assert_eq!(map(CL_MAP_WRITE_INVALIDATE_REGION, 0, 8, b), SUCCESS);
    let hw = env.buffer(CL_MEM_HOST_WRITE_ONLY, 64, null_mut());
    let hr = env.buffer(CL_MEM_HOST_READ_ONLY, 64, null_mut());
    assert_eq!(map(CL_MAP_READ, 0, 8, hw), CL_INVALID_OPERATION);
    assert_eq!(map(CL_MAP_WRITE, 0, 8, hw), SUCCESS);
    assert_eq!(map(CL_MAP_WRITE_INVALIDATE_REGION, 0, 8, hr), CL_INVALID_OPERATION);
    assert_eq!(map(CL_MAP_READ, 0, 8, hr), SUCCESS);
    assert_eq!(clEnqueueUnmapMemObject(env.queue, hr, p, 0, null(), null_mut()), CL_INVALID_VALUE, "not from hr");
    for m in [b, hw, hr] {
        clReleaseMemObject(m);
    }
}

#[test]
fn use_host_ptr_map_returns_the_host_pointer() {
    let env = Env::new();
    let mut host = vec![3u8; 128];
    let h = host.as_mut_ptr() as *mut c_void;
    let b = env.buffer(CL_MEM_USE_HOST_PTR, 128, h);
    let mut err = 0;
    let p = clEnqueueMapBuffer(env.queue, b, CL_TRUE, CL_MAP_READ as u64, 40, 8, 0, null(), null_mut(), &mut err);
    assert_eq!(err, SUCCESS);
    assert_eq!(p as usize, h as usize + 40);
    assert_eq!(clEnqueueUnmapMemObject(env.queue, b, p, 0, null(), null_mut()), SUCCESS);
    // Commands write straight into the host memory.
    env.write(b, 0, &[1, 2, 3]);
    assert_eq!(&host[..4], &[1, 2, 3, 3]);
    clReleaseMemObject(b);
}

#[test]
fn migrate_and_image_formats() {
    let env = Env::new();
    let b = env.buffer(0, 64, null_mut());
    let mut ev: cl_event = null_mut();
    let host = CL_MIGRATE_MEM_OBJECT_HOST as u64;
    assert_eq!(clEnqueueMigrateMemObjects(env.queue, 1, &b, host, 0, null(), &mut ev), SUCCESS);
    assert_eq!(clWaitForEvents(1, &ev), SUCCESS);
    clReleaseEvent(ev);
    assert_eq!(clEnqueueMigrateMemObjects(env.queue, 0, &b, 0, 0, null(), null_mut()), CL_INVALID_VALUE);
    assert_eq!(clEnqueueMigrateMemObjects(env.queue, 1, null(), 0, 0, null(), null_mut()), CL_INVALID_VALUE);
    assert_eq!(clEnqueueMigrateMemObjects(env.queue, 1, &b, 1 << 5, 0, null(), null_mut()), CL_INVALID_VALUE);
    let bad: cl_mem = env.queue as cl_mem;
    assert_eq!(clEnqueueMigrateMemObjects(env.queue, 1, &bad, 0, 0, null(), null_mut()), CL_INVALID_MEM_OBJECT);
    assert_eq!(clFinish(env.queue), SUCCESS);
    clReleaseMemObject(b);

    let mut n: cl_uint = 99;
    let img2d = CL_MEM_OBJECT_IMAGE2D;
    assert_eq!(clGetSupportedImageFormats(env.ctx, CL_MEM_READ_ONLY as u64, img2d, 0, null_mut(), &mut n), SUCCESS);
    assert!(n >= 4, "both devices support images: {n} formats");
    let mut fmts = [cl_image_format { image_channel_order: 0, image_channel_data_type: 0 }; 4];
    let fp = fmts.as_mut_ptr();
    let rw = CL_MEM_READ_WRITE as u64;
    assert_eq!(clGetSupportedImageFormats(env.ctx, rw, img2d, 0, fp, &mut n), CL_INVALID_VALUE);
    assert_eq!(clGetSupportedImageFormats(env.ctx, rw, CL_MEM_OBJECT_BUFFER, 4, fp, &mut n), CL_INVALID_VALUE);
    assert_eq!(clGetSupportedImageFormats(env.ctx, 1 << 40, img2d, 4, fp, &mut n), CL_INVALID_VALUE);
    assert_eq!(clGetSupportedImageFormats(null_mut(), rw, img2d, 4, fp, &mut n), CL_INVALID_CONTEXT);
    let krw = (CL_MEM_KERNEL_READ_AND_WRITE | CL_MEM_READ_WRITE) as u64;
    assert_eq!(clGetSupportedImageFormats(env.ctx, krw, img2d, 4, fp, &mut n), SUCCESS);
}
