//! Sampler state as the API gives it: clCreateSampler's arguments and
//! clCreateSamplerWithProperties's property list, checked with the specification's errors,
//! and the `sampler_t` bits kernels receive (`softcl_compiler::image::Sampler`). Pure logic:
//! the entry points come with image support (no device reports it yet).

use crate::cl::*;
use crate::context::Context;
use crate::handle::{ClObject, Header, ObjectKind};
use softcl_compiler::image::{Addressing, Sampler};
use std::sync::Arc;

/// A sampler object (clCreateSampler, clCreateSamplerWithProperties).
#[repr(C)]
pub struct SamplerObject {
    header: Header,
    pub context: Arc<Context>,
    pub sampler: Sampler,
    /// CL_SAMPLER_PROPERTIES: the list given to clCreateSamplerWithProperties (without its
    /// 0); None when created otherwise (the query then returns nothing).
    pub properties: Option<Vec<cl_sampler_properties>>,
}

impl ClObject for SamplerObject {
    const KIND: ObjectKind = ObjectKind::Sampler;
    fn header(&self) -> &Header {
        &self.header
    }
}

impl std::fmt::Debug for SamplerObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SamplerObject").field("sampler", &self.sampler).finish()
    }
}

impl SamplerObject {
    /// A sampler of `context`: CL_INVALID_OPERATION when no device of the context supports
    /// images ("if images are not supported by any device associated with context").
    pub fn new(
        context: Arc<Context>,
        sampler: Sampler,
        properties: Option<Vec<cl_sampler_properties>>,
    ) -> Result<Arc<Self>, cl_int> {
        if !context.devices.iter().any(|d| d.info().images.is_some()) {
            return Err(CL_INVALID_OPERATION);
        }
        Ok(Self::new_unchecked(context, sampler, properties))
    }

    /// A sampler without the image support check (for the runtime's own tests).
    pub(crate) fn new_unchecked(
        context: Arc<Context>,
        sampler: Sampler,
        properties: Option<Vec<cl_sampler_properties>>,
    ) -> Arc<Self> {
        Arc::new(Self { header: Header::new(ObjectKind::Sampler), context, sampler, properties })
    }

    /// The 8 bytes of a sampler kernel argument (`abi::SAMPLER_ARG_BYTES`).
    pub fn arg_bytes(&self) -> [u8; softcl_compiler::abi::SAMPLER_ARG_BYTES] {
        u64::from(self.sampler.bits()).to_ne_bytes()
    }
}

/// The sampler of clCreateSampler's arguments: CL_INVALID_VALUE for an addressing or
/// filter mode that does not exist.
pub fn from_args(
    normalized: cl_bool,
    addressing: cl_addressing_mode,
    filter: cl_filter_mode,
) -> Result<Sampler, cl_int> {
    let addressing = match addressing {
        CL_ADDRESS_NONE => Addressing::None,
        CL_ADDRESS_CLAMP_TO_EDGE => Addressing::ClampToEdge,
        CL_ADDRESS_CLAMP => Addressing::Clamp,
        CL_ADDRESS_REPEAT => Addressing::Repeat,
        CL_ADDRESS_MIRRORED_REPEAT => Addressing::MirroredRepeat,
        _ => return Err(CL_INVALID_VALUE),
    };
    let linear = match filter {
        CL_FILTER_NEAREST => false,
        CL_FILTER_LINEAR => true,
        _ => return Err(CL_INVALID_VALUE),
    };
    // cl_bool: CL_TRUE or CL_FALSE (any other value is not a valid one).
    let normalized = match normalized {
        CL_TRUE => true,
        CL_FALSE => false,
        _ => return Err(CL_INVALID_VALUE),
    };
    Ok(Sampler { normalized, addressing, linear })
}

/// The sampler of clCreateSamplerWithProperties's list (`props` without its terminating 0;
/// NULL is the empty list): defaults CL_TRUE, CL_ADDRESS_CLAMP, CL_FILTER_NEAREST;
/// CL_INVALID_VALUE for an unknown name, a name given twice or an invalid value. The
/// cl_khr_mipmap_image properties are not supported (no mipmaps).
pub fn from_properties(props: &[cl_sampler_properties]) -> Result<Sampler, cl_int> {
    if !props.len().is_multiple_of(2) {
        return Err(CL_INVALID_VALUE);
    }
    let (mut normalized, mut addressing, mut filter) = (None, None, None);
    for pair in props.chunks(2) {
        let (name, value) = (pair[0], pair[1]);
        let slot = match u32::try_from(name).map_err(|_| CL_INVALID_VALUE)? {
            CL_SAMPLER_NORMALIZED_COORDS => &mut normalized,
            CL_SAMPLER_ADDRESSING_MODE => &mut addressing,
            CL_SAMPLER_FILTER_MODE => &mut filter,
            _ => return Err(CL_INVALID_VALUE),
        };
        if slot.is_some() {
            return Err(CL_INVALID_VALUE);
        }
        *slot = Some(u32::try_from(value).map_err(|_| CL_INVALID_VALUE)?);
    }
    from_args(
        normalized.unwrap_or(CL_TRUE),
        addressing.unwrap_or(CL_ADDRESS_CLAMP),
        filter.unwrap_or(CL_FILTER_NEAREST),
    )
}

/// CL_SAMPLER_ADDRESSING_MODE of a sampler.
pub fn addressing_mode(s: Sampler) -> cl_addressing_mode {
    match s.addressing {
        Addressing::None => CL_ADDRESS_NONE,
        Addressing::ClampToEdge => CL_ADDRESS_CLAMP_TO_EDGE,
        Addressing::Clamp => CL_ADDRESS_CLAMP,
        Addressing::Repeat => CL_ADDRESS_REPEAT,
        Addressing::MirroredRepeat => CL_ADDRESS_MIRRORED_REPEAT,
    }
}

/// CL_SAMPLER_FILTER_MODE of a sampler.
pub fn filter_mode(s: Sampler) -> cl_filter_mode {
    if s.linear {
        CL_FILTER_LINEAR
    } else {
        CL_FILTER_NEAREST
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: u32) -> cl_sampler_properties {
        v as cl_sampler_properties
    }

    #[test]
    fn properties_default_and_are_checked() {
        let s = from_properties(&[]).unwrap();
        assert_eq!(s, Sampler { normalized: true, addressing: Addressing::Clamp, linear: false });
        let s = from_properties(&[
            p(CL_SAMPLER_FILTER_MODE),
            p(CL_FILTER_LINEAR),
            p(CL_SAMPLER_NORMALIZED_COORDS),
            p(CL_FALSE),
        ])
        .unwrap();
        assert_eq!(s, Sampler { normalized: false, addressing: Addressing::Clamp, linear: true });
        assert_eq!((addressing_mode(s), filter_mode(s)), (CL_ADDRESS_CLAMP, CL_FILTER_LINEAR));
        let twice = [p(CL_SAMPLER_FILTER_MODE), p(CL_FILTER_LINEAR), p(CL_SAMPLER_FILTER_MODE), p(CL_FILTER_NEAREST)];
        assert_eq!(from_properties(&twice), Err(CL_INVALID_VALUE));
        assert_eq!(from_properties(&[p(CL_SAMPLER_LOD_MIN), 0]), Err(CL_INVALID_VALUE), "no mipmaps");
        assert_eq!(from_properties(&[p(CL_SAMPLER_ADDRESSING_MODE), p(CL_FILTER_LINEAR)]), Err(CL_INVALID_VALUE));
        assert_eq!(from_properties(&[p(CL_SAMPLER_NORMALIZED_COORDS), 2]), Err(CL_INVALID_VALUE));
        assert_eq!(from_properties(&[p(CL_SAMPLER_FILTER_MODE)]), Err(CL_INVALID_VALUE), "a name without a value");
    }

    #[test]
    fn every_mode_round_trips_through_the_kernel_bits() {
        for a in
            [CL_ADDRESS_NONE, CL_ADDRESS_CLAMP_TO_EDGE, CL_ADDRESS_CLAMP, CL_ADDRESS_REPEAT, CL_ADDRESS_MIRRORED_REPEAT]
        {
            for f in [CL_FILTER_NEAREST, CL_FILTER_LINEAR] {
                for n in [CL_FALSE, CL_TRUE] {
                    let s = from_args(n, a, f).unwrap();
                    let back = Sampler::from_bits(s.bits()).unwrap();
                    assert_eq!((addressing_mode(back), filter_mode(back), back.normalized), (a, f, n == CL_TRUE));
                }
            }
        }
        assert_eq!(from_args(CL_TRUE, 0x1135, CL_FILTER_LINEAR), Err(CL_INVALID_VALUE));
        assert_eq!(from_args(CL_TRUE, CL_ADDRESS_CLAMP, 0x1142), Err(CL_INVALID_VALUE));
    }
}
