//! Image formats: channel orders and channel data types (the OpenCL header's values), the
//! size of a pixel, and the conversions between a pixel's bytes and the four components a
//! kernel reads and writes (OpenCL C specification, "Conversion rules": normalized integers
//! round to nearest even and saturate, `float -> half` rounds to nearest even, sRGB through
//! the sRGB transfer function).

/// The formats images mostly have, decoded without the general unpacking (to the same
/// values): a sampler that filters can pick the decoding once for all its pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Common {
    RUnorm8,
    RgbaUnorm8,
    BgraUnorm8,
    RFloat,
    RgbaFloat,
}

impl Common {
    /// [`Format::decode`] of a pixel of this format.
    #[inline(always)]
    pub(crate) fn decode(self, px: &[u8]) -> Components {
        let one = 1.0f32.to_bits();
        let unorm8 = |b: u8| normalized(f32::from(b), 255.0).to_bits();
        let float = |k: usize| u32::from_le_bytes([px[4 * k], px[4 * k + 1], px[4 * k + 2], px[4 * k + 3]]);
        match self {
            Common::RUnorm8 => [unorm8(px[0]), 0, 0, one],
            Common::RgbaUnorm8 => [0, 1, 2, 3].map(|k| unorm8(px[k])),
            Common::BgraUnorm8 => [2, 1, 0, 3].map(|k| unorm8(px[k])),
            Common::RFloat => [float(0), 0, 0, one],
            Common::RgbaFloat => [0, 1, 2, 3].map(float),
        }
    }
}

/// A channel order (`cl_channel_order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelOrder {
    R,
    A,
    Rg,
    Ra,
    Rgb,
    Rgba,
    Bgra,
    Argb,
    Abgr,
    Intensity,
    Luminance,
    Rx,
    Rgx,
    Rgbx,
    Depth,
    Srgb,
    Srgbx,
    Srgba,
    Sbgra,
}

/// A channel data type (`cl_channel_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelType {
    SnormInt8,
    SnormInt16,
    UnormInt8,
    UnormInt16,
    UnormShort565,
    UnormShort555,
    UnormInt101010,
    SignedInt8,
    SignedInt16,
    SignedInt32,
    UnsignedInt8,
    UnsignedInt16,
    UnsignedInt32,
    HalfFloat,
    Float,
    UnormInt101010_2,
}

/// What a kernel reads from and writes to an image of a channel type: `read_imagef` /
/// `write_imagef` (normalized integers and floats), `read_imagei` / `write_imagei`, or
/// `read_imageui` / `write_imageui`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Float,
    Int,
    Uint,
}

/// An image format: a channel order with a channel data type that the order allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    pub order: ChannelOrder,
    pub ty: ChannelType,
}

/// The four components of a pixel as a kernel sees them, in the representation of its
/// [`Kind`] (integers as their 32-bit patterns).
pub type Components = [u32; 4];

const ORDERS: [(u32, ChannelOrder); 19] = [
    (0x10B0, ChannelOrder::R),
    (0x10B1, ChannelOrder::A),
    (0x10B2, ChannelOrder::Rg),
    (0x10B3, ChannelOrder::Ra),
    (0x10B4, ChannelOrder::Rgb),
    (0x10B5, ChannelOrder::Rgba),
    (0x10B6, ChannelOrder::Bgra),
    (0x10B7, ChannelOrder::Argb),
    (0x10B8, ChannelOrder::Intensity),
    (0x10B9, ChannelOrder::Luminance),
    (0x10BA, ChannelOrder::Rx),
    (0x10BB, ChannelOrder::Rgx),
    (0x10BC, ChannelOrder::Rgbx),
    (0x10BD, ChannelOrder::Depth),
    (0x10BF, ChannelOrder::Srgb),
    (0x10C0, ChannelOrder::Srgbx),
    (0x10C1, ChannelOrder::Srgba),
    (0x10C2, ChannelOrder::Sbgra),
    (0x10C3, ChannelOrder::Abgr),
];

const TYPES: [(u32, ChannelType); 16] = [
    (0x10D0, ChannelType::SnormInt8),
    (0x10D1, ChannelType::SnormInt16),
    (0x10D2, ChannelType::UnormInt8),
    (0x10D3, ChannelType::UnormInt16),
    (0x10D4, ChannelType::UnormShort565),
    (0x10D5, ChannelType::UnormShort555),
    (0x10D6, ChannelType::UnormInt101010),
    (0x10D7, ChannelType::SignedInt8),
    (0x10D8, ChannelType::SignedInt16),
    (0x10D9, ChannelType::SignedInt32),
    (0x10DA, ChannelType::UnsignedInt8),
    (0x10DB, ChannelType::UnsignedInt16),
    (0x10DC, ChannelType::UnsignedInt32),
    (0x10DD, ChannelType::HalfFloat),
    (0x10DE, ChannelType::Float),
    (0x10E0, ChannelType::UnormInt101010_2),
];

impl ChannelOrder {
    pub fn from_cl(v: u32) -> Option<Self> {
        ORDERS.iter().find(|(c, _)| *c == v).map(|(_, o)| *o)
    }

    pub fn to_cl(self) -> u32 {
        ORDERS.iter().find(|(_, o)| *o == self).map_or(0, |(c, _)| *c)
    }

    /// Channels stored per pixel (for the formats that are not packed). CL_sRGBx stores its
    /// padding channel (a CL_sRGBx / CL_UNORM_INT8 pixel is 4 bytes); CL_Rx and CL_RGx do
    /// not (1 and 2 channels), and CL_RGBx exists only in packed types. These are the
    /// element sizes the CTS's clGetInfo checks.
    pub fn channels(self) -> usize {
        use ChannelOrder::*;
        match self {
            R | A | Intensity | Luminance | Rx | Depth => 1,
            Rg | Ra | Rgx => 2,
            Rgb | Rgbx | Srgb => 3,
            Rgba | Bgra | Argb | Abgr | Srgba | Sbgra | Srgbx => 4,
        }
    }

    fn is_srgb(self) -> bool {
        matches!(self, ChannelOrder::Srgb | ChannelOrder::Srgbx | ChannelOrder::Srgba | ChannelOrder::Sbgra)
    }

    /// For each stored channel, the component (0 = r .. 3 = a) it holds.
    fn stored(self) -> &'static [usize] {
        use ChannelOrder::*;
        match self {
            R | Rx | Intensity | Luminance | Depth => &[0],
            A => &[3],
            Rg | Rgx => &[0, 1],
            Ra => &[0, 3],
            Rgb | Rgbx | Srgb | Srgbx => &[0, 1, 2],
            Rgba | Srgba => &[0, 1, 2, 3],
            Bgra | Sbgra => &[2, 1, 0, 3],
            Argb => &[3, 0, 1, 2],
            Abgr => &[3, 2, 1, 0],
        }
    }

    /// The colour of a texel outside the image under `CLK_ADDRESS_CLAMP`: alpha 1 for the
    /// orders without an alpha (or padding) channel, 0 otherwise.
    pub fn border_alpha_one(self) -> bool {
        use ChannelOrder::*;
        matches!(self, R | Rg | Rgb | Luminance | Srgb | Depth)
    }
}

impl ChannelType {
    pub fn from_cl(v: u32) -> Option<Self> {
        TYPES.iter().find(|(c, _)| *c == v).map(|(_, t)| *t)
    }

    pub fn to_cl(self) -> u32 {
        TYPES.iter().find(|(_, t)| *t == self).map_or(0, |(c, _)| *c)
    }

    pub fn kind(self) -> Kind {
        use ChannelType::*;
        match self {
            SignedInt8 | SignedInt16 | SignedInt32 => Kind::Int,
            UnsignedInt8 | UnsignedInt16 | UnsignedInt32 => Kind::Uint,
            _ => Kind::Float,
        }
    }

    /// Bytes of one channel (`None` for the packed types, whose pixel is one word).
    fn channel_bytes(self) -> Option<usize> {
        use ChannelType::*;
        match self {
            SnormInt8 | UnormInt8 | SignedInt8 | UnsignedInt8 => Some(1),
            SnormInt16 | UnormInt16 | SignedInt16 | UnsignedInt16 | HalfFloat => Some(2),
            SignedInt32 | UnsignedInt32 | Float => Some(4),
            UnormShort565 | UnormShort555 | UnormInt101010 | UnormInt101010_2 => None,
        }
    }
}

impl Format {
    /// The format of `cl_image_format { order, ty }`, when the pair is one the specification
    /// allows (packed types only with RGB-like orders, sRGB only as 8-bit normalized, depth
    /// only as 16-bit normalized or float, intensity and luminance only in one-channel
    /// types that read as floats).
    pub fn from_cl(order: u32, ty: u32) -> Option<Self> {
        use ChannelOrder as O;
        use ChannelType as T;
        let (order, ty) = (ChannelOrder::from_cl(order)?, ChannelType::from_cl(ty)?);
        let ok = match (order, ty) {
            (O::Rgb | O::Rgbx, T::UnormShort565 | T::UnormShort555 | T::UnormInt101010) => true,
            (O::Rgba, T::UnormInt101010_2) => true,
            (_, T::UnormShort565 | T::UnormShort555 | T::UnormInt101010 | T::UnormInt101010_2) => false,
            (O::Rgb | O::Rgbx, _) => false,
            (O::Srgb | O::Srgbx | O::Srgba | O::Sbgra, t) => t == T::UnormInt8,
            (O::Depth, t) => matches!(t, T::UnormInt16 | T::Float),
            (O::Intensity | O::Luminance, t) => {
                matches!(t, T::UnormInt8 | T::UnormInt16 | T::SnormInt8 | T::SnormInt16 | T::HalfFloat | T::Float)
            }
            (O::Bgra | O::Argb | O::Abgr, t) => {
                matches!(t, T::UnormInt8 | T::SnormInt8 | T::SignedInt8 | T::UnsignedInt8)
            }
            _ => true,
        };
        ok.then_some(Format { order, ty })
    }

    /// Bytes of one pixel.
    pub fn pixel_size(self) -> usize {
        match self.ty.channel_bytes() {
            Some(b) => b * self.order.channels(),
            None => match self.ty {
                ChannelType::UnormShort565 | ChannelType::UnormShort555 => 2,
                _ => 4,
            },
        }
    }

    pub fn kind(self) -> Kind {
        self.ty.kind()
    }

    /// The components a kernel reads from a pixel: floats as their bits for [`Kind::Float`]
    /// (normalized integers divided out, sRGB made linear), integers for the others; the
    /// components the order does not store are 0, alpha 1 (1.0 or the integer 1).
    #[inline]
    pub fn decode(self, px: &[u8]) -> Components {
        match self.common() {
            Some(common) => common.decode(px),
            None => self.decode_general(px),
        }
    }

    /// The format as one of the [`Common`] ones, if it is.
    #[inline]
    pub(crate) fn common(self) -> Option<Common> {
        match (self.order, self.ty) {
            (ChannelOrder::R, ChannelType::UnormInt8) => Some(Common::RUnorm8),
            (ChannelOrder::Rgba, ChannelType::UnormInt8) => Some(Common::RgbaUnorm8),
            (ChannelOrder::Bgra, ChannelType::UnormInt8) => Some(Common::BgraUnorm8),
            (ChannelOrder::R, ChannelType::Float) => Some(Common::RFloat),
            (ChannelOrder::Rgba, ChannelType::Float) => Some(Common::RgbaFloat),
            _ => None,
        }
    }

    /// [`Self::decode`] of any format: the channels unpacked, then placed by the order.
    #[inline(never)]
    fn decode_general(self, px: &[u8]) -> Components {
        let float = self.kind() == Kind::Float;
        let one = if float { 1.0f32.to_bits() } else { 1 };
        let mut out = [0, 0, 0, one];
        let mut raw = [0u32; 4];
        self.unpack(px, &mut raw);
        match self.order {
            ChannelOrder::Intensity => {
                let v = self.channel_value(raw[0]);
                out = [v; 4];
            }
            ChannelOrder::Luminance => {
                let v = self.channel_value(raw[0]);
                out = [v, v, v, one];
            }
            order => {
                for (k, &c) in order.stored().iter().enumerate() {
                    let mut v = self.channel_value(raw[k]);
                    if order.is_srgb() && c < 3 {
                        v = srgb_to_linear(f32::from_bits(v)).to_bits();
                    }
                    out[c] = v;
                }
            }
        }
        out
    }

    /// The bytes of a pixel holding `value` (components in the representation of the
    /// format's [`Kind`]): floats converted with rounding to nearest even and saturation,
    /// integers saturated to the channel's range.
    pub fn encode(self, value: Components, px: &mut [u8]) {
        let mut raw = [0u32; 4];
        let stored = match self.order {
            ChannelOrder::Intensity | ChannelOrder::Luminance => &[0usize][..],
            order => order.stored(),
        };
        for (k, &c) in stored.iter().enumerate() {
            let mut v = value[c];
            if self.order.is_srgb() && c < 3 {
                v = linear_to_srgb(f32::from_bits(v)).to_bits();
            }
            raw[k] = self.channel_raw(v);
        }
        if self.order == ChannelOrder::Srgbx {
            // The padding channel's content is undefined; it holds the alpha written (linear,
            // as sRGBA's alpha), which is what the CTS's fill and write checks expect.
            raw[3] = self.channel_raw(value[3]);
        }
        self.pack(&raw, px);
    }

    /// A stored channel's raw value -> the component (float bits or integer).
    fn channel_value(self, raw: u32) -> u32 {
        use ChannelType::*;
        match self.ty {
            UnormInt8 => normalized(raw as f32, 255.0).to_bits(),
            UnormInt16 => normalized(raw as f32, 65535.0).to_bits(),
            SnormInt8 => normalized(raw as u8 as i8 as f32, 127.0).max(-1.0).to_bits(),
            SnormInt16 => normalized(raw as u16 as i16 as f32, 32767.0).max(-1.0).to_bits(),
            UnormShort565 | UnormShort555 | UnormInt101010 | UnormInt101010_2 => raw, // already float bits
            HalfFloat => half_to_f32(raw as u16).to_bits(),
            Float | UnsignedInt32 | SignedInt32 => raw,
            SignedInt8 => raw as u8 as i8 as i32 as u32,
            SignedInt16 => raw as u16 as i16 as i32 as u32,
            UnsignedInt8 => raw & 0xFF,
            UnsignedInt16 => raw & 0xFFFF,
        }
    }

    /// A component (float bits or integer) -> the stored channel's raw value.
    fn channel_raw(self, v: u32) -> u32 {
        use ChannelType::*;
        let f = f32::from_bits(v);
        match self.ty {
            UnormInt8 => unorm(f, 255.0),
            UnormInt16 => unorm(f, 65535.0),
            SnormInt8 => snorm(f, 127.0) as u8 as u32,
            SnormInt16 => snorm(f, 32767.0) as u16 as u32,
            UnormShort565 | UnormShort555 | UnormInt101010 | UnormInt101010_2 => v,
            HalfFloat => f32_to_half(f) as u32,
            Float | UnsignedInt32 | SignedInt32 => v,
            SignedInt8 => (v as i32).clamp(-128, 127) as u32 & 0xFF,
            SignedInt16 => (v as i32).clamp(-32768, 32767) as u32 & 0xFFFF,
            UnsignedInt8 => v.min(0xFF),
            UnsignedInt16 => v.min(0xFFFF),
        }
    }

    /// The stored channels of a pixel as raw values (packed formats: each channel already
    /// as float bits).
    fn unpack(self, px: &[u8], raw: &mut [u32; 4]) {
        use ChannelType::*;
        let word = |n: usize| -> u32 {
            let mut b = [0u8; 4];
            b[..n].copy_from_slice(&px[..n]);
            u32::from_le_bytes(b)
        };
        let field =
            |w: u32, shift: u32, bits: u32| ((w >> shift) & ((1 << bits) - 1)) as f32 / ((1u32 << bits) - 1) as f32;
        match self.ty {
            UnormShort565 => {
                let w = word(2);
                *raw = [field(w, 11, 5).to_bits(), field(w, 5, 6).to_bits(), field(w, 0, 5).to_bits(), 0];
            }
            UnormShort555 => {
                let w = word(2);
                *raw = [field(w, 10, 5).to_bits(), field(w, 5, 5).to_bits(), field(w, 0, 5).to_bits(), 0];
            }
            UnormInt101010 => {
                let w = word(4);
                *raw = [field(w, 20, 10).to_bits(), field(w, 10, 10).to_bits(), field(w, 0, 10).to_bits(), 0];
            }
            // 10-10-10-2 from the high bits down, as 10-10-10 is x-10-10-10: R in bits 31:22,
            // G 21:12, B 11:2, A 1:0 (the CTS's reference reads it so).
            UnormInt101010_2 => {
                let w = word(4);
                *raw = [
                    field(w, 22, 10).to_bits(),
                    field(w, 12, 10).to_bits(),
                    field(w, 2, 10).to_bits(),
                    field(w, 0, 2).to_bits(),
                ];
            }
            t => {
                let n = t.channel_bytes().unwrap_or(4);
                for (k, r) in raw.iter_mut().enumerate().take(self.order.channels()) {
                    // Loads of the channel's width: a copy of `n` bytes into a word read
                    // back whole stalls on store forwarding (most of an image read's time).
                    *r = match px[k * n..(k + 1) * n] {
                        [a] => u32::from(a),
                        [a, b] => u32::from(u16::from_le_bytes([a, b])),
                        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
                        ref other => {
                            let mut b = [0u8; 4];
                            b[..n].copy_from_slice(other);
                            u32::from_le_bytes(b)
                        }
                    };
                }
            }
        }
    }

    fn pack(self, raw: &[u32; 4], px: &mut [u8]) {
        use ChannelType::*;
        let field = |v: u32, bits: u32| unorm(f32::from_bits(v), ((1u32 << bits) - 1) as f32);
        let put = |px: &mut [u8], w: u32, n: usize| px[..n].copy_from_slice(&w.to_le_bytes()[..n]);
        match self.ty {
            UnormShort565 => put(px, field(raw[0], 5) << 11 | field(raw[1], 6) << 5 | field(raw[2], 5), 2),
            UnormShort555 => put(px, field(raw[0], 5) << 10 | field(raw[1], 5) << 5 | field(raw[2], 5), 2),
            UnormInt101010 => put(px, field(raw[0], 10) << 20 | field(raw[1], 10) << 10 | field(raw[2], 10), 4),
            UnormInt101010_2 => put(
                px,
                field(raw[0], 10) << 22 | field(raw[1], 10) << 12 | field(raw[2], 10) << 2 | field(raw[3], 2),
                4,
            ),
            t => {
                let n = t.channel_bytes().unwrap_or(4);
                for k in 0..self.order.channels() {
                    px[k * n..(k + 1) * n].copy_from_slice(&raw[k].to_le_bytes()[..n]);
                }
            }
        }
    }
}

/// `convert_uint_sat_rte(f * max)`: NaN converts to 0.
/// A normalized channel's integer `c` as a float: `c * (1.0f / max)`, the reciprocal
/// rounded to float first. The specification allows 1.5 ulp here; this is the product PoCL
/// computes, so images read the same bits on both (ffmpeg's blur filters round their
/// averages of such values back to 8 bits and differed by one level where `c / max`, the
/// correctly rounded quotient, was used). `max * (1.0f / max)` is exactly 1.0 for every
/// `max` used here.
fn normalized(c: f32, max: f32) -> f32 {
    c * (1.0 / max)
}

fn unorm(f: f32, max: f32) -> u32 {
    let x = (f * max).round_ties_even();
    if x.is_nan() {
        0
    } else {
        x.clamp(0.0, max) as u32
    }
}

/// `convert_int_sat_rte(f * max)`, saturated to [-max, max] as the specification's
/// normalized conversion (NaN converts to 0).
fn snorm(f: f32, max: f32) -> i32 {
    let x = (f * max).round_ties_even();
    if x.is_nan() {
        0
    } else {
        x.clamp(-max - 1.0, max) as i32
    }
}

/// IEEE half -> float (exact).
pub fn half_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1F) as u32;
    let man = (h & 0x3FF) as u32;
    let bits = match (exp, man) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: m * 2^-24.
            let f = m as f32 * (1.0 / 16_777_216.0);
            return if sign != 0 { -f } else { f };
        }
        (0x1F, 0) => sign | 0x7F80_0000,
        (0x1F, m) => sign | 0x7FC0_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// float -> IEEE half, rounding to nearest even (overflow to infinity, NaN stays NaN).
pub fn f32_to_half(f: f32) -> u16 {
    let bits = f.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xFF) as i32;
    let man = bits & 0x7F_FFFF;
    if exp == 0xFF {
        return sign | 0x7C00 | if man != 0 { 0x200 | (man >> 13) as u16 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1F {
        return sign | 0x7C00;
    }
    if e <= 0 {
        // Subnormal half (or zero): the value in units of 2^-24, rounded to nearest even.
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let q = m >> shift;
        let rem = m & ((1 << shift) - 1);
        let half = 1 << (shift - 1);
        let q = if rem > half || (rem == half && q & 1 == 1) { q + 1 } else { q };
        return sign | q as u16;
    }
    let q = ((e as u32) << 10) | (man >> 13);
    let rem = man & 0x1FFF;
    let q = if rem > 0x1000 || (rem == 0x1000 && q & 1 == 1) { q + 1 } else { q };
    sign | q as u16
}

/// The sRGB transfer function's inverse (sRGB-encoded value -> linear), as the OpenCL C
/// specification gives it.
fn srgb_to_linear(c: f32) -> f32 {
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear -> sRGB-encoded value.
fn linear_to_srgb(c: f32) -> f32 {
    if c.is_nan() {
        0.0
    } else if c <= 0.0031308 {
        (c * 12.92).max(0.0)
    } else {
        (1.055 * c.min(1.0).powf(1.0 / 2.4) - 0.055).min(1.0)
    }
}
