//! Sampler entry points: creation, reference counts and queries. The sampler state and its
//! checks are the runtime's (`softcl_runtime::sampler`).

use crate::entry;
use crate::handles;
use crate::info::InfoOut;
use crate::ptr;
use softcl_runtime::cl::*;
use softcl_runtime::context::Context;
use softcl_runtime::handle::RefCount;
use softcl_runtime::sampler::{self, SamplerObject};
use std::ffi::c_void;
use std::sync::Arc;

pub extern "C" fn clCreateSampler(
    context: cl_context,
    normalized_coords: cl_bool,
    addressing_mode: cl_addressing_mode,
    filter_mode: cl_filter_mode,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    entry::object("clCreateSampler", errcode_ret, || {
        let ctx: Arc<Context> = handles::arc(context)?;
        // "CL_INVALID_VALUE if addressing_mode, filter_mode, normalized_coords or a
        // combination of these arguments are not valid."
        let s = sampler::from_args(normalized_coords, addressing_mode, filter_mode)?;
        Ok(handles::new_handle(SamplerObject::new(ctx, s, None)?))
    })
}

pub extern "C" fn clCreateSamplerWithProperties(
    context: cl_context,
    sampler_properties: *const cl_sampler_properties,
    errcode_ret: *mut cl_int,
) -> cl_sampler {
    entry::object("clCreateSamplerWithProperties", errcode_ret, || {
        let ctx: Arc<Context> = handles::arc(context)?;
        let props = if sampler_properties.is_null() { None } else { Some(ptr::property_list(sampler_properties)?) };
        // "CL_INVALID_VALUE if the property name in sampler_properties is not a supported
        // property name, if the value specified for a supported property name is not valid,
        // or if the same property name is specified more than once."
        let s = sampler::from_properties(props.as_deref().unwrap_or(&[]))?;
        Ok(handles::new_handle(SamplerObject::new(ctx, s, props)?))
    })
}

pub extern "C" fn clRetainSampler(sampler: cl_sampler) -> cl_int {
    entry::code("clRetainSampler", || handles::retain::<SamplerObject, _>(sampler))
}

pub extern "C" fn clReleaseSampler(sampler: cl_sampler) -> cl_int {
    entry::code("clReleaseSampler", || handles::release::<SamplerObject, _>(sampler))
}

pub extern "C" fn clGetSamplerInfo(
    sampler: cl_sampler,
    param_name: cl_sampler_info,
    param_value_size: usize,
    param_value: *mut c_void,
    param_value_size_ret: *mut usize,
) -> cl_int {
    entry::code("clGetSamplerInfo", || {
        let s: &SamplerObject = handles::borrow(sampler)?;
        let out = InfoOut::new(param_value_size, param_value, param_value_size_ret);
        match param_name {
            CL_SAMPLER_REFERENCE_COUNT => out.write(&s.header_ref_count()),
            CL_SAMPLER_CONTEXT => out.write(&handles::handle_of::<Context, c_void>(&s.context)),
            CL_SAMPLER_NORMALIZED_COORDS => out.write(&s.sampler.normalized),
            CL_SAMPLER_ADDRESSING_MODE => out.write(&sampler::addressing_mode(s.sampler)),
            CL_SAMPLER_FILTER_MODE => out.write(&sampler::filter_mode(s.sampler)),
            // "the values specified in the sampler_properties argument in the same order"
            // with the terminating 0, or nothing when created without a list.
            CL_SAMPLER_PROPERTIES => match &s.properties {
                Some(p) => out.write(&p.iter().copied().chain([0]).collect::<Vec<_>>()),
                None => out.bytes(&[]),
            },
            _ => Err(CL_INVALID_VALUE),
        }
    })
}
