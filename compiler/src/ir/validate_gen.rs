//! The validator's checks of Gen instrumentation (`passes::gen_instrument`): `gen.block` and
//! `gen.count` appear only in the function of a kernel that has a plan (`KernelInfo::gen`), and
//! match it:
//! - every block of the plan has exactly one `gen.block`, the first instruction of its IR
//!   block;
//! - every site of the plan has exactly one `gen.count`, right before the access it counts
//!   (a load, store or atomic of the same pointer, or an image read or write of the same
//!   image, sampler and coordinate; for a sub-group block, the first part's load or store
//!   of an element of the block's base) of the site's kind, in the block the site names.
//!
//! A site without its `gen.count` would silently count nothing, so it is an error here.

use super::function::Function;
use super::instructions::{GenAccess, ImageOp, InstData};
use super::types::TypeData;
use super::validate::ValidationError;
use super::Module;
use crate::gen_abi::{AccessKind, GenKernelInfo};

/// Adds to `errors` every problem of the module's Gen instrumentation.
pub(super) fn check(module: &Module, errors: &mut Vec<ValidationError>) {
    for (func, f) in module.functions.iter() {
        let plan = module.kernels.iter().find(|k| k.func == func).and_then(|k| k.info.gen.as_ref());
        let mut problems = Vec::new();
        match plan {
            Some(plan) => check_function(module, f, plan, &mut problems),
            None => {
                let any = f
                    .layout
                    .blocks
                    .iter()
                    .flat_map(|&b| &f.layout.insts[b])
                    .any(|&i| f.insts.get(i).is_some_and(|d| d.is_instrumentation()));
                if any {
                    problems.push("Gen instrumentation in a function that is no instrumented kernel".to_string());
                }
            }
        }
        errors.extend(problems.into_iter().map(|message| ValidationError { function: f.name.clone(), message }));
    }
}

fn check_function(module: &Module, f: &Function, plan: &GenKernelInfo, problems: &mut Vec<String>) {
    let mut blocks_seen = vec![0u32; plan.blocks.len()];
    let mut sites_seen = vec![0u32; plan.sites.len()];
    let ty = |v| f.values.get(v).map(|d| d.ty).filter(|t| module.types.is_valid(*t)).map(|t| module.types.get(t));
    for &b in &f.layout.blocks {
        let insts = &f.layout.insts[b];
        let block_id = insts.first().and_then(|&i| match f.insts.get(i) {
            Some(InstData::GenBlock { id }) => Some(*id),
            _ => None,
        });
        for (pos, &i) in insts.iter().enumerate() {
            let Some(d) = f.insts.get(i) else { continue };
            match d {
                InstData::GenBlock { id } => {
                    match blocks_seen.get_mut(*id as usize) {
                        Some(n) => *n += 1,
                        None => problems.push(format!("{i}: gen.block {id} is not a block of the plan")),
                    }
                    if pos != 0 {
                        problems.push(format!("{i}: gen.block {id} is not the first instruction of {b}"));
                    }
                }
                InstData::GenCount { site, access } => {
                    let Some(s) = plan.sites.get(*site as usize) else {
                        problems.push(format!("{i}: gen.count {site} is not a site of the plan"));
                        continue;
                    };
                    sites_seen[*site as usize] += 1;
                    if block_id.is_some_and(|id| id != s.block) {
                        problems.push(format!("{i}: gen.count {site} of plan block {} is in another block", s.block));
                    }
                    // The access follows, after the other counts of the same access (a
                    // memory copy's load and store).
                    let next = insts[pos + 1..]
                        .iter()
                        .filter_map(|&n| f.insts.get(n))
                        .find(|d| !matches!(d, InstData::GenCount { .. }));
                    // A sub-group block's count is of the block's base, before its first part.
                    let same = |p: &super::Value, ptr: &super::Value, part: &Option<super::BlockPart>| {
                        if !s.sub_group_block {
                            return p == ptr;
                        }
                        let base = f.values.get(*p).and_then(|d| match d.def {
                            super::ValueDef::Result(def) => match f.insts.get(def) {
                                Some(InstData::AccessChain { base, .. }) => Some(*base),
                                _ => None,
                            },
                            _ => None,
                        });
                        part.is_some_and(|b| b.part == 0) && base == Some(*ptr)
                    };
                    let counted = match (access, next) {
                        (GenAccess::Memory { ptr }, Some(InstData::Load { ptr: p, block, .. })) => {
                            same(p, ptr, block) && s.kind == AccessKind::Load
                        }
                        (GenAccess::Memory { ptr }, Some(InstData::Store { ptr: p, block, .. })) => {
                            same(p, ptr, block) && s.kind == AccessKind::Store
                        }
                        (GenAccess::Memory { ptr }, Some(InstData::CopyMemory { src, dst, .. })) => {
                            (*src == *ptr && s.kind == AccessKind::Load)
                                || (*dst == *ptr && s.kind == AccessKind::Store)
                        }
                        // Atomic loads and stores too.
                        (GenAccess::Memory { ptr }, Some(InstData::Atomic { ptr: p, .. })) => {
                            *p == *ptr && s.kind == AccessKind::Atomic
                        }
                        (
                            GenAccess::Image { image, sampler, coord },
                            Some(InstData::Image { op, image: im, sampler: sm, coord: Some(c), .. }),
                        ) => {
                            let kind = match op {
                                ImageOp::Sample | ImageOp::Read => Some(AccessKind::Load),
                                ImageOp::Write => Some(AccessKind::Store),
                                _ => None,
                            };
                            im == image && sm == sampler && c == coord && kind == Some(s.kind) && s.is_image()
                        }
                        _ => false,
                    };
                    if !counted {
                        problems.push(format!("{i}: gen.count {site} is not followed by the access it counts"));
                    }
                    if let GenAccess::Memory { ptr } = access {
                        if !matches!(ty(*ptr), Some(TypeData::Pointer { .. })) {
                            problems.push(format!("{i}: gen.count {site} of a non-pointer"));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for (k, n) in blocks_seen.iter().enumerate().filter(|(_, n)| **n != 1) {
        problems.push(format!("block {k} of the Gen plan has {n} gen.block instructions (1 expected)"));
    }
    for (k, n) in sites_seen.iter().enumerate().filter(|(_, n)| **n != 1) {
        problems.push(format!("site {k} of the Gen plan has {n} gen.count instructions (1 expected)"));
    }
}
