//! The step of a Gen site's address per local id of each dimension, for the model's shape
//! advice (`GenSite::lane_strides`): `in[y * n + x]` of floats steps 4 bytes per x and
//! `4 n` per y, `n` a kernel argument the model reads at launch.
//!
//! A small symbolic evaluation of the address over the kernel's IR: each value is an affine
//! form in the three local ids (global ids step alike), its coefficients sums of
//! [`StrideTerm`]s (a constant times at most one value known at launch: a scalar argument, a
//! global or local size); the rest of the value must be the same for every work-item of a
//! work-group, which the work-item analyses along each dimension say
//! (`analyze_dimension`: uniform along all three). Anything else (a product of two ids, a
//! loaded index, a division) has no strides: the model then makes no shape suggestion.

use crate::gen_abi::{LaunchValue, StrideTerm};
use crate::ir::{self, BinaryOp, ConvertOp, InstData, TypeData, Value, ValueDef, WorkItemQuery};
use crate::vectorize::analysis::{const_int, Shape, WorkItemAnalysis};
use std::collections::HashMap;

/// A sum of terms.
type Sum = Vec<StrideTerm>;

/// A value as `base + sum over d of coef[d] x local_id[d]`, `base` the same in a
/// work-group; `value`: the whole value as a sum of terms when it is uniform and known.
#[derive(Debug, Clone, Default)]
struct Affine {
    coef: [Sum; 3],
    value: Option<Sum>,
}

impl Affine {
    fn uniform(value: Option<Sum>) -> Self {
        Affine { coef: Default::default(), value }
    }
    fn is_uniform(&self) -> bool {
        self.coef.iter().all(Vec::is_empty)
    }
}

/// Adds `b` times `k` to `a`, merging terms of one launch value.
fn add(a: &Sum, b: &Sum, k: i64) -> Sum {
    let mut out = a.clone();
    for &(c, v) in b {
        match out.iter_mut().find(|t| t.1 == v) {
            Some(t) => t.0 = t.0.wrapping_add(c.wrapping_mul(k)),
            None => out.push((c.wrapping_mul(k), v)),
        }
    }
    out.retain(|t| t.0 != 0);
    out
}

/// The product of two sums, if no term has two launch values.
fn mul(a: &Sum, b: &Sum) -> Option<Sum> {
    let mut out = Sum::new();
    for &(c, v) in a {
        for &(d, w) in b {
            let lv = match (v, w) {
                (x, None) | (None, x) => x,
                _ => return None,
            };
            out = add(&out, &vec![(c.wrapping_mul(d), lv)], 1);
        }
    }
    Some(out)
}

/// The strides of `ptr` in bytes per local id of each dimension (terms to evaluate at
/// launch), or `None`. `dims`: the work-item analyses along dimensions 0, 1 and 2.
pub fn lane_strides(
    m: &ir::Module,
    f: &ir::Function,
    dims: &[WorkItemAnalysis; 3],
    ptr: Value,
) -> Option<[Vec<StrideTerm>; 3]> {
    let mut memo = HashMap::new();
    eval(&Ctx { m, f, dims }, ptr, 0, &mut memo).map(|a| a.coef)
}

struct Ctx<'a> {
    m: &'a ir::Module,
    f: &'a ir::Function,
    dims: &'a [WorkItemAnalysis; 3],
}

impl Ctx<'_> {
    /// Uniform in the work-group: uniform along every dimension.
    fn uniform(&self, v: Value) -> bool {
        self.dims.iter().all(|wa| wa.shape(self.f, v) == Shape::Uniform)
    }
    fn size_of(&self, t: ir::Type) -> i64 {
        self.m.types.size_of(t) as i64
    }
}

fn eval(cx: &Ctx<'_>, v: Value, depth: u32, memo: &mut HashMap<Value, Option<Affine>>) -> Option<Affine> {
    if let Some(a) = memo.get(&v) {
        return a.clone();
    }
    let a = if depth > 48 { None } else { eval_uncached(cx, v, depth, memo) };
    memo.insert(v, a.clone());
    a
}

fn eval_uncached(cx: &Ctx<'_>, v: Value, depth: u32, memo: &mut HashMap<Value, Option<Affine>>) -> Option<Affine> {
    let (m, f) = (cx.m, cx.f);
    let entry = f.layout.blocks.first().copied();
    let is_int = |v: Value| matches!(m.types.get(f.value_type(v)), TypeData::Int { .. });
    let mut sub = |x: Value| eval(cx, x, depth + 1, memo);
    let fallback = || cx.uniform(v).then(|| Affine::uniform(None));
    match f.values.get(v)?.def {
        ValueDef::Const(_) => Some(Affine::uniform(const_int(m, f, v).map(|c| vec![(c, None)]))),
        ValueDef::Global(_) => Some(Affine::uniform(None)),
        ValueDef::Param(b, k) if Some(b) == entry => {
            Some(Affine::uniform(is_int(v).then(|| vec![(1, Some(LaunchValue::Arg(k)))])))
        }
        // A block parameter every branch passes the same value (the inlined body's
        // parameters: the kernel's arguments passed on) is that value.
        ValueDef::Param(b, k) => match single_incoming(f, b, k as usize) {
            Some(x) if x != v => sub(x),
            _ => fallback(),
        },
        ValueDef::Result(i) => match &f.insts[i] {
            InstData::ExtractElement { vector, index } => {
                let query = match f.values.get(*vector).map(|x| x.def) {
                    Some(ValueDef::Result(w)) => match f.insts[w] {
                        InstData::WorkItem { query } => Some(query),
                        _ => None,
                    },
                    _ => None,
                };
                let Some(query) = query else { return fallback() };
                let d = const_int(m, f, *index).filter(|d| (0..3).contains(d))? as usize;
                match query {
                    WorkItemQuery::GlobalId | WorkItemQuery::LocalId => {
                        let mut a = Affine::default();
                        a.coef[d] = vec![(1, None)];
                        Some(a)
                    }
                    WorkItemQuery::GlobalSize => {
                        Some(Affine::uniform(Some(vec![(1, Some(LaunchValue::GlobalSize(d as u8)))])))
                    }
                    WorkItemQuery::LocalSize | WorkItemQuery::EnqueuedLocalSize => {
                        Some(Affine::uniform(Some(vec![(1, Some(LaunchValue::LocalSize(d as u8)))])))
                    }
                    _ => fallback(),
                }
            }
            InstData::Binary { op: op @ (BinaryOp::IAdd | BinaryOp::ISub), lhs, rhs } if is_int(v) => {
                let (a, b) = (sub(*lhs)?, sub(*rhs)?);
                let k = if *op == BinaryOp::IAdd { 1 } else { -1 };
                Some(Affine {
                    coef: std::array::from_fn(|d| add(&a.coef[d], &b.coef[d], k)),
                    value: a.value.zip(b.value).map(|(x, y)| add(&x, &y, k)),
                })
            }
            InstData::Binary { op: BinaryOp::IMul, lhs, rhs } if is_int(v) => {
                let (a, b) = (sub(*lhs)?, sub(*rhs)?);
                let (var, by) = match (a.is_uniform(), b.is_uniform()) {
                    (true, true) => return Some(Affine::uniform(a.value.zip(b.value).and_then(|(x, y)| mul(&x, &y)))),
                    (false, true) => (a, b.value?),
                    (true, false) => (b, a.value?),
                    (false, false) => return None,
                };
                let coef = [mul(&var.coef[0], &by)?, mul(&var.coef[1], &by)?, mul(&var.coef[2], &by)?];
                Some(Affine { coef, value: None })
            }
            InstData::Binary { op: BinaryOp::Shl, lhs, rhs } if is_int(v) => {
                let c = const_int(m, f, *rhs).filter(|c| (0..32).contains(c))?;
                let a = sub(*lhs)?;
                let by = vec![(1i64 << c, None)];
                Some(Affine {
                    coef: [mul(&a.coef[0], &by)?, mul(&a.coef[1], &by)?, mul(&a.coef[2], &by)?],
                    value: a.value.and_then(|x| mul(&x, &by)),
                })
            }
            InstData::Convert {
                op:
                    ConvertOp::UConvert
                    | ConvertOp::SConvert
                    | ConvertOp::PtrCast
                    | ConvertOp::PtrToInt
                    | ConvertOp::IntToPtr
                    | ConvertOp::Bitcast,
                arg,
                ..
            } => {
                let a = sub(*arg)?;
                // A bitcast of a non-integer, non-pointer value is not its number.
                let keep = is_int(*arg) || matches!(m.types.get(f.value_type(*arg)), TypeData::Pointer { .. });
                keep.then_some(a).or_else(fallback)
            }
            InstData::AccessChain { base, element, indices, .. } => {
                let mut a = sub(*base)?;
                a.value = None;
                let mut ty = match m.types.get(f.value_type(*base)) {
                    TypeData::Pointer { pointee, .. } => *pointee,
                    _ => return None,
                };
                let step = |a: &mut Affine, ix: Value, size: i64, sub: &mut dyn FnMut(Value) -> Option<Affine>| {
                    let x = sub(ix)?;
                    for d in 0..3 {
                        a.coef[d] = add(&a.coef[d], &x.coef[d], size);
                    }
                    Some(())
                };
                if let Some(e) = element {
                    step(&mut a, *e, cx.size_of(ty), &mut sub)?;
                }
                for &ix in indices {
                    match m.types.get(ty).clone() {
                        TypeData::Struct { fields, .. } => {
                            let k = const_int(m, f, ix)?;
                            ty = *fields.get(k as usize)?;
                        }
                        TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                            step(&mut a, ix, cx.size_of(elem), &mut sub)?;
                            ty = elem;
                        }
                        _ => return None,
                    }
                }
                Some(a)
            }
            _ => fallback(),
        },
    }
}

/// The one value every branch to block `b` passes as its parameter `k`, if they agree.
fn single_incoming(f: &ir::Function, b: ir::Block, k: usize) -> Option<Value> {
    let mut found = None;
    for &pb in &f.layout.blocks {
        let Some(t) = f.layout.last_inst(pb) else { continue };
        for call in f.insts[t].successors().into_iter().filter(|c| c.block == b) {
            let a = *call.args.get(k)?;
            if found.is_some_and(|x| x != a) {
                return None;
            }
            found = Some(a);
        }
    }
    found
}
