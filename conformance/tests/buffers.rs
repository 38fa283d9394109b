//! Buffers: host-pointer flags, read/write/copy/fill, rectangles, map/unmap, sub-buffers.

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;

const DOUBLE_PLUS_ONE: &str = r#"
__kernel void dpo(__global float* p) {
    size_t i = get_global_id(0);
    p[i] = p[i] * 2.0f + 1.0f;
}"#;

#[repr(C, align(4096))]
struct Page([f32; 1024]);

/// clEnqueueMapBuffer; returns the pointer and the event.
fn map(
    q: cl_command_queue,
    mem: &Mem,
    blocking: bool,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    wait: &[cl_event],
) -> (*mut c_void, Event) {
    let mut ev: cl_event = ptr::null_mut();
    // SAFETY: a valid queue and buffer; the wait list holds wait.len() events.
    unsafe {
        let p = cl_create!(clEnqueueMapBuffer(
            q,
            mem.raw(),
            if blocking { CL_TRUE } else { CL_FALSE },
            flags,
            offset,
            size,
            wait.len() as cl_uint,
            if wait.is_empty() { ptr::null() } else { wait.as_ptr() },
            &mut ev
        ));
        (p, Event::from_raw(ev))
    }
}

fn unmap(q: cl_command_queue, mem: &Mem, p: *mut c_void) -> Event {
    let mut ev: cl_event = ptr::null_mut();
    // SAFETY: p was returned by a map of this buffer.
    unsafe {
        cl!(clEnqueueUnmapMemObject(q, mem.raw(), p, 0, ptr::null(), &mut ev));
        Event::from_raw(ev)
    }
}

#[test]
fn use_host_ptr_kernel_writes_reach_host_array() {
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(DOUBLE_PLUS_ONE, "", "dpo");
        let n = 1024usize;
        let host: *mut Page = Box::into_raw(Box::new(Page(std::array::from_fn(|i| i as f32))));
        // SAFETY: host points to a live, 4096-byte aligned Page that outlives the buffer
        // (freed after the Mem is released below); Rust does not touch it while the device
        // may, only after the map/unmap has completed.
        unsafe {
            let host_ptr = (*host).0.as_mut_ptr().cast::<c_void>();
            let mem = Mem::from_raw(cl_create!(clCreateBuffer(
                env.context.raw(),
                CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                n * 4,
                host_ptr
            )));
            assert_eq!(mem_info::<*mut c_void>(mem.raw(), CL_MEM_HOST_PTR), host_ptr);
            let flags: cl_mem_flags = mem_info(mem.raw(), CL_MEM_FLAGS);
            assert_eq!(flags, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR);
            assert_eq!(mem_info::<usize>(mem.raw(), CL_MEM_SIZE), n * 4);
            k.set_mem(0, &mem);
            let run = env.enqueue(&k, &[n], Some(&[64]));
            let (p, mev) = map(env.q(), &mem, true, CL_MAP_READ, 0, n * 4, &[run.raw()]);
            assert_eq!(mev.status(), CL_COMPLETE);
            assert_eq!(p, host_ptr, "map of a USE_HOST_PTR buffer must return host_ptr");
            let mapped = std::slice::from_raw_parts(p.cast::<f32>(), n);
            for (i, v) in mapped.iter().enumerate() {
                assert_eq!(*v, i as f32 * 2.0 + 1.0, "mapped[{i}]");
            }
            unmap(env.q(), &mem, p).wait();
            env.finish();
            for i in 0..n {
                assert_eq!((*host).0[i], i as f32 * 2.0 + 1.0, "host[{i}]");
            }
            drop(mem);
            drop(Box::from_raw(host));
        }
    });
}

#[test]
fn alloc_host_ptr_map_write_kernel_map_read() {
    for_each_device(|d| {
        let env = d.env();
        let k = env.kernel(DOUBLE_PLUS_ONE, "", "dpo");
        let n = 2048usize;
        let mem = env.buffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, n * 4);
        let (p, _) = map(env.q(), &mem, true, CL_MAP_WRITE_INVALIDATE_REGION, 0, n * 4, &[]);
        assert!(!p.is_null());
        // SAFETY: a blocking map gives n floats of writable host memory until the unmap.
        unsafe {
            let s = std::slice::from_raw_parts_mut(p.cast::<f32>(), n);
            for (i, v) in s.iter_mut().enumerate() {
                *v = (n - i) as f32;
            }
        }
        let un = unmap(env.q(), &mem, p);
        k.set_mem(0, &mem);
        let run = enqueue_nd(env.q(), &k, None, &[n], None, &[un.raw()]);
        let (p, _) = map(env.q(), &mem, true, CL_MAP_READ, 0, n * 4, &[run.raw()]);
        // SAFETY: a blocking read map gives n readable floats until the unmap.
        let got: Vec<f32> = unsafe { std::slice::from_raw_parts(p.cast::<f32>(), n).to_vec() };
        unmap(env.q(), &mem, p).wait();
        for (i, g) in got.iter().enumerate() {
            assert_eq!(*g, (n - i) as f32 * 2.0 + 1.0, "[{i}]");
        }
    });
}

#[test]
fn copy_host_ptr_copies_at_creation() {
    for_each_device(|d| {
        let env = d.env();
        let mut data: Vec<u32> = (0..500).map(|i| i * 11).collect();
        let mem = env.buffer_from(CL_MEM_READ_WRITE, &data);
        let original = data.clone();
        data.iter_mut().for_each(|v| *v = 0xdead);
        assert_eq!(env.read::<u32>(&mem, 500), original);
        let hp: *mut c_void = mem_info(mem.raw(), CL_MEM_HOST_PTR);
        assert!(hp.is_null(), "CL_MEM_HOST_PTR of a COPY_HOST_PTR buffer");
        let flags: cl_mem_flags = mem_info(mem.raw(), CL_MEM_FLAGS);
        assert_eq!(flags, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR);
        assert_eq!(mem_info::<cl_mem_object_type>(mem.raw(), CL_MEM_TYPE), CL_MEM_OBJECT_BUFFER);
        assert_eq!(mem_info::<cl_context>(mem.raw(), CL_MEM_CONTEXT), env.context.raw());
    });
}

#[test]
fn read_write_copy_with_offsets() {
    for_each_device(|d| {
        let env = d.env();
        let n = 1000usize;
        let a = env.buffer_from(CL_MEM_READ_WRITE, &vec![7u32; n]);
        let b = env.buffer_from(CL_MEM_READ_WRITE, &vec![9u32; n]);
        let patch: Vec<u32> = (0..100).map(|i| 1000 + i).collect();
        // Non-blocking write at element 200, then a copy waiting for it.
        let mut wev: cl_event = ptr::null_mut();
        let mut cev: cl_event = ptr::null_mut();
        // SAFETY: patch lives until the wait below; offsets and sizes are in bounds.
        unsafe {
            cl!(clEnqueueWriteBuffer(
                env.q(),
                a.raw(),
                CL_FALSE,
                200 * 4,
                100 * 4,
                patch.as_ptr().cast(),
                0,
                ptr::null(),
                &mut wev
            ));
            let wev = Event::from_raw(wev);
            // a[150..350] -> b[600..800]
            cl!(clEnqueueCopyBuffer(env.q(), a.raw(), b.raw(), 150 * 4, 600 * 4, 200 * 4, 1, &wev.raw(), &mut cev));
            let cev = Event::from_raw(cev);
            cev.wait();
            assert_eq!(wev.status(), CL_COMPLETE);
        }
        let mut want_a = vec![7u32; n];
        want_a[200..300].copy_from_slice(&patch);
        assert_eq!(env.read::<u32>(&a, n), want_a);
        let mut want_b = vec![9u32; n];
        want_b[600..800].copy_from_slice(&want_a[150..350]);
        assert_eq!(env.read::<u32>(&b, n), want_b);
        // A read at an offset.
        assert_eq!(read_buffer::<u32>(env.q(), &b, 599, 3), vec![9, 7, 7]);
        // Copy inside one buffer, non-overlapping.
        // SAFETY: in-bounds, disjoint ranges of one buffer.
        unsafe {
            cl!(clEnqueueCopyBuffer(env.q(), b.raw(), b.raw(), 600 * 4, 0, 100 * 4, 0, ptr::null(), ptr::null_mut()));
        }
        env.finish();
        assert_eq!(env.read::<u32>(&b, 100), want_b[600..700].to_vec());
    });
}

#[test]
fn fill_buffer_patterns() {
    for_each_device(|d| {
        let env = d.env();
        let bytes = 256usize;
        let mem = env.buffer_from(CL_MEM_READ_WRITE, &vec![0u8; bytes]);
        let mut want = vec![0u8; bytes];
        let patterns: [&[u8]; 5] = [
            &[0xab],
            &[1, 2],
            &[0x10, 0x20, 0x30, 0x40],
            &[1, 2, 3, 4, 5, 6, 7, 8],
            &[9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 11, 12, 13, 14, 15, 16],
        ];
        let mut offset = 0usize;
        for pat in patterns {
            // offset and size must be multiples of the pattern size.
            offset = offset.next_multiple_of(pat.len());
            let size = pat.len() * 3;
            // SAFETY: the pattern is read during the call; offset/size are multiples of
            // the pattern size and in bounds.
            unsafe {
                cl!(clEnqueueFillBuffer(
                    env.q(),
                    mem.raw(),
                    pat.as_ptr().cast(),
                    pat.len(),
                    offset,
                    size,
                    0,
                    ptr::null(),
                    ptr::null_mut()
                ));
            }
            for j in 0..size {
                want[offset + j] = pat[j % pat.len()];
            }
            offset += size + pat.len(); // leave a gap of one pattern
        }
        env.finish();
        assert_eq!(env.read::<u8>(&mem, bytes), want);
        // A float fill over the whole buffer.
        let one = 1.5f32;
        // SAFETY: as above.
        unsafe {
            cl!(clEnqueueFillBuffer(
                env.q(),
                mem.raw(),
                (&one as *const f32).cast(),
                4,
                0,
                bytes,
                0,
                ptr::null(),
                ptr::null_mut()
            ));
        }
        assert_eq!(env.read::<f32>(&mem, bytes / 4), vec![1.5; bytes / 4]);
    });
}

#[test]
fn read_write_buffer_rect() {
    for_each_device(|d| {
        let env = d.env();
        // An 8 x 6 matrix of u32, row pitch 32 bytes.
        let (w, h) = (8usize, 6usize);
        let init: Vec<u32> = (0..(w * h) as u32).collect();
        let mem = env.buffer_from(CL_MEM_READ_WRITE, &init);
        // Write a 3 x 2 block at column 2, row 1 from a tight host array.
        let block: [u32; 6] = [100, 101, 102, 110, 111, 112];
        let origin = [2 * 4, 1, 0];
        let host_origin = [0usize, 0, 0];
        let region = [3 * 4, 2, 1];
        // SAFETY: every row and slice stays inside the buffer and the host arrays.
        unsafe {
            cl!(clEnqueueWriteBufferRect(
                env.q(),
                mem.raw(),
                CL_TRUE,
                origin.as_ptr(),
                host_origin.as_ptr(),
                region.as_ptr(),
                w * 4,
                0,
                3 * 4,
                0,
                block.as_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut()
            ));
        }
        let mut want = init.clone();
        for r in 0..2 {
            for c in 0..3 {
                want[(1 + r) * w + 2 + c] = block[r * 3 + c];
            }
        }
        assert_eq!(env.read::<u32>(&mem, w * h), want);
        // Read a 4 x 3 block at column 1, row 2 into a host array with row pitch 5
        // elements, starting at host column 1.
        let mut host = [0u32; 5 * 3];
        let origin = [4usize, 2, 0];
        let host_origin = [4usize, 0, 0];
        let region = [4 * 4, 3, 1];
        // SAFETY: as above.
        unsafe {
            cl!(clEnqueueReadBufferRect(
                env.q(),
                mem.raw(),
                CL_TRUE,
                origin.as_ptr(),
                host_origin.as_ptr(),
                region.as_ptr(),
                w * 4,
                0,
                5 * 4,
                0,
                host.as_mut_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut()
            ));
        }
        let mut want_host = [0u32; 15];
        for r in 0..3 {
            for c in 0..4 {
                want_host[r * 5 + 1 + c] = want[(2 + r) * w + 1 + c];
            }
        }
        assert_eq!(host, want_host);
    });
}

#[test]
fn map_non_blocking_with_events() {
    for_each_device(|d| {
        let env = d.env();
        let data: Vec<i32> = (0..256).map(|i| i * i - 1000).collect();
        let mem = env.buffer_from(CL_MEM_READ_WRITE, &data);
        // Map elements 16..80 for reading, non-blocking.
        let (p, ev) = map(env.q(), &mem, false, CL_MAP_READ, 16 * 4, 64 * 4, &[]);
        ev.wait();
        assert_eq!(ev.status(), CL_COMPLETE);
        assert_eq!(event_info::<cl_command_type>(ev.raw(), CL_EVENT_COMMAND_TYPE), CL_COMMAND_MAP_BUFFER);
        // SAFETY: the map's event is complete: 64 readable ints until the unmap.
        let got = unsafe { std::slice::from_raw_parts(p.cast::<i32>(), 64).to_vec() };
        assert_eq!(got, data[16..80].to_vec());
        let uev = unmap(env.q(), &mem, p);
        uev.wait();
        assert_eq!(uev.status(), CL_COMPLETE);
        assert_eq!(event_info::<cl_command_type>(uev.raw(), CL_EVENT_COMMAND_TYPE), CL_COMMAND_UNMAP_MEM_OBJECT);
        // Map for writing, non-blocking, modify, unmap, read back.
        let (p, ev) = map(env.q(), &mem, false, CL_MAP_WRITE, 0, 8 * 4, &[]);
        ev.wait();
        // SAFETY: the map's event is complete: 8 writable ints until the unmap.
        unsafe {
            std::slice::from_raw_parts_mut(p.cast::<i32>(), 8).copy_from_slice(&[5; 8]);
        }
        unmap(env.q(), &mem, p).wait();
        let mut want = data.clone();
        want[..8].copy_from_slice(&[5; 8]);
        assert_eq!(env.read::<i32>(&mem, 256), want);
    });
}

#[test]
fn sub_buffer_views_parent() {
    for_each_device(|d| {
        let env = d.env();
        let align_bits: cl_uint = device_info(d.id, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
        let align = (align_bits / 8) as usize;
        let n = align / 4 + 128; // floats: the sub-buffer and some after it
        let parent = env.buffer_from(CL_MEM_READ_WRITE, &vec![1.0f32; n]);
        let region = cl_buffer_region { origin: align, size: 64 * 4 };
        // SAFETY: a valid parent; region is in bounds and aligned to the base address
        // alignment; the region struct is read during the call.
        let sub = unsafe {
            Mem::from_raw(cl_create!(clCreateSubBuffer(
                parent.raw(),
                CL_MEM_READ_WRITE,
                CL_BUFFER_CREATE_TYPE_REGION,
                (&region as *const cl_buffer_region).cast()
            )))
        };
        assert_eq!(mem_info::<cl_mem>(sub.raw(), CL_MEM_ASSOCIATED_MEMOBJECT), parent.raw());
        assert_eq!(mem_info::<usize>(sub.raw(), CL_MEM_OFFSET), align);
        assert_eq!(mem_info::<usize>(sub.raw(), CL_MEM_SIZE), 256);
        let k = env.kernel(DOUBLE_PLUS_ONE, "", "dpo");
        k.set_mem(0, &sub);
        env.run(&k, &[64], None);
        let got: Vec<f32> = env.read(&parent, n);
        for (i, g) in got.iter().enumerate() {
            let inside = i >= align / 4 && i < align / 4 + 64;
            assert_eq!(*g, if inside { 3.0 } else { 1.0 }, "parent[{i}]");
        }
    });
}

/// "CL_INVALID_MEM_OBJECT if buffer is not a valid buffer object": an image is no buffer
/// to take a sub-buffer of (it was CL_SUCCESS).
#[test]
fn no_sub_buffer_of_an_image() {
    for_each_device(|d| {
        let env = d.env();
        let format = cl_image_format { image_channel_order: CL_RGBA, image_channel_data_type: CL_UNORM_INT8 };
        let desc = cl_image_desc {
            image_type: CL_MEM_OBJECT_IMAGE2D,
            image_width: 16,
            image_height: 16,
            ..Default::default()
        };
        // SAFETY: a valid context; the format and descriptor live for the call.
        let image = unsafe {
            Mem::from_raw(cl_create!(clCreateImage(
                env.context.raw(),
                CL_MEM_READ_WRITE,
                &format,
                &desc,
                ptr::null_mut()
            )))
        };
        let region = cl_buffer_region { origin: 0, size: 64 };
        // SAFETY: a valid image handle; the region struct is read during the call.
        let (sub, err) = unsafe {
            cl_create_err!(clCreateSubBuffer(
                image.raw(),
                CL_MEM_READ_WRITE,
                CL_BUFFER_CREATE_TYPE_REGION,
                (&region as *const cl_buffer_region).cast()
            ))
        };
        assert!(sub.is_null(), "a sub-buffer of an image on {}", d.kind);
        expect_error("clCreateSubBuffer of an image", err, CL_INVALID_MEM_OBJECT);
    });
}
