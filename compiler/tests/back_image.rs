//! Image functions from OpenCL C to execution: read_image{f,i,ui} with and without samplers,
//! write_image*, the get_image_* queries, on every kind of image, in the scalar build, the
//! vectorized build and the Gen-instrumented build. Images are `ImageArg`s (the kernel ABI)
//! over `Vec<u8>` pixels built here; expected values are computed by hand or, for the
//! linear filter, by the formula of the OpenCL C specification written out in the test.
#![allow(clippy::needless_range_loop)]

mod common;

use common::*;
use softcl_compiler::abi::ImageArg;
use softcl_compiler::image::Dim;
use softcl_compiler::{compile_source, GenBuild, NativeKernel, NativeProgram, Target, Vectorizer, WorkGroupContext};
use std::sync::Arc;

const CL_R: u32 = 0x10B0;
const CL_RGBA: u32 = 0x10B5;
const CL_UNORM_INT8: u32 = 0x10D2;
const CL_SIGNED_INT16: u32 = 0x10D8;
const CL_UNSIGNED_INT8: u32 = 0x10DA;
const CL_FLOAT: u32 = 0x10DE;

/// The builds every test runs: scalar, vectorized at 8 lanes, Gen-instrumented at SIMD16 and
/// at SIMD8 with the linear-lanes entry.
fn targets() -> Vec<(&'static str, Target)> {
    vec![
        ("scalar", Target { vectorizer: Vectorizer::Off, ..Target::default() }),
        ("vector", Target { vectorizer: Vectorizer::Forced { width: 8, register_bytes: 64 }, ..Target::default() }),
        (
            "gen",
            Target {
                gen: Some(GenBuild { simd: 16, linear_lanes: false, row_width: 0 }),
                vectorizer: Vectorizer::Forced { width: 16, register_bytes: 64 },
                ..Target::default()
            },
        ),
        (
            "gen-linear-lanes",
            Target {
                gen: Some(GenBuild { simd: 8, linear_lanes: true, row_width: 0 }),
                vectorizer: Vectorizer::Forced { width: 8, register_bytes: 32 },
                ..Target::default()
            },
        ),
    ]
}

fn build(src: &str, t: &Target) -> Arc<NativeProgram> {
    build_opts(src, "", t)
}

fn build_opts(src: &str, opts: &str, t: &Target) -> Arc<NativeProgram> {
    let prog = compile_source(src, opts, t).unwrap_or_else(|e| panic!("front end: {}", e.log));
    prog.codegen(t).unwrap_or_else(|e| panic!("back end: {}", e.log))
}

/// Kernel `kernel` of `p`, checked to be vectorized in every build but the scalar one (image
/// functions run lane by lane inside the vector body, they do not keep a kernel scalar).
fn kernel<'p>(p: &'p NativeProgram, kernel: &str, build: &str) -> &'p NativeKernel {
    let k = p.kernel(kernel).unwrap();
    assert_eq!(k.info.simd_width > 1, build != "scalar", "{build}: {kernel} has width {}", k.info.simd_width);
    k
}

/// An image over its own pixels (boxed so that `arg.data` stays put).
struct TestImage {
    pixels: Box<[u8]>,
    arg: Box<ImageArg>,
}

impl TestImage {
    fn new(dim: Dim, order: u32, ty: u32, pixel_size: usize, size: [u32; 3], pixels: Vec<u8>) -> Self {
        let row_pitch = size[0] as u64 * pixel_size as u64;
        let slice_pitch = row_pitch * size[1] as u64;
        assert_eq!(pixels.len() as u64, slice_pitch * size[2] as u64);
        let mut pixels = pixels.into_boxed_slice();
        let arg = Box::new(ImageArg {
            data: pixels.as_mut_ptr(),
            row_pitch,
            slice_pitch,
            size,
            dim: ImageArg::dim_code(dim),
            channel_order: order,
            channel_type: ty,
        });
        TestImage { pixels, arg }
    }
    fn ptr(&self) -> *const ImageArg {
        &*self.arg
    }
}

/// Runs `k` over `global` (work-groups of `local`), with a Gen counter array when the build
/// is instrumented; returns the counters (all work-groups summed; empty without).
fn run(k: &NativeKernel, args: &ArgBlock, global: [u64; 3], local: [u64; 3]) -> Vec<u64> {
    let info = &k.info;
    // The counters, then the general counts' memos (`GenKernelInfo::scratch_words`).
    let words = info.gen.as_ref().map_or(0, |g| g.scratch_words());
    let counter_words = info.gen.as_ref().map_or(0, |g| g.counter_words());
    let mut counters = vec![0u64; words];
    let groups: Vec<u64> = (0..3).map(|d| global[d].div_ceil(local[d])).collect();
    for gz in 0..groups[2] {
        for gy in 0..groups[1] {
            for gx in 0..groups[0] {
                let gid = [gx, gy, gz];
                let size: [u64; 3] = std::array::from_fn(|d| local[d].min(global[d] - gid[d] * local[d]));
                let n = (size[0] * size[1] * size[2]) as u32;
                let lsize = size.map(|s| s as usize);
                let mut state = AlignedBuf::new(info.work_item_state_bytes(lsize).expect("state size"));
                let ctx = WorkGroupContext {
                    group_id: gid,
                    local_size: size,
                    enqueued_local_size: local,
                    global_size: global,
                    num_groups: [groups[0], groups[1], groups[2]],
                    work_dim: 3,
                    work_item_state: state.as_mut_ptr(),
                    gen_counters: if words > 0 { counters.as_mut_ptr() } else { std::ptr::null_mut() },
                    ..WorkGroupContext::default()
                };
                // SAFETY: the block was laid out for this kernel; the images it points at live to the end of the test.
                assert_eq!(unsafe { k.run(args.bytes(), &ctx, 0, n, 0) }, softcl_compiler::FINISHED);
            }
        }
    }
    counters.truncate(counter_words);
    counters
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// An 8x4 RGBA8 image: pixel (x, y) = (x*30, y*60, x+y, 255).
fn rgba8_8x4() -> TestImage {
    let mut px = Vec::new();
    for y in 0..4u8 {
        for x in 0..8u8 {
            px.extend_from_slice(&[x * 30, y * 60, x + y, 255]);
        }
    }
    TestImage::new(Dim::D2, CL_RGBA, CL_UNORM_INT8, 4, [8, 4, 1], px)
}

const READ_2D: &str = r#"
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
kernel void k(read_only image2d_t img, sampler_t linear, global float4 *a, global float4 *b,
              global float4 *c, global float4 *d) {
    int x = get_global_id(0), y = get_global_id(1);
    int i = y * get_global_size(0) + x;
    a[i] = read_imagef(img, nearest, (int2)(x, y));
    b[i] = read_imagef(img, (int2)(x, y));
    c[i] = read_imagef(img, nearest, (float2)(x + 0.75f, y + 0.25f));
    // Normalized coordinates through a sampler argument (linear, clamp-to-edge).
    d[i] = read_imagef(img, linear, (float2)((x + 1.0f) / 8.0f, (y + 0.5f) / 4.0f));
}
"#;

#[test]
fn read_imagef_2d_rgba8_nearest_linear_and_samplerless() {
    for (name, t) in targets() {
        let p = build(READ_2D, &t);
        let k = kernel(&p, "k", name);
        let img = rgba8_8x4();
        let n = 32;
        let mut outs: Vec<Vec<u8>> = (0..4).map(|_| vec![0u8; n * 16]).collect();
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, img.ptr());
        // CLK_NORMALIZED_COORDS_TRUE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_LINEAR
        args.set(&k.info, 1, 0x1u64 | 0x2 | 0x20);
        for (j, o) in outs.iter_mut().enumerate() {
            args.set_ptr(&k.info, 2 + j, o.as_mut_ptr());
        }
        run(k, &args, [8, 4, 1], [8, 2, 1]);
        let (a, b, c, d) = (f32s(&outs[0]), f32s(&outs[1]), f32s(&outs[2]), f32s(&outs[3]));
        let px = |x: usize, y: usize| -> [f32; 4] {
            let x = x.min(7);
            [(x * 30) as f32 * (1.0 / 255.0), (y * 60) as f32 * (1.0 / 255.0), (x + y) as f32 * (1.0 / 255.0), 1.0]
        };
        for y in 0..4 {
            for x in 0..8 {
                let i = y * 8 + x;
                let want = px(x, y);
                for ch in 0..4 {
                    assert_eq!(a[i * 4 + ch], want[ch], "{name} nearest ({x},{y}) ch {ch}");
                    assert_eq!(b[i * 4 + ch], want[ch], "{name} sampler-less ({x},{y}) ch {ch}");
                    assert_eq!(c[i * 4 + ch], want[ch], "{name} nearest float ({x},{y}) ch {ch}");
                    // Linear at u = x + 1 (texel space): halfway between pixels x and x+1
                    // (clamped to 7), exactly row y.
                    let lin = 0.5 * px(x, y)[ch] + 0.5 * px(x + 1, y)[ch];
                    assert!(
                        (d[i * 4 + ch] - lin).abs() < 1e-3,
                        "{name} linear ({x},{y}) ch {ch}: {} vs {lin}",
                        d[i * 4 + ch]
                    );
                }
            }
        }
    }
}

const WRITE_2D: &str = r#"
kernel void w(write_only image2d_t out, write_only image2d_t ints) {
    int x = get_global_id(0), y = get_global_id(1);
    if ((x + y) % 3 != 0)
        write_imagef(out, (int2)(x, y), (float4)(x * 0.25f, -y, 0.5f, 2.0f));
    // Out of range: must not touch memory.
    write_imagef(out, (int2)(x + 100, y), (float4)(9.0f));
    write_imageui(ints, (int2)(x, y), (uint4)(x * 40 + y, 300, 0, 0));
}
kernel void r(read_only image2d_t img, global float4 *o) {
    int x = get_global_id(0), y = get_global_id(1);
    o[y * get_global_size(0) + x] = read_imagef(img, (int2)(x, y));
}
"#;

#[test]
fn write_imagef_and_ui_then_read_back() {
    for (name, t) in targets() {
        let p = build(WRITE_2D, &t);
        let w = kernel(&p, "w", name);
        let img = TestImage::new(Dim::D2, CL_RGBA, CL_FLOAT, 16, [6, 5, 1], vec![0xEE; 6 * 5 * 16]);
        let ints = TestImage::new(Dim::D2, CL_R, CL_UNSIGNED_INT8, 1, [6, 5, 1], vec![7; 30]);
        let mut args = ArgBlock::new(&w.info);
        args.set_ptr(&w.info, 0, img.ptr());
        args.set_ptr(&w.info, 1, ints.ptr());
        run(w, &args, [6, 5, 1], [3, 5, 1]);
        let r = kernel(&p, "r", name);
        let mut o = vec![0u8; 30 * 16];
        let mut args = ArgBlock::new(&r.info);
        args.set_ptr(&r.info, 0, img.ptr());
        args.set_ptr(&r.info, 1, o.as_mut_ptr());
        run(r, &args, [6, 5, 1], [6, 1, 1]);
        let o = f32s(&o);
        let untouched = f32::from_le_bytes([0xEE; 4]);
        for y in 0..5 {
            for x in 0..6 {
                let i = y * 6 + x;
                let want = if (x + y) % 3 != 0 { [x as f32 * 0.25, -(y as f32), 0.5, 2.0] } else { [untouched; 4] };
                assert_eq!(&o[i * 4..i * 4 + 4], &want, "{name} ({x},{y})");
                // CL_UNSIGNED_INT8 saturates: 300 does not matter (R only), x*40+y fits.
                assert_eq!(ints.pixels[i], (x * 40 + y).min(255) as u8, "{name} uint ({x},{y})");
            }
        }
    }
}

const INTS: &str = r#"
__constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;
kernel void k(read_only image2d_t si, read_only image2d_t ui, global int4 *a, global uint4 *b, global int4 *c) {
    int x = get_global_id(0);
    a[x] = read_imagei(si, (int2)(x, 0));
    b[x] = read_imageui(ui, s, (int2)(x - 1, 0));
    c[x] = read_imagei(si, s, (float2)(x + 0.5f, 0.5f));
}
"#;

#[test]
fn read_imagei_and_ui_on_integer_formats() {
    for (name, t) in targets() {
        let p = build(INTS, &t);
        let k = kernel(&p, "k", name);
        let si_vals: Vec<i16> = (0..4).map(|x| -1000 * x - 7).collect();
        let si = TestImage::new(
            Dim::D2,
            CL_R,
            CL_SIGNED_INT16,
            2,
            [4, 1, 1],
            si_vals.iter().flat_map(|v| v.to_le_bytes()).collect(),
        );
        let ui =
            TestImage::new(Dim::D2, CL_RGBA, CL_UNSIGNED_INT8, 4, [4, 1, 1], (0..16).map(|v| v * 10 + 1).collect());
        let (mut a, mut b, mut c) = (vec![0i32; 16], vec![0u32; 16], vec![0i32; 16]);
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, si.ptr());
        args.set_ptr(&k.info, 1, ui.ptr());
        args.set_ptr(&k.info, 2, a.as_mut_ptr());
        args.set_ptr(&k.info, 3, b.as_mut_ptr());
        args.set_ptr(&k.info, 4, c.as_mut_ptr());
        run(k, &args, [4, 1, 1], [4, 1, 1]);
        for x in 0..4 {
            // CL_R: (r, 0, 0, 1).
            assert_eq!(&a[x * 4..x * 4 + 4], &[si_vals[x] as i32, 0, 0, 1], "{name} read_imagei {x}");
            assert_eq!(&c[x * 4..x * 4 + 4], &[si_vals[x] as i32, 0, 0, 1], "{name} sampled read_imagei {x}");
            // x - 1 = -1 under CLK_ADDRESS_CLAMP: the border colour (0, 0, 0, 0) of RGBA.
            let want: Vec<u32> =
                if x == 0 { vec![0; 4] } else { (0..4).map(|c| ((x - 1) * 4 + c) as u32 * 10 + 1).collect() };
            assert_eq!(&b[x * 4..x * 4 + 4], &want[..], "{name} read_imageui {x}");
        }
    }
}

const QUERIES: &str = r#"
kernel void k(read_only image1d_t a, read_only image1d_array_t b, read_only image2d_t c,
              read_only image2d_array_t d, read_only image3d_t e, read_only image1d_buffer_t f,
              global int *o) {
    o[0] = get_image_width(a);
    o[1] = get_image_width(b);  o[2] = get_image_array_size(b);
    o[3] = get_image_width(c);  o[4] = get_image_height(c);
    int2 dc = get_image_dim(c); o[5] = dc.x * 100 + dc.y;
    o[6] = get_image_width(d);  o[7] = get_image_height(d); o[8] = get_image_array_size(d);
    o[9] = get_image_width(e);  o[10] = get_image_height(e); o[11] = get_image_depth(e);
    int4 de = get_image_dim(e); o[12] = de.x * 10000 + de.y * 100 + de.z + de.w;
    o[13] = get_image_width(f);
    o[14] = get_image_channel_order(c); o[15] = get_image_channel_data_type(c);
    o[16] = get_image_channel_order(e); o[17] = get_image_channel_data_type(e);
}
"#;

#[test]
fn get_image_queries_on_every_dimension() {
    for (name, t) in targets() {
        let p = build(QUERIES, &t);
        let k = kernel(&p, "k", name);
        let a = TestImage::new(Dim::D1, CL_RGBA, CL_UNORM_INT8, 4, [5, 1, 1], vec![0; 20]);
        let b = TestImage::new(Dim::D1Array, CL_RGBA, CL_UNORM_INT8, 4, [6, 3, 1], vec![0; 72]);
        let c = TestImage::new(Dim::D2, CL_RGBA, CL_UNORM_INT8, 4, [7, 2, 1], vec![0; 56]);
        let d = TestImage::new(Dim::D2Array, CL_R, CL_FLOAT, 4, [2, 3, 4], vec![0; 96]);
        let e = TestImage::new(Dim::D3, CL_R, CL_FLOAT, 4, [3, 4, 5], vec![0; 240]);
        let f = TestImage::new(Dim::D1Buffer, CL_RGBA, CL_FLOAT, 16, [9, 1, 1], vec![0; 144]);
        let mut o = vec![-1i32; 18];
        let mut args = ArgBlock::new(&k.info);
        for (j, im) in [&a, &b, &c, &d, &e, &f].into_iter().enumerate() {
            args.set_ptr(&k.info, j, im.ptr());
        }
        args.set_ptr(&k.info, 6, o.as_mut_ptr());
        run(k, &args, [1, 1, 1], [1, 1, 1]);
        let want = [
            5,
            6,
            3,
            7,
            2,
            702,
            2,
            3,
            4,
            3,
            4,
            5,
            30405,
            9,
            CL_RGBA as i32,
            CL_UNORM_INT8 as i32,
            CL_R as i32,
            CL_FLOAT as i32,
        ];
        assert_eq!(o, want, "{name}");
    }
}

const DIMS: &str = r#"
__constant sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
kernel void k(read_only image1d_t a, read_only image1d_array_t b, read_only image2d_array_t c,
              read_only image3d_t d, read_only image1d_buffer_t e, write_only image3d_t w,
              write_only image2d_array_t wa, global float *o) {
    int x = get_global_id(0);
    o[x * 8 + 0] = read_imagef(a, s, x).x;
    o[x * 8 + 1] = read_imagef(a, s, (float)x + 0.5f).x;
    o[x * 8 + 2] = read_imagef(b, s, (int2)(x, 2)).x;
    o[x * 8 + 3] = read_imagef(b, s, (float2)(x, 1.2f)).x;
    o[x * 8 + 4] = read_imagef(c, s, (float4)(x + 0.5f, 1.5f, 3.0f, 0.0f)).x;
    o[x * 8 + 5] = read_imagef(d, (int4)(x, 2, 1, 0)).x;
    o[x * 8 + 6] = read_imagef(e, x).x;
    o[x * 8 + 7] = read_imagef(d, s, (float4)(x + 0.5f, 3.5f, 4.5f, 0.0f)).x;
    write_imagef(w, (int4)(x, 1, 2, 0), (float4)(x + 0.5f));
    write_imagef(wa, (int4)(x, 0, 1, 0), (float4)(x - 0.5f));
}
"#;

#[test]
fn reads_and_writes_on_1d_1d_array_1d_buffer_2d_array_and_3d() {
    // Pixel values: CL_R CL_FLOAT, value = 1000*z + 100*y + x (layers in y or z).
    let vals = |w: u32, h: u32, d: u32| -> Vec<u8> {
        let mut v = Vec::new();
        for z in 0..d {
            for y in 0..h {
                for x in 0..w {
                    v.extend_from_slice(&((1000 * z + 100 * y + x) as f32).to_le_bytes());
                }
            }
        }
        v
    };
    for (name, t) in targets() {
        let p = build(DIMS, &t);
        let k = kernel(&p, "k", name);
        let n = 4u32;
        let a = TestImage::new(Dim::D1, CL_R, CL_FLOAT, 4, [n, 1, 1], vals(n, 1, 1));
        let b = TestImage::new(Dim::D1Array, CL_R, CL_FLOAT, 4, [n, 3, 1], vals(n, 3, 1));
        let c = TestImage::new(Dim::D2Array, CL_R, CL_FLOAT, 4, [n, 2, 3], vals(n, 2, 3));
        let d = TestImage::new(Dim::D3, CL_R, CL_FLOAT, 4, [n, 4, 5], vals(n, 4, 5));
        let e = TestImage::new(Dim::D1Buffer, CL_R, CL_FLOAT, 4, [n, 1, 1], vals(n, 1, 1));
        let w = TestImage::new(Dim::D3, CL_R, CL_FLOAT, 4, [n, 2, 3], vec![0; (n * 6 * 4) as usize]);
        let wa = TestImage::new(Dim::D2Array, CL_R, CL_FLOAT, 4, [n, 1, 2], vec![0; (n * 2 * 4) as usize]);
        let mut o = vec![0f32; (n * 8) as usize];
        let mut args = ArgBlock::new(&k.info);
        for (j, im) in [&a, &b, &c, &d, &e, &w, &wa].into_iter().enumerate() {
            args.set_ptr(&k.info, j, im.ptr());
        }
        args.set_ptr(&k.info, 7, o.as_mut_ptr());
        run(k, &args, [n as u64, 1, 1], [n as u64, 1, 1]);
        for x in 0..n as usize {
            let xf = x as f32;
            // 1D array layer 1.2 rounds to 1; 2D array layer 3.0 clamps to the last (2);
            // 3D (x+0.5, 3.5, 4.5) is pixel (x, 3, 4).
            let want =
                [xf, xf, 100.0 * 2.0 + xf, 100.0 + xf, 2000.0 + 100.0 + xf, 1000.0 + 200.0 + xf, xf, 4300.0 + xf];
            assert_eq!(&o[x * 8..x * 8 + 8], &want, "{name} x={x}");
        }
        let wv = f32s(&w.pixels);
        let wav = f32s(&wa.pixels);
        for x in 0..n as usize {
            for z in 0..3 {
                for y in 0..2 {
                    let v = wv[(z * 2 + y) * n as usize + x];
                    assert_eq!(v, if (y, z) == (1, 2) { x as f32 + 0.5 } else { 0.0 }, "{name} 3D write");
                }
            }
            assert_eq!(wav[x], 0.0, "{name} 2D array layer 0");
            assert_eq!(wav[n as usize + x], x as f32 - 0.5, "{name} 2D array layer 1");
        }
    }
}

/// Under divergent control flow (vector code runs image writes lane by lane under the
/// mask), only the lanes that take the branch write.
#[test]
fn divergent_writes_only_from_active_lanes() {
    let src = r#"
kernel void k(write_only image2d_t img, global const int *flag) {
    int x = get_global_id(0);
    if (flag[x]) write_imagei(img, (int2)(x % 7, 0), (int4)(x + 1, 0, 0, 0));
    // Every lane writes the same uniform pixel: must happen once the mask has any lane.
    write_imagei(img, (int2)(7, 0), (int4)(-5, 0, 0, 0));
}
"#;
    for (name, t) in targets() {
        let p = build(src, &t);
        let k = kernel(&p, "k", name);
        let img = TestImage::new(Dim::D2, CL_R, 0x10D9 /* CL_SIGNED_INT32 */, 4, [8, 1, 1], vec![0; 32]);
        let flag: Vec<i32> = (0..7).map(|x| (x % 2 == 1) as i32).collect();
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, img.ptr());
        args.set_ptr(&k.info, 1, flag.as_ptr());
        run(k, &args, [7, 1, 1], [7, 1, 1]);
        let got: Vec<i32> = img.pixels.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(got, vec![0, 2, 0, 4, 0, 6, 0, -5], "{name}");
    }
}

#[test]
fn unsupported_image_features_are_build_errors() {
    let cases = [
        (
            // cl_khr_mipmap_image's read with a level of detail (declared here: the device
            // does not offer the extension); llvm-spirv makes it an explicit non-zero Lod.
            "float4 __attribute__((overloadable)) read_imagef(read_only image2d_t, sampler_t, float2, float);\n\
             kernel void k(read_only image2d_t i, sampler_t s, global float4 *o, float l) { o[0] = read_imagef(i, s, (float2)(0.5f), l); }",
            "mipmap",
        ),
        ("kernel void k(read_only image2d_t i, global half4 *o) { o[0] = read_imageh(i, (int2)(0)); }", "read_imageh"),
    ];
    let t = Target::default();
    for (src, what) in cases {
        let opts = "";
        match compile_source(src, opts, &t) {
            Ok(prog) => match prog.codegen(&t) {
                Ok(_) => panic!("{what}: built"),
                Err(e) => panic!("{what}: the back end refused it, the front end should have: {}", e.log),
            },
            Err(e) => assert!(e.log.contains("not supported") && e.log.contains(what), "{what}: {}", e.log),
        }
    }
}

/// Depth images (cl_khr_depth_images): `read_imagef` returns one float, with and without a
/// sampler (CL_UNORM_INT16 here), `write_imagef` takes one (CL_FLOAT here), in every build,
/// vectorized ones included.
#[test]
fn depth_images_read_and_write_one_float() {
    const CL_DEPTH: u32 = 0x10BD;
    const CL_UNORM_INT16: u32 = 0x10D3;
    let src = r#"
kernel void k(read_only image2d_depth_t d, write_only image2d_depth_t o, sampler_t s, global float *out) {
    int x = get_global_id(0);
    float a = read_imagef(d, (int2)(x, 1));
    float b = read_imagef(d, s, (float2)(x + 0.5f, 1.5f));
    write_imagef(o, (int2)(x, 0), a + b);
    out[x] = b;
}
"#;
    for (name, t) in targets() {
        let p = build_opts(src, "-cl-std=CL3.0", &t);
        let k = kernel(&p, "k", name);
        let values: Vec<u16> = (0..16).map(|i| (i * 4000 + 7) as u16).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let d = TestImage::new(Dim::D2, CL_DEPTH, CL_UNORM_INT16, 2, [8, 2, 1], bytes);
        let o = TestImage::new(Dim::D2, CL_DEPTH, CL_FLOAT, 4, [8, 1, 1], vec![0; 32]);
        let out = vec![0f32; 8];
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, d.ptr());
        args.set_ptr(&k.info, 1, o.ptr());
        // CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST
        args.set(&k.info, 2, 0x2u64 | 0x10);
        args.set_ptr(&k.info, 3, out.as_ptr());
        run(k, &args, [8, 1, 1], [8, 1, 1]);
        let want: Vec<f32> = values[8..].iter().map(|&v| v as f32 / 65535.0).collect();
        assert_eq!(out, want, "{name}: read_imagef with a sampler");
        let got: Vec<f32> = o.pixels.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(got, want.iter().map(|v| v * 2.0).collect::<Vec<_>>(), "{name}: written");
    }
}

/// A read_write image read and written by the same work-item, and an image and a sampler
/// passed on to a helper function.
#[test]
fn read_write_image_and_helper_functions() {
    let src = r#"
float4 fetch(read_only image2d_t i, sampler_t s, int x) { return read_imagef(i, s, (int2)(x, 1)); }
kernel void k(read_write image2d_t rw, read_only image2d_t src, sampler_t s) {
    int x = get_global_id(0);
    float4 v = read_imagef(rw, (int2)(x, 0));
    write_imagef(rw, (int2)(x, 0), v * 2.0f + fetch(src, s, x));
}
"#;
    for (name, t) in targets() {
        // OpenCL C 2.0: read_write images without the 3.0 feature macro (which the devices
        // define only with image support).
        let p = build_opts(src, "-cl-std=CL2.0", &t);
        let k = kernel(&p, "k", name);
        let rw_px: Vec<u8> = (0..5u32).flat_map(|x| (x as f32 + 0.25).to_le_bytes()).collect();
        let rw = TestImage::new(Dim::D2, CL_R, CL_FLOAT, 4, [5, 1, 1], rw_px);
        let src_px: Vec<u8> = (0..10u32).flat_map(|i| (i as f32 * 10.0).to_le_bytes()).collect();
        let srci = TestImage::new(Dim::D2, CL_R, CL_FLOAT, 4, [5, 2, 1], src_px);
        let mut args = ArgBlock::new(&k.info);
        args.set_ptr(&k.info, 0, rw.ptr());
        args.set_ptr(&k.info, 1, srci.ptr());
        args.set(&k.info, 2, 0x10u64 | 0x2); // unnormalized, clamp-to-edge, nearest
        run(k, &args, [5, 1, 1], [5, 1, 1]);
        let got = f32s(&rw.pixels);
        let want: Vec<f32> = (0..5).map(|x| (x as f32 + 0.25) * 2.0 + (5 + x) as f32 * 10.0).collect();
        assert_eq!(got, want, "{name}");
    }
}

/// The Gen build counts each image read as a message with the L3 lines and the bytes of the
/// lanes' pixels.
#[test]
fn gen_counts_image_reads_as_messages() {
    let src = r#"
kernel void k(read_only image2d_t img, global float4 *o) {
    int x = get_global_id(0), y = get_global_id(1);
    o[y * 64 + x] = read_imagef(img, (int2)(x, y)) + read_imagef(img, (int2)(x * 4 % 64, y));
}
"#;
    let (name, t) = targets().into_iter().find(|(n, _)| *n == "gen").unwrap();
    let p = build(src, &t);
    let k = kernel(&p, "k", name);
    // 64 x 4 RGBA8: a row is 256 bytes, 4 lines of 64 bytes.
    let img = TestImage::new(Dim::D2, CL_RGBA, CL_UNORM_INT8, 4, [64, 4, 1], vec![0; 64 * 4 * 4]);
    let mut o = vec![0u8; 64 * 4 * 16];
    let mut args = ArgBlock::new(&k.info);
    args.set_ptr(&k.info, 0, img.ptr());
    args.set_ptr(&k.info, 1, o.as_mut_ptr());
    let words = run(k, &args, [64, 4, 1], [16, 1, 1]);
    let gen = k.info.gen.as_ref().unwrap();
    let loads: Vec<_> = (0..gen.sites.len())
        .filter(|&s| gen.sites[s].kind == softcl_compiler::gen_abi::AccessKind::Load)
        .map(|s| gen.site_counters(&words, s))
        .collect();
    assert_eq!(loads.len(), 2, "one site per image read");
    // 16 work-groups of 16 lanes, one message each; lines: the distinct lines of the lanes'
    // pixels on the Tile-Y surface, where a 64-byte line is 16 bytes (4 pixels) of 4 rows and
    // the image's 4 rows share their lines: pixels x..x+15 of a row are 4 lines; pixels 4x
    // (16 bytes apart) a line each, 16.
    assert_eq!((loads[0].messages, loads[0].l3_lines), (16, 16 * 4));
    assert_eq!((loads[1].messages, loads[1].l3_lines), (16, 16 * 16));
    // Useful bytes: the 4-byte pixels of the 256 lanes (not the 16-byte texels they receive).
    assert_eq!((loads[0].useful_bytes, loads[1].useful_bytes), (256 * 4, 256 * 4));
}

/// A Gen device's programs built again from one source (the CTS's image suites build one per
/// format and sampler from a few dozen sources) share the instrumented variant compiled for
/// the first: LLVM runs once per source, width and lane layout in a process. A different
/// source gets its own.
#[test]
fn gen_variants_of_one_source_are_compiled_once() {
    let t = Target { gen: Some(GenBuild { simd: 0, linear_lanes: false, row_width: 0 }), ..Target::default() };
    let src = "kernel void k(read_only image2d_t i, global float4 *o) {\n\
               int x = get_global_id(0); o[x] = read_imagef(i, (int2)(x, 0)); }";
    let simd16 = GenBuild { simd: 16, linear_lanes: false, row_width: 0 };
    let variant = |p: &NativeProgram| p.kernel("k").unwrap().gen_variant(simd16, 0).expect("a Gen build").unwrap().1;
    let (a, b) = (build(src, &t), build(src, &t));
    assert!(!Arc::ptr_eq(&a, &b), "two programs");
    assert!(Arc::ptr_eq(&variant(&a), &variant(&b)), "one variant");
    let c = build(&src.replace("x, 0", "x, 1"), &t);
    assert!(!Arc::ptr_eq(&variant(&a), &variant(&c)), "another source, another variant");
}

/// Vector code reads and writes an image with one host call per packet (the `_lanes`
/// functions: the image's layout worked out once, not once per lane), and the Gen build asks
/// for a packet's texel addresses, which its line counts need, in one call too (for its
/// sampled read, the lines of the filter's pixels: `softcl_image_sampled_lines`). The scalar
/// build keeps the one-lane functions. (Results are the other tests' concern: every build
/// gives the same.)
#[test]
fn packets_call_the_image_functions_once() {
    let src = r#"
kernel void k(read_only image2d_t a, sampler_t s, write_only image2d_t b, global int4 *o) {
    int x = get_global_id(0), y = get_global_id(1);
    float4 v = read_imagef(a, s, (float2)(x * 0.5f, y));
    o[y * 8 + x] = read_imagei(a, (int2)(y, x));
    write_imagef(b, (int2)(x, y), v);
}
"#;
    for (name, t) in targets() {
        let p = build(src, &t);
        kernel(&p, "k", name);
        let syms = &p.image.as_ref().expect("a native image").host_symbols;
        let has = |f: &str| syms.iter().any(|s| s == f);
        let packet = name != "scalar";
        for f in ["softcl_image_sample", "softcl_image_read", "softcl_image_write"] {
            assert_eq!(has(f), !packet, "{name}: {f} in {syms:?}");
            assert_eq!(has(&format!("{f}_lanes")), packet, "{name}: {f}_lanes in {syms:?}");
        }
        let gen = name.starts_with("gen");
        assert!(!has("softcl_image_texel_address"), "{name}: {syms:?}");
        assert_eq!(has("softcl_image_texel_addresses"), gen, "{name}: {syms:?}");
        assert_eq!(has("softcl_image_sampled_lines"), gen, "{name}: the sampled read's lines, {syms:?}");
    }
}
