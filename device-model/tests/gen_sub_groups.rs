//! The Gen model's prices of Intel's sub-group functions: a block read or write is the one
//! message of whole lines the hardware sends for the hardware thread (OWord block messages
//! of at most 128 bytes), not a message per component; a shuffle moves values between the
//! lanes' registers, with no memory message, and the per-line report says so.

use softcl_compiler::gen_abi::AccessKind;
use softcl_compiler::AddressSpace;
use softcl_device_model::GenDevice;

mod support;
use support::{build, run_simd16, site_of, Buf};

const BLOCKS: &str = r#"
kernel void block_us2(global const ushort *a, global uint *out) {
    ushort2 v = intel_sub_group_block_read_us2(a);
    out[get_global_id(0)] = v.x + v.y;
}
kernel void parts_us2(global const ushort *a, global uint *out) {
    uint l = get_sub_group_local_id();
    out[get_global_id(0)] = a[l] + a[16 + l];
}
kernel void block_read8(global const uint *a, global uint *out) {
    uint8 v = intel_sub_group_block_read8(a);
    intel_sub_group_block_write8(out, v + 1);
}
kernel void reduce(global const uint *a, global uint *out) {
    uint g = get_global_id(0);
    out[g] = sub_group_reduce_add(a[g]);
}
kernel void plain(global const uint *a, global uint *out) {
    uint g = get_global_id(0);
    out[g] = a[g];
}
kernel void shuffles(global const uint *a, global uint *out) {
    uint g = get_global_id(0);
    uint x = a[g];
    out[g] = intel_sub_group_shuffle(x, 15 - get_sub_group_local_id())
           + intel_sub_group_shuffle_down(x, x, 3);
}
"#;

/// A block read of two ushorts per lane at SIMD16 is 64 contiguous bytes: one message of
/// one line. The same values read as two plain loads are two messages, each of the same
/// line.
#[test]
fn a_block_read_is_one_message_of_the_block_lines() {
    let dev = GenDevice::default();
    let program = build(&dev, BLOCKS);
    let run = |name: &str| {
        let mut a = Buf::new(16, |i| (2 * i as i32) | ((2 * i as i32 + 1) << 16));
        let mut out = Buf::new(16, |_| -1);
        let (sum, info, report) = run_simd16(&dev, &program, name, &mut [&mut a, &mut out], [16, 1, 1], [16, 1, 1]);
        for g in 0..16 {
            assert_eq!(out.get(g), (g + 16 + g) as i32, "{name}: out[{g}]");
        }
        (sum, info, report)
    };
    let (sum, info, report) = run("block_us2");
    let load = site_of(&info, AddressSpace::Global, AccessKind::Load);
    assert!(info.sites[load].sub_group_block, "{:?}", info.sites);
    let c = sum.site(&info, load);
    assert_eq!((c.messages, c.l3_lines, c.useful_bytes), (1, 1, 64), "{report}");

    let (sum, info, report) = run("parts_us2");
    let loads: Vec<usize> = (0..info.sites.len()).filter(|&k| info.sites[k].kind == AccessKind::Load).collect();
    assert_eq!(loads.len(), 2, "{:?}", info.sites);
    let lines: u64 = loads.iter().map(|&k| sum.site(&info, k).l3_lines).sum();
    assert_eq!(lines, 2, "two messages on one line each: {report}");
}

/// A block of 8 uints per lane at SIMD16 is 512 bytes: 8 lines in 4 messages of 128 bytes,
/// read and written; its lanes compute no addresses (the block's instructions are few).
#[test]
fn a_wide_block_is_messages_of_128_bytes() {
    let dev = GenDevice::default();
    let program = build(&dev, BLOCKS);
    let mut a = Buf::new(128, |i| i as i32);
    let mut out = Buf::new(128, |_| -1);
    let (sum, info, report) =
        run_simd16(&dev, &program, "block_read8", &mut [&mut a, &mut out], [16, 1, 1], [16, 1, 1]);
    for i in 0..128 {
        assert_eq!(out.get(i), i as i32 + 1, "out[{i}]");
    }
    for kind in [AccessKind::Load, AccessKind::Store] {
        let c = sum.site(&info, site_of(&info, AddressSpace::Global, kind));
        assert_eq!((c.messages, c.l3_lines), (4, 8), "{kind:?}: {report}");
    }
    let instructions: u32 = info.blocks.iter().map(|b| b.instructions).sum();
    assert!(instructions <= 16, "{instructions} instructions for a block read, 8 additions and a block write");
}

/// Shuffles are register moves: no message, counted per block, and named on their line.
#[test]
fn shuffles_are_register_moves_on_their_line() {
    let dev = GenDevice::default();
    let program = build(&dev, BLOCKS);
    let mut a = Buf::new(16, |i| i as i32 * 10);
    let mut out = Buf::new(16, |_| -1);
    let (sum, info, report) = run_simd16(&dev, &program, "shuffles", &mut [&mut a, &mut out], [16, 1, 1], [16, 1, 1]);
    for g in 0..16 {
        let down = if g + 3 < 16 { g + 3 } else { g + 3 - 16 };
        assert_eq!(out.get(g), ((15 - g) * 10 + down * 10) as i32, "out[{g}]");
    }
    // One site each for the load and the store: the shuffles send nothing.
    assert_eq!(info.sites.len(), 2, "{:?}", info.sites);
    let shuffles: u32 = info.blocks.iter().map(|b| b.shuffles).sum();
    assert_eq!(shuffles, 3, "a shuffle, and shuffle_down's two");
    let sites: Vec<_> = (0..info.sites.len()).map(|k| sum.site(&info, k)).collect();
    let blocks: Vec<_> = (0..info.blocks.len()).map(|k| sum.block(&info, k)).collect();
    let lines = softcl_device_model::gen::lines::line_stats(&info, &sites, &blocks, [16, 1, 1]);
    let line = lines.iter().find(|l| l.shuffles > 0).unwrap_or_else(|| panic!("no line with shuffles: {lines:?}"));
    assert_eq!((line.shuffles, line.messages), (3, 0), "{line:?}; {report}");
    assert!(line.figures().contains("3 sub-group shuffles (register moves, no memory)"), "{}", line.figures());
}

/// A sub-group reduction is priced as the hardware's tree: log2(SIMD) steps of a shuffle and
/// an addition, 8 instructions at SIMD16 (before: 1, as any instruction of one result).
#[test]
fn a_sub_group_reduction_costs_its_tree() {
    let dev = GenDevice::default();
    let program = build(&dev, BLOCKS);
    let instructions = |name: &str| {
        let mut a = Buf::new(16, |i| i as i32);
        let mut out = Buf::new(16, |_| -1);
        let (_, info, _) = run_simd16(&dev, &program, name, &mut [&mut a, &mut out], [16, 1, 1], [16, 1, 1]);
        if name == "reduce" {
            assert!((0..16).all(|g| out.get(g) == 120), "the sum of 0..16");
        }
        info.blocks.iter().map(|b| b.instructions).sum::<u32>()
    };
    assert_eq!(instructions("reduce") - instructions("plain"), 8);
}
