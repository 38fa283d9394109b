//! Host-side image commands as the CTS's cl_fill_images and cl_copy_images check them,
//! through the loader: clEnqueueFillImage of the packed and padded formats byte for byte
//! (CL_RGBA / CL_UNORM_INT_101010_2 with R in the high bits; CL_sRGBx is not supported),
//! and a 1D image from a buffer given a row pitch (their `use_pitches` runs).

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
    // SAFETY: arrays of three, out holds the one 4-byte pixel; blocking read.
    unsafe {
        cl!(clEnqueueReadImage(
            env.q(),
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
    out
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
