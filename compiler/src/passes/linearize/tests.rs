//! The pass on kernels from OpenCL C: IR in, printed IR out, masks visible.

use super::run;
use crate::ir::{BlockData, Func, Function, InstData, Module, Value};
use crate::vectorize::analysis::{analyze, Shape};

/// The module of `src` with its first kernel's function, as the vector build's middle end
/// leaves it (every call inlined, short-circuit chains folded).
fn kernel(src: &str) -> (Module, Func) {
    let mut m = crate::compile_source(src, "", &crate::Target::default()).expect("the test kernel builds").module;
    crate::vectorize::inline_kernel_calls(&mut m, 256).expect("inlining");
    crate::passes::short_circuit::fold_kernels(&mut m);
    let func = m.kernels[0].func;
    (m, func)
}

/// Runs the pass as the back end does (validated after it); returns whether it changed
/// the function and the function printed.
fn linearize(m: &mut Module, func: Func) -> (bool, String) {
    let wa = analyze(m, &m.functions[func]);
    let mut changed = false;
    crate::passes::run_pass(m, "linearize", |m| {
        changed = run(m, func, &wa)?;
        Ok(())
    })
    .expect("the pass leaves valid IR");
    (changed, m.display_function(func).to_string())
}

fn stores(f: &Function) -> Vec<crate::ir::Inst> {
    f.layout
        .blocks
        .iter()
        .flat_map(|&b| f.layout.insts[b].iter().copied())
        .filter(|&i| matches!(f.insts[i], InstData::Store { .. }))
        .collect()
}

/// The blocks that branches on `any_active` lead to when it holds (a loop's header, from its
/// latch or its entry).
fn any_active_branches(f: &Function) -> Vec<crate::ir::Block> {
    f.layout
        .blocks
        .iter()
        .filter_map(|&b| f.terminator(b))
        .filter_map(|t| match &f.insts[t] {
            InstData::Branch { cond, then_dest, .. } => match f.values[*cond].def {
                crate::ir::ValueDef::Result(d) if matches!(f.insts[d], InstData::AnyActive { .. }) => {
                    Some(then_dest.block)
                }
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn divergent_branches(m: &Module, func: Func) -> usize {
    analyze(m, &m.functions[func]).divergent_branches.len()
}

#[test]
fn a_store_under_a_divergent_branch_keeps_its_mask() {
    let src = "__kernel void k(__global int *p, __global const int *c) {\n\
               size_t i = get_global_id(0);\n\
               if (c[i] > 0) p[i] = (int)i * 2;\n\
               }";
    let (mut m, func) = kernel(src);
    assert_eq!(divergent_branches(&m, func), 1);
    let (changed, text) = linearize(&mut m, func);
    assert!(changed, "{text}");
    let f = &m.functions[func];
    assert_eq!(divergent_branches(&m, func), 0, "the divergent branch is gone:\n{text}");
    let st = stores(f);
    assert_eq!(st.len(), 1, "{text}");
    let b = f.layout.inst_block[st[0]].expect("placed");
    let mask = f.blocks[b].mask.unwrap_or_else(|| panic!("the store's block {b} lost its mask:\n{text}"));
    assert!(text.contains(&format!("{b} mask({mask}):")), "the printer shows the mask:\n{text}");
    // The mask is the branch's condition, a per-work-item value.
    let wa = analyze(&m, f);
    assert_eq!(wa.shape(f, mask), Shape::Varying);
    assert!(wa.divergent_blocks.contains(&b), "the analysis treats the masked block as divergent");
}

#[test]
fn joins_become_selects_and_uniform_values_stay_uniform() {
    let src = "__kernel void k(__global float *p, __global const float *c, float a, float b) {\n\
               size_t i = get_global_id(0);\n\
               float x;\n\
               if (c[i] > 0.5f) { x = a * 2.0f; p[i + 1] = x; } else { x = b + 1.0f; p[i] = x; }\n\
               p[i] += x;\n\
               }";
    let (mut m, func) = kernel(src);
    assert_eq!(divergent_branches(&m, func), 1);
    let (changed, text) = linearize(&mut m, func);
    assert!(changed, "{text}");
    let f = &m.functions[func];
    // Both arms' stores are masked, by different masks; the store after the join is not.
    let st = stores(f);
    assert_eq!(st.len(), 3, "{text}");
    let masks: Vec<Option<Value>> = st.iter().map(|&i| f.blocks[f.layout.inst_block[i].unwrap()].mask).collect();
    assert!(masks[0].is_some() && masks[1].is_some() && masks[0] != masks[1], "{text}");
    assert_eq!(masks[2], None, "{text}");
    assert!(text.contains("select"), "the join is a select:\n{text}");
    // No block but the entry has parameters left in the linearized region.
    let wa = analyze(&m, f);
    for &b in &f.layout.blocks {
        let BlockData { params, mask } = &f.blocks[b];
        if mask.is_some() {
            assert!(params.is_empty(), "{text}");
        }
    }
    // `a * 2.0f` is computed under the then mask but stays one scalar value.
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            if let (InstData::Binary { op: crate::ir::BinaryOp::FMul, .. }, Some(r)) = (&f.insts[i], f.inst_result[i]) {
                assert_eq!(wa.shape(f, r), Shape::Uniform, "{text}");
            }
        }
    }
}

#[test]
fn switches_and_early_returns_are_linearized() {
    let src = "__kernel void k(__global int *p, __global const int *c) {\n\
               size_t i = get_global_id(0);\n\
               if (c[i] < 0) return;\n\
               switch (c[i] & 3) { case 0: p[i] = 7; break; case 1: p[i] = 9; break; case 2: p[i + 1] = 1; break; default: break; }\n\
               }";
    let (mut m, func) = kernel(src);
    assert!(divergent_branches(&m, func) >= 1);
    let (changed, text) = linearize(&mut m, func);
    assert!(changed, "{text}");
    let f = &m.functions[func];
    assert_eq!(divergent_branches(&m, func), 0, "{text}");
    // The stores to the buffer (not those to the private variables of unoptimised code).
    let mut global = 0;
    for s in stores(f) {
        let InstData::Store { ptr, .. } = &f.insts[s] else { continue };
        let crate::ir::ValueDef::Result(d) = f.values[*ptr].def else { continue };
        if !matches!(f.insts[d], InstData::AccessChain { .. }) {
            continue;
        }
        global += 1;
        let b = f.layout.inst_block[s].unwrap();
        assert!(f.blocks[b].mask.is_some(), "store in unmasked {b}:\n{text}");
    }
    assert_eq!(global, 3, "{text}");
}

#[test]
fn a_loop_with_a_divergent_exit_runs_while_any_lane_goes_on() {
    let src = "__kernel void k(__global int *p, __global const int *c) {\n\
               size_t i = get_global_id(0);\n\
               int n = 0;\n\
               while (n < c[i]) { n += c[n] + 1; }\n\
               p[i] = n;\n\
               }";
    let (mut m, func) = kernel(src);
    assert!(divergent_branches(&m, func) >= 1);
    let (changed, text) = linearize(&mut m, func);
    assert!(changed, "{text}");
    let f = &m.functions[func];
    assert_eq!(divergent_branches(&m, func), 0, "every branch left is uniform:\n{text}");
    // The back edge is taken on `any_active` of the continuing lanes' mask.
    let latch = *any_active_branches(f).first().unwrap_or_else(|| panic!("no branch on any_active:\n{text}"));
    // The header's mask is its own parameter, the loop mask.
    let mask = f.blocks[latch].mask.unwrap_or_else(|| panic!("the header {latch} has no mask:\n{text}"));
    assert!(f.blocks[latch].params.contains(&mask), "{text}");
    // The store after the loop stores `n` as each lane left it: a value the latch keeps
    // under the mask of the lanes that left.
    let st = stores(f);
    let InstData::Store { value, .. } = &f.insts[*st.last().unwrap()] else { unreachable!() };
    let wa = analyze(&m, f);
    assert_eq!(wa.shape(f, *value), Shape::Varying, "{text}");
}

#[test]
fn a_divergent_branch_inside_a_uniform_loop_is_linearized() {
    let src = "__kernel void k(__global int *p, __global const int *c, int n) {\n\
               size_t i = get_global_id(0);\n\
               for (int k = 0; k < n; k++) { if (c[i * n + k] > k) p[i * n + k] = k; }\n\
               }";
    let (mut m, func) = kernel(src);
    assert_eq!(divergent_branches(&m, func), 1);
    let (changed, text) = linearize(&mut m, func);
    assert!(changed, "{text}");
    let f = &m.functions[func];
    let st = stores(f);
    assert_eq!(st.len(), 1);
    assert!(f.blocks[f.layout.inst_block[st[0]].unwrap()].mask.is_some(), "{text}");
    // The loop's own branch stays a (uniform) branch.
    let branches = f
        .layout
        .blocks
        .iter()
        .filter(|&&b| matches!(f.terminator(b).map(|t| &f.insts[t]), Some(InstData::Branch { .. })))
        .count();
    assert!(branches >= 1, "{text}");
    assert_eq!(divergent_branches(&m, func), 0, "{text}");
}

#[test]
fn the_validator_checks_masks() {
    let src = "__kernel void k(__global int *p, __global const int *c) {\n\
               size_t i = get_global_id(0);\n\
               if (c[i] > 0) p[i] = 1;\n\
               }";
    let (mut m, func) = kernel(src);
    let (changed, _) = linearize(&mut m, func);
    assert!(changed);
    let errors = |m: &Module| -> String {
        crate::ir::validate::validate(m)
            .err()
            .map(|e| e.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    };
    let f = &m.functions[func];
    let masked = f.layout.blocks.iter().copied().find(|&b| f.blocks[b].mask.is_some()).expect("a masked block");
    let entry = f.layout.entry().unwrap();
    // A mask on the entry block.
    let mut bad = m.clone();
    bad.functions[func].blocks[entry].mask = bad.functions[func].blocks[masked].mask;
    assert!(errors(&bad).contains("has a mask"), "{}", errors(&bad));
    // A mask that is not a bool: the kernel's first parameter.
    let mut bad = m.clone();
    let p0 = bad.functions[func].blocks[entry].params[0];
    bad.functions[func].blocks[masked].mask = Some(p0);
    assert!(errors(&bad).contains("is not a bool"), "{}", errors(&bad));
    // A mask defined in the block itself.
    let mut bad = m.clone();
    let own = bad.functions[func].layout.insts[masked]
        .iter()
        .find_map(|&i| bad.functions[func].inst_result[i])
        .expect("a value in the masked block");
    bad.functions[func].blocks[masked].mask = Some(own);
    assert!(errors(&bad).contains("does not dominate the block"), "{}", errors(&bad));
    // A mask naming a parameter its block no longer declares (a join a pass replaced).
    let mut bad = m.clone();
    let bf = &mut bad.functions[func];
    let bool_ty = bf.value_type(bf.blocks[masked].mask.expect("masked"));
    let gone = bf.append_block_param(entry, bool_ty);
    bf.blocks[entry].params.pop();
    bf.blocks[masked].mask = Some(gone);
    assert!(errors(&bad).contains("is not parameter"), "{}", errors(&bad));
}

#[test]
fn a_return_from_a_nested_loop_leaves_both_loops() {
    // The inner loop's return is an exit of the outer loop too: the lanes that return are
    // kept by both latches, and the code after the loops runs only for the others.
    let src = "__kernel void k(__global int *p, __global const int *c, int n) {\n\
               size_t i = get_global_id(0);\n\
               int s = 0;\n\
               for (int a = 0; a < c[i]; a++) {\n\
                 for (int b = 0; b < n; b++) {\n\
                   s += c[a + b];\n\
                   if (s > 1000) return;\n\
                 }\n\
               }\n\
               p[i] = s;\n\
               }";
    let (mut m, func) = kernel(src);
    assert!(divergent_branches(&m, func) >= 2);
    let (changed, text) = linearize(&mut m, func);
    assert!(changed, "{text}");
    let f = &m.functions[func];
    assert_eq!(divergent_branches(&m, func), 0, "{text}");
    let latches = any_active_branches(f).len();
    // Two latches and two entries that skip a loop no lane enters.
    assert_eq!(latches, 4, "{text}");
    // The store runs only under a mask (the lanes that did not return).
    let st = stores(f);
    let b = f.layout.inst_block[*st.last().unwrap()].unwrap();
    assert!(f.blocks[b].mask.is_some(), "{text}");
}

/// A barrier before a kernel's divergent branches stays outside their zones: the kernel
/// body, inlined, follows its wrapper's entry block, and an `&&` whose second test shares
/// the first's way out is a zone entered twice, which grows to the branch around it, not
/// to the whole function with the barrier in it (a kernel that then ran scalar).
#[test]
fn a_barrier_before_divergent_branches_stays_outside_their_zones() {
    let (mut m, func) = kernel(
        "__kernel void k(__global const int *in, __global uint *out) {\n\
         int l = get_local_id(0); int p[16];\n\
         for (int z = 0; z < 16; z++) p[z] = in[z] + z;\n\
         barrier(CLK_LOCAL_MEM_FENCE);\n\
         uint h = (l < 16 && p[l] > 3) ? 31u : (uint)in[l];\n\
         out[get_global_id(0)] = h; }",
    );
    assert!(divergent_branches(&m, func) >= 2, "{}", m.display_function(func));
    let (changed, text) = linearize(&mut m, func);
    assert!(changed, "{text}");
}

#[test]
fn a_flag_joined_in_a_divergent_loop_masks_a_branch_after_it() {
    // The loop's join keeps whether `in[i + 3]` was read; the branch after the loop tests
    // the same condition, which the front end folds into that joined flag. The branch's
    // zone is linearized before the loop's, so its block's mask names the join's parameter
    // until the loop's linearization replaces it: a mask is a use like any operand.
    let src = "__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, int ka) {\n\
               const int gid = (int)get_global_id(0);\n\
               const int l = (int)get_local_id(0);\n\
               int i2 = 2;\n\
               int4 v0 = (int4)(0);\n\
               int k5 = 0;\n\
               do {\n\
               if (gid >= 3) {\n\
               v0 = vload4(0, in + (gid - 3));\n\
               }\n\
               if (gid + 3 < 43) {\n\
               i2 = in[gid + 3];\n\
               }\n\
               } while (++k5 < gid % 5);\n\
               uint q0 = (uint)i2 + (uint)(gid + 3 < 43 ? in[gid + 3] : 0);\n\
               buf[gid * 4 + 1] = ((gid + 2 < 43 ? in[gid + 2] : 0) != 0 ? 1 % (gid + 2 < 43 ? in[gid + 2] : 0) : 1);\n\
               buf[gid * 4 + 3 - (l & 3)] = ka;\n\
               out[gid] = q0 + v0.x + v0.y;\n\
               }";
    let (mut m, func) = kernel(src);
    let (changed, text) = linearize(&mut m, func);
    assert!(changed, "{text}");
    let f = &m.functions[func];
    for &b in &f.layout.blocks {
        if let Some(mask) = f.blocks[b].mask {
            if let crate::ir::ValueDef::Param(pb, k) = f.values[mask].def {
                assert_eq!(f.blocks[pb].params.get(k as usize), Some(&mask), "{b}'s mask is gone:\n{text}");
            }
        }
    }
}
