//! Images and samplers through the loader: creation of every kind of image and its errors,
//! queries, supported formats, read/write/copy/fill/map, samplers, kernel arguments, 2D
//! images created from 2D images.

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;

fn fmt(order: u32, ty: u32) -> cl_image_format {
    cl_image_format { image_channel_order: order, image_channel_data_type: ty }
}

fn desc(ty: u32, size: [usize; 3], layers: usize, pitches: (usize, usize)) -> cl_image_desc {
    cl_image_desc {
        image_type: ty as cl_mem_object_type,
        image_width: size[0],
        image_height: size[1],
        image_depth: size[2],
        image_array_size: layers,
        image_row_pitch: pitches.0,
        image_slice_pitch: pitches.1,
        ..Default::default()
    }
}

fn create(
    ctx: cl_context,
    flags: cl_mem_flags,
    f: &cl_image_format,
    d: &cl_image_desc,
    host: *mut c_void,
) -> Result<Mem, cl_int> {
    // SAFETY: valid context; format and descriptor live for the call; host is NULL or holds
    // the image (each caller sizes it).
    let (m, err) = unsafe { cl_create_err!(clCreateImage(ctx, flags, f, d, host)) };
    if err == CL_SUCCESS {
        // SAFETY: a new image whose reference we own.
        Ok(unsafe { Mem::from_raw(m) })
    } else {
        assert!(m.is_null());
        Err(err)
    }
}

fn image_info<T: Pod>(m: &Mem, param: u32) -> T {
    // SAFETY: a valid image; the size and buffer come from info_value.
    info_value("clGetImageInfo", |s, v, r| unsafe { clGetImageInfo(m.raw(), param, s, v, r) })
}

fn mem_info<T: Pod>(m: &Mem, param: u32) -> T {
    // SAFETY: as above.
    info_value("clGetMemObjectInfo", |s, v, r| unsafe { clGetMemObjectInfo(m.raw(), param, s, v, r) })
}

fn write_image(
    q: cl_command_queue,
    m: &Mem,
    origin: [usize; 3],
    region: [usize; 3],
    pitch: (usize, usize),
    data: &[u8],
) {
    // SAFETY: data holds the region with these pitches (callers size it); blocking.
    unsafe {
        cl!(clEnqueueWriteImage(
            q,
            m.raw(),
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            pitch.0,
            pitch.1,
            data.as_ptr() as *const c_void,
            0,
            ptr::null(),
            ptr::null_mut()
        ))
    };
}

/// A blocking clEnqueueReadImage of the region into `out`: its error code.
///
/// # Safety
/// `out` holds the region with these pitches, or the call is one that must fail.
unsafe fn try_read_image(
    q: cl_command_queue,
    m: &Mem,
    origin: [usize; 3],
    region: [usize; 3],
    pitch: (usize, usize),
    out: &mut [u8],
) -> cl_int {
    // SAFETY: the caller's promise; origin and region are arrays of three; blocking.
    unsafe {
        clEnqueueReadImage(
            q,
            m.raw(),
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            pitch.0,
            pitch.1,
            out.as_mut_ptr() as *mut c_void,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    }
}

fn read_image(
    q: cl_command_queue,
    m: &Mem,
    origin: [usize; 3],
    region: [usize; 3],
    pitch: (usize, usize),
    n: usize,
) -> Vec<u8> {
    let mut out = vec![0xAAu8; n];
    // SAFETY: out holds n bytes, the region with these pitches (callers size it).
    check("clEnqueueReadImage", unsafe { try_read_image(q, m, origin, region, pitch, &mut out) });
    out
}

/// clEnqueueFillImage of region `r` at `o` with the color at `color`: its error code.
///
/// # Safety
/// `color` points at four 32-bit components, or the call is one that must fail.
unsafe fn try_fill_image(q: cl_command_queue, m: &Mem, color: *const c_void, o: [usize; 3], r: [usize; 3]) -> cl_int {
    // SAFETY: the caller's promise for color; arrays of three.
    unsafe { clEnqueueFillImage(q, m.raw(), color, o.as_ptr(), r.as_ptr(), 0, ptr::null(), ptr::null_mut()) }
}

/// A blocking clEnqueueMapImage of region `r` at `o`: the mapped pointer and the error code.
fn map_image(
    q: cl_command_queue,
    m: &Mem,
    flags: cl_map_flags,
    o: [usize; 3],
    r: [usize; 3],
    row_pitch: &mut usize,
    slice_pitch: Option<&mut usize>,
) -> (*mut c_void, cl_int) {
    let mut err = CL_INT_UNSET;
    let sp = slice_pitch.map_or(ptr::null_mut(), |p| p as *mut usize);
    // SAFETY: a valid image (or the error is what is tested), arrays of three, out-pointers.
    let p = unsafe {
        clEnqueueMapImage(
            q,
            m.raw(),
            CL_TRUE,
            flags,
            o.as_ptr(),
            r.as_ptr(),
            row_pitch,
            sp,
            0,
            ptr::null(),
            ptr::null_mut(),
            &mut err,
        )
    };
    (p, err)
}

/// clEnqueueCopyImage of region `r` from `a` at `so` to `b` at `dof`: its error code.
fn try_copy_image(q: cl_command_queue, a: &Mem, b: &Mem, so: [usize; 3], dof: [usize; 3], r: [usize; 3]) -> cl_int {
    // SAFETY: valid objects (or the error is what is tested); arrays of three.
    unsafe {
        clEnqueueCopyImage(q, a.raw(), b.raw(), so.as_ptr(), dof.as_ptr(), r.as_ptr(), 0, ptr::null(), ptr::null_mut())
    }
}

/// clEnqueueCopyImageToBuffer of region `r` of `a` at `o` into `buf` at `offset`: its error
/// code.
fn try_copy_image_to_buffer(
    q: cl_command_queue,
    a: &Mem,
    buf: &Mem,
    o: [usize; 3],
    r: [usize; 3],
    offset: usize,
) -> cl_int {
    // SAFETY: valid objects (or the error is what is tested); arrays of three.
    unsafe {
        clEnqueueCopyImageToBuffer(
            q,
            a.raw(),
            buf.raw(),
            o.as_ptr(),
            r.as_ptr(),
            offset,
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    }
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed)).collect()
}

/// Image type, size, layers, pitches, and clGetImageInfo's (width, height, depth, layers).
type Case = (u32, [usize; 3], usize, (usize, usize), (usize, usize, usize, usize));
/// Image type, size, layers, origin and region of a round trip.
type Kind = (u32, [usize; 3], usize, [usize; 3], [usize; 3]);

const RGBA8: (u32, u32) = (CL_RGBA, CL_UNORM_INT8);

#[test]
fn both_devices_report_images() {
    for_each_device(|d| {
        // SAFETY: valid device.
        let v =
            |p: u32| info_value::<cl_bool>("clGetDeviceInfo", |s, v, r| unsafe { clGetDeviceInfo(d.id, p, s, v, r) });
        let z = |p: u32| info_value::<usize>("clGetDeviceInfo", |s, v, r| unsafe { clGetDeviceInfo(d.id, p, s, v, r) });
        assert_eq!(v(CL_DEVICE_IMAGE_SUPPORT), CL_TRUE);
        assert_eq!((z(CL_DEVICE_IMAGE2D_MAX_WIDTH), z(CL_DEVICE_IMAGE2D_MAX_HEIGHT)), (16384, 16384));
        assert!(z(CL_DEVICE_IMAGE3D_MAX_DEPTH) >= 2048 && z(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE) >= 2048);
        // SAFETY: valid device.
        let ext =
            info_string("clGetDeviceInfo", |s, v, r| unsafe { clGetDeviceInfo(d.id, CL_DEVICE_EXTENSIONS, s, v, r) });
        for e in ["cl_khr_image2d_from_buffer", "cl_khr_3d_image_writes", "cl_khr_depth_images"] {
            assert!(ext.split(' ').any(|x| x == e), "{e} in {ext}");
        }
    });
}

#[test]
fn every_kind_of_image_is_created_and_queried() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let f = fmt(RGBA8.0, RGBA8.1);
        let cases: [Case; 5] = [
            (CL_MEM_OBJECT_IMAGE1D, [7, 0, 0], 0, (0, 0), (7, 0, 0, 0)),
            (CL_MEM_OBJECT_IMAGE1D_ARRAY, [7, 0, 0], 3, (32, 64), (7, 0, 0, 3)),
            (CL_MEM_OBJECT_IMAGE2D, [7, 5, 0], 0, (32, 0), (7, 5, 0, 0)),
            (CL_MEM_OBJECT_IMAGE2D_ARRAY, [7, 5, 0], 2, (32, 32 * 6), (7, 5, 0, 2)),
            (CL_MEM_OBJECT_IMAGE3D, [7, 5, 3], 0, (32, 32 * 5), (7, 5, 3, 0)),
        ];
        for (ty, size, layers, pitches, sizes) in cases {
            // Without a host pointer: packed pitches.
            let m = create(ctx, CL_MEM_READ_WRITE, &f, &desc(ty, size, layers, (0, 0)), ptr::null_mut()).unwrap();
            assert_eq!(mem_info::<cl_mem_object_type>(&m, CL_MEM_TYPE), ty as cl_mem_object_type);
            assert_eq!(image_info::<usize>(&m, CL_IMAGE_ROW_PITCH), 28);
            assert_eq!(image_info::<usize>(&m, CL_IMAGE_ELEMENT_SIZE), 4);
            let got = (
                image_info::<usize>(&m, CL_IMAGE_WIDTH),
                image_info::<usize>(&m, CL_IMAGE_HEIGHT),
                image_info::<usize>(&m, CL_IMAGE_DEPTH),
                image_info::<usize>(&m, CL_IMAGE_ARRAY_SIZE),
            );
            assert_eq!(got, sizes, "type {ty:#x}");
            let fmt_got: [u32; 2] = image_info(&m, CL_IMAGE_FORMAT);
            assert_eq!(fmt_got, [CL_RGBA, CL_UNORM_INT8]);
            // With a host pointer and pitches (USE_HOST_PTR): the pitches are the host's.
            let mut host = pattern(4096, 1);
            let m =
                create(ctx, CL_MEM_USE_HOST_PTR, &f, &desc(ty, size, layers, pitches), host.as_mut_ptr() as _).unwrap();
            let row = if pitches.0 == 0 { 28 } else { pitches.0 };
            assert_eq!(image_info::<usize>(&m, CL_IMAGE_ROW_PITCH), row);
            let slice: usize = image_info(&m, CL_IMAGE_SLICE_PITCH);
            let expect_slice = match ty {
                CL_MEM_OBJECT_IMAGE1D | CL_MEM_OBJECT_IMAGE2D => 0,
                _ => pitches.1,
            };
            assert_eq!(slice, expect_slice, "type {ty:#x}");
            assert_eq!(mem_info::<*mut c_void>(&m, CL_MEM_HOST_PTR), host.as_mut_ptr() as *mut c_void);
            // COPY_HOST_PTR: the first pixel is the host's.
            let m = create(ctx, CL_MEM_COPY_HOST_PTR, &f, &desc(ty, size, layers, pitches), host.as_mut_ptr() as _)
                .unwrap();
            assert_eq!(read_image(env.q(), &m, [0; 3], [1, 1, 1], (0, 0), 4), host[..4].to_vec());
        }
        // 1D buffer image and a 2D image from a buffer (cl_khr_image2d_from_buffer).
        let buf = env.buffer(CL_MEM_READ_WRITE, 4096);
        let mut d1 = desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, [64, 0, 0], 0, (0, 0));
        d1.__bindgen_anon_1.mem_object = buf.raw();
        let img = create(ctx, 0, &f, &d1, ptr::null_mut()).unwrap();
        assert_eq!(image_info::<cl_mem>(&img, CL_IMAGE_BUFFER), buf.raw());
        assert_eq!(mem_info::<cl_mem>(&img, CL_MEM_ASSOCIATED_MEMOBJECT), buf.raw());
        assert_eq!(mem_info::<cl_mem_flags>(&img, CL_MEM_FLAGS), CL_MEM_READ_WRITE as cl_mem_flags, "inherited");
        // Writes through the image are the buffer's bytes.
        let px = pattern(8, 3);
        write_image(env.q(), &img, [2, 0, 0], [2, 1, 1], (0, 0), &px);
        let bytes: Vec<u8> = env.read(&buf, 16);
        assert_eq!(&bytes[8..16], &px[..]);
        let mut d2 = desc(CL_MEM_OBJECT_IMAGE2D, [10, 4, 0], 0, (64, 0));
        d2.__bindgen_anon_1.mem_object = buf.raw();
        let img2 = create(ctx, CL_MEM_READ_ONLY, &f, &d2, ptr::null_mut()).unwrap();
        assert_eq!(image_info::<usize>(&img2, CL_IMAGE_ROW_PITCH), 64);
        // Legacy 2D/3D creation.
        // SAFETY: valid context and format.
        let (m, err) = unsafe { cl_create_err!(clCreateImage2D(ctx, 0, &f, 9, 4, 0, ptr::null_mut())) };
        assert_eq!(err, CL_SUCCESS);
        // SAFETY: new image.
        let m = unsafe { Mem::from_raw(m) };
        assert_eq!(image_info::<usize>(&m, CL_IMAGE_HEIGHT), 4);
        // SAFETY: valid context and format.
        let (m, err) = unsafe { cl_create_err!(clCreateImage3D(ctx, 0, &f, 9, 4, 2, 0, 0, ptr::null_mut())) };
        assert_eq!(err, CL_SUCCESS);
        // SAFETY: new image.
        let m = unsafe { Mem::from_raw(m) };
        assert_eq!(image_info::<usize>(&m, CL_IMAGE_DEPTH), 2);
        // CL_INVALID_MEM_OBJECT for a buffer.
        let mut v = 0usize;
        // SAFETY: valid buffer handle, out value of the right size.
        let e = unsafe { clGetImageInfo(buf.raw(), CL_IMAGE_WIDTH, 8, &mut v as *mut usize as _, ptr::null_mut()) };
        assert_eq!(e, CL_INVALID_MEM_OBJECT);
    });
}

#[test]
fn creation_errors_follow_the_specification() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let f = fmt(RGBA8.0, RGBA8.1);
        let d2 = desc(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0], 0, (0, 0));
        let mut host = vec![0u8; 8 * 8 * 4 * 2];
        let hp = host.as_mut_ptr() as *mut c_void;
        let bad_fmt = fmt(CL_BGRA, CL_FLOAT);
        assert_eq!(create(ctx, 0, &bad_fmt, &d2, ptr::null_mut()).err(), Some(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR));
        // SAFETY: NULL format and descriptor are what is tested.
        let (_, e) = unsafe { cl_create_err!(clCreateImage(ctx, 0, ptr::null(), &d2, ptr::null_mut())) };
        assert_eq!(e, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
        // SAFETY: as above.
        let (_, e) = unsafe { cl_create_err!(clCreateImage(ctx, 0, &f, ptr::null(), ptr::null_mut())) };
        assert_eq!(e, CL_INVALID_IMAGE_DESCRIPTOR);
        let zero = desc(CL_MEM_OBJECT_IMAGE2D, [8, 0, 0], 0, (0, 0));
        assert_eq!(create(ctx, 0, &f, &zero, ptr::null_mut()).err(), Some(CL_INVALID_IMAGE_DESCRIPTOR));
        let buffer_type = desc(CL_MEM_OBJECT_BUFFER, [8, 8, 0], 0, (0, 0));
        assert_eq!(create(ctx, 0, &f, &buffer_type, ptr::null_mut()).err(), Some(CL_INVALID_IMAGE_DESCRIPTOR));
        let big = desc(CL_MEM_OBJECT_IMAGE2D, [16385, 8, 0], 0, (0, 0));
        assert_eq!(create(ctx, 0, &f, &big, ptr::null_mut()).err(), Some(CL_INVALID_IMAGE_SIZE));
        let pitched = desc(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0], 0, (64, 0));
        assert_eq!(
            create(ctx, 0, &f, &pitched, ptr::null_mut()).err(),
            Some(CL_INVALID_IMAGE_DESCRIPTOR),
            "pitch without host_ptr"
        );
        let short = desc(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0], 0, (16, 0));
        assert_eq!(create(ctx, CL_MEM_COPY_HOST_PTR, &f, &short, hp).err(), Some(CL_INVALID_IMAGE_DESCRIPTOR));
        assert_eq!(create(ctx, CL_MEM_COPY_HOST_PTR, &f, &d2, ptr::null_mut()).err(), Some(CL_INVALID_HOST_PTR));
        assert_eq!(create(ctx, 0, &f, &d2, hp).err(), Some(CL_INVALID_HOST_PTR));
        assert_eq!(
            create(ctx, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, &f, &d2, ptr::null_mut()).err(),
            Some(CL_INVALID_VALUE)
        );
        assert_eq!(create(ctx, 1 << 20, &f, &d2, ptr::null_mut()).err(), Some(CL_INVALID_VALUE));
        // Images from buffers: host pointer flags may not be given, nor access the buffer forbids.
        let buf = env.buffer(CL_MEM_READ_ONLY, 1024);
        let mut d1 = desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, [64, 0, 0], 0, (0, 0));
        d1.__bindgen_anon_1.mem_object = buf.raw();
        assert_eq!(create(ctx, CL_MEM_WRITE_ONLY, &f, &d1, ptr::null_mut()).err(), Some(CL_INVALID_VALUE));
        let mut too_big = d1;
        too_big.image_width = 257;
        assert_eq!(create(ctx, 0, &f, &too_big, ptr::null_mut()).err(), Some(CL_INVALID_IMAGE_SIZE));
        let no_buffer = desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, [64, 0, 0], 0, (0, 0));
        assert_eq!(create(ctx, 0, &f, &no_buffer, ptr::null_mut()).err(), Some(CL_INVALID_IMAGE_DESCRIPTOR));
        // Depth formats exist only for 2D images and arrays: CL_IMAGE_FORMAT_NOT_SUPPORTED.
        let depth = fmt(CL_DEPTH, CL_FLOAT);
        let d3 = desc(CL_MEM_OBJECT_IMAGE3D, [4, 4, 4], 0, (0, 0));
        assert_eq!(create(ctx, 0, &depth, &d3, ptr::null_mut()).err(), Some(CL_IMAGE_FORMAT_NOT_SUPPORTED));
        assert!(create(ctx, 0, &depth, &d2, ptr::null_mut()).is_ok());
    });
}

#[test]
fn supported_formats_hold_the_minimum_list() {
    for_each_device(|d| {
        let ctx = d.context();
        let types = [
            CL_MEM_OBJECT_IMAGE1D,
            CL_MEM_OBJECT_IMAGE1D_BUFFER,
            CL_MEM_OBJECT_IMAGE1D_ARRAY,
            CL_MEM_OBJECT_IMAGE2D,
            CL_MEM_OBJECT_IMAGE2D_ARRAY,
            CL_MEM_OBJECT_IMAGE3D,
        ];
        let types_in_min = [
            CL_UNORM_INT8,
            CL_UNORM_INT16,
            CL_SNORM_INT8,
            CL_SNORM_INT16,
            CL_SIGNED_INT8,
            CL_SIGNED_INT16,
            CL_SIGNED_INT32,
            CL_UNSIGNED_INT8,
            CL_UNSIGNED_INT16,
            CL_UNSIGNED_INT32,
            CL_HALF_FLOAT,
            CL_FLOAT,
        ];
        for ty in types {
            for flags in [CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE, CL_MEM_KERNEL_READ_AND_WRITE] {
                let mut n: cl_uint = 0;
                // SAFETY: count query.
                unsafe {
                    cl!(clGetSupportedImageFormats(
                        ctx.raw(),
                        flags as cl_mem_flags,
                        ty as cl_mem_object_type,
                        0,
                        ptr::null_mut(),
                        &mut n,
                    ))
                };
                let mut list = vec![fmt(0, 0); n as usize];
                // SAFETY: list holds n formats.
                unsafe {
                    cl!(clGetSupportedImageFormats(
                        ctx.raw(),
                        flags as cl_mem_flags,
                        ty as cl_mem_object_type,
                        n,
                        list.as_mut_ptr(),
                        ptr::null_mut(),
                    ))
                };
                let has =
                    |o: u32, t: u32| list.iter().any(|f| f.image_channel_order == o && f.image_channel_data_type == t);
                for order in [CL_R, CL_RG, CL_RGBA] {
                    for t in types_in_min {
                        assert!(has(order, t), "{order:#x}/{t:#x} for type {ty:#x} flags {flags:#x}");
                    }
                }
                assert!(has(CL_BGRA, CL_UNORM_INT8));
                assert_eq!(has(CL_DEPTH, CL_FLOAT), ty == CL_MEM_OBJECT_IMAGE2D || ty == CL_MEM_OBJECT_IMAGE2D_ARRAY);
            }
        }
        // SAFETY: invalid arguments are what is tested.
        let e = unsafe {
            clGetSupportedImageFormats(
                ctx.raw(),
                0,
                CL_MEM_OBJECT_BUFFER as cl_mem_object_type,
                0,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        assert_eq!(e, CL_INVALID_VALUE);
    });
}

#[test]
fn write_read_round_trips_with_pitches() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let f = fmt(CL_RGBA, CL_UNSIGNED_INT16); // 8-byte pixels
        let kinds: [Kind; 5] = [
            (CL_MEM_OBJECT_IMAGE1D, [16, 0, 0], 0, [3, 0, 0], [9, 1, 1]),
            (CL_MEM_OBJECT_IMAGE1D_ARRAY, [16, 0, 0], 5, [2, 1, 0], [9, 3, 1]),
            (CL_MEM_OBJECT_IMAGE2D, [16, 9, 0], 0, [2, 3, 0], [9, 4, 1]),
            (CL_MEM_OBJECT_IMAGE2D_ARRAY, [16, 9, 0], 4, [1, 2, 1], [9, 4, 2]),
            (CL_MEM_OBJECT_IMAGE3D, [16, 9, 5], 0, [1, 2, 1], [9, 4, 3]),
        ];
        for (ty, size, layers, origin, region) in kinds {
            let img = create(ctx, CL_MEM_READ_WRITE, &f, &desc(ty, size, layers, (0, 0)), ptr::null_mut()).unwrap();
            let row = region[0] * 8;
            // Host rows padded by 24 bytes; slices by one more row where the image has them.
            let has_slices =
                matches!(ty, CL_MEM_OBJECT_IMAGE1D_ARRAY | CL_MEM_OBJECT_IMAGE2D_ARRAY | CL_MEM_OBJECT_IMAGE3D);
            let row_pitch = row + 24;
            let rows = if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY { 1 } else { region[1] };
            let slices = if ty == CL_MEM_OBJECT_IMAGE1D_ARRAY { region[1] } else { region[2] };
            let slice_pitch = if has_slices { row_pitch * (rows + 1) } else { 0 };
            let total = if has_slices { slice_pitch * slices } else { row_pitch * rows };
            let data = pattern(total, ty as u8);
            write_image(env.q(), &img, origin, region, (row_pitch, slice_pitch), &data);
            // Read back packed and compare row by row.
            let packed = read_image(env.q(), &img, origin, region, (0, 0), row * rows * slices);
            for s in 0..slices {
                for r in 0..rows {
                    let host = s * if has_slices { slice_pitch } else { 0 } + r * row_pitch;
                    let p = (s * rows + r) * row;
                    assert_eq!(&packed[p..p + row], &data[host..host + row], "type {ty:#x} slice {s} row {r}");
                }
            }
            // Outside the region: still zero.
            let first = read_image(env.q(), &img, [0; 3], [1, 1, 1], (0, 0), 8);
            assert_eq!(first, vec![0; 8]);
        }
        // Errors: a region outside the image, a slice pitch for a 2D image.
        let img = create(ctx, 0, &f, &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)), ptr::null_mut()).unwrap();
        let mut buf = vec![0u8; 1024];
        let (o, r) = ([2usize, 0, 0], [3usize, 1, 1]);
        // SAFETY: buf holds 1024 bytes, more than any of these regions; the error is what is tested.
        let e = unsafe { try_read_image(env.q(), &img, o, r, (0, 0), &mut buf) };
        assert_eq!(e, CL_INVALID_VALUE);
        let (o, r) = ([0usize, 0, 0], [2usize, 2, 1]);
        // SAFETY: buf holds 1024 bytes, more than any of these regions; the error is what is tested.
        let e = unsafe { try_read_image(env.q(), &img, o, r, (0, 64), &mut buf) };
        assert_eq!(e, CL_INVALID_VALUE);
        // Host access flags.
        let wo = create(
            ctx,
            CL_MEM_HOST_WRITE_ONLY,
            &f,
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)),
            ptr::null_mut(),
        )
        .unwrap();
        // SAFETY: buf holds 1024 bytes, more than any of these regions; the error is what is tested.
        let e = unsafe { try_read_image(env.q(), &wo, o, r, (0, 0), &mut buf) };
        assert_eq!(e, CL_INVALID_OPERATION);
    });
}

#[test]
fn copies_between_images_and_buffers() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let f = fmt(RGBA8.0, RGBA8.1);
        let a = create(ctx, 0, &f, &desc(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0], 0, (0, 0)), ptr::null_mut()).unwrap();
        let b = create(ctx, 0, &f, &desc(CL_MEM_OBJECT_IMAGE3D, [8, 8, 2], 0, (0, 0)), ptr::null_mut()).unwrap();
        let data = pattern(8 * 8 * 4, 5);
        write_image(env.q(), &a, [0; 3], [8, 8, 1], (0, 0), &data);
        let (so, dof, r) = ([1usize, 2, 0], [3usize, 1, 1], [4usize, 3, 1]);
        check("clEnqueueCopyImage", try_copy_image(env.q(), &a, &b, so, dof, r));
        let got = read_image(env.q(), &b, dof, r, (0, 0), 4 * 3 * 4);
        for y in 0..3 {
            let src = ((2 + y) * 8 + 1) * 4;
            assert_eq!(&got[y * 16..y * 16 + 16], &data[src..src + 16], "row {y}");
        }
        // Image to buffer (packed from an offset) and back into another place.
        let buf = env.buffer(CL_MEM_READ_WRITE, 256);
        check("clEnqueueCopyImageToBuffer", try_copy_image_to_buffer(env.q(), &a, &buf, so, r, 16));
        let bytes: Vec<u8> = env.read(&buf, 256);
        for y in 0..3 {
            let src = ((2 + y) * 8 + 1) * 4;
            assert_eq!(&bytes[16 + y * 16..32 + y * 16], &data[src..src + 16]);
        }
        let c = create(ctx, 0, &f, &desc(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0], 0, (0, 0)), ptr::null_mut()).unwrap();
        let o = [0usize, 0, 0];
        // SAFETY: valid objects.
        unsafe {
            cl!(clEnqueueCopyBufferToImage(
                env.q(),
                buf.raw(),
                c.raw(),
                16,
                o.as_ptr(),
                r.as_ptr(),
                0,
                ptr::null(),
                ptr::null_mut(),
            ))
        };
        let back = read_image(env.q(), &c, o, r, (0, 0), 48);
        assert_eq!(back, bytes[16..64].to_vec());
        // Errors: format mismatch, overlap, buffer too small.
        let other =
            create(ctx, 0, &fmt(CL_R, CL_FLOAT), &desc(CL_MEM_OBJECT_IMAGE2D, [8, 8, 0], 0, (0, 0)), ptr::null_mut())
                .unwrap();
        let e = try_copy_image(env.q(), &a, &other, o, o, r);
        assert_eq!(e, CL_IMAGE_FORMAT_MISMATCH);
        let o2 = [2usize, 1, 0];
        let e = try_copy_image(env.q(), &a, &a, o, o2, r);
        assert_eq!(e, CL_MEM_COPY_OVERLAP);
        let e = try_copy_image_to_buffer(env.q(), &a, &buf, o, r, 250);
        assert_eq!(e, CL_INVALID_VALUE);
    });
}

#[test]
fn fills_convert_the_color_to_the_format() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let img =
            create(ctx, 0, &fmt(RGBA8.0, RGBA8.1), &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)), ptr::null_mut())
                .unwrap();
        let color = [1.0f32, 0.5, 0.0, 0.25];
        let (o, r) = ([1usize, 1, 0], [2usize, 2, 1]);
        // SAFETY: a four-component 32-bit color.
        check("clEnqueueFillImage", unsafe { try_fill_image(env.q(), &img, color.as_ptr().cast(), o, r) });
        let all = read_image(env.q(), &img, [0; 3], [4, 4, 1], (0, 0), 64);
        for y in 0..4 {
            for x in 0..4 {
                let px = &all[(y * 4 + x) * 4..(y * 4 + x) * 4 + 4];
                let inside = (1..3).contains(&x) && (1..3).contains(&y);
                // 0.5 * 255 = 127.5 rounds to even 128; 0.25 * 255 = 63.75 -> 64.
                assert_eq!(px, if inside { &[255u8, 128, 0, 64][..] } else { &[0u8; 4][..] }, "({x},{y})");
            }
        }
        let int = create(
            ctx,
            0,
            &fmt(CL_RG, CL_SIGNED_INT16),
            &desc(CL_MEM_OBJECT_IMAGE1D, [4, 0, 0], 0, (0, 0)),
            ptr::null_mut(),
        )
        .unwrap();
        let color = [-5i32, 70000, 9, 9];
        let (o, r) = ([0usize, 0, 0], [4usize, 1, 1]);
        // SAFETY: a four-component 32-bit color.
        check("clEnqueueFillImage", unsafe { try_fill_image(env.q(), &int, color.as_ptr().cast(), o, r) });
        let got = read_image(env.q(), &int, o, r, (0, 0), 16);
        let mut expect = Vec::new();
        for _ in 0..4 {
            expect.extend_from_slice(&(-5i16).to_ne_bytes());
            expect.extend_from_slice(&i16::MAX.to_ne_bytes()); // saturated
        }
        assert_eq!(got, expect);
        // SAFETY: NULL color is what is tested.
        let e = unsafe { try_fill_image(env.q(), &int, ptr::null(), o, r) };
        assert_eq!(e, CL_INVALID_VALUE);
    });
}

#[test]
fn map_and_unmap_an_image_region() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let img =
            create(ctx, 0, &fmt(RGBA8.0, RGBA8.1), &desc(CL_MEM_OBJECT_IMAGE3D, [8, 4, 3], 0, (0, 0)), ptr::null_mut())
                .unwrap();
        let (o, r) = ([2usize, 1, 1], [3usize, 2, 2]);
        let (mut rp, mut sp) = (0usize, 0usize);
        let (p, err) = map_image(env.q(), &img, CL_MAP_WRITE, o, r, &mut rp, Some(&mut sp));
        assert_eq!(err, CL_SUCCESS);
        assert_eq!((rp, sp), (32, 128));
        assert_eq!(mem_info::<cl_uint>(&img, CL_MEM_MAP_COUNT), 1);
        // SAFETY: the mapped region: 2 slices x 2 rows x 12 bytes at these pitches.
        unsafe {
            for z in 0..2 {
                for y in 0..2 {
                    std::ptr::write_bytes((p as *mut u8).add(z * sp + y * rp), 0x40 + (z * 2 + y) as u8, 12);
                }
            }
            cl!(clEnqueueUnmapMemObject(env.q(), img.raw(), p, 0, ptr::null(), ptr::null_mut()));
        }
        env.finish();
        assert_eq!(mem_info::<cl_uint>(&img, CL_MEM_MAP_COUNT), 0);
        let got = read_image(env.q(), &img, o, r, (0, 0), 48);
        let expect: Vec<u8> = (0..4).flat_map(|i| [0x40 + i as u8; 12]).collect();
        assert_eq!(got, expect);
        // A 3D image needs image_slice_pitch.
        let (p, err) = map_image(env.q(), &img, CL_MAP_READ, o, r, &mut rp, None);
        assert!(p.is_null());
        assert_eq!(err, CL_INVALID_VALUE);
    });
}

fn sampler_info<T: Pod>(s: cl_sampler, param: u32) -> T {
    // SAFETY: a valid sampler.
    info_value("clGetSamplerInfo", |sz, v, r| unsafe { clGetSamplerInfo(s, param, sz, v, r) })
}

#[test]
fn samplers_and_their_queries() {
    for_each_device(|d| {
        let ctx = d.context();
        // SAFETY: valid context.
        let (s, e) =
            unsafe { cl_create_err!(clCreateSampler(ctx.raw(), CL_FALSE, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR)) };
        assert_eq!(e, CL_SUCCESS);
        assert_eq!(sampler_info::<cl_bool>(s, CL_SAMPLER_NORMALIZED_COORDS), CL_FALSE);
        assert_eq!(sampler_info::<cl_uint>(s, CL_SAMPLER_ADDRESSING_MODE), CL_ADDRESS_REPEAT);
        assert_eq!(sampler_info::<cl_uint>(s, CL_SAMPLER_FILTER_MODE), CL_FILTER_LINEAR);
        assert_eq!(sampler_info::<cl_context>(s, CL_SAMPLER_CONTEXT), ctx.raw());
        assert_eq!(sampler_info::<cl_uint>(s, CL_SAMPLER_REFERENCE_COUNT), 1);
        // SAFETY: valid sampler.
        unsafe { cl!(clRetainSampler(s)) };
        assert_eq!(sampler_info::<cl_uint>(s, CL_SAMPLER_REFERENCE_COUNT), 2);
        // SAFETY: two references owned.
        unsafe {
            cl!(clReleaseSampler(s));
            cl!(clReleaseSampler(s));
        }
        // SAFETY: invalid arguments are what is tested.
        let (s, e) = unsafe { cl_create_err!(clCreateSampler(ctx.raw(), CL_TRUE, 0x1234, CL_FILTER_LINEAR)) };
        assert!(s.is_null());
        assert_eq!(e, CL_INVALID_VALUE);
        let props: [cl_sampler_properties; 5] =
            [CL_SAMPLER_FILTER_MODE as _, CL_FILTER_LINEAR as _, CL_SAMPLER_NORMALIZED_COORDS as _, CL_FALSE as _, 0];
        // SAFETY: a 0-terminated list.
        let (s, e) = unsafe { cl_create_err!(clCreateSamplerWithProperties(ctx.raw(), props.as_ptr())) };
        assert_eq!(e, CL_SUCCESS);
        assert_eq!(sampler_info::<cl_uint>(s, CL_SAMPLER_ADDRESSING_MODE), CL_ADDRESS_CLAMP, "default");
        // SAFETY: valid sampler.
        let back = info_array::<cl_sampler_properties>("clGetSamplerInfo", |sz, v, r| unsafe {
            clGetSamplerInfo(s, CL_SAMPLER_PROPERTIES, sz, v, r)
        });
        assert_eq!(back, props.to_vec());
        // SAFETY: owned reference.
        unsafe { cl!(clReleaseSampler(s)) };
        let twice: [cl_sampler_properties; 5] = [
            CL_SAMPLER_FILTER_MODE as _,
            CL_FILTER_LINEAR as _,
            CL_SAMPLER_FILTER_MODE as _,
            CL_FILTER_NEAREST as _,
            0,
        ];
        // SAFETY: a 0-terminated list.
        let (_, e) = unsafe { cl_create_err!(clCreateSamplerWithProperties(ctx.raw(), twice.as_ptr())) };
        assert_eq!(e, CL_INVALID_VALUE);
        // SAFETY: NULL sampler.
        let e = unsafe { clRetainSampler(ptr::null_mut()) };
        assert_eq!(e, CL_INVALID_SAMPLER);
    });
}

const IMAGE_ARGS: &str = r#"
__kernel void k(read_only image2d_t in, write_only image3d_t out, sampler_t s, __global int* p) {
    p[get_global_id(0)] = 7;
}"#;

/// Setting image and sampler arguments (the argument block itself is checked by
/// runtime/src/kernel.rs's unit test `image_arguments_point_at_the_image_arg`).
#[test]
fn image_and_sampler_kernel_arguments() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let k = env.kernel(IMAGE_ARGS, "", "k");
        let f = fmt(RGBA8.0, RGBA8.1);
        let d2 = desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0));
        let d3 = desc(CL_MEM_OBJECT_IMAGE3D, [4, 4, 2], 0, (0, 0));
        let ro = create(ctx, CL_MEM_READ_ONLY, &f, &d2, ptr::null_mut()).unwrap();
        let wo2 = create(ctx, CL_MEM_WRITE_ONLY, &f, &d2, ptr::null_mut()).unwrap();
        let wo3 = create(ctx, CL_MEM_WRITE_ONLY, &f, &d3, ptr::null_mut()).unwrap();
        let buf = env.buffer(CL_MEM_READ_WRITE, 16);
        let set = |i: cl_uint, size: usize, v: *const c_void| {
            // SAFETY: v is NULL or points at size bytes.
            unsafe { clSetKernelArg(k.raw(), i, size, v) }
        };
        let h = |m: &Mem| m.raw();
        let hs = std::mem::size_of::<cl_mem>();
        assert_eq!(set(0, hs, &h(&buf) as *const cl_mem as _), CL_INVALID_MEM_OBJECT, "a buffer for an image");
        assert_eq!(set(0, hs, &h(&wo3) as *const cl_mem as _), CL_INVALID_MEM_OBJECT, "an image3d for an image2d_t");
        assert_eq!(set(0, hs, &h(&wo2) as *const cl_mem as _), CL_INVALID_ARG_VALUE, "write-only for read_only");
        assert_eq!(set(0, hs, ptr::null()), CL_INVALID_ARG_VALUE);
        assert_eq!(set(0, 4, &h(&ro) as *const cl_mem as _), CL_INVALID_ARG_SIZE);
        assert_eq!(set(0, hs, &h(&ro) as *const cl_mem as _), CL_SUCCESS);
        assert_eq!(set(1, hs, &h(&wo3) as *const cl_mem as _), CL_SUCCESS);
        let bogus: cl_sampler = buf.raw() as cl_sampler;
        assert_eq!(set(2, hs, &bogus as *const cl_sampler as _), CL_INVALID_SAMPLER);
        // SAFETY: valid context.
        let (s, e) = unsafe { cl_create_err!(clCreateSampler(ctx, CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST)) };
        assert_eq!(e, CL_SUCCESS);
        assert_eq!(set(2, hs, &s as *const cl_sampler as _), CL_SUCCESS);
        k.set_mem(3, &buf);
        // The kernel launches with image and sampler arguments.
        env.run(&k, &[4], None);
        env.finish();
        assert_eq!(env.read::<i32>(&buf, 4), vec![7; 4]);
        // SAFETY: owned reference.
        unsafe { cl!(clReleaseSampler(s)) };
    });
}

const END_TO_END: &str = r#"
__kernel void e2e(__read_only image2d_t src, __write_only image2d_t dst, sampler_t s, __global float4 *out) {
    int x = get_global_id(0), y = get_global_id(1);
    float4 a = read_imagef(src, s, (int2)(x, y));
    float4 b = read_imagef(src, s, (float2)(x + 0.5f, y + 0.5f));
    write_imagef(dst, (int2)(x, y), a * 2.0f);
    out[y * 4 + x] = a + b + (float4)(get_image_width(src), get_image_height(dst), 0.0f, 0.0f);
}"#;

/// The host side and the kernel side of images together: an RGBA8 image written by the
/// host, read by a kernel through a sampler (integer and float coordinates), a float image
/// written by the kernel and read back by the host, image queries in the kernel.
#[test]
fn a_kernel_reads_and_writes_images_the_host_made() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let q = env.queue.raw();
        let k = env.kernel(END_TO_END, "", "e2e");
        let src_px = pattern(4 * 4 * 4, 3);
        let src = create(
            ctx,
            CL_MEM_READ_ONLY,
            &fmt(RGBA8.0, RGBA8.1),
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)),
            ptr::null_mut(),
        )
        .unwrap();
        write_image(q, &src, [0, 0, 0], [4, 4, 1], (0, 0), &src_px);
        let dst = create(
            ctx,
            CL_MEM_WRITE_ONLY,
            &fmt(CL_RGBA, CL_FLOAT),
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)),
            ptr::null_mut(),
        )
        .unwrap();
        let out = env.buffer(CL_MEM_READ_WRITE, 16 * 16);
        // SAFETY: valid context.
        let (s, e) =
            unsafe { cl_create_err!(clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST)) };
        assert_eq!(e, CL_SUCCESS);
        let hs = std::mem::size_of::<cl_mem>();
        // SAFETY: each value points at a handle of the argument's size.
        unsafe {
            assert_eq!(clSetKernelArg(k.raw(), 0, hs, &src.raw() as *const cl_mem as *const c_void), CL_SUCCESS);
            assert_eq!(clSetKernelArg(k.raw(), 1, hs, &dst.raw() as *const cl_mem as *const c_void), CL_SUCCESS);
            assert_eq!(clSetKernelArg(k.raw(), 2, hs, &s as *const cl_sampler as *const c_void), CL_SUCCESS);
        }
        k.set_mem(3, &out);
        env.run(&k, &[4, 4], None);
        env.finish();
        let unorm = |b: u8| b as f32 * (1.0 / 255.0);
        let got = read_image(q, &dst, [0, 0, 0], [4, 4, 1], (0, 0), 4 * 4 * 16);
        let got: Vec<f32> = got.chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let want: Vec<f32> = src_px.iter().map(|&b| 2.0 * unorm(b)).collect();
        assert_eq!(got, want, "{}: the kernel's writes", d.name);
        let sums = env.read::<f32>(&out, 16 * 4);
        for (i, (s, &b)) in sums.iter().zip(&src_px).enumerate() {
            let extra = match i % 4 {
                0 | 1 => 4.0,
                _ => 0.0,
            };
            assert_eq!(*s, 2.0 * unorm(b) + extra, "{}: component {i}", d.name);
        }
        // SAFETY: owned reference.
        unsafe { cl!(clReleaseSampler(s)) };
    });
}

// Kernels using images the way the Khronos CTS's kernel-side image suites do
// (samplerless_reads, kernel_image_methods, image_streams): depth images, the OpenCL C 2.1
// channel data type CLK_UNORM_INT_101010_2, 1D buffer images given a row pitch.

/// [`create`] that must succeed.
fn create_ok(ctx: cl_context, flags: cl_mem_flags, f: &cl_image_format, d: &cl_image_desc, host: *mut c_void) -> Mem {
    create(ctx, flags, f, d, host).unwrap_or_else(|e| panic!("clCreateImage: {}", error_name(e)))
}

fn set_handle<T>(k: &Kernel, index: cl_uint, h: &T) {
    // SAFETY: h is a handle (cl_mem or cl_sampler) of the argument's size.
    let err = unsafe { clSetKernelArg(k.raw(), index, std::mem::size_of::<T>(), h as *const T as *const c_void) };
    assert_eq!(err, CL_SUCCESS, "clSetKernelArg {index}");
}

fn sampler(ctx: cl_context, addressing: u32, filter: u32) -> cl_sampler {
    // SAFETY: valid context.
    let (s, e) = unsafe { cl_create_err!(clCreateSampler(ctx, CL_FALSE, addressing, filter)) };
    assert_eq!(e, CL_SUCCESS);
    s
}

const DEPTH: &str = r#"
__kernel void depth(read_only image2d_depth_t d16, read_only image2d_array_depth_t df,
                    write_only image2d_depth_t out, sampler_t s, __global float *p) {
    int x = get_global_id(0), y = get_global_id(1);
    int i = 4 * (y * 4 + x);
    float a = read_imagef(d16, (int2)(x, y));
    float b = read_imagef(d16, s, (float2)(x + 0.5f, y + 0.5f));
    float c = read_imagef(df, (int4)(x, y, 1, 0));
    float e = read_imagef(df, s, (int4)(x, y, 1, 0));
    write_imagef(out, (int2)(x, y), c * 0.5f);
    p[i] = a;
    p[i + 1] = b;
    p[i + 2] = c;
    p[i + 3] = e + (get_image_channel_order(d16) == CLK_DEPTH ? 0.0f : 100.0f);
}"#;

/// cl_khr_depth_images in kernels: `read_imagef` of a depth image returns one float, with
/// and without a sampler, from CL_UNORM_INT16 and CL_FLOAT depth images and 2D arrays;
/// `write_imagef` takes one float (the build failed before: "depth images are not
/// supported").
#[test]
fn kernels_read_and_write_depth_images() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let q = env.queue.raw();
        let k = env.kernel(DEPTH, "-cl-std=CL3.0", "depth");
        let mut d16: Vec<u16> = (0..16u32).map(|i| (i * 4099) as u16).collect();
        d16[15] = u16::MAX;
        let mut df: Vec<f32> = (0..32).map(|i| i as f32 * 0.25 - 2.0).collect();
        let img16 = create_ok(
            ctx,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            &fmt(CL_DEPTH, CL_UNORM_INT16),
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)),
            d16.as_mut_ptr() as *mut c_void,
        );
        let imgf = create_ok(
            ctx,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            &fmt(CL_DEPTH, CL_FLOAT),
            &desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, [4, 4, 0], 2, (0, 0)),
            df.as_mut_ptr() as *mut c_void,
        );
        let out_img = create_ok(
            ctx,
            CL_MEM_WRITE_ONLY,
            &fmt(CL_DEPTH, CL_FLOAT),
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)),
            ptr::null_mut(),
        );
        let out = env.buffer(CL_MEM_READ_WRITE, 16 * 16);
        let s = sampler(ctx, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST);
        set_handle(&k, 0, &img16.raw());
        set_handle(&k, 1, &imgf.raw());
        set_handle(&k, 2, &out_img.raw());
        set_handle(&k, 3, &s);
        k.set_mem(4, &out);
        env.run(&k, &[4, 4], None);
        env.finish();
        let got = env.read::<f32>(&out, 64);
        for i in 0..16 {
            let unorm = d16[i] as f32 / 65535.0;
            let layer1 = df[16 + i];
            assert_eq!(&got[4 * i..4 * i + 4], &[unorm, unorm, layer1, layer1], "{}: pixel {i}", d.name);
        }
        let written: Vec<f32> = read_image(q, &out_img, [0; 3], [4, 4, 1], (0, 0), 64)
            .chunks_exact(4)
            .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let want: Vec<f32> = df[16..].iter().map(|v| v * 0.5).collect();
        assert_eq!(written, want, "{}: write_imagef of a depth image", d.name);
        // SAFETY: owned reference.
        unsafe { cl!(clReleaseSampler(s)) };
    });
}

const METHODS: &str = r#"
__kernel void methods(read_only image2d_t img, read_only image1d_buffer_t buf, __global int *p) {
    p[0] = get_image_channel_data_type(img);
    p[1] = CLK_UNORM_INT_101010_2;
    p[2] = get_image_width(buf);
    p[3] = read_imageui(buf, 5).x;
}"#;

/// The CTS's kernel_image_methods kernels name the format's data type as CLK_<type>:
/// clang-15 does not define OpenCL C 2.1's CLK_UNORM_INT_101010_2 (the build failed with
/// "use of undeclared identifier"). And its 1D buffer images are created with a row pitch
/// of width x element size, which clCreateImage refused (CL_INVALID_IMAGE_DESCRIPTOR).
#[test]
fn image_methods_of_a_101010_2_image_and_a_pitched_1d_buffer_image() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let k = env.kernel(METHODS, "-cl-std=CL3.0", "methods");
        let img = create_ok(
            ctx,
            CL_MEM_READ_ONLY,
            &fmt(CL_RGBA, CL_UNORM_INT_101010_2),
            &desc(CL_MEM_OBJECT_IMAGE2D, [3, 2, 0], 0, (0, 0)),
            ptr::null_mut(),
        );
        let texels: Vec<u32> = (0..9 * 4).collect();
        let buf = env.buffer_from(CL_MEM_READ_ONLY, &texels);
        let mut d1 = desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, [9, 0, 0], 0, (9 * 16, 0));
        d1.__bindgen_anon_1.mem_object = buf.raw();
        let img1 = create_ok(ctx, CL_MEM_READ_ONLY, &fmt(CL_RGBA, CL_UNSIGNED_INT32), &d1, ptr::null_mut());
        let out = env.buffer(CL_MEM_READ_WRITE, 16);
        set_handle(&k, 0, &img.raw());
        set_handle(&k, 1, &img1.raw());
        k.set_mem(2, &out);
        env.run(&k, &[1], None);
        env.finish();
        let got = env.read::<i32>(&out, 4);
        let t = CL_UNORM_INT_101010_2 as i32;
        assert_eq!(got, vec![t, t, 9, 20], "{}", d.name);
    });
}

const READ_101010_2: &str = r#"
__kernel void read_packed(read_only image2d_t img, __global float4 *p) {
    p[0] = read_imagef(img, (int2)(0, 0));
}"#;

/// CL_UNORM_INT_101010_2 packs R in bits 31:22, G 21:12, B 11:2 and A 1:0 (10-10-10-2 from
/// the high bits, as CL_UNORM_INT_101010 is x-10-10-10 and the CTS's reference reads it);
/// kernels read R from the low bits before.
#[test]
fn a_101010_2_pixel_has_red_in_its_high_bits() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let k = env.kernel(READ_101010_2, "", "read_packed");
        let mut word: u32 = 1023 << 22 | 1 << 2 | 2;
        let img = create_ok(
            ctx,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            &fmt(CL_RGBA, CL_UNORM_INT_101010_2),
            &desc(CL_MEM_OBJECT_IMAGE2D, [1, 1, 0], 0, (0, 0)),
            &mut word as *mut u32 as *mut c_void,
        );
        let out = env.buffer(CL_MEM_READ_WRITE, 16);
        set_handle(&k, 0, &img.raw());
        k.set_mem(1, &out);
        env.run(&k, &[1], None);
        env.finish();
        assert_eq!(env.read::<f32>(&out, 4), vec![1.0, 0.0, 1.0 / 1023.0, 2.0 / 3.0], "{}", d.name);
    });
}

// 2D images created from 2D images (clCreateImage with a 2D image as `mem_object`): the
// new image shares the parent's pixels and views them with a compatible channel order (an
// sRGBA view of an RGBA image, a CL_DEPTH view of a CL_R image). Before, any image as
// `mem_object` was CL_INVALID_IMAGE_DESCRIPTOR.

/// The descriptor of a `w` x `h` 2D image created from `mem_object`.
fn desc_from(w: usize, h: usize, row_pitch: usize, mem_object: cl_mem) -> cl_image_desc {
    let mut d = desc(CL_MEM_OBJECT_IMAGE2D, [w, h, 0], 0, (row_pitch, 0));
    d.__bindgen_anon_1.mem_object = mem_object;
    d
}

/// A blocking clEnqueueMapImage of pixel (0, 0) of `m` for reading, unmapped again: the
/// address and row pitch it returned.
fn map_first_pixel(env: &TestEnv, m: &Mem) -> (*mut c_void, usize) {
    let mut pitch = 0usize;
    let (p, err) = map_image(env.q(), m, CL_MAP_READ, [0; 3], [1, 1, 1], &mut pitch, None);
    assert_eq!(err, CL_SUCCESS);
    // SAFETY: p was returned by clEnqueueMapImage of m.
    unsafe { cl!(clEnqueueUnmapMemObject(env.q(), m.raw(), p, 0, ptr::null(), ptr::null_mut())) };
    env.finish();
    (p, pitch)
}

/// The sRGB transfer function's inverse (OpenCL C "Conversion Rules for sRGBA and sBGRA
/// Images").
fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

const SRGB: &str = r#"
__kernel void srgb(read_only image2d_t view, read_only image2d_t parent, sampler_t s,
                   __global float4 *out, __global int *order) {
    int x = get_global_id(0), y = get_global_id(1);
    int i = 3 * (y * 4 + x);
    out[i] = read_imagef(view, (int2)(x, y));
    out[i + 1] = read_imagef(view, s, (int2)(x, y));
    out[i + 2] = read_imagef(parent, (int2)(x, y));
    if (x == 0 && y == 0) {
        order[0] = get_image_channel_order(view);
        order[1] = get_image_channel_order(parent);
    }
}"#;

/// Runs [`SRGB`] over the 4x4 `view` of `parent`: per pixel, the view's read without and
/// with a sampler and the parent's read (4 floats each), and the two channel orders.
fn read_both(env: &TestEnv, k: &Kernel, view: &Mem, parent: &Mem, s: cl_sampler) -> (Vec<f32>, Vec<i32>) {
    let out = env.buffer(CL_MEM_READ_WRITE, 16 * 3 * 16);
    let order = env.buffer(CL_MEM_READ_WRITE, 8);
    set_handle(k, 0, &view.raw());
    set_handle(k, 1, &parent.raw());
    set_handle(k, 2, &s);
    k.set_mem(3, &out);
    k.set_mem(4, &order);
    env.run(k, &[4, 4], None);
    env.finish();
    (env.read::<f32>(&out, 16 * 3 * 4), env.read::<i32>(&order, 2))
}

/// Checks [`read_both`]'s floats against the RGBA UNORM_INT8 pixels `px`: the view decodes
/// sRGB (red, green, blue; alpha is linear), the parent does not.
fn check_srgb_reads(name: &str, got: &[f32], px: &[u8]) {
    for p in 0..16 {
        for c in 0..4 {
            // As the driver converts UNORM_INT8 (and the Khronos CTS expects): times 1/255.
            let unorm = px[4 * p + c] as f32 * (1.0 / 255.0);
            let want = if c < 3 { srgb_to_linear(unorm) } else { unorm };
            for (j, what) in [(0, "view"), (1, "view with a sampler")] {
                let v = got[(3 * p + j) * 4 + c];
                assert!((v - want).abs() <= 1e-6, "{name}: {what}, pixel {p} component {c}: {v} != {want}");
            }
            assert_eq!(got[(3 * p + 2) * 4 + c], unorm, "{name}: parent, pixel {p} component {c}");
        }
    }
}

/// An RGBA UNORM_INT8 image and a CL_sRGBA view of it: the view's queries, kernels on both
/// devices reading the view's pixels sRGB-decoded, host writes through the view landing in
/// the parent and maps of both giving the same bytes, and the view still working after the
/// parent's release.
#[test]
fn an_srgba_view_of_an_rgba_image() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let q = env.q();
        let parent = create_ok(
            ctx,
            CL_MEM_READ_WRITE,
            &fmt(CL_RGBA, CL_UNORM_INT8),
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)),
            ptr::null_mut(),
        );
        // Values across the sRGB curve, both sides of its linear segment (0.04045 * 255 = 10.3).
        let px: Vec<u8> = (0..64u32).map(|i| ((i * 37 + 5) % 256) as u8).collect();
        write_image(q, &parent, [0, 0, 0], [4, 4, 1], (0, 0), &px);
        let view_desc = desc_from(4, 4, 0, parent.raw());
        let srgba = fmt(CL_sRGBA, CL_UNORM_INT8);
        // The parent's CL_MEM_READ_WRITE is inherited: sRGB images are read-only here.
        assert_eq!(create(ctx, 0, &srgba, &view_desc, ptr::null_mut()).err(), Some(CL_IMAGE_FORMAT_NOT_SUPPORTED));
        let view = create_ok(ctx, CL_MEM_READ_ONLY, &srgba, &view_desc, ptr::null_mut());
        assert_eq!(mem_info::<cl_mem>(&view, CL_MEM_ASSOCIATED_MEMOBJECT), parent.raw());
        assert_eq!(mem_info::<usize>(&view, CL_MEM_OFFSET), 0);
        assert_eq!(mem_info::<cl_mem_flags>(&view, CL_MEM_FLAGS), CL_MEM_READ_ONLY);
        assert_eq!(mem_info::<cl_mem_object_type>(&view, CL_MEM_TYPE), CL_MEM_OBJECT_IMAGE2D as cl_mem_object_type);
        assert_eq!(image_info::<[u32; 2]>(&view, CL_IMAGE_FORMAT), [CL_sRGBA, CL_UNORM_INT8]);
        assert_eq!(image_info::<usize>(&view, CL_IMAGE_ELEMENT_SIZE), 4);
        assert_eq!(image_info::<usize>(&view, CL_IMAGE_ROW_PITCH), 16);
        assert_eq!((image_info::<usize>(&view, CL_IMAGE_WIDTH), image_info::<usize>(&view, CL_IMAGE_HEIGHT)), (4, 4));
        assert_eq!(image_info::<cl_mem>(&view, CL_IMAGE_BUFFER), ptr::null_mut(), "not created from a buffer");
        // The parent's row pitch may be given too.
        create_ok(ctx, CL_MEM_READ_ONLY, &srgba, &desc_from(4, 4, 16, parent.raw()), ptr::null_mut());

        let k = env.kernel(SRGB, "-cl-std=CL3.0", "srgb");
        let s = sampler(ctx, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST);
        let (got, order) = read_both(&env, &k, &view, &parent, s);
        assert_eq!(order, [CL_sRGBA as i32, CL_RGBA as i32], "{}: channel orders", d.name);
        check_srgb_reads(&d.name, &got, &px);

        // Host writes through the view are the parent's bytes; maps of both are one pixel.
        let new_px = [200u8, 3, 77, 128];
        write_image(q, &view, [1, 2, 0], [1, 1, 1], (0, 0), &new_px);
        let bytes = read_image(q, &parent, [0; 3], [4, 4, 1], (0, 0), 64);
        assert_eq!(&bytes[(2 * 4 + 1) * 4..][..4], &new_px, "{}: the view's write in the parent", d.name);
        let (vp, vpitch) = map_first_pixel(&env, &view);
        let (pp, ppitch) = map_first_pixel(&env, &parent);
        assert_eq!((vp, vpitch), (pp, ppitch), "{}: maps of the view and the parent", d.name);

        // Released first, the parent lives on in its view.
        let mut px = px;
        px[(2 * 4 + 1) * 4..][..4].copy_from_slice(&new_px);
        let parent_again = create_ok(
            ctx,
            CL_MEM_READ_ONLY,
            &fmt(CL_RGBA, CL_UNORM_INT8),
            &desc_from(4, 4, 0, view.raw()),
            ptr::null_mut(),
        );
        drop(parent);
        let (got, _) = read_both(&env, &k, &view, &parent_again, s);
        check_srgb_reads(&d.name, &got, &px);
        assert_eq!(read_image(q, &view, [0; 3], [4, 4, 1], (0, 0), 64), px, "{}: the view's pixels", d.name);
        // SAFETY: owned reference.
        unsafe { cl!(clReleaseSampler(s)) };
    });
}

const DEPTH_VIEW: &str = r#"
__kernel void depth(read_only image2d_depth_t d, __global float *out) {
    int x = get_global_id(0), y = get_global_id(1);
    out[y * 4 + x] = read_imagef(d, (int2)(x, y)) + (get_image_channel_order(d) == CLK_DEPTH ? 0.0f : 100.0f);
}

__kernel void write_depth(write_only image2d_depth_t d) {
    int x = get_global_id(0), y = get_global_id(1);
    write_imagef(d, (int2)(x, y), (float)(y * 4 + x) * -0.5f);
}"#;

/// A CL_DEPTH view of a CL_R / CL_FLOAT image: kernels read the R pixels as depth, and
/// write depth pixels that the host reads from the parent.
#[test]
fn a_depth_view_of_an_r_float_image() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let q = env.q();
        let values: Vec<f32> = (0..16).map(|i| i as f32 * 0.375 - 1.5).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
        let r = create_ok(
            ctx,
            CL_MEM_READ_WRITE,
            &fmt(CL_R, CL_FLOAT),
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, (0, 0)),
            ptr::null_mut(),
        );
        write_image(q, &r, [0, 0, 0], [4, 4, 1], (0, 0), &bytes);
        let depth = create_ok(ctx, 0, &fmt(CL_DEPTH, CL_FLOAT), &desc_from(4, 4, 0, r.raw()), ptr::null_mut());
        assert_eq!(mem_info::<cl_mem_flags>(&depth, CL_MEM_FLAGS), CL_MEM_READ_WRITE, "inherited");
        assert_eq!(image_info::<[u32; 2]>(&depth, CL_IMAGE_FORMAT), [CL_DEPTH, CL_FLOAT]);

        let k = env.kernel(DEPTH_VIEW, "-cl-std=CL3.0", "depth");
        let out = env.buffer(CL_MEM_READ_WRITE, 64);
        set_handle(&k, 0, &depth.raw());
        k.set_mem(1, &out);
        env.run(&k, &[4, 4], None);
        env.finish();
        assert_eq!(env.read::<f32>(&out, 16), values, "{}: read_imagef of the depth view", d.name);

        let w = env.kernel(DEPTH_VIEW, "-cl-std=CL3.0", "write_depth");
        set_handle(&w, 0, &depth.raw());
        env.run(&w, &[4, 4], None);
        env.finish();
        let got: Vec<f32> = read_image(q, &r, [0; 3], [4, 4, 1], (0, 0), 64)
            .chunks_exact(4)
            .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let want: Vec<f32> = (0..16).map(|i| i as f32 * -0.5).collect();
        assert_eq!(got, want, "{}: write_imagef through the depth view, read from the parent", d.name);
    });
}

/// The errors of clCreateImage for an image as `mem_object`.
#[test]
fn creation_errors_of_images_from_images() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let rgba = fmt(CL_RGBA, CL_UNORM_INT8);
        let srgba = fmt(CL_sRGBA, CL_UNORM_INT8);
        let host_ro = (CL_MEM_READ_ONLY | CL_MEM_HOST_READ_ONLY) as cl_mem_flags;
        let parent =
            create_ok(ctx, host_ro, &rgba, &desc(CL_MEM_OBJECT_IMAGE2D, [8, 4, 0], 0, (0, 0)), ptr::null_mut());
        let p = parent.raw();
        let e = |flags: cl_mem_flags, f: &cl_image_format, d: &cl_image_desc| {
            create(ctx, flags, f, d, ptr::null_mut()).err()
        };
        let bad_desc = Some(CL_INVALID_IMAGE_DESCRIPTOR);
        assert_eq!(e(0, &srgba, &desc_from(7, 4, 0, p)), bad_desc, "width");
        assert_eq!(e(0, &srgba, &desc_from(8, 5, 0, p)), bad_desc, "height");
        assert_eq!(e(0, &srgba, &desc_from(8, 4, 64, p)), bad_desc, "row pitch");
        let mut sliced = desc_from(8, 4, 0, p);
        sliced.image_slice_pitch = 128;
        assert_eq!(e(0, &srgba, &sliced), bad_desc, "slice pitch");
        let mut array = desc_from(8, 4, 0, p);
        array.image_type = CL_MEM_OBJECT_IMAGE2D_ARRAY as cl_mem_object_type;
        array.image_array_size = 1;
        assert_eq!(e(0, &srgba, &array), bad_desc, "a 2D array from a 2D image");
        let bad_format = Some(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
        assert_eq!(e(0, &fmt(CL_BGRA, CL_UNORM_INT8), &desc_from(8, 4, 0, p)), bad_format, "incompatible order");
        assert_eq!(e(0, &fmt(CL_sRGBA, CL_UNORM_INT16), &desc_from(8, 4, 0, p)), bad_format, "another data type");
        assert_eq!(e(0, &fmt(CL_RGBA, CL_UNORM_INT16), &desc_from(8, 4, 0, p)), bad_format, "another data type");
        // The flags rules of an image created from another memory object.
        assert_eq!(e(CL_MEM_READ_WRITE, &rgba, &desc_from(8, 4, 0, p)), Some(CL_INVALID_VALUE), "kernel access");
        assert_eq!(e(CL_MEM_HOST_WRITE_ONLY, &rgba, &desc_from(8, 4, 0, p)), Some(CL_INVALID_VALUE), "host access");
        assert_eq!(
            e(CL_MEM_ALLOC_HOST_PTR, &rgba, &desc_from(8, 4, 0, p)),
            Some(CL_INVALID_VALUE),
            "host pointer flag"
        );
        let mut host = vec![0u8; 128];
        let hp = host.as_mut_ptr() as *mut c_void;
        assert_eq!(create(ctx, 0, &rgba, &desc_from(8, 4, 0, p), hp).err(), Some(CL_INVALID_HOST_PTR));
        assert_eq!(
            create(ctx, CL_MEM_USE_HOST_PTR as cl_mem_flags, &rgba, &desc_from(8, 4, 0, p), hp).err(),
            Some(CL_INVALID_VALUE)
        );
        // The flags not given are inherited.
        let same = create_ok(ctx, 0, &srgba, &desc_from(8, 4, 0, p), ptr::null_mut());
        assert_eq!(mem_info::<cl_mem_flags>(&same, CL_MEM_FLAGS), host_ro);
        // A 2D array is not a 2D image to view; an image of another context is not valid.
        let arr_desc = desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, [8, 4, 0], 2, (0, 0));
        let arr = create_ok(ctx, CL_MEM_READ_ONLY, &rgba, &arr_desc, ptr::null_mut());
        assert_eq!(e(0, &srgba, &desc_from(8, 4, 0, arr.raw())), bad_desc, "a 2D array as mem_object");
        let other = d.env();
        assert_eq!(
            create(other.context.raw(), 0, &srgba, &desc_from(8, 4, 0, p), ptr::null_mut()).err(),
            bad_desc,
            "another context's image"
        );
        // clCreateImageWithProperties takes an image as mem_object as well.
        let props: [cl_mem_properties; 1] = [0];
        // SAFETY: valid context, a terminated property list, format and descriptor for the call.
        let (m, err) = unsafe {
            cl_create_err!(clCreateImageWithProperties(
                ctx,
                props.as_ptr(),
                0,
                &srgba,
                &desc_from(8, 4, 0, p),
                ptr::null_mut()
            ))
        };
        assert_eq!(err, CL_SUCCESS);
        // SAFETY: a new image whose reference we own.
        let m = unsafe { Mem::from_raw(m) };
        assert_eq!(mem_info::<cl_mem>(&m, CL_MEM_ASSOCIATED_MEMOBJECT), p);
    });
}
