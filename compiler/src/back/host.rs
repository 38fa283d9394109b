//! Functions of the running process that generated code calls (`mathlib`'s accurate math,
//! SLEEF's vector math): declared by *name* in the LLVM module and defined in the JIT as
//! absolute symbols when the object is loaded (`jit::Jit::load`). An object file therefore
//! holds no address of the process that compiled it, so that a cached object or a program
//! binary with native code can be loaded by another process (other ASLR bases).

use super::{imagelib, mathlib, vecmath};
use inkwell::module::Linkage;
use inkwell::types::FunctionType;
use inkwell::values::FunctionValue;

/// `mathlib`'s, `imagelib`'s and the Gen counting's functions by the names generated code
/// calls them by.
fn mathlib() -> [(&'static str, usize); 20] {
    [
        ("softcl_cbrt", mathlib::softcl_cbrt as *const () as usize),
        ("softcl_rootn", mathlib::softcl_rootn as *const () as usize),
        ("softcl_tanpi", mathlib::softcl_tanpi as *const () as usize),
        ("softcl_remquo_rem", mathlib::softcl_remquo_rem as *const () as usize),
        ("softcl_remquo_quo", mathlib::softcl_remquo_quo as *const () as usize),
        ("softcl_image_sample", imagelib::softcl_image_sample as *const () as usize),
        ("softcl_image_read", imagelib::softcl_image_read as *const () as usize),
        ("softcl_image_write", imagelib::softcl_image_write as *const () as usize),
        ("softcl_image_query", imagelib::softcl_image_query as *const () as usize),
        ("softcl_image_block_read", imagelib::softcl_image_block_read as *const () as usize),
        ("softcl_image_block_write", imagelib::softcl_image_block_write as *const () as usize),
        ("softcl_image_texel_address", imagelib::softcl_image_texel_address as *const () as usize),
        ("softcl_image_sample_lanes", imagelib::softcl_image_sample_lanes as *const () as usize),
        ("softcl_image_read_lanes", imagelib::softcl_image_read_lanes as *const () as usize),
        ("softcl_image_write_lanes", imagelib::softcl_image_write_lanes as *const () as usize),
        ("softcl_image_texel_addresses", imagelib::softcl_image_texel_addresses as *const () as usize),
        ("softcl_image_pixel_bytes", imagelib::softcl_image_pixel_bytes as *const () as usize),
        ("softcl_image_sampled_lines", imagelib::softcl_image_sampled_lines as *const () as usize),
        ("softcl_gen_hot_addresses", super::gen::hot::softcl_gen_hot_addresses as *const () as usize),
        (super::gen::helpers::SYMBOL, super::gen::helpers::softcl_gen_count as *const () as usize),
    ]
}

/// The address of host function `name` in this process: a `mathlib` function, or a SLEEF
/// function (`Sleef_...`) when libsleef is present. `None` for every other name (libm and
/// compiler-rt functions are found by the JIT's process symbol search).
pub fn address(name: &str) -> Option<usize> {
    if let Some((_, addr)) = mathlib().into_iter().find(|(n, _)| *n == name) {
        return Some(addr);
    }
    if name.starts_with("Sleef_") {
        return vecmath::lookup(name);
    }
    None
}

/// The declaration of host function `name` of type `ty` in `module` (added at the first call).
pub fn declare<'ctx>(
    module: &inkwell::module::Module<'ctx>,
    name: &str,
    ty: FunctionType<'ctx>,
) -> FunctionValue<'ctx> {
    module.get_function(name).unwrap_or_else(|| module.add_function(name, ty, Some(Linkage::External)))
}

/// The host functions an (optimised) module still calls, by name.
pub fn used_by(module: &inkwell::module::Module<'_>) -> Vec<String> {
    module
        .get_functions()
        .filter(|f| f.count_basic_blocks() == 0)
        .filter_map(|f| f.get_name().to_str().ok().map(str::to_string))
        .filter(|name| address(name).is_some())
        .collect()
}

/// `names` with their addresses in this process; `Err` names one that this process lacks
/// (libsleef missing where the object was compiled with it).
pub fn resolve(names: &[String]) -> Result<Vec<(String, usize)>, String> {
    names
        .iter()
        .map(|n| address(n).map(|a| (n.clone(), a)).ok_or_else(|| format!("the host function {n} is not available")))
        .collect()
}
