//! Host time of image kernels the way the Khronos CTS image suites run them
//! (test_image_streams): per image format and sampler, one program built from source, a
//! kernel reading the image through the sampler at float coordinates from buffers into a
//! float4/int4/uint4 buffer, and one writing an image with `write_image*`.
//!
//! Usage: `softcl-image-time [--device cpu|gpu] [--dim 2|3] [--size W[xH[xD]]]
//! [--formats N] [--launches N]`. Prints, per format and sampler, the clBuildProgram time,
//! the first launch (on the Gen device: its SIMD variant's compile) and the later launches
//! of the read and the write kernel, in milliseconds, and the totals.
//! `SOFTCL_CACHE` is left as the conformance crate sets it (off), as the CTS runs it cold.

use softcl_conformance::*;
use std::ffi::c_void;
use std::process::ExitCode;
use std::time::Instant;

/// (order, type, name, kind) of the formats timed: kind 'f' read_imagef, 'i', 'u'.
const FORMATS: &[(u32, u32, &str, char)] = &[
    (CL_RGBA, CL_UNORM_INT8, "RGBA UNORM_INT8", 'f'),
    (CL_RGBA, CL_FLOAT, "RGBA FLOAT", 'f'),
    (CL_RGBA, CL_UNORM_INT16, "RGBA UNORM_INT16", 'f'),
    (CL_RGBA, CL_HALF_FLOAT, "RGBA HALF_FLOAT", 'f'),
    (CL_BGRA, CL_UNORM_INT8, "BGRA UNORM_INT8", 'f'),
    (CL_R, CL_FLOAT, "R FLOAT", 'f'),
    (CL_RGBA, CL_SIGNED_INT32, "RGBA SIGNED_INT32", 'i'),
    (CL_RGBA, CL_UNSIGNED_INT8, "RGBA UNSIGNED_INT8", 'u'),
];

/// (normalized, addressing, filter, name) of the samplers timed.
const SAMPLERS: &[(bool, u32, u32, &str)] = &[
    (false, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, "clamp_to_edge nearest"),
    (true, CL_ADDRESS_REPEAT, CL_FILTER_LINEAR, "normalized repeat linear"),
];

fn source(dim: u32, kind: char) -> String {
    let (ty, read, write) = match kind {
        'i' => ("int4", "read_imagei", "write_imagei"),
        'u' => ("uint4", "read_imageui", "write_imageui"),
        _ => ("float4", "read_imagef", "write_imagef"),
    };
    let (img, coord, icoord, id, off) = if dim == 3 {
        (
            "image3d_t",
            "(float4)(xo[o], yo[o], zo[o], 0.0f)",
            "(int4)(x, y, z, 0)",
            "int x = get_global_id(0), y = get_global_id(1), z = get_global_id(2);",
            "(z * get_image_height(IMG) + y) * get_image_width(IMG) + x",
        )
    } else {
        (
            "image2d_t",
            "(float2)(xo[o], yo[o])",
            "(int2)(x, y)",
            "int x = get_global_id(0), y = get_global_id(1);",
            "y * get_image_width(IMG) + x",
        )
    };
    let (roff, woff) = (off.replace("IMG", "input"), off.replace("IMG", "output"));
    format!(
        "__kernel void sample_kernel(read_only {img} input, sampler_t s, __global float *xo,
             __global float *yo, __global float *zo, __global {ty} *results) {{
             {id}
             int o = {roff};
             results[o] = {read}(input, s, {coord});
         }}
         __kernel void write_kernel(__global {ty} *src, write_only {img} output) {{
             {id}
             int o = {woff};
             {write}(output, {icoord}, src[o]);
         }}"
    )
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: softcl-image-time [--device cpu|gpu] [--dim 2|3] [--size W[xH[xD]]] [--formats N] [--launches N]"
    );
    ExitCode::FAILURE
}

fn set_handle<T>(k: &Kernel, index: cl_uint, h: &T) {
    // SAFETY: h is a handle (cl_mem or cl_sampler) of the argument's size.
    let err = unsafe { clSetKernelArg(k.raw(), index, std::mem::size_of::<T>(), h as *const T as *const c_void) };
    check("clSetKernelArg", err);
}

fn main() -> ExitCode {
    let mut kind = DeviceKind::Gpu;
    let (mut dim, mut size, mut nformats, mut launches) = (2u32, [256usize, 256, 16], FORMATS.len(), 2usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut num = || args.next().and_then(|n| n.parse::<usize>().ok()).filter(|&n| n > 0);
        match a.as_str() {
            "--device" => match num_or_kind(args.next().as_deref()) {
                Some(k) => kind = k,
                None => return usage(),
            },
            "--dim" => match num() {
                Some(d @ (2 | 3)) => dim = d as u32,
                _ => return usage(),
            },
            "--size" => match args
                .next()
                .map(|s| s.split('x').map(|n| n.parse::<usize>().ok().filter(|&n| n > 0)).collect::<Option<Vec<_>>>())
            {
                Some(Some(v)) if (1..=3).contains(&v.len()) => {
                    size = [v[0], *v.get(1).unwrap_or(&v[0]), *v.get(2).unwrap_or(&16)]
                }
                _ => return usage(),
            },
            "--formats" => match num() {
                Some(n) => nformats = n.min(FORMATS.len()),
                None => return usage(),
            },
            "--launches" => match num() {
                Some(n) => launches = n,
                None => return usage(),
            },
            _ => return usage(),
        }
    }
    let Some(dev) = device(kind) else {
        eprintln!("no {kind} device");
        return ExitCode::FAILURE;
    };
    let env = dev.env();
    let ctx = env.context.raw();
    let (w, h, d) = (size[0], size[1], if dim == 3 { size[2] } else { 1 });
    let n = w * h * d;
    println!("device: {kind} {:?}; {dim}D image {w}x{h}x{d}; {launches} launches per kernel", dev.name);
    // Coordinates: pixel centres, a little off, and some outside the image.
    let coords = |extent: usize, k: usize| -> Vec<f32> {
        (0..n)
            .map(|i| {
                let [x, y, z] = [i % w, (i / w) % h, i / (w * h)];
                let c = [x, y, z][k] as f32;
                c + 0.25 + ((i * 7 + k) % 5) as f32 * 0.1 - if i % 97 == 0 { extent as f32 } else { 0.0 }
            })
            .collect()
    };
    let xo = env.buffer_from(CL_MEM_READ_ONLY, &coords(w, 0));
    let yo = env.buffer_from(CL_MEM_READ_ONLY, &coords(h, 1));
    let zo = env.buffer_from(CL_MEM_READ_ONLY, &coords(d, 2));
    let results = env.buffer(CL_MEM_READ_WRITE, n * 16);
    let global: Vec<usize> = if dim == 3 { vec![w, h, d] } else { vec![w, h] };
    let (mut build_total, mut first_total, mut later_total) = (0f64, 0f64, 0f64);
    let mut checksum = 0f64;
    let mut modelled_ns = 0u64;
    for &(order, ty, fname, k) in &FORMATS[..nformats] {
        let format = cl_image_format { image_channel_order: order, image_channel_data_type: ty };
        let desc = cl_image_desc {
            image_type: if dim == 3 { CL_MEM_OBJECT_IMAGE3D } else { CL_MEM_OBJECT_IMAGE2D } as cl_mem_object_type,
            image_width: w,
            image_height: h,
            image_depth: d,
            ..Default::default()
        };
        let px = match ty {
            CL_FLOAT | CL_SIGNED_INT32 => 4,
            CL_UNORM_INT16 | CL_HALF_FLOAT => 2,
            _ => 1,
        } * if order == CL_R { 1 } else { 4 };
        let host: Vec<u8> =
            (0..n * px).map(|i| (i * 131 % 251) as u8 & if ty == CL_HALF_FLOAT { 0x3b } else { 0xff }).collect();
        // SAFETY: valid context; format, descriptor and host data (n pixels) live for the call.
        let (img, err) = unsafe {
            cl_create_err!(clCreateImage(
                ctx,
                CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                &format,
                &desc,
                host.as_ptr() as *mut c_void
            ))
        };
        check("clCreateImage", err);
        // SAFETY: a new image whose reference we own.
        let img = unsafe { Mem::from_raw(img) };
        for &(norm, addressing, filter, sname) in SAMPLERS {
            if k != 'f' && filter == CL_FILTER_LINEAR {
                continue;
            }
            // SAFETY: valid context.
            let (sampler, err) = unsafe { cl_create_err!(clCreateSampler(ctx, norm as cl_bool, addressing, filter)) };
            check("clCreateSampler", err);
            let t = Instant::now();
            let program = env.build(&source(dim, k), "");
            let build_ms = t.elapsed().as_secs_f64() * 1e3;
            let read = kernel_of(&program, "sample_kernel");
            set_handle(&read, 0, &img.raw());
            set_handle(&read, 1, &sampler);
            read.set_mem(2, &xo);
            read.set_mem(3, &yo);
            read.set_mem(4, &zo);
            read.set_mem(5, &results);
            let write = kernel_of(&program, "write_kernel");
            write.set_mem(0, &results);
            set_handle(&write, 1, &img.raw());
            let mut times = Vec::new();
            for kernel in [&read, &write] {
                for _ in 0..launches {
                    let t = Instant::now();
                    let e = env.run(kernel, &global, None);
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                    let [_, _, start, end] = e.profile();
                    modelled_ns += end - start;
                }
            }
            let out: Vec<f32> = env.read(&results, 4 * n);
            checksum += out.iter().map(|v| if v.is_finite() { *v as f64 } else { 0.0 }).sum::<f64>();
            let first = times[0] + times[launches];
            let later: f64 = times.iter().sum::<f64>() - first;
            build_total += build_ms;
            first_total += first;
            later_total += later;
            println!(
                "{fname:20} {sname:26} build {build_ms:8.1}  first read {:8.1} write {:8.1}  later {:8.1} ms",
                times[0], times[launches], later
            );
            // SAFETY: owned reference.
            unsafe { cl!(clReleaseSampler(sampler)) };
        }
    }
    println!(
        "total: build {build_total:.1} ms, first launches {first_total:.1} ms, later launches {later_total:.1} ms; \
         device time {:.3} ms; checksum {checksum:.6e}",
        modelled_ns as f64 / 1e6
    );
    ExitCode::SUCCESS
}

fn num_or_kind(s: Option<&str>) -> Option<DeviceKind> {
    match s {
        Some("cpu") => Some(DeviceKind::Cpu),
        Some("gpu") => Some(DeviceKind::Gpu),
        _ => None,
    }
}
