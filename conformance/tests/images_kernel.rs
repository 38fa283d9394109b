//! Kernels using images the way the Khronos CTS's kernel-side image suites do
//! (samplerless_reads, kernel_image_methods, image_streams): depth images, the OpenCL C 2.1
//! channel data type CLK_UNORM_INT_101010_2, 1D buffer images given a row pitch.

use softcl_conformance::*;
use std::ffi::c_void;
use std::ptr;

fn fmt(order: u32, ty: u32) -> cl_image_format {
    cl_image_format { image_channel_order: order, image_channel_data_type: ty }
}

fn desc(ty: u32, size: [usize; 3], layers: usize, row_pitch: usize) -> cl_image_desc {
    cl_image_desc {
        image_type: ty as cl_mem_object_type,
        image_width: size[0],
        image_height: size[1],
        image_depth: size[2],
        image_array_size: layers,
        image_row_pitch: row_pitch,
        ..Default::default()
    }
}

fn create(ctx: cl_context, flags: cl_mem_flags, f: &cl_image_format, d: &cl_image_desc, host: *mut c_void) -> Mem {
    // SAFETY: valid context; format and descriptor live for the call; host is NULL or holds
    // the image (each caller sizes it).
    let (m, err) = unsafe { cl_create_err!(clCreateImage(ctx, flags, f, d, host)) };
    assert_eq!(err, CL_SUCCESS, "clCreateImage");
    // SAFETY: a new image whose reference we own.
    unsafe { Mem::from_raw(m) }
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
        let img16 = create(
            ctx,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            &fmt(CL_DEPTH, CL_UNORM_INT16),
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, 0),
            d16.as_mut_ptr() as *mut c_void,
        );
        let imgf = create(
            ctx,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            &fmt(CL_DEPTH, CL_FLOAT),
            &desc(CL_MEM_OBJECT_IMAGE2D_ARRAY, [4, 4, 0], 2, 0),
            df.as_mut_ptr() as *mut c_void,
        );
        let out_img = create(
            ctx,
            CL_MEM_WRITE_ONLY,
            &fmt(CL_DEPTH, CL_FLOAT),
            &desc(CL_MEM_OBJECT_IMAGE2D, [4, 4, 0], 0, 0),
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
        let mut written = vec![0f32; 16];
        let (origin, region) = ([0usize; 3], [4usize, 4, 1]);
        // SAFETY: `written` holds the 4x4 float region; blocking.
        unsafe {
            cl!(clEnqueueReadImage(
                q,
                out_img.raw(),
                CL_TRUE,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                written.as_mut_ptr() as *mut c_void,
                0,
                ptr::null(),
                ptr::null_mut()
            ))
        };
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
        let img = create(
            ctx,
            CL_MEM_READ_ONLY,
            &fmt(CL_RGBA, CL_UNORM_INT_101010_2),
            &desc(CL_MEM_OBJECT_IMAGE2D, [3, 2, 0], 0, 0),
            ptr::null_mut(),
        );
        let texels: Vec<u32> = (0..9 * 4).collect();
        let buf = env.buffer_from(CL_MEM_READ_ONLY, &texels);
        let mut d1 = desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, [9, 0, 0], 0, 9 * 16);
        d1.__bindgen_anon_1.mem_object = buf.raw();
        let img1 = create(ctx, CL_MEM_READ_ONLY, &fmt(CL_RGBA, CL_UNSIGNED_INT32), &d1, ptr::null_mut());
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
        let img = create(
            ctx,
            CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
            &fmt(CL_RGBA, CL_UNORM_INT_101010_2),
            &desc(CL_MEM_OBJECT_IMAGE2D, [1, 1, 0], 0, 0),
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
