//! OpenCL C `printf` (OpenCL.std `printf`): each call appends one record to the launch's
//! printf buffer (`abi::PrintfBuffer`, reached through `ctx.printf`); the device formats the
//! records when the launch completes (`crate::printf`). Nothing is formatted here.
//!
//! The format must be a string literal in the constant address space (the OpenCL C rule: it is
//! resolvable at compile time), so the compiler knows which arguments are `%s` strings: their
//! bytes are copied into the record (a `%s` argument may point anywhere, even at a `__constant`
//! buffer argument, and need not outlive the launch). Other arguments are stored by value with
//! a tag (integer, float, pointer), their element size and lane count, so the formatter never
//! reads an argument at a size other than the one passed. Float arguments arrive promoted to
//! double by clang (Float64 in the module) whatever the device's fp64 support: the host does
//! the formatting, so that needs nothing from the device.

use super::llvm::{
    as_int, as_ptr, bail, ctx_offsets, gep, int_width, is_float_like, is_int_like, lanes, FnLower, Val, R,
};
use crate::ir::{self, ConstData, InstData};
use crate::kernel_info::AddressSpace;
use crate::printf::{self as pf, Piece};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, IntValue, PointerValue};
use inkwell::{AtomicOrdering, AtomicRMWBinOp, IntPredicate};

const OP_PRINTF: u32 = spirv::OpenclStd100Op::printf as u32;

/// Whether `func` contains a printf call.
pub fn calls_printf(func: &ir::Function) -> bool {
    func.insts.iter().any(|(_, i)| matches!(i, InstData::ExtInst { opcode, .. } if *opcode == OP_PRINTF))
}

/// How one argument goes into the record.
enum Plan<'ctx> {
    /// Stored by value: (kind, element bytes, lanes, value).
    Value(u8, u32, u32, Val<'ctx>),
    /// A `%s` string: its pointer (never null) and length in bytes (i64).
    Str(PointerValue<'ctx>, IntValue<'ctx>),
}

/// Lowers `printf(format, args...)`; returns the i32 result (0, or -1 when the record did not
/// fit or the launch has no printf buffer).
pub fn lower<'ctx>(
    fx: &mut FnLower<'_, 'ctx, '_>,
    args: &[Val<'ctx>],
    rt: Option<BasicTypeEnum<'ctx>>,
) -> R<Option<Val<'ctx>>> {
    let Some((&format, rest)) = args.split_first() else { bail!("printf without a format string") };
    let Some(fmt) = constant_string(fx, format) else {
        bail!("the format string must be a string literal (a constant-address-space string known at compile time)")
    };
    // Which arguments are strings: those a %s conversion consumes.
    let mut is_string = vec![false; rest.len()];
    let mut next = 0;
    for piece in pf::parse(&fmt) {
        if let Piece::Conv(spec) = piece {
            next += spec.args();
            if spec.conv == b's' && next >= 1 && next <= rest.len() {
                is_string[next - 1] = true;
            }
        }
    }

    let i8t = fx.cx().i8_type();
    let i32t = fx.i32();
    let i64t = fx.i64();
    let mut fixed = (pf::RECORD_HEADER + fmt.len()) as u64;
    let mut dynamic: Option<IntValue<'ctx>> = None;
    let mut plans = Vec::with_capacity(rest.len());
    for (n, &a) in rest.iter().enumerate() {
        let t = a.get_type();
        let plan = if is_int_like(t) {
            let bits = int_width(t);
            let a = if bits == 1 {
                if lanes(t) != 1 {
                    bail!("argument {} is a vector of bool", n + 1);
                }
                fx.b.build_int_z_extend(as_int(a)?, i8t, "")?.as_basic_value_enum()
            } else {
                a
            };
            let bits = bits.max(8);
            if !matches!(bits, 8 | 16 | 32 | 64) {
                bail!("argument {} is a {bits}-bit integer", n + 1);
            }
            Plan::Value(pf::ARG_INT, bits / 8, lanes(t), a)
        } else if is_float_like(t) {
            let bits = super::llvm::elem_type(t).into_float_type().get_bit_width();
            Plan::Value(pf::ARG_FLOAT, bits / 8, lanes(t), a)
        } else if t.is_pointer_type() && is_string[n] {
            let p = as_ptr(a)?;
            // A null %s prints as an empty string rather than crashing the launch.
            let empty = empty_string(fx);
            let is_null = fx.b.build_is_null(p, "")?;
            let p = fx.b.build_select(is_null, empty, p, "")?.into_pointer_value();
            let len = match constant_string(fx, a) {
                Some(s) => i64t.const_int(s.len() as u64, false),
                None => {
                    let strlen = fx.e.extern_fn("strlen", i64t.into(), &[fx.ptr_type().into()], false);
                    let call = fx.b.build_call(strlen, &[p.into()], "")?;
                    as_int(call.try_as_basic_value().basic().ok_or("strlen without a result")?)?
                }
            };
            // Clamp absurd lengths so the sum below cannot wrap; such a record never fits
            // and printf returns -1.
            let cap = i64t.const_int(1 << 40, false);
            let huge = fx.b.build_int_compare(IntPredicate::UGT, len, cap, "")?;
            let len = fx.b.build_select(huge, cap, len, "")?.into_int_value();
            Plan::Str(p, len)
        } else if t.is_pointer_type() {
            let v = fx.b.build_ptr_to_int(as_ptr(a)?, i64t, "")?;
            Plan::Value(pf::ARG_POINTER, 8, 1, v.into())
        } else {
            bail!("argument {} has type {t}, which printf cannot print", n + 1)
        };
        match &plan {
            Plan::Value(_, size, lanes, _) => fixed += (pf::ARG_HEADER as u64) + u64::from(size * lanes),
            Plan::Str(_, len) => {
                fixed += pf::ARG_HEADER as u64 + 4;
                dynamic = Some(match dynamic {
                    Some(d) => fx.b.build_int_add(d, *len, "")?,
                    None => *len,
                });
            }
        }
        plans.push(plan);
    }
    let total = match dynamic {
        Some(d) => fx.b.build_int_add(d, i64t.const_int(fixed, false), "")?,
        None => i64t.const_int(fixed, false),
    };

    // Reserve the record: ctx.printf -> { data, capacity, used }.
    let cx = fx.cx();
    let reserve = cx.append_basic_block(fx.llf, "printf.reserve");
    let claim = cx.append_basic_block(fx.llf, "printf.claim");
    let write = cx.append_basic_block(fx.llf, "printf.write");
    let fail = cx.append_basic_block(fx.llf, "printf.fail");
    let done = cx.append_basic_block(fx.llf, "printf.done");
    let ptr_t = fx.ptr_type();
    let field = |fx: &FnLower<'_, 'ctx, '_>, base: PointerValue<'ctx>, off: u64| -> R<PointerValue<'ctx>> {
        gep(&fx.b, i8t.into(), base, &[i64t.const_int(off, false)], true)
    };
    let slot = field(fx, fx.env.ctx, ctx_offsets::PRINTF)?;
    let buffer = as_ptr(fx.b.build_load(ptr_t, slot, "")?)?;
    let no_buffer = fx.b.build_is_null(buffer, "")?;
    fx.b.build_conditional_branch(no_buffer, fail, reserve)?;

    fx.b.position_at_end(reserve);
    let data = as_int(fx.b.build_load(i64t, field(fx, buffer, 0)?, "")?)?;
    let capacity = as_int(fx.b.build_load(i64t, field(fx, buffer, 8)?, "")?)?;
    // A record larger than the whole buffer fails without reserving, so `used` grows by at
    // most `capacity` per call and cannot wrap.
    let small = fx.b.build_int_compare(IntPredicate::ULE, total, capacity, "")?;
    fx.b.build_conditional_branch(small, claim, fail)?;

    fx.b.position_at_end(claim);
    let used = field(fx, buffer, 16)?;
    let old = fx.b.build_atomicrmw(AtomicRMWBinOp::Add, used, total, AtomicOrdering::Monotonic)?;
    let room = fx.b.build_int_sub(capacity, total, "")?;
    let fits = fx.b.build_int_compare(IntPredicate::ULE, old, room, "")?;
    fx.b.build_conditional_branch(fits, write, fail)?;

    fx.b.position_at_end(write);
    let start = fx.b.build_int_add(data, old, "")?;
    let base = fx.b.build_int_to_ptr(start, ptr_t, "")?;
    let at = |fx: &FnLower<'_, 'ctx, '_>, off: IntValue<'ctx>| gep(&fx.b, i8t.into(), base, &[off], true);
    let store = |fx: &FnLower<'_, 'ctx, '_>, off: IntValue<'ctx>, v: Val<'ctx>| -> R<()> {
        let s = fx.b.build_store(at(fx, off)?, v)?;
        let _ = s.set_alignment(1);
        Ok(())
    };
    let total32 = fx.b.build_int_truncate(total, i32t, "")?;
    store(fx, i64t.const_zero(), total32.into())?;
    store(fx, i64t.const_int(4, false), i32t.const_int(fmt.len() as u64, false).into())?;
    let fmt_dst = at(fx, i64t.const_int(pf::RECORD_HEADER as u64, false))?;
    fx.b.build_memcpy(fmt_dst, 1, as_ptr(format)?, 1, i64t.const_int(fmt.len() as u64, false))?;
    let mut off = i64t.const_int((pf::RECORD_HEADER + fmt.len()) as u64, false);
    let advance = |fx: &FnLower<'_, 'ctx, '_>, off: IntValue<'ctx>, by: IntValue<'ctx>| fx.b.build_int_add(off, by, "");
    for plan in &plans {
        let (kind, size, lanes) = match plan {
            Plan::Value(kind, size, lanes, _) => (*kind, *size, *lanes),
            Plan::Str(..) => (pf::ARG_STRING, 1, 1),
        };
        let header = u32::from_ne_bytes([kind, size as u8, lanes as u8, 0]);
        store(fx, off, i32t.const_int(u64::from(header), false).into())?;
        off = advance(fx, off, i64t.const_int(pf::ARG_HEADER as u64, false))?;
        match plan {
            Plan::Value(_, size, lanes, v) => {
                store(fx, off, *v)?;
                off = advance(fx, off, i64t.const_int(u64::from(size * lanes), false))?;
            }
            Plan::Str(p, len) => {
                store(fx, off, fx.b.build_int_truncate(*len, i32t, "")?.into())?;
                off = advance(fx, off, i64t.const_int(4, false))?;
                fx.b.build_memcpy(at(fx, off)?, 1, *p, 1, *len)?;
                off = advance(fx, off, *len)?;
            }
        }
    }
    fx.b.build_unconditional_branch(done)?;

    fx.b.position_at_end(fail);
    fx.b.build_unconditional_branch(done)?;

    fx.b.position_at_end(done);
    let result = fx.b.build_phi(i32t, "printf")?;
    let minus_one = i32t.const_all_ones();
    result.add_incoming(&[(&i32t.const_zero(), write), (&minus_one, fail)]);
    let r = result.as_basic_value();
    Ok(match rt {
        None => None,
        Some(t) if t == i32t.into() => Some(r),
        Some(t) if t.is_int_type() => {
            Some(fx.b.build_int_cast_sign_flag(r.into_int_value(), t.into_int_type(), true, "")?.into())
        }
        Some(t) => bail!("printf with a result of type {t}"),
    })
}

/// An empty NUL-terminated string, shared by the module.
fn empty_string<'ctx>(fx: &FnLower<'_, 'ctx, '_>) -> PointerValue<'ctx> {
    const NAME: &str = "softcl.printf.empty";
    if let Some(g) = fx.e.m.get_global(NAME) {
        return g.as_pointer_value();
    }
    let i8t = fx.cx().i8_type();
    let g = fx.e.m.add_global(i8t, None, NAME);
    g.set_initializer(&i8t.const_zero());
    g.set_constant(true);
    g.set_linkage(inkwell::module::Linkage::Internal);
    g.as_pointer_value()
}

/// The bytes (up to the first NUL) of the constant string `v` points at, when `v` is the
/// address of a `__constant` module variable initialised with 8-bit integers (a program-scope
/// `__global` string may change at run time, so it is read at run time instead).
fn constant_string<'ctx>(fx: &FnLower<'_, 'ctx, '_>, v: Val<'ctx>) -> Option<Vec<u8>> {
    if !v.is_pointer_value() {
        return None;
    }
    let p = v.into_pointer_value();
    let ir = fx.e.ir;
    let (_, data) = ir.globals.iter().find(|(g, _)| fx.e.global_ptr(*g) == Some(p))?;
    if data.space != AddressSpace::Constant {
        return None;
    }
    let init = ir.constants.get(data.init?)?;
    let parts: Vec<ir::Const> = match init {
        ConstData::Composite { parts, .. } => parts.clone(),
        ConstData::Null { .. } => return Some(Vec::new()),
        _ => return None,
    };
    let mut out = Vec::with_capacity(parts.len());
    for c in parts {
        match ir.constants.get(c)? {
            ConstData::Int { bits, ty } if *ir.types.get(*ty) == ir::TypeData::Int { bits: 8 } => {
                if *bits & 0xff == 0 {
                    break;
                }
                out.push(*bits as u8);
            }
            ConstData::Null { .. } => break,
            _ => return None,
        }
    }
    Some(out)
}
