//! Host-side image commands as the CTS's cl_fill_images and cl_copy_images check them,
//! through the loader: clEnqueueFillImage of the packed and padded formats byte for byte
//! (CL_RGBA / CL_UNORM_INT_101010_2 with R in the high bits; CL_sRGBx is not supported),
//! a 1D image from a buffer given a row pitch (their `use_pitches` runs), and 2D images of
//! 3-byte pixels from buffers that were not created with CL_MEM_USE_HOST_PTR (image_streams
//! `use_pitches` skipped CL_sRGB when every buffer address was held to 16 such pixels).

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;

const CL_SRGBX: u32 = 0x10C0;

/// clEnqueueFillImage of `region` at `origin` with a four-component `color` (float4, int4 or
/// uint4: 16 bytes).
fn fill<T: Copy>(q: cl_command_queue, img: &Mem, color: &[T; 4], origin: [usize; 3], region: [usize; 3]) {
    assert_eq!(std::mem::size_of_val(color), 16);
    // SAFETY: a 16-byte color and arrays of three that live for the call; no events.
    unsafe {
        cl!(clEnqueueFillImage(
            q,
            img.raw(),
            color.as_ptr() as *const c_void,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            ptr::null(),
            ptr::null_mut()
        ))
    };
}

/// clCreateImage of a 3x1 read-only 2D image of `order` / `ty` (no host pointer): the handle
/// (NULL on an error) and the error code.
fn create_3x1(env: &TestEnv, order: u32, ty: u32) -> (cl_mem, cl_int) {
    let format = cl_image_format { image_channel_order: order, image_channel_data_type: ty };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D as cl_mem_object_type,
        image_width: 3,
        image_height: 1,
        ..Default::default()
    };
    // SAFETY: valid context; format and descriptor live for the call; no host pointer.
    unsafe { cl_create_err!(clCreateImage(env.context.raw(), CL_MEM_READ_ONLY, &format, &desc, ptr::null_mut())) }
}

/// Fills a 3x1 read-only 2D image (the sRGB formats are read-only ones) of `format` with
/// `color` at x = 1 and reads the pixel back.
fn fill_one_pixel(env: &TestEnv, order: u32, ty: u32, color: [f32; 4]) -> Vec<u8> {
    let (m, err) = create_3x1(env, order, ty);
    assert_eq!(err, CL_SUCCESS, "clCreateImage({order:#x}, {ty:#x}): {}", error_name(err));
    // SAFETY: a new image whose reference we own.
    let img = unsafe { Mem::from_raw(m) };
    let (origin, region) = ([1usize, 0, 0], [1usize, 1, 1]);
    let mut out = vec![0xAAu8; 4];
    fill(env.q(), &img, &color, origin, region);
    read(env.q(), &img, origin, region, &mut out);
    out
}

/// A blocking clEnqueueReadImage of `region` at `origin` into `out`, packed (pitches 0).
fn read(q: cl_command_queue, img: &Mem, origin: [usize; 3], region: [usize; 3], out: &mut [u8]) {
    // SAFETY: arrays of three that live for the call; the caller's `out` holds the packed
    // region (the image's pixel size times the region's pixels); blocking read.
    unsafe {
        cl!(clEnqueueReadImage(
            q,
            img.raw(),
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            out.as_mut_ptr() as *mut c_void,
            0,
            ptr::null(),
            ptr::null_mut()
        ));
    }
}

#[test]
fn unorm_int_101010_2_is_filled_with_red_in_the_high_bits() {
    for_each_device(|d| {
        let env = d.env();
        // The specification: R in bits 31:22, G 21:12, B 11:2, A 1:0.
        let px = fill_one_pixel(&env, CL_RGBA, CL_UNORM_INT_101010_2, [1.0, 0.0, 1.0 / 3.0, 1.0 / 3.0]);
        let word = u32::from_ne_bytes(px.try_into().unwrap());
        assert_eq!(word, (1023 << 22) | (341 << 2) | 1, "{word:#010x}");
    });
}

/// The padded orders (CL_Rx, CL_RGx, CL_RGBx, CL_sRGBx) are not listed (their
/// CLK_ADDRESS_CLAMP border colour differs between the specification and the CTS), so an
/// image of one is CL_IMAGE_FORMAT_NOT_SUPPORTED. (Were CL_sRGBx listed, a fill keeps its
/// alpha in the padding byte, as the CTS's fill check wants: compiler image::tests.)
#[test]
fn padded_orders_are_not_supported() {
    for_each_device(|d| {
        let env = d.env();
        let (m, err) = create_3x1(&env, CL_SRGBX, CL_UNORM_INT8);
        assert!(m.is_null());
        expect_error("clCreateImage(CL_sRGBx)", err, CL_IMAGE_FORMAT_NOT_SUPPORTED);
    });
}

#[test]
fn a_1d_buffer_image_takes_a_row_pitch() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let (width, ps) = (5usize, 4usize);
        let pitch = width * ps + 12; // the CTS's padded row
                                     // SAFETY: valid context, no host pointer.
        let (b, err) = unsafe { cl_create_err!(clCreateBuffer(ctx, CL_MEM_READ_WRITE, pitch, ptr::null_mut())) };
        assert_eq!(err, CL_SUCCESS);
        // SAFETY: a new buffer whose reference we own.
        let buffer = unsafe { Mem::from_raw(b) };
        let format = cl_image_format { image_channel_order: CL_RGBA, image_channel_data_type: CL_UNSIGNED_INT8 };
        let mut desc = cl_image_desc {
            image_type: CL_MEM_OBJECT_IMAGE1D_BUFFER as cl_mem_object_type,
            image_width: width,
            image_row_pitch: pitch,
            ..Default::default()
        };
        desc.__bindgen_anon_1.mem_object = buffer.raw();
        // SAFETY: format and descriptor live for the call; images from buffers take no host
        // pointer.
        let (m, err) =
            unsafe { cl_create_err!(clCreateImage(ctx, CL_MEM_READ_WRITE, &format, &desc, ptr::null_mut())) };
        assert_eq!(err, CL_SUCCESS, "clCreateImage: {}", error_name(err));
        // SAFETY: a new image whose reference we own.
        let img = unsafe { Mem::from_raw(m) };
        // The one row is packed: it is the buffer's first width * 4 bytes.
        let color = [1u32, 2, 3, 4];
        let (origin, region) = ([0usize; 3], [width, 1, 1]);
        let mut out = vec![0xAAu8; pitch];
        fill(env.q(), &img, &color, origin, region);
        // SAFETY: out holds the buffer; blocking read.
        unsafe {
            cl!(clEnqueueReadBuffer(
                env.q(),
                buffer.raw(),
                CL_TRUE,
                0,
                pitch,
                out.as_mut_ptr() as *mut c_void,
                0,
                ptr::null(),
                ptr::null_mut()
            ));
        }
        assert_eq!(&out[..width * ps], [1u8, 2, 3, 4].repeat(width).as_slice());
        // A row pitch shorter than the row, or not a multiple of the pixel, is refused.
        for bad in [width * ps - ps, width * ps + 1] {
            desc.image_row_pitch = bad;
            // SAFETY: as above.
            let (m, err) =
                unsafe { cl_create_err!(clCreateImage(ctx, CL_MEM_READ_WRITE, &format, &desc, ptr::null_mut())) };
            assert!(m.is_null());
            assert_eq!(err, CL_INVALID_IMAGE_DESCRIPTOR, "row pitch {bad}");
        }
    });
}

/// cl_khr_image2d_from_buffer asks CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT (in pixels) of the
/// host pointer of a CL_MEM_USE_HOST_PTR buffer only. A buffer SoftCL allocates, or a
/// sub-buffer of one, holds a 2D image of any format: here CL_sRGB / CL_UNORM_INT8, whose
/// 3-byte pixels no power-of-two address is a multiple of 16 of.
#[test]
fn a_2d_image_of_3_byte_pixels_from_a_buffer_of_ours() {
    for_each_device(|d| {
        let env = d.env();
        let ctx = env.context.raw();
        let mut align: cl_uint = 0;
        // SAFETY: a cl_uint query into a cl_uint.
        unsafe {
            cl!(clGetDeviceInfo(
                d.id,
                CL_DEVICE_IMAGE_PITCH_ALIGNMENT,
                4,
                &mut align as *mut cl_uint as *mut c_void,
                ptr::null_mut()
            ))
        };
        let (width, height, ps) = (5usize, 2usize, 3usize);
        let pitch = (align as usize).max(1) * ps * width.div_ceil((align as usize).max(1));
        let bytes: Vec<u8> = (0..pitch * height).map(|i| (i * 7 % 251) as u8).collect();
        // SAFETY: valid context; bytes hold the buffer's size for the copy.
        let (b, err) = unsafe {
            cl_create_err!(clCreateBuffer(
                ctx,
                CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                4096 + pitch * height,
                [bytes.clone(), vec![0; 4096]].concat().as_ptr() as *mut c_void
            ))
        };
        assert_eq!(err, CL_SUCCESS);
        // SAFETY: a new buffer whose reference we own.
        let buffer = unsafe { Mem::from_raw(b) };
        let format = cl_image_format { image_channel_order: CL_sRGB, image_channel_data_type: CL_UNORM_INT8 };
        let mut desc = cl_image_desc {
            image_type: CL_MEM_OBJECT_IMAGE2D as cl_mem_object_type,
            image_width: width,
            image_height: height,
            image_row_pitch: pitch,
            ..Default::default()
        };
        desc.__bindgen_anon_1.mem_object = buffer.raw();
        // SAFETY: format and descriptor live for the call; no host pointer.
        let (m, err) = unsafe { cl_create_err!(clCreateImage(ctx, CL_MEM_READ_ONLY, &format, &desc, ptr::null_mut())) };
        assert_eq!(err, CL_SUCCESS, "clCreateImage(CL_sRGB from a buffer): {}", error_name(err));
        // SAFETY: a new image whose reference we own.
        let img = unsafe { Mem::from_raw(m) };
        let (origin, region) = ([0usize; 3], [width, height, 1]);
        let mut out = vec![0xAAu8; width * ps * height];
        read(env.q(), &img, origin, region, &mut out);
        for y in 0..height {
            assert_eq!(out[y * width * ps..(y + 1) * width * ps], bytes[y * pitch..y * pitch + width * ps], "row {y}");
        }
        drop(img);
        // Sub-buffers of it at three multiples of the device's base address alignment (1024
        // bits): at most one of three such addresses is a multiple of 16 pixels of 3 bytes.
        for origin in [128usize, 256, 384] {
            let region = cl_buffer_region { origin, size: pitch * height };
            // SAFETY: a region inside the buffer; cl_buffer_region lives for the call.
            let (sb, err) = unsafe {
                cl_create_err!(clCreateSubBuffer(
                    buffer.raw(),
                    CL_MEM_READ_ONLY,
                    CL_BUFFER_CREATE_TYPE_REGION,
                    &region as *const cl_buffer_region as *const c_void
                ))
            };
            assert_eq!(err, CL_SUCCESS);
            // SAFETY: a new sub-buffer whose reference we own.
            let sub = unsafe { Mem::from_raw(sb) };
            desc.__bindgen_anon_1.mem_object = sub.raw();
            // SAFETY: as above.
            let (m, err) =
                unsafe { cl_create_err!(clCreateImage(ctx, CL_MEM_READ_ONLY, &format, &desc, ptr::null_mut())) };
            assert_eq!(err, CL_SUCCESS, "clCreateImage(CL_sRGB from a sub-buffer at {origin}): {}", error_name(err));
            // SAFETY: a new image whose reference we own.
            drop(unsafe { Mem::from_raw(m) });
        }
    });
}
