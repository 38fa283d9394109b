//! Intel's sub-group extensions through the loader (`cl_intel_subgroups`, `_short`,
//! `_char`, `cl_intel_required_subgroup_size`): the shuffles of every form and of several
//! types, the 8- and 16-bit broadcasts, reductions and scans, block reads and writes on
//! buffers of 32-, 16- and 8-bit data and on a 2D image (out of bounds included), and the
//! queries the extensions add.
//!
//! Each test runs in child processes of this test binary, one per setting, as the
//! sub-group tests do: on the CPU device at its widths and scalar, on the Gen device at
//! each SIMD width 8, 16 and 32. Members of a sub-group are found from what the kernel
//! reports; results are checked exactly against the host, `None` where the extension
//! leaves them undefined (a shuffle from outside the sub-group).

use softcl_conformance::*;
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::ptr;

const CHILD: &str = "SOFTCL_INTEL_SUB_GROUPS_TEST_CHILD";

// cl_ext.h's names of the queries of cl_intel_required_subgroup_size.
const CL_DEVICE_SUB_GROUP_SIZES_INTEL: cl_uint = 0x4108;
const CL_KERNEL_SPILL_MEM_SIZE_INTEL: cl_uint = 0x4109;
const CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL: cl_uint = 0x410A;

fn run_in_every_mode(name: &str) -> bool {
    run_in_modes(CHILD, name, &every_width_modes(&[], true))
}

/// Per build: the device and its build options.
fn builds() -> Vec<(TestEnv, String)> {
    if vectorizer_mode(CHILD) == "gen" {
        let dev = device(DeviceKind::Gpu).expect("the Gen device");
        [8usize, 16, 32].into_iter().map(|sg| (dev.env(), format!("-cl-std=CL3.0 -DSG={sg}"))).collect()
    } else {
        let dev = device(DeviceKind::Cpu).expect("the CPU device");
        vec![(dev.env(), "-cl-std=CL3.0".to_string())]
    }
}

const COLUMNS: usize = 24;

/// Every work-item writes COLUMNS ints: its ids, then one result per function. `sgl` is the
/// sub-group's index in the launch (uniform launches: as many sub-groups per work-group).
const SRC: &str = r#"
    #ifndef cl_intel_subgroups
    #error cl_intel_subgroups is not defined
    #endif
    #if !defined(cl_intel_subgroups_short) || !defined(cl_intel_subgroups_char)
    #error cl_intel_subgroups_short / _char is not defined
    #endif
    KATTR __kernel void isg(__global int *o, __global const uint *src, __global uint *blk,
                            __global const ushort *s16, __global ushort *b16,
                            __global const uchar *s8, __global uchar *b8) {
        int g = get_global_id(1) * get_global_size(0) + get_global_id(0);
        __global int *r = o + 24 * g;
        int x = (g * 7919) % 61 - 20;
        uint me = get_sub_group_local_id(), max = get_max_sub_group_size();
        uint sgl = (get_group_id(1) * get_num_groups(0) + get_group_id(0)) * get_num_sub_groups()
                   + get_sub_group_id();
        r[0] = get_group_id(1) * get_num_groups(0) + get_group_id(0);
        r[1] = get_sub_group_id();
        r[2] = me;
        r[3] = max;
        r[4] = intel_sub_group_shuffle(x, (me * 3) % get_sub_group_size());
        r[5] = intel_sub_group_shuffle_xor(x, 1u);
        r[6] = intel_sub_group_shuffle_down(x, x + 1000, 3u);
        r[7] = intel_sub_group_shuffle_up(x - 1000, x, 2u);
        float4 fv = (float4)(x, x + 1, x + 2, x + 3);
        r[8] = (int)intel_sub_group_shuffle_down(fv, fv * 2.0f, 1u).w;
        r[9] = intel_sub_group_shuffle((short)(x * 300), 0u);
        r[10] = intel_sub_group_shuffle_up((uchar2)(7, 9), (uchar2)(x, x + 1), 1u).y;
        r[11] = intel_sub_group_broadcast((short)(x * 3), 1u % get_sub_group_size());
        r[12] = intel_sub_group_reduce_add((short)(x * 1000));
        r[13] = intel_sub_group_scan_inclusive_max((uchar)(x + 20));
        r[14] = (int)(intel_sub_group_shuffle_xor(((ulong)(uint)x << 33) | 5, 2u) >> 33);
        uint8 v8 = intel_sub_group_block_read8(src + sgl * 8 * max);
        r[15] = v8.s0;
        r[16] = v8.s7;
        uint2 v2 = intel_sub_group_block_read_ui2(src + sgl * 2 * max + 3);
        r[17] = v2.x;
        r[18] = v2.y;
        r[19] = intel_sub_group_block_read(src + sgl * max);
        intel_sub_group_block_write4(blk + sgl * 4 * max, (uint4)(g, g + 1, g + 2, g + 3));
        r[20] = sgl;
        ushort8 h = intel_sub_group_block_read_us8(s16 + sgl * 8 * max);
        r[21] = h.s5;
        intel_sub_group_block_write_us(b16 + sgl * max, (ushort)(g * 3));
        uchar16 c = intel_sub_group_block_read_uc16(s8 + sgl * 16 * max);
        r[22] = c.sf;
        intel_sub_group_block_write_uc2(b8 + sgl * 2 * max, (uchar2)(g, g >> 8));
        // Divergent: the shuffle combines only the work-items that run it.
        r[23] = (me & 1) ? intel_sub_group_shuffle(x, me) : -1;
    }
"#;

fn value(g: usize) -> i32 {
    ((g * 7919) % 61) as i32 - 20
}

fn src32(k: usize) -> u32 {
    (k as u32).wrapping_mul(2654435761) ^ 0x5555
}
fn src16(k: usize) -> u16 {
    (k as u32).wrapping_mul(7919) as u16
}
fn src8(k: usize) -> u8 {
    (k as u32).wrapping_mul(13) as u8
}

/// The host's results for sub-group `members` (in sub-group local id order) of launch
/// index `sgl`, work-item `me`, maximum size `max`: columns 4 and up (`None`: undefined).
fn expected(members: &[usize], me: usize, max: usize, sgl: usize) -> Vec<Option<i32>> {
    let xs: Vec<i32> = members.iter().map(|&g| value(g)).collect();
    let n = xs.len();
    let lane = |k: usize| if k < n { Some(xs[k]) } else { None };
    let down = |cur: &dyn Fn(usize) -> Option<i32>, next: &dyn Fn(usize) -> Option<i32>, d: usize| {
        let i = me + d;
        if i < max {
            if i < n {
                cur(i)
            } else {
                None
            }
        } else if i - max < n {
            next(i - max)
        } else {
            None
        }
    };
    let up = |prev: &dyn Fn(usize) -> Option<i32>, cur: &dyn Fn(usize) -> Option<i32>, d: usize| {
        if me >= d {
            cur(me - d)
        } else if me + max - d < n {
            prev(me + max - d)
        } else {
            None
        }
    };
    let full = n == max;
    let block = |v: Option<i32>| v.filter(|_| full);
    vec![
        lane((me * 3) % n),
        lane(me ^ 1),
        down(&|k| lane(k), &|k| lane(k).map(|x| x + 1000), 3),
        up(&|k| lane(k).map(|x| x - 1000), &|k| lane(k), 2),
        down(&|k| lane(k).map(|x| x + 3), &|k| lane(k).map(|x| (x + 3) * 2), 1),
        Some((xs[0] * 300) as i16 as i32),
        up(&|_| Some(9), &|k| lane(k).map(|x| (x + 1) as u8 as i32), 1),
        Some((xs[1 % n] * 3) as i16 as i32),
        Some(xs.iter().fold(0i16, |a, &x| a.wrapping_add((x * 1000) as i16)) as i32),
        Some(xs[..=me].iter().map(|&x| (x + 20) as u8).max().unwrap_or(0) as i32),
        lane(me ^ 2).map(|x| (x as u32 & 0x7fff_ffff) as i32),
        block(Some(src32(sgl * 8 * max + me) as i32)),
        block(Some(src32(sgl * 8 * max + 7 * max + me) as i32)),
        block(Some(src32(sgl * 2 * max + 3 + me) as i32)),
        block(Some(src32(sgl * 2 * max + 3 + max + me) as i32)),
        block(Some(src32(sgl * max + me) as i32)),
        Some(sgl as i32),
        block(Some(src16(sgl * 8 * max + 5 * max + me) as i32)),
        block(Some(src8(sgl * 16 * max + 15 * max + me) as i32)),
        if me & 1 == 1 { Some(xs[me]) } else { Some(-1) },
    ]
}

/// The sub-group size a build of this mode must run at (a kernel that fell back to scalar
/// code would pass the shuffles as sub-groups of one): the forced width, or the Gen
/// build's SIMD width.
fn width_of_mode(options: &str) -> Option<usize> {
    match vectorizer_mode(CHILD).as_str() {
        "w4" => Some(4),
        "w8" => Some(8),
        "w16" => Some(16),
        "off" => Some(1),
        "gen" => options.split("-DSG=").nth(1).and_then(|w| w.trim().parse().ok()),
        _ => None,
    }
}

/// Every function of the extensions against the host, on buffers.
#[test]
fn intel_shuffles_and_buffer_block_io_match_the_host() {
    if run_in_every_mode("intel_shuffles_and_buffer_block_io_match_the_host") {
        return;
    }
    let src = format!("{KATTR_PRELUDE}{SRC}");
    // Work-groups of whole sub-groups at every width (block reads of a partial sub-group
    // are undefined), and one with a partial last sub-group for the shuffles.
    let launches: Vec<(Vec<usize>, Vec<usize>)> =
        vec![(vec![256], vec![64]), (vec![32, 8], vec![16, 4]), (vec![96], vec![96]), (vec![60], vec![20])];
    for (env, options) in builds() {
        let program = env.build(&src, &options);
        let k = kernel_of(&program, "isg");
        for (global, local) in &launches {
            let n: usize = global.iter().product();
            // At most one sub-group per work-item: room for every sub-group's block.
            let out = env.buffer_from(CL_MEM_READ_WRITE, &vec![-7i32; COLUMNS * n]);
            let elems = n * 32 * 16 + 64;
            let src: Vec<u32> = (0..elems).map(src32).collect();
            let s16: Vec<u16> = (0..elems).map(src16).collect();
            let s8: Vec<u8> = (0..elems).map(src8).collect();
            let bufs = [
                env.buffer_from(CL_MEM_READ_ONLY, &src),
                env.buffer_from(CL_MEM_READ_WRITE, &vec![0u32; elems]),
                env.buffer_from(CL_MEM_READ_ONLY, &s16),
                env.buffer_from(CL_MEM_READ_WRITE, &vec![0u16; elems]),
                env.buffer_from(CL_MEM_READ_ONLY, &s8),
                env.buffer_from(CL_MEM_READ_WRITE, &vec![0u8; elems]),
            ];
            k.set_mem(0, &out);
            for (i, b) in bufs.iter().enumerate() {
                k.set_mem(i as cl_uint + 1, b);
            }
            env.run(&k, global, Some(local));
            let got: Vec<i32> = env.read(&out, COLUMNS * n);
            let blk: Vec<u32> = env.read(&bufs[1], elems);
            let b16: Vec<u16> = env.read(&bufs[3], elems);
            let b8: Vec<u8> = env.read(&bufs[5], elems);
            let row = |g: usize| &got[COLUMNS * g..COLUMNS * (g + 1)];
            let mut groups: BTreeMap<(i32, i32), Vec<(i32, usize)>> = BTreeMap::new();
            for g in 0..n {
                groups.entry((row(g)[0], row(g)[1])).or_default().push((row(g)[2], g));
            }
            let what = format!("global {global:?} local {local:?} ({options})");
            for members in groups.values() {
                let mut members = members.clone();
                members.sort();
                let members: Vec<usize> = members.iter().map(|m| m.1).collect();
                let (max, sgl) = (row(members[0])[3] as usize, row(members[0])[20] as usize);
                if let Some(w) = width_of_mode(&options) {
                    // A sub-group is at most a row of the work-group on the CPU device, at
                    // most the work-group on the Gen device.
                    let room = if options.contains("-DSG") { local.iter().product() } else { local[0] };
                    assert_eq!(max, w.min(room), "the sub-group size, {what}");
                }
                let full = members.len() == max;
                for (me, &g) in members.iter().enumerate() {
                    let r = row(g);
                    for (c, want) in expected(&members, me, max, sgl).into_iter().enumerate() {
                        if let Some(want) = want {
                            assert_eq!(r[4 + c], want, "column {} of work-item {g} (lane {me}), {what}", 4 + c);
                        }
                    }
                    if full {
                        for j in 0..4 {
                            let at = sgl * 4 * max + j * max + me;
                            assert_eq!(blk[at], (g + j) as u32, "block_write4 element {at}, {what}");
                        }
                        assert_eq!(b16[sgl * max + me], (g * 3) as u16, "block_write_us, {what}");
                        assert_eq!(b8[sgl * 2 * max + me], g as u8, "block_write_uc2 .x, {what}");
                        assert_eq!(b8[sgl * 2 * max + max + me], (g >> 8) as u8, "block_write_uc2 .y, {what}");
                    }
                }
            }
        }
    }
}

const IMAGE_SRC: &str = r#"
    KATTR __kernel void img(read_only image2d_t in, write_only image2d_t out, __global uint *o) {
        uint me = get_sub_group_local_id(), max = get_max_sub_group_size();
        uint sgl = get_group_id(0) * get_num_sub_groups() + get_sub_group_id();
        int g = get_global_id(0);
        uint4 v = intel_sub_group_block_read4(in, (int2)(sgl * max * 4, 1));
        o[8 * g] = v.x;
        o[8 * g + 1] = v.w;
        // Out of bounds: past the right edge and below the last row (clamped).
        o[8 * g + 2] = intel_sub_group_block_read(in, (int2)(4 * 64 - 8, 9));
        ushort2 h = intel_sub_group_block_read_us2(in, (int2)(sgl * max * 2 + 2, 0));
        o[8 * g + 3] = h.y;
        o[8 * g + 4] = intel_sub_group_block_read_uc(in, (int2)(sgl * max + 1, 2));
        o[8 * g + 5] = sgl;
        o[8 * g + 6] = max;
        intel_sub_group_block_write2(out, (int2)(sgl * max * 4, 3), (uint2)(g, g + 100));
        // Out of bounds: nothing is written.
        intel_sub_group_block_write(out, (int2)(4 * 64, 0), 0xdeadu);
        intel_sub_group_block_write(out, (int2)(0, 8), 0xbeefu);
    }
"#;

fn image(env: &TestEnv, flags: cl_mem_flags, data: &mut [u32]) -> Mem {
    let format = cl_image_format { image_channel_order: CL_RGBA, image_channel_data_type: CL_UNSIGNED_INT8 };
    let desc =
        cl_image_desc { image_type: CL_MEM_OBJECT_IMAGE2D, image_width: 64, image_height: 8, ..Default::default() };
    // SAFETY: a valid context; the format and descriptor live for the call; `data` holds the
    // 64 x 8 pixels of 4 bytes it is copied from.
    let m = unsafe {
        cl_create!(clCreateImage(
            env.context.raw(),
            flags | CL_MEM_COPY_HOST_PTR as cl_mem_flags,
            &format,
            &desc,
            data.as_mut_ptr().cast::<c_void>()
        ))
    };
    // SAFETY: a new image whose reference we own.
    unsafe { Mem::from_raw(m) }
}

/// Image block reads and writes: bytes as stored at a byte coordinate, row by row; reads
/// out of bounds clamped to the edge, writes out of bounds dropped.
#[test]
fn intel_image_block_io_matches_the_host() {
    if run_in_every_mode("intel_image_block_io_matches_the_host") {
        return;
    }
    let src = format!("{KATTR_PRELUDE}{IMAGE_SRC}");
    for (env, options) in builds() {
        let k = kernel_of(&env.build(&src, &options), "img");
        let mut pixels: Vec<u32> = (0..64 * 8).map(src32).collect();
        let input = image(&env, CL_MEM_READ_ONLY as cl_mem_flags, &mut pixels);
        let mut blank = vec![0x1111_1111u32; 64 * 8];
        let output = image(&env, CL_MEM_WRITE_ONLY as cl_mem_flags, &mut blank);
        let n = 64;
        let o = env.buffer_from(CL_MEM_READ_WRITE, &vec![0u32; 8 * n]);
        for (i, m) in [&input, &output].into_iter().enumerate() {
            let raw = m.raw();
            // SAFETY: a cl_mem handle of the argument's size.
            check("clSetKernelArg", unsafe {
                clSetKernelArg(k.raw(), i as cl_uint, std::mem::size_of::<cl_mem>(), (&raw as *const cl_mem).cast())
            });
        }
        k.set_mem(2, &o);
        env.run(&k, &[n], Some(&[32]));
        let got: Vec<u32> = env.read(&o, 8 * n);
        let mut written = vec![0u32; 64 * 8];
        // SAFETY: a valid image of 64 x 8 pixels of 4 bytes; `written` holds them all.
        check("clEnqueueReadImage", unsafe {
            clEnqueueReadImage(
                env.q(),
                output.raw(),
                CL_TRUE,
                [0usize; 3].as_ptr(),
                [64usize, 8, 1].as_ptr(),
                0,
                0,
                written.as_mut_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        });
        let bytes: Vec<u8> = pixels.iter().flat_map(|p| p.to_le_bytes()).collect();
        let at16 = |b: usize| u16::from_le_bytes([bytes[b], bytes[b + 1]]) as u32;
        let mut want_written = blank.clone();
        for g in 0..n {
            let r = &got[8 * g..8 * g + 8];
            let (sgl, max) = (r[5] as usize, r[6] as usize);
            if let Some(w) = width_of_mode(&options) {
                assert_eq!(max, w, "the sub-group size, work-item {g} ({options})");
            }
            let me = g % max;
            let what = format!("work-item {g} ({options})");
            assert_eq!(r[0], pixels[64 + sgl * max + me], "block_read4 row 1, {what}");
            assert_eq!(r[1], pixels[4 * 64 + sgl * max + me], "block_read4 row 4, {what}");
            assert_eq!(r[2], pixels[7 * 64 + (62 + me).min(63)], "block_read out of bounds, {what}");
            assert_eq!(r[3], at16(256 + sgl * max * 2 + 2 + 2 * me), "block_read_us2 row 1, {what}");
            assert_eq!(r[4], bytes[2 * 256 + sgl * max + 1 + me] as u32, "block_read_uc row 2, {what}");
            want_written[3 * 64 + sgl * max + me] = g as u32;
            want_written[4 * 64 + sgl * max + me] = g as u32 + 100;
        }
        assert_eq!(written, want_written, "the written image ({options})");
    }
}

/// The queries of cl_intel_required_subgroup_size: the device's sub-group sizes, and the
/// size a kernel was compiled for (0 without the attribute).
#[test]
fn required_sub_group_size_queries() {
    for_each_device(|d| {
        let env = d.env();
        let ext = device_info_string(d.id, CL_DEVICE_EXTENSIONS);
        for e in [
            "cl_intel_subgroups",
            "cl_intel_subgroups_short",
            "cl_intel_subgroups_char",
            "cl_intel_required_subgroup_size",
            "cl_intel_spirv_subgroups",
        ] {
            assert!(ext.split(' ').any(|x| x == e), "{e} missing from {ext} on {}", d.kind);
        }
        let sizes: Vec<usize> = device_info_array(d.id, CL_DEVICE_SUB_GROUP_SIZES_INTEL);
        assert!(!sizes.is_empty(), "{}", d.kind);
        let src = "__attribute__((intel_reqd_sub_group_size(8))) __kernel void a(__global int *p) { p[0] = 1; }
                   __kernel void b(__global int *p) { p[0] = 2; }";
        let program = env.build(src, "");
        for (name, want) in [("a", 8usize), ("b", 0)] {
            let k = kernel_of(&program, name);
            let mut v = usize::MAX;
            // SAFETY: no input; room for one size_t.
            check("clGetKernelSubGroupInfo", unsafe {
                clGetKernelSubGroupInfo(
                    k.raw(),
                    env.dev(),
                    CL_KERNEL_COMPILE_SUB_GROUP_SIZE_INTEL,
                    0,
                    ptr::null(),
                    std::mem::size_of::<usize>(),
                    (&mut v as *mut usize).cast(),
                    ptr::null_mut(),
                )
            });
            assert_eq!(v, want, "kernel {name} on {}", d.kind);
            let spill: cl_ulong = kernel_wg_info(k.raw(), env.dev(), CL_KERNEL_SPILL_MEM_SIZE_INTEL);
            assert_eq!(spill, 0, "kernel {name} on {}", d.kind);
        }
    });
}

/// `SPV_INTEL_subgroups` in a SPIR-V module built as a SYCL compiler emits it (capabilities
/// Kernel, Int64, Groups, SubgroupShuffleINTEL, SubgroupBufferBlockIOINTEL; built-in
/// variables for the ids): a two-source shuffle down, a block read and a block write, and a
/// sub-group reduction, through clCreateProgramWithIL on both devices.
const SPIRV: &str = r#"
               OpCapability Addresses
               OpCapability Kernel
               OpCapability Int64
               OpCapability Groups
               OpCapability SubgroupShuffleINTEL
               OpCapability SubgroupBufferBlockIOINTEL
               OpExtension "SPV_INTEL_subgroups"
               OpMemoryModel Physical64 OpenCL
               OpEntryPoint Kernel %k "k" %gid %lid %sgid %sgmax
               OpDecorate %gid BuiltIn GlobalInvocationId
               OpDecorate %gid Constant
               OpDecorate %lid BuiltIn SubgroupLocalInvocationId
               OpDecorate %lid Constant
               OpDecorate %sgid BuiltIn SubgroupId
               OpDecorate %sgid Constant
               OpDecorate %sgmax BuiltIn SubgroupMaxSize
               OpDecorate %sgmax Constant
       %uint = OpTypeInt 32 0
      %ulong = OpTypeInt 64 0
    %v3ulong = OpTypeVector %ulong 3
     %in_v3 = OpTypePointer Input %v3ulong
    %in_uint = OpTypePointer Input %uint
       %gptr = OpTypePointer CrossWorkgroup %uint
       %void = OpTypeVoid
         %fn = OpTypeFunction %void %gptr %gptr %gptr
        %gid = OpVariable %in_v3 Input
        %lid = OpVariable %in_uint Input
       %sgid = OpVariable %in_uint Input
      %sgmax = OpVariable %in_uint Input
     %uint_1 = OpConstant %uint 1
     %uint_3 = OpConstant %uint 3
    %ulong_1 = OpConstant %ulong 1
    %ulong_2 = OpConstant %ulong 2
    %ulong_3 = OpConstant %ulong 3
          %k = OpFunction %void None %fn
         %in = OpFunctionParameter %gptr
        %out = OpFunctionParameter %gptr
          %w = OpFunctionParameter %gptr
      %entry = OpLabel
         %g3 = OpLoad %v3ulong %gid Aligned 32
          %g = OpCompositeExtract %ulong %g3 0
        %pin = OpInBoundsPtrAccessChain %gptr %in %g
          %x = OpLoad %uint %pin Aligned 4
          %s = OpSubgroupShuffleDownINTEL %uint %x %x %uint_1
          %b = OpSubgroupBlockReadINTEL %uint %in
        %sum = OpGroupIAdd %uint %uint_3 Reduce %x
         %id = OpLoad %uint %sgid
         %mx = OpLoad %uint %sgmax
       %base = OpIMul %uint %id %mx
      %base64 = OpUConvert %ulong %base
         %pw = OpInBoundsPtrAccessChain %gptr %w %base64
               OpSubgroupBlockWriteINTEL %pw %x
         %g3x = OpIMul %ulong %g %ulong_3
         %p0 = OpInBoundsPtrAccessChain %gptr %out %g3x
               OpStore %p0 %s Aligned 4
         %p1 = OpInBoundsPtrAccessChain %gptr %p0 %ulong_1
               OpStore %p1 %b Aligned 4
         %p2 = OpInBoundsPtrAccessChain %gptr %p0 %ulong_2
               OpStore %p2 %sum Aligned 4
               OpReturn
               OpFunctionEnd
"#;

#[test]
fn spirv_intel_sub_group_instructions_run_on_both_devices() {
    let il = assemble_spirv(SPIRV);
    for_each_device(|d| {
        let env = d.env();
        let program = program_from_il(&env.context, &il).unwrap_or_else(|e| panic!("{e}"));
        let program = build_program(program, &[env.dev()], "").unwrap_or_else(|e| panic!("{e:?}"));
        let k = kernel_of(&program, "k");
        let n = 64usize;
        let input: Vec<u32> = (0..n).map(|i| src32(i) >> 4).collect();
        let bufs = [
            env.buffer_from(CL_MEM_READ_ONLY, &input),
            env.buffer_from(CL_MEM_READ_WRITE, &vec![0u32; 3 * n]),
            env.buffer_from(CL_MEM_READ_WRITE, &vec![0u32; n]),
        ];
        for (i, b) in bufs.iter().enumerate() {
            k.set_mem(i as cl_uint, b);
        }
        env.run(&k, &[n], Some(&[n]));
        let got: Vec<u32> = env.read(&bufs[1], 3 * n);
        let written: Vec<u32> = env.read(&bufs[2], n);
        let mut max = 0usize;
        // SAFETY: one size_t in (the local size), room for one out.
        check("clGetKernelSubGroupInfo", unsafe {
            clGetKernelSubGroupInfo(
                k.raw(),
                env.dev(),
                CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE,
                std::mem::size_of::<usize>(),
                (&n as *const usize).cast(),
                std::mem::size_of::<usize>(),
                (&mut max as *mut usize).cast(),
                ptr::null_mut(),
            )
        });
        // (1 on the CPU device with its vectorizer off.)
        assert!(max >= 1 && n.is_multiple_of(max), "sub-group size {max} on {}", d.kind);
        for g in 0..n {
            let l = g % max;
            let first = g - l;
            let down = if l + 1 < max { input[g + 1] } else { input[first] };
            let sum = input[first..first + max].iter().fold(0u32, |a, &x| a.wrapping_add(x));
            assert_eq!(got[3 * g..3 * g + 3], [down, input[l], sum], "work-item {g} on {}", d.kind);
            assert_eq!(written[g], input[g], "block write, work-item {g} on {}", d.kind);
        }
    });
}
