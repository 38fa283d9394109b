//! The conversions and the sampling against values worked out by hand from the OpenCL C
//! specification's rules.

use super::format::{f32_to_half, half_to_f32};
use super::sample::*;
use super::*;

const CL_R: u32 = 0x10B0;
const CL_A: u32 = 0x10B1;
const CL_RG: u32 = 0x10B2;
const CL_RGB: u32 = 0x10B4;
const CL_RGBA: u32 = 0x10B5;
const CL_BGRA: u32 = 0x10B6;
const CL_INTENSITY: u32 = 0x10B8;
const CL_LUMINANCE: u32 = 0x10B9;
const CL_DEPTH: u32 = 0x10BD;
const CL_SRGBA: u32 = 0x10C1;
const CL_SNORM_INT8: u32 = 0x10D0;
const CL_SNORM_INT16: u32 = 0x10D1;
const CL_UNORM_INT8: u32 = 0x10D2;
const CL_UNORM_INT16: u32 = 0x10D3;
const CL_UNORM_SHORT_565: u32 = 0x10D4;
const CL_SIGNED_INT8: u32 = 0x10D7;
const CL_SIGNED_INT16: u32 = 0x10D8;
const CL_UNSIGNED_INT8: u32 = 0x10DA;
const CL_HALF_FLOAT: u32 = 0x10DD;
const CL_FLOAT: u32 = 0x10DE;

fn fmt(order: u32, ty: u32) -> Format {
    Format::from_cl(order, ty).unwrap_or_else(|| panic!("{order:#x}/{ty:#x} should be a format"))
}

fn f(c: Components) -> [f32; 4] {
    c.map(f32::from_bits)
}

fn fbits(v: [f32; 4]) -> Components {
    v.map(f32::to_bits)
}

#[test]
fn formats_the_specification_allows_and_their_pixel_sizes() {
    assert_eq!(fmt(CL_RGBA, CL_UNORM_INT8).pixel_size(), 4);
    assert_eq!(fmt(CL_RGBA, CL_FLOAT).pixel_size(), 16);
    assert_eq!(fmt(CL_RG, CL_HALF_FLOAT).pixel_size(), 4);
    assert_eq!(fmt(CL_R, CL_SIGNED_INT16).pixel_size(), 2);
    assert_eq!(fmt(CL_RGB, CL_UNORM_SHORT_565).pixel_size(), 2);
    assert_eq!(fmt(CL_BGRA, CL_UNORM_INT8).pixel_size(), 4);
    assert_eq!(fmt(CL_DEPTH, CL_FLOAT).pixel_size(), 4);
    assert_eq!(fmt(CL_SRGBA, CL_UNORM_INT8).kind(), Kind::Float);
    assert!(Format::from_cl(CL_BGRA, CL_FLOAT).is_none(), "BGRA takes 8-bit types only");
    assert!(Format::from_cl(CL_RGB, CL_UNORM_INT8).is_none(), "RGB takes packed types only");
    assert!(Format::from_cl(CL_RGBA, CL_UNORM_SHORT_565).is_none(), "565 is RGB only");
    assert!(Format::from_cl(CL_INTENSITY, CL_SIGNED_INT8).is_none(), "intensity reads as float");
    assert!(Format::from_cl(CL_DEPTH, CL_UNORM_INT8).is_none());
    assert!(Format::from_cl(0x1234, CL_FLOAT).is_none());
    for (o, t) in [(CL_RGBA, CL_UNORM_INT8), (CL_LUMINANCE, CL_FLOAT), (CL_RGB, CL_UNORM_SHORT_565)] {
        let x = fmt(o, t);
        assert_eq!((x.order.to_cl(), x.ty.to_cl()), (o, t));
    }
}

#[test]
fn normalized_channels_read_as_the_integer_times_the_rounded_reciprocal() {
    // PoCL reads c * (1.0f / 255.0f); ffmpeg's avgblur_opencl output differed from PoCL's by
    // one level at 87 pixels while SoftCL read the correctly rounded c / 255.0f.
    let u8f = fmt(CL_R, CL_UNORM_INT8);
    let mut differs_from_quotient = 0;
    for c in 0..=255u8 {
        let got = f(u8f.decode(&[c]))[0];
        assert_eq!(got.to_bits(), (c as f32 * (1.0f32 / 255.0)).to_bits(), "unorm8 {c}");
        differs_from_quotient += usize::from(got != c as f32 / 255.0);
    }
    assert!(differs_from_quotient > 0, "the product and the quotient differ for some c");
    assert_eq!(f(u8f.decode(&[255]))[0], 1.0);
    let u16f = fmt(CL_R, CL_UNORM_INT16);
    assert_eq!(f(u16f.decode(&65535u16.to_le_bytes()))[0], 1.0);
    assert_eq!(f(u16f.decode(&3u16.to_le_bytes()))[0], 3.0 * (1.0f32 / 65535.0));
    let s8 = fmt(CL_R, CL_SNORM_INT8);
    assert_eq!(f(s8.decode(&[127]))[0], 1.0);
    assert_eq!(f(s8.decode(&[(-3i8) as u8]))[0], -3.0 * (1.0f32 / 127.0));
    let s16 = fmt(CL_R, CL_SNORM_INT16);
    assert_eq!(f(s16.decode(&32767i16.to_le_bytes()))[0], 1.0);
    assert_eq!(f(s16.decode(&(-32768i16).to_le_bytes()))[0], -1.0);
}

#[test]
fn normalized_conversions_round_to_nearest_even_and_saturate() {
    let u8f = fmt(CL_R, CL_UNORM_INT8);
    let mut px = [0u8; 1];
    for (v, want) in [(0.5f32, 128u8), (127.5 / 255.0, 128), (-0.25, 0), (1.5, 255), (f32::NAN, 0), (1.0, 255)] {
        u8f.encode(fbits([v, 0.0, 0.0, 0.0]), &mut px);
        assert_eq!(px[0], want, "unorm8 of {v}");
    }
    assert_eq!(f(u8f.decode(&[128])), [128.0 * (1.0 / 255.0), 0.0, 0.0, 1.0]);
    let s8 = fmt(CL_R, CL_SNORM_INT8);
    for (v, want) in [(-1.0f32, -127i8), (-2.0, -128), (1.0, 127), (0.5, 64), (-0.5, -64)] {
        s8.encode(fbits([v, 0.0, 0.0, 0.0]), &mut px);
        assert_eq!(px[0] as i8, want, "snorm8 of {v}");
    }
    assert_eq!(f(s8.decode(&[0x80]))[0], -1.0, "-128 reads as -1.0");
    let u16f = fmt(CL_R, CL_UNORM_INT16);
    let mut px2 = [0u8; 2];
    u16f.encode(fbits([0.25, 0.0, 0.0, 0.0]), &mut px2);
    assert_eq!(u16::from_le_bytes(px2), 16384, "0.25 * 65535 = 16383.75");
}

#[test]
fn integer_writes_saturate_to_the_channel() {
    let i8f = fmt(CL_RG, CL_SIGNED_INT8);
    let mut px = [0u8; 2];
    i8f.encode([300i32 as u32, (-300i32) as u32, 0, 0], &mut px);
    assert_eq!([px[0] as i8, px[1] as i8], [127, -128]);
    assert_eq!(i8f.decode(&px), [127, (-128i32) as u32, 0, 1]);
    let u8i = fmt(CL_R, CL_UNSIGNED_INT8);
    let mut px = [0u8; 1];
    u8i.encode([u32::MAX, 0, 0, 0], &mut px);
    assert_eq!(px[0], 255);
}

#[test]
fn channel_orders_place_the_components() {
    let bgra = fmt(CL_BGRA, CL_UNORM_INT8);
    let n = |c: f32| c * (1.0 / 255.0);
    assert_eq!(f(bgra.decode(&[51, 102, 153, 255])), [n(153.0), n(102.0), n(51.0), 1.0]);
    let mut px = [0u8; 4];
    bgra.encode(fbits([0.6, 0.4, 0.2, 1.0]), &mut px);
    assert_eq!(px, [51, 102, 153, 255]);
    let float = |order| fmt(order, CL_FLOAT);
    let two = 2.0f32.to_le_bytes();
    assert_eq!(f(float(CL_R).decode(&two)), [2.0, 0.0, 0.0, 1.0]);
    assert_eq!(f(float(CL_A).decode(&two)), [0.0, 0.0, 0.0, 2.0]);
    assert_eq!(f(float(CL_INTENSITY).decode(&two)), [2.0; 4]);
    assert_eq!(f(float(CL_LUMINANCE).decode(&two)), [2.0, 2.0, 2.0, 1.0]);
    let mut px = [0u8; 4];
    float(CL_A).encode(fbits([9.0, 9.0, 9.0, 3.0]), &mut px);
    assert_eq!(f32::from_le_bytes(px), 3.0, "CL_A stores alpha");
}

#[test]
fn packed_565_and_srgb() {
    let p = fmt(CL_RGB, CL_UNORM_SHORT_565);
    let mut px = [0u8; 2];
    p.encode(fbits([1.0, 0.0, 1.0, 1.0]), &mut px);
    assert_eq!(u16::from_le_bytes(px), (0b11111 << 11) | 0b11111, "r = 31, g = 0, b = 31");
    assert_eq!(f(p.decode(&px)), [1.0, 0.0, 1.0, 1.0]);
    let s = fmt(CL_SRGBA, CL_UNORM_INT8);
    let mut px = [0u8; 4];
    s.encode(fbits([0.5, 0.0, 1.0, 0.5]), &mut px);
    // linear 0.5 -> sRGB 0.7354 -> 188; alpha is not converted.
    assert_eq!(px, [188, 0, 255, 128]);
    let back = f(s.decode(&px));
    assert!((back[0] - 0.5).abs() < 0.003, "{back:?}");
}

#[test]
fn packed_101010_2_has_red_in_the_high_bits() {
    let p = fmt(CL_RGBA, 0x10E0);
    let mut px = [0u8; 4];
    p.encode(fbits([1.0, 0.0, 1.0 / 1023.0, 2.0 / 3.0]), &mut px);
    assert_eq!(u32::from_le_bytes(px), 0x3FF << 22 | 1 << 2 | 2, "R 31:22, G 21:12, B 11:2, A 1:0");
    assert_eq!(f(p.decode(&px)), [1.0, 0.0, 1.0 / 1023.0, 2.0 / 3.0]);
}

#[test]
fn half_conversions_are_exact_both_ways_and_round_to_nearest_even() {
    for h in 0..=u16::MAX {
        let x = half_to_f32(h);
        if x.is_nan() {
            assert!(half_to_f32(f32_to_half(x)).is_nan());
            continue;
        }
        assert_eq!(f32_to_half(x), h, "{h:#06x} = {x}");
    }
    let one = 0x3C00;
    assert_eq!(f32_to_half(1.0 + 2f32.powi(-11)), one, "tie to even");
    assert_eq!(f32_to_half(1.0 + 3.0 * 2f32.powi(-11)), one + 2, "tie to even, upwards");
    assert_eq!(f32_to_half(1.0 + 2f32.powi(-11) + 2f32.powi(-20)), one + 1, "above the tie");
    assert_eq!(f32_to_half(65519.0), 0x7BFF, "rounds down to 65504");
    assert_eq!(f32_to_half(65520.0), 0x7C00, "overflows to infinity");
    assert_eq!(f32_to_half(2f32.powi(-25)), 0, "a subnormal tie rounds to even zero");
    assert_eq!(f32_to_half(3.0 * 2f32.powi(-26)), 1, "above the tie: 2^-24");
    assert_eq!(f32_to_half(-0.0), 0x8000);
}

/// A 1D float image of one channel holding `values`.
fn r_float_1d(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn image(data: &mut [u8], format: Format, dim: Dim, size: [usize; 3]) -> Image<&mut [u8]> {
    let row_pitch = format.pixel_size() * size[0];
    Image { data, format, dim, size, row_pitch, slice_pitch: row_pitch * size[1] }
}

fn sampler(normalized: bool, addressing: Addressing, linear: bool) -> Sampler {
    let s = Sampler { normalized, addressing, linear };
    assert_eq!(Sampler::from_bits(s.bits()), Some(s));
    s
}

#[test]
fn nearest_filtering_addresses_as_the_specification_says() {
    let mut data = r_float_1d(&[10.0, 11.0, 12.0, 13.0]);
    let img = image(&mut data, fmt(CL_R, CL_FLOAT), Dim::D1, [4, 1, 1]);
    let read = |s: Sampler, x: f32| f(img.sample(s, [x, 0.0, 0.0]))[0];
    let edge = sampler(false, Addressing::ClampToEdge, false);
    assert_eq!([read(edge, -0.5), read(edge, 0.99), read(edge, 3.7), read(edge, 9.0)], [10.0, 10.0, 13.0, 13.0]);
    let clamp = sampler(false, Addressing::Clamp, false);
    assert_eq!([read(clamp, -0.5), read(clamp, 2.5), read(clamp, 4.0)], [0.0, 12.0, 0.0], "border colour outside");
    assert_eq!(f(img.sample(clamp, [-1.0, 0.0, 0.0])), [0.0, 0.0, 0.0, 1.0], "CL_R's border has alpha 1");
    let repeat = sampler(true, Addressing::Repeat, false);
    // 1.25 -> (0.25) * 4 = 1; -0.125 -> 0.875 * 4 = 3.5 -> 3.
    assert_eq!([read(repeat, 1.25), read(repeat, -0.125)], [11.0, 13.0]);
    let mirror = sampler(true, Addressing::MirroredRepeat, false);
    // 1.25 -> |1.25 - 2 * rint(0.625)| = 0.75 -> 3; -0.3 -> 0.3 -> 1.2 -> 1.
    assert_eq!([read(mirror, 1.25), read(mirror, -0.3)], [13.0, 11.0]);
    let normalized_edge = sampler(true, Addressing::ClampToEdge, false);
    assert_eq!(read(normalized_edge, 0.5), 12.0, "0.5 * 4 = 2");
}

#[test]
fn linear_filtering_weights_the_two_nearest_texels() {
    let mut data = r_float_1d(&[0.0, 1.0, 2.0, 3.0]);
    let img = image(&mut data, fmt(CL_R, CL_FLOAT), Dim::D1, [4, 1, 1]);
    let read = |s: Sampler, x: f32| f(img.sample(s, [x, 0.0, 0.0]))[0];
    let edge = sampler(false, Addressing::ClampToEdge, true);
    // u - 0.5 = 0.5: texels 0 and 1 by halves; 2.25 -> 1.75: 1 * 0.25 + 2 * 0.75.
    assert_eq!([read(edge, 1.0), read(edge, 2.25), read(edge, 0.1), read(edge, 5.0)], [0.5, 1.75, 0.0, 3.0]);
    let clamp = sampler(false, Addressing::Clamp, true);
    assert_eq!(read(clamp, 4.0), 1.5, "3.5: texel 3 and the border by halves");
    let repeat = sampler(true, Addressing::Repeat, true);
    // 0.0 -> u = 0, u - 0.5 = -0.5: texels 3 (wrapped) and 0, weight 0.5 each.
    assert_eq!(read(repeat, 0.0), 1.5);
    let mirror = sampler(true, Addressing::MirroredRepeat, true);
    // 1.0 -> s' = |1 - 2 * rint(0.5)| = 1 -> u = 4 -> 3.5: texels 3 and min(4, 3).
    assert_eq!(read(mirror, 1.0), 3.0);
}

#[test]
fn bilinear_filtering_of_a_2d_image_and_array_layers() {
    // 2x2 RGBA float: texel (x, y) holds (x, y, 10 * y + x, 1).
    let mut data: Vec<u8> = Vec::new();
    for y in 0..2 {
        for x in 0..2 {
            for v in [x as f32, y as f32, (10 * y + x) as f32, 1.0] {
                data.extend(v.to_le_bytes());
            }
        }
    }
    let img = image(&mut data, fmt(CL_RGBA, CL_FLOAT), Dim::D2, [2, 2, 1]);
    let s = sampler(false, Addressing::ClampToEdge, true);
    // (1, 1): u - 0.5 = 0.5 in both: the four texels by quarters.
    assert_eq!(f(img.sample(s, [1.0, 1.0, 0.0])), [0.5, 0.5, 5.5, 1.0]);
    // (0.75, 1.25): weights 0.25 on x = 1, 0.75 on y = 1.
    assert_eq!(f(img.sample(s, [0.75, 1.25, 0.0])), [0.25, 0.75, 7.75, 1.0]);

    // A 1D array of 2 texels x 3 layers: layer = clamp(rint(y), 0, 2).
    let mut data = r_float_1d(&[0.0, 1.0, 10.0, 11.0, 20.0, 21.0]);
    let arr = image(&mut data, fmt(CL_R, CL_FLOAT), Dim::D1Array, [2, 3, 1]);
    let nearest = sampler(false, Addressing::ClampToEdge, false);
    let layer = |y: f32| f(arr.sample(nearest, [1.5, y, 0.0]))[0];
    assert_eq!([layer(0.4), layer(0.5), layer(1.5), layer(7.0), layer(-3.0)], [1.0, 1.0, 21.0, 21.0, 1.0]);
}

/// Linear filtering of a 2D image (its own path, the pixels found once, the common formats
/// decoded without the general unpacking) gives exactly what the general corner loop gives
/// for a one-layer 2D array of the same pixels, for every addressing mode, normalized and
/// unnormalized coordinates, coordinates outside the image and a format of no fast path.
#[test]
fn bilinear_2d_reads_as_the_general_filter_does() {
    let formats = [
        fmt(CL_R, CL_UNORM_INT8),
        fmt(CL_RGBA, CL_UNORM_INT8),
        fmt(CL_BGRA, CL_UNORM_INT8),
        fmt(CL_R, CL_FLOAT),
        fmt(CL_RGBA, CL_FLOAT),
        fmt(CL_RG, CL_UNORM_INT16),
    ];
    let modes =
        [Addressing::None, Addressing::ClampToEdge, Addressing::Clamp, Addressing::Repeat, Addressing::MirroredRepeat];
    let (w, h) = (5usize, 3usize);
    let mut state = 0x2545_f491_u32;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    for format in formats {
        let ps = format.pixel_size();
        let mut bytes: Vec<u8> = (0..w * h * ps).map(|i| (i * 37 % 251) as u8).collect();
        if format == fmt(CL_R, CL_FLOAT) || format == fmt(CL_RGBA, CL_FLOAT) {
            bytes = (0..w * h * ps / 4).flat_map(|i| (i as f32 * 0.75 - 3.0).to_le_bytes()).collect();
        }
        let mut arr_bytes = bytes.clone();
        let img = image(&mut bytes, format, Dim::D2, [w, h, 1]);
        let arr = image(&mut arr_bytes, format, Dim::D2Array, [w, h, 1]);
        for addressing in modes {
            for normalized in [false, true] {
                if !normalized && matches!(addressing, Addressing::Repeat | Addressing::MirroredRepeat) {
                    continue;
                }
                let s = sampler(normalized, addressing, true);
                let mut coords = vec![[-0.0f32, 0.0], [0.5, 0.5], [-1.25, 7.5], [2.0, -0.7]];
                for _ in 0..200 {
                    let r = |v: u32| (v % 2000) as f32 / 200.0 - 3.0;
                    coords.push([r(next()), r(next())]);
                }
                for [x, y] in coords {
                    let (x, y) = if normalized { (x / w as f32, y / h as f32) } else { (x, y) };
                    let fast = img.sample(s, [x, y, 0.0]);
                    let general = arr.sample(s, [x, y, 0.0]);
                    assert_eq!(fast, general, "{format:?} {s:?} at ({x}, {y})");
                }
            }
        }
    }
}

/// The pixels a sampled read loads, which the Gen model counts: the one nearest pixel, the
/// 2 / 4 / 8 corners of a linear filter (wrapped under REPEAT, repeated at a clamped edge),
/// none where CLAMP's border colour stands in; integer formats filter nearest.
#[test]
fn sampled_reads_load_the_filters_pixels() {
    let pixels = |img: &Image<&mut [u8]>, s: Sampler, at: [f32; 3]| {
        let (p, n) = img.sampled_pixels(s, at);
        let mut v = p[..n].to_vec();
        v.sort();
        v
    };
    let mut data = vec![0u8; 4 * 4 * 3 * 4];
    let img = image(&mut data, fmt(CL_R, CL_FLOAT), Dim::D2, [4, 3, 1]);
    let near = sampler(false, Addressing::ClampToEdge, false);
    assert_eq!(pixels(&img, near, [1.5, 2.9, 0.0]), [[1, 2, 0]]);
    let lin = sampler(false, Addressing::ClampToEdge, true);
    // u - 0.5 = (1.0, 1.5): x 1 and 2, y 1 and 2.
    assert_eq!(pixels(&img, lin, [1.5, 2.0, 0.0]), [[1, 1, 0], [1, 2, 0], [2, 1, 0], [2, 2, 0]]);
    // At the far corner both corners of each dimension clamp to the last pixel.
    assert_eq!(pixels(&img, lin, [9.0, 9.0, 0.0]), [[3, 2, 0]; 4]);
    let clamp = sampler(false, Addressing::Clamp, true);
    // x: 3.5 -> 3 and the border; y: 0.5 -> 0 (and 1, weight 0).
    assert_eq!(pixels(&img, clamp, [4.0, 1.0, 0.0]), [[3, 0, 0], [3, 1, 0]]);
    assert!(pixels(&img, sampler(false, Addressing::Clamp, false), [-2.0, 1.0, 0.0]).is_empty(), "border only");
    let repeat = sampler(true, Addressing::Repeat, true);
    // x = 0: u - 0.5 = -0.5, texels 3 (wrapped) and 0; y = 0.5: 1.0, texels 1 and 2.
    assert_eq!(pixels(&img, repeat, [0.0, 0.5, 0.0]), [[0, 1, 0], [0, 2, 0], [3, 1, 0], [3, 2, 0]]);

    let mut data = vec![0u8; 2 * 2 * 2 * 16];
    let cube = image(&mut data, fmt(CL_RGBA, CL_FLOAT), Dim::D3, [2, 2, 2]);
    assert_eq!(pixels(&cube, lin, [1.0, 1.0, 1.0]).len(), 8, "the eight corners of a 3D filter");
    let mut data = vec![0u8; 2 * 3 * 4];
    let layers = image(&mut data, fmt(CL_R, CL_FLOAT), Dim::D1Array, [2, 3, 1]);
    assert_eq!(pixels(&layers, lin, [1.0, 1.6, 0.0]), [[0, 2, 0], [1, 2, 0]], "one layer, two texels");
    let mut data = vec![0u8; 4];
    let ints = image(&mut data, fmt(CL_R, CL_UNSIGNED_INT8), Dim::D1, [4, 1, 1]);
    assert_eq!(pixels(&ints, lin, [2.9, 0.0, 0.0]), [[2, 0, 0]], "integer images filter nearest");
}

#[test]
fn integer_images_filter_nearest_and_writes_outside_are_dropped() {
    let mut data = vec![0u8; 4];
    let mut img = image(&mut data, fmt(CL_R, CL_UNSIGNED_INT8), Dim::D1, [4, 1, 1]);
    img.store([2, 0, 0], [7, 0, 0, 0]);
    img.store([4, 0, 0], [9, 0, 0, 0]);
    img.store([-1, 0, 0], [9, 0, 0, 0]);
    assert_eq!(img.data, &[0, 0, 7, 0]);
    let linear = sampler(false, Addressing::ClampToEdge, true);
    assert_eq!(img.sample(linear, [2.9, 0.0, 0.0]), [7, 0, 0, 1], "linear is nearest for integer images");
    assert_eq!(img.read_int_coords([2, 0, 0]), [7, 0, 0, 1]);
    assert_eq!(img.read_int_coords([5, 0, 0]), [0, 0, 0, 1], "outside: the border colour");
}

#[test]
fn half_float_images_read_as_floats() {
    let h = fmt(CL_R, CL_HALF_FLOAT);
    let mut px = [0u8; 2];
    h.encode(fbits([0.333, 0.0, 0.0, 0.0]), &mut px);
    assert_eq!(u16::from_le_bytes(px), f32_to_half(0.333));
    assert_eq!(f(h.decode(&px))[0], half_to_f32(f32_to_half(0.333)));
    assert!(Sampler::from_bits(0xE).is_none(), "addressing mode 7 does not exist");
}

#[test]
fn image_arg_dim_codes_round_trip() {
    use crate::abi::ImageArg;
    for d in [Dim::D1, Dim::D1Buffer, Dim::D1Array, Dim::D2, Dim::D2Array, Dim::D3] {
        assert_eq!(ImageArg::dim_of(ImageArg::dim_code(d)), Some(d));
    }
    assert_eq!(ImageArg::dim_of(6), None);
}

#[test]
fn padded_orders_have_the_element_sizes_the_cts_checks() {
    // The CTS's clGetInfo: CL_sRGBx / CL_UNORM_INT8 has an element size of 4 (its padding
    // channel is stored), CL_Rx / CL_UNORM_INT8 of 1 and CL_RGx / CL_FLOAT of 8.
    const CL_RX: u32 = 0x10BA;
    const CL_RGX: u32 = 0x10BB;
    const CL_SRGBX: u32 = 0x10C0;
    assert_eq!(fmt(CL_SRGBX, CL_UNORM_INT8).pixel_size(), 4);
    assert_eq!(fmt(CL_RX, CL_UNORM_INT8).pixel_size(), 1);
    assert_eq!(fmt(CL_RGX, CL_FLOAT).pixel_size(), 8);
    // sRGBx's padding reads as nothing (alpha 1) and is written with the alpha (as
    // sRGBA's: not sRGB-mapped), as the CTS's clFillImage and write_imagef checks expect.
    let s = fmt(CL_SRGBX, CL_UNORM_INT8);
    let mut px = [0xEEu8; 4];
    s.encode(fbits([1.0, 0.0, 1.0, 0.5]), &mut px);
    assert_eq!(px, [255, 0, 255, 128]);
    assert_eq!(f(s.decode(&[255, 0, 255, 77])), [1.0, 0.0, 1.0, 1.0]);
}

#[test]
fn unorm_int_101010_2_puts_red_in_the_high_bits() {
    // The specification (5.3.1.1): R in bits 31:22, G in 21:12, B in 11:2, A in 1:0; the
    // CTS's clFillImage compares the bytes.
    const CL_UNORM_INT_101010_2: u32 = 0x10E0;
    let x = fmt(CL_RGBA, CL_UNORM_INT_101010_2);
    assert_eq!(x.pixel_size(), 4);
    let mut px = [0u8; 4];
    x.encode(fbits([1.0, 0.0, 0.0, 0.0]), &mut px);
    assert_eq!(u32::from_le_bytes(px), 0x3FF << 22);
    x.encode(fbits([0.0, 0.0, 0.0, 1.0]), &mut px);
    assert_eq!(u32::from_le_bytes(px), 3);
    x.encode(fbits([0.0, 1.0, 0.0, 0.0]), &mut px);
    assert_eq!(u32::from_le_bytes(px), 0x3FF << 12);
    let w: u32 = (1023 << 22) | (341 << 2) | 1; // r 1, g 0, b 1/3, a 1/3
    assert_eq!(f(x.decode(&w.to_le_bytes())), [1.0, 0.0, 341.0 / 1023.0, 1.0 / 3.0]);
}
