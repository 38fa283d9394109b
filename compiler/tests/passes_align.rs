//! `passes::align`: every load, store and copy gets the alignment its address is
//! guaranteed - exactly what the placement of a variable and the offsets give, or at most
//! its claim where a source of the address is not placed by SoftCL.

mod common;

use common::*;
use softcl_compiler::ir::{self, ConvertOp, FuncKind, GlobalVarData, InstData, Module, TypeData, Value};
use softcl_compiler::passes::align;
use softcl_compiler::AddressSpace as S;

/// The alignment of every load, store and copy of the module's first function after the
/// pass, in program order.
fn aligns_after(mut m: Module) -> Vec<u32> {
    align::run_module(&mut m);
    let f = m.functions.iter().next().expect("a function").1;
    f.layout
        .blocks
        .iter()
        .flat_map(|&b| f.layout.insts[b].iter())
        .filter_map(|&i| match &f.insts[i] {
            InstData::Load { align, .. } | InstData::Store { align, .. } | InstData::CopyMemory { align, .. } => {
                Some(*align)
            }
            _ => None,
        })
        .collect()
}

fn load_claiming(fb: &mut Fb<'_>, ptr: Value, align: u32) -> Value {
    let TypeData::Pointer { pointee, .. } = fb.m.types.get(fb.f.value_type(ptr)).clone() else {
        panic!("not a pointer")
    };
    fb.inst(InstData::Load { ptr, align, volatile: false, block: None }, pointee)
}

fn store_claiming(fb: &mut Fb<'_>, ptr: Value, value: Value, align: u32) {
    fb.effect(InstData::Store { ptr, value, align, volatile: false, block: None });
}

fn variable(fb: &mut Fb<'_>, ty: ir::Type) -> Value {
    declared_variable(fb, ty, 0)
}

/// A private variable whose producer declared alignment `align`.
fn declared_variable(fb: &mut Fb<'_>, ty: ir::Type, align: u32) -> Value {
    let pt = fb.ptr(S::Private, ty);
    fb.inst(InstData::Variable { ty, init: None, align }, pt)
}

fn member(fb: &mut Fb<'_>, base: Value, index: u64) -> Value {
    let TypeData::Pointer { space, pointee } = fb.m.types.get(fb.f.value_type(base)).clone() else { panic!() };
    let TypeData::Struct { fields, .. } = fb.m.types.get(pointee).clone() else { panic!("not a struct") };
    let i32t = fb.int(32);
    let ix = fb.cint(i32t, index);
    let pt = fb.ptr(space, fields[index as usize]);
    fb.inst(InstData::AccessChain { base, element: None, indices: vec![ix], in_bounds: true }, pt)
}

/// A member split out of an over-aligned struct keeps the struct's claim (128) on a variable
/// of its own, aligned to its type: the claim drops to what the variable has; a member of a
/// struct variable gets the struct's alignment at its offset, larger or smaller than claimed.
#[test]
fn accesses_of_variables_get_the_alignment_of_their_placement() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let i64t = m.types.int(64);
    let f32t = m.types.float(32);
    let void = m.types.void();
    let (mut fb, _) = Fb::new(&mut m, "k", FuncKind::Function, &[], void);
    let v16 = fb.vec(i64t, 16);
    let f4 = fb.vec(f32t, 4);
    let s = fb.ty(TypeData::Struct { fields: vec![i32t, v16, i32t, i32t], packed: false });
    let small = fb.ty(TypeData::Struct { fields: vec![i32t, i32t, f4], packed: false });
    let one = variable(&mut fb, i32t);
    let big = variable(&mut fb, s);
    let sm = variable(&mut fb, small);
    let x = fb.cint(i32t, 7);
    store_claiming(&mut fb, one, x, 128); // the split-out member: 4
    let _ = load_claiming(&mut fb, one, 128); // 4
    let a = member(&mut fb, big, 0);
    store_claiming(&mut fb, a, x, 128); // offset 0 of a 128-aligned struct: 128
    let c = member(&mut fb, big, 2);
    store_claiming(&mut fb, c, x, 4); // offset 256: 128 (more than claimed, still true)
    let d = member(&mut fb, big, 3);
    let _ = load_claiming(&mut fb, d, 128); // offset 260: 4
    let e = member(&mut fb, sm, 1);
    let _ = load_claiming(&mut fb, e, 16); // offset 4 of a 16-aligned struct: 4
    let g = member(&mut fb, sm, 2);
    let _ = load_claiming(&mut fb, g, 4); // the float4 at offset 16: 16
    fb.ret(None);
    fb.finish();
    assert_eq!(aligns_after(m), vec![4, 4, 128, 128, 4, 4, 16]);
}

/// A private variable keeps the alignment its producer declared: clang gives an array of
/// 20-byte structs alignment 16 and loads its first 16 bytes as one `<4 x i32>`; the access
/// keeps 16 because the variable is placed so, and each lane copy of vector code is too.
#[test]
fn a_variable_keeps_its_declared_alignment() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let void = m.types.void();
    let (mut fb, _) = Fb::new(&mut m, "k", FuncKind::Function, &[], void);
    let s = fb.ty(TypeData::Struct { fields: vec![i32t; 5], packed: false });
    let two = fb.ty(TypeData::Array { elem: s, len: 2 });
    let v4 = fb.vec(i32t, 4);
    let arr = declared_variable(&mut fb, two, 16);
    let plain = variable(&mut fb, two);
    let as_v4 = fb.ptr(S::Private, v4);
    let p = fb.inst(InstData::Convert { op: ConvertOp::PtrCast, arg: arr, saturate: false, rounding: None }, as_v4);
    let _ = load_claiming(&mut fb, p, 16); // declared 16: 16
    let q = fb.inst(InstData::Convert { op: ConvertOp::PtrCast, arg: plain, saturate: false, rounding: None }, as_v4);
    let _ = load_claiming(&mut fb, q, 16); // none declared: the struct's 4
    fb.ret(None);
    fb.finish();
    assert_eq!(align::variable_align(&m.types, two, 16), 16);
    assert_eq!(align::lane_copy_stride(&m.types, two, 16), 48, "40 bytes, each copy 16-aligned");
    assert_eq!(align::lane_copy_stride(&m.types, two, 0), 40);
    assert_eq!(aligns_after(m), vec![16, 4]);
}

/// Variable indices step by their stride; loops (block arguments) and selects take the
/// minimum of their sources.
#[test]
fn indices_loops_and_selects() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let i64t = m.types.int(64);
    let f32t = m.types.float(32);
    let void = m.types.void();
    let f4 = m.types.vector(f32t, 4);
    let arr = m.types.intern(TypeData::Array { elem: f4, len: 8 });
    let bt = m.types.bool();
    let (mut fb, p) = Fb::new(&mut m, "k", FuncKind::Function, &[i64t, bt], void);
    let (i, cond) = (p[0], p[1]);
    let a = variable(&mut fb, arr);
    let row = fb.elem(a, i); // &a[i]: stride 16
    let _ = load_claiming(&mut fb, row, 16); // 16
    let comp = fb.elem(row, i); // &a[i][i]: stride 4
    let _ = load_claiming(&mut fb, comp, 16); // 4
                                              // for (q = &a[0][0]; ...; q++) *q: the loop's pointer steps by 4.
    let zero = fb.cint(i32t, 0);
    let first = fb.elem(row, zero);
    let pf = fb.f.value_type(first);
    let (body, params) = fb.block(&[pf]);
    let (exit, _) = fb.block(&[]);
    fb.jump(body, vec![first]);
    fb.switch_to(body);
    let q = params[0];
    let _ = load_claiming(&mut fb, q, 16); // 4
    let one = fb.cint(i64t, 1);
    let next = fb.index(q, one);
    fb.branch(cond, body, vec![next], exit, vec![]);
    fb.switch_to(exit);
    // A select of two rows: 16; of a row and a component: 4.
    let two = fb.cint(i64t, 2);
    let row2 = fb.elem(a, two);
    let pr = fb.f.value_type(row);
    let sel = fb.inst(InstData::Select { cond, if_true: row, if_false: row2 }, pr);
    let _ = load_claiming(&mut fb, sel, 4); // 16
    let pc = fb.f.value_type(comp);
    let first2 = fb.elem(row2, zero);
    let sel2 = fb.inst(InstData::Select { cond, if_true: comp, if_false: first2 }, pc);
    let _ = load_claiming(&mut fb, sel2, 16); // 4
    fb.ret(None);
    fb.finish();
    assert_eq!(aligns_after(m), vec![16, 4, 4, 16, 4]);
}

/// An address with a source SoftCL does not place (a parameter, a loaded pointer) keeps at
/// most its claim (none: the type's natural alignment; not a power of two: its lowest set
/// bit), also where another source is a variable; a cast keeps the bound.
#[test]
fn foreign_addresses_keep_at_most_their_claim() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let f32t = m.types.float(32);
    let void = m.types.void();
    let f4 = m.types.vector(f32t, 4);
    let pg = m.types.pointer(S::Global, f4);
    let pp = m.types.pointer(S::Private, f4);
    let bt = m.types.bool();
    let (mut fb, p) = Fb::new(&mut m, "k", FuncKind::Function, &[pg, pp, bt], void);
    let _ = load_claiming(&mut fb, p[0], 64); // 64: the application's word
    let _ = load_claiming(&mut fb, p[0], 0); // 16: natural
    let _ = load_claiming(&mut fb, p[0], 12); // 4
    let v = variable(&mut fb, i32t);
    let pv = fb.ptr(S::Private, f4);
    let cast = fb.inst(InstData::Convert { op: ConvertOp::Bitcast, arg: v, saturate: false, rounding: None }, pv);
    let _ = load_claiming(&mut fb, cast, 16); // 4: the variable's
    let sel = fb.inst(InstData::Select { cond: p[2], if_true: p[1], if_false: cast }, pv);
    let _ = load_claiming(&mut fb, sel, 16); // 4
    let v4 = variable(&mut fb, f4);
    let sel = fb.inst(InstData::Select { cond: p[2], if_true: p[1], if_false: v4 }, pv);
    let _ = load_claiming(&mut fb, sel, 8); // 8: the claim, below the variable's 16
    fb.ret(None);
    fb.finish();
    assert_eq!(aligns_after(m), vec![64, 16, 4, 4, 4, 8]);
}

/// A copy takes the smaller of its two ends; module-scope variables are placed at their
/// alignment (at most 128).
#[test]
fn copies_and_module_scope_variables() {
    let mut m = Module::new();
    let i32t = m.types.int(32);
    let i64t = m.types.int(64);
    let i8t = m.types.int(8);
    let void = m.types.void();
    let arr = m.types.intern(TypeData::Array { elem: i32t, len: 5 });
    let data = m.globals.push(GlobalVarData {
        name: "constinit".into(),
        ty: arr,
        space: S::Private,
        init: None,
        builtin: None,
        align: 16,
    });
    let wide = m.globals.push(GlobalVarData {
        name: "wide".into(),
        ty: arr,
        space: S::Constant,
        init: None,
        builtin: None,
        align: 4096,
    });
    let (mut fb, _) = Fb::new(&mut m, "k", FuncKind::Function, &[], void);
    let g = fb.global(data);
    let w = fb.global(wide);
    let one = variable(&mut fb, i32t);
    let dst = variable(&mut fb, arr);
    let size = fb.cint(i64t, 20);
    let pb = fb.ptr(S::Private, i8t);
    let bytes = fb.inst(InstData::Convert { op: ConvertOp::Bitcast, arg: dst, saturate: false, rounding: None }, pb);
    fb.effect(InstData::CopyMemory { dst: bytes, src: g, size, align: 64 }); // 4: dst
    let pa = fb.ptr(S::Private, arr);
    let v4t = fb.vec(i64t, 4);
    let big = variable(&mut fb, v4t);
    let big = fb.inst(InstData::Convert { op: ConvertOp::Bitcast, arg: big, saturate: false, rounding: None }, pa);
    fb.effect(InstData::CopyMemory { dst: big, src: g, size, align: 1 }); // 16: both ends
    let _ = load_claiming(&mut fb, w, 4); // 128
    let _ = load_claiming(&mut fb, one, 1); // 4
    fb.ret(None);
    fb.finish();
    assert_eq!(aligns_after(m), vec![4, 16, 128, 4]);
}
