//! [`NativeImage`] as bytes, for the kernel cache and program binaries.
//!
//! The format is private to one build of SoftCL: whoever stores it also stores the driver's
//! identity and checks it before decoding (runtime/src/program_cache.rs, binaries in
//! runtime/src/program.rs), so it has no compatibility rules of its own beyond
//! [`FORMAT_VERSION`]. Every integer is little endian; strings and byte arrays are a u64
//! length and the bytes; `Option` is a 0/1 byte and the value. Decoding checks every length
//! against what is left and rejects trailing bytes, so a damaged image is an `Err`, never a
//! panic or a huge allocation.
//!
//! The Gen-instrumented builds (kernels with `KernelInfo::gen`) are not encoded: they are
//! compiled lazily at launch time and never cached ([`encode`] answers `None`).

use crate::gen_abi::RegisterPressure;
use crate::kernel_info::{AccessQualifier, AddressSpace, ArgKind, KernelArg, KernelInfo, TypeQualifiers};
use crate::NativeImage;

/// Bumped whenever the encoding or the meaning of a [`NativeImage`] field changes.
pub const FORMAT_VERSION: u32 = 2;

/// The image's bytes; `None` for images that are not encoded (Gen-instrumented kernels).
pub fn encode(image: &NativeImage) -> Option<Vec<u8>> {
    if image.kernels.iter().any(|k| k.gen.is_some()) {
        return None;
    }
    let mut w = Writer(Vec::with_capacity(image.object.len() + 1024));
    w.u32(FORMAT_VERSION);
    w.bytes(&image.object);
    w.u64(image.host_symbols.len() as u64);
    for s in &image.host_symbols {
        w.str(s);
    }
    w.str(&image.log);
    w.u64(image.kernels.len() as u64);
    for k in &image.kernels {
        kernel(&mut w, k);
    }
    Some(w.0)
}

/// The image `bytes` encode, or why they are not one.
pub fn decode(bytes: &[u8]) -> Result<NativeImage, String> {
    let mut r = Reader { bytes, at: 0 };
    let version = r.u32()?;
    if version != FORMAT_VERSION {
        return Err(format!("native image format {version}, expected {FORMAT_VERSION}"));
    }
    let object = r.bytes()?.to_vec();
    let n = r.count()?;
    let host_symbols = (0..n).map(|_| r.string()).collect::<Result<_, _>>()?;
    let log = r.string()?;
    let n = r.count()?;
    let kernels = (0..n).map(|_| read_kernel(&mut r)).collect::<Result<_, _>>()?;
    if r.at != bytes.len() {
        return Err("trailing bytes after the native image".into());
    }
    Ok(NativeImage { object, host_symbols, kernels, log })
}

struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn bool(&mut self, v: bool) {
        self.u8(v as u8);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn usize(&mut self, v: usize) {
        self.u64(v as u64);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn opt<T>(&mut self, v: &Option<T>, f: impl FnOnce(&mut Self, &T)) {
        match v {
            None => self.u8(0),
            Some(x) => {
                self.u8(1);
                f(self, x);
            }
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or("truncated native image")?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn bool(&mut self) -> Result<bool, String> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("bad boolean {b} in native image")),
        }
    }
    fn u32(&mut self) -> Result<u32, String> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4)?);
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> Result<u64, String> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(b))
    }
    fn usize(&mut self) -> Result<usize, String> {
        usize::try_from(self.u64()?).map_err(|_| "size out of range in native image".to_string())
    }
    /// An element count: never more than the bytes left (each element takes at least one).
    fn count(&mut self) -> Result<usize, String> {
        let n = self.usize()?;
        if n > self.bytes.len() - self.at {
            return Err("element count beyond the end of the native image".into());
        }
        Ok(n)
    }
    fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.usize()?;
        self.take(n)
    }
    fn string(&mut self) -> Result<String, String> {
        std::str::from_utf8(self.bytes()?).map(str::to_string).map_err(|_| "bad UTF-8 in native image".to_string())
    }
    fn opt<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, String>) -> Result<Option<T>, String> {
        if self.bool()? {
            f(self).map(Some)
        } else {
            Ok(None)
        }
    }
}

fn space_code(s: AddressSpace) -> u8 {
    match s {
        AddressSpace::Private => 0,
        AddressSpace::Global => 1,
        AddressSpace::Constant => 2,
        AddressSpace::Local => 3,
        AddressSpace::Generic => 4,
    }
}

fn read_space(r: &mut Reader<'_>) -> Result<AddressSpace, String> {
    Ok(match r.u8()? {
        0 => AddressSpace::Private,
        1 => AddressSpace::Global,
        2 => AddressSpace::Constant,
        3 => AddressSpace::Local,
        4 => AddressSpace::Generic,
        b => return Err(format!("bad address space {b} in native image")),
    })
}

fn sizes3(w: &mut Writer, v: &[usize; 3]) {
    v.iter().for_each(|&x| w.usize(x));
}

fn read_sizes3(r: &mut Reader<'_>) -> Result<[usize; 3], String> {
    Ok([r.usize()?, r.usize()?, r.usize()?])
}

fn kernel(w: &mut Writer, k: &KernelInfo) {
    w.str(&k.name);
    w.u64(k.args.len() as u64);
    for a in &k.args {
        w.str(&a.name);
        w.str(&a.type_name);
        w.u8(space_code(a.address_space));
        w.u8(match a.access {
            AccessQualifier::None => 0,
            AccessQualifier::ReadOnly => 1,
            AccessQualifier::WriteOnly => 2,
            AccessQualifier::ReadWrite => 3,
        });
        let q = a.qualifiers;
        for b in [q.is_const, q.is_restrict, q.is_volatile, q.is_pipe] {
            w.bool(b);
        }
        match &a.kind {
            ArgKind::Buffer { address_space } => {
                w.u8(0);
                w.u8(space_code(*address_space));
            }
            ArgKind::Local => w.u8(1),
            ArgKind::Value => w.u8(2),
            ArgKind::Sampler => w.u8(3),
            ArgKind::Image => w.u8(4),
        }
        w.usize(a.offset);
        w.usize(a.size);
        w.usize(a.align);
    }
    w.usize(k.arg_block_size);
    w.str(&k.attributes);
    w.opt(&k.reqd_work_group_size, sizes3);
    w.opt(&k.work_group_size_hint, sizes3);
    w.opt(&k.vec_type_hint, |w, s| w.str(s));
    w.opt(&k.reqd_sub_group_size, |w, &v| w.u32(v));
    w.u64(k.static_local_mem_size);
    w.u64(k.private_mem_size);
    w.u32(k.barrier_count);
    w.u64(k.work_item_state_size);
    w.bool(k.uses_printf);
    w.u32(k.simd_width);
    w.opt(&k.register_pressure, |w, p| {
        w.u32(p.uniform_bytes);
        w.u32(p.varying_bytes);
        w.bool(p.divergent_loops);
        w.bool(p.subgroup_functions);
        w.u32(p.instructions);
        w.u32(p.private_array_bytes);
    });
}

fn read_kernel(r: &mut Reader<'_>) -> Result<KernelInfo, String> {
    let name = r.string()?;
    let n = r.count()?;
    let mut args = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.string()?;
        let type_name = r.string()?;
        let address_space = read_space(r)?;
        let access = match r.u8()? {
            0 => AccessQualifier::None,
            1 => AccessQualifier::ReadOnly,
            2 => AccessQualifier::WriteOnly,
            3 => AccessQualifier::ReadWrite,
            b => return Err(format!("bad access qualifier {b} in native image")),
        };
        let qualifiers =
            TypeQualifiers { is_const: r.bool()?, is_restrict: r.bool()?, is_volatile: r.bool()?, is_pipe: r.bool()? };
        let kind = match r.u8()? {
            0 => ArgKind::Buffer { address_space: read_space(r)? },
            1 => ArgKind::Local,
            2 => ArgKind::Value,
            3 => ArgKind::Sampler,
            4 => ArgKind::Image,
            b => return Err(format!("bad argument kind {b} in native image")),
        };
        let (offset, size, align) = (r.usize()?, r.usize()?, r.usize()?);
        args.push(KernelArg { name, type_name, address_space, access, qualifiers, kind, offset, size, align });
    }
    Ok(KernelInfo {
        name,
        args,
        arg_block_size: r.usize()?,
        attributes: r.string()?,
        reqd_work_group_size: r.opt(read_sizes3)?,
        work_group_size_hint: r.opt(read_sizes3)?,
        vec_type_hint: r.opt(|r| r.string())?,
        reqd_sub_group_size: r.opt(|r| r.u32())?,
        static_local_mem_size: r.u64()?,
        private_mem_size: r.u64()?,
        barrier_count: r.u32()?,
        work_item_state_size: r.u64()?,
        uses_printf: r.bool()?,
        simd_width: r.u32()?,
        register_pressure: r.opt(|r| {
            Ok(RegisterPressure {
                uniform_bytes: r.u32()?,
                varying_bytes: r.u32()?,
                divergent_loops: r.bool()?,
                subgroup_functions: r.bool()?,
                instructions: r.u32()?,
                private_array_bytes: r.u32()?,
            })
        })?,
        gen: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> NativeImage {
        let arg = KernelArg {
            name: "out".into(),
            type_name: "float*".into(),
            address_space: AddressSpace::Global,
            access: AccessQualifier::None,
            qualifiers: TypeQualifiers { is_const: false, is_restrict: true, is_volatile: false, is_pipe: false },
            kind: ArgKind::Buffer { address_space: AddressSpace::Global },
            offset: 0,
            size: 8,
            align: 8,
        };
        let local = KernelArg { name: "tmp".into(), kind: ArgKind::Local, offset: 8, ..arg.clone() };
        let info = KernelInfo {
            name: "k".into(),
            args: vec![arg, local],
            arg_block_size: 16,
            attributes: "reqd_work_group_size(8,1,1)".into(),
            reqd_work_group_size: Some([8, 1, 1]),
            work_group_size_hint: None,
            vec_type_hint: Some("float4".into()),
            reqd_sub_group_size: Some(16),
            static_local_mem_size: 64,
            private_mem_size: 12,
            barrier_count: 2,
            work_item_state_size: 48,
            uses_printf: true,
            simd_width: 16,
            register_pressure: Some(RegisterPressure {
                uniform_bytes: 4,
                varying_bytes: 96,
                divergent_loops: true,
                subgroup_functions: false,
                instructions: 77,
                private_array_bytes: 256,
            }),
            gen: None,
        };
        NativeImage {
            object: vec![0x7f, b'E', b'L', b'F', 1, 2, 3],
            host_symbols: vec!["softcl_cbrt".into()],
            kernels: vec![info.clone(), KernelInfo { name: "j".into(), ..Default::default() }],
            log: "note\n".into(),
        }
    }

    #[test]
    fn round_trip() {
        let image = sample();
        let bytes = encode(&image).unwrap();
        assert_eq!(decode(&bytes).unwrap(), image);
    }

    #[test]
    fn damaged_images_are_errors() {
        let bytes = encode(&sample()).unwrap();
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n]).is_err(), "truncated at {n}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer).is_err());
        let mut other = bytes.clone();
        other[0] ^= 0x40;
        assert!(decode(&other).is_err());
        // A huge length must not allocate or panic.
        let mut huge = bytes.clone();
        huge[4..12].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&huge).is_err());
        // Every single flipped byte decodes to something or fails, never panics.
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0xff;
            let _ = decode(&b);
        }
    }

    #[test]
    fn gen_instrumented_kernels_are_not_encoded() {
        let mut image = sample();
        image.kernels[0].gen = Some(Default::default());
        assert!(encode(&image).is_none());
    }
}
