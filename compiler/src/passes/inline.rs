//! Inlining of calls to functions that contain work-group barriers.
//!
//! The work-group entry splits a kernel at its barriers (see `back::workgroup`), which needs
//! every barrier in the kernel's own body. This pass inlines, everywhere, each call whose
//! callee contains a barrier directly or through its own calls. OpenCL C forbids recursion;
//! a cycle through a function with a barrier is reported as an error.
//!
//! Inlined instructions keep the callee's source locations (`Function::inst_locs`); the
//! jump into the copy takes the call's.

use crate::ir::{
    Block, BlockCall, BlockData, EntityRef, Func, FuncKind, Function, Inst, InstData, Module, SecondaryMap, Value,
    ValueData, ValueDef,
};

/// Upper bound on inlined calls per function, against pathological growth.
const MAX_INLINES_PER_FUNCTION: usize = 10_000;

/// Whether `d` is a work-group barrier: a resume point of the work-group entry. Sub-group
/// barriers are not (sub-groups have one work-item each on the host).
pub fn is_work_group_barrier(d: &InstData) -> bool {
    matches!(d, InstData::Barrier { exec_scope, .. } if !matches!(exec_scope, crate::ir::Scope::SubGroup | crate::ir::Scope::WorkItem))
}

/// Functions that contain a barrier, directly or through calls (indexed by `Func`).
pub fn functions_with_barriers(module: &Module) -> SecondaryMap<Func, bool> {
    let mut has: SecondaryMap<Func, bool> = SecondaryMap::default();
    let mut callees: Vec<Vec<Func>> = vec![Vec::new(); module.functions.len()];
    for (f, func) in module.functions.iter() {
        for &b in &func.layout.blocks {
            for &i in &func.layout.insts[b] {
                match &func.insts[i] {
                    d if is_work_group_barrier(d) => has[f] = true,
                    InstData::Call { func: callee, .. } => callees[f.index()].push(*callee),
                    _ => {}
                }
            }
        }
    }
    // Propagate to callers until nothing changes.
    loop {
        let mut changed = false;
        for f in module.functions.keys() {
            if !has[f] && callees[f.index()].iter().any(|c| module.functions.is_valid(*c) && has[*c]) {
                has[f] = true;
                changed = true;
            }
        }
        if !changed {
            return has;
        }
    }
}

/// Inlines every call to a function containing a barrier, in every function with a body.
pub fn inline_barrier_calls(module: &mut Module) -> Result<(), String> {
    let has = functions_with_barriers(module);
    check_no_barrier_recursion(module, &has)?;
    for f in module.functions.keys() {
        if module.functions[f].kind == FuncKind::Import {
            continue;
        }
        let mut count = 0;
        while let Some((call, callee)) = find_barrier_call(module, f, &has)? {
            count += 1;
            if count > MAX_INLINES_PER_FUNCTION {
                return Err(format!(
                    "function `{}`: more than {MAX_INLINES_PER_FUNCTION} calls to inline",
                    module.functions[f].name
                ));
            }
            let callee_fn = module.functions[callee].clone();
            inline_call(&mut module.functions[f], call, &callee_fn)?;
        }
    }
    Ok(())
}

fn find_barrier_call(module: &Module, f: Func, has: &SecondaryMap<Func, bool>) -> Result<Option<(Inst, Func)>, String> {
    let func = &module.functions[f];
    for &b in &func.layout.blocks {
        for &i in &func.layout.insts[b] {
            if let InstData::Call { func: callee, .. } = &func.insts[i] {
                if !module.functions.is_valid(*callee) {
                    return Err(format!("function `{}` calls an unknown function {callee}", func.name));
                }
                if has[*callee] {
                    return Ok(Some((i, *callee)));
                }
            }
        }
    }
    Ok(None)
}

/// A cycle of calls through a function with a barrier could never be fully inlined.
fn check_no_barrier_recursion(module: &Module, has: &SecondaryMap<Func, bool>) -> Result<(), String> {
    // Iterative DFS colouring over the functions that contain barriers.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        White,
        Grey,
        Black,
    }
    let n = module.functions.len();
    let mut mark = vec![Mark::White; n];
    let callees = |f: Func| -> Vec<Func> {
        let func = &module.functions[f];
        let mut v = Vec::new();
        for &b in &func.layout.blocks {
            for &i in &func.layout.insts[b] {
                if let InstData::Call { func: c, .. } = &func.insts[i] {
                    if module.functions.is_valid(*c) && has[*c] {
                        v.push(*c);
                    }
                }
            }
        }
        v
    };
    for root in module.functions.keys() {
        if !has[root] || mark[root.index()] != Mark::White {
            continue;
        }
        let mut stack: Vec<(Func, Vec<Func>)> = vec![(root, callees(root))];
        mark[root.index()] = Mark::Grey;
        while let Some((f, pending)) = stack.last_mut() {
            let f = *f;
            match pending.pop() {
                Some(c) => match mark[c.index()] {
                    Mark::Grey => {
                        return Err(format!(
                            "recursive call of `{}` from `{}` (OpenCL C does not allow recursion)",
                            module.functions[c].name, module.functions[f].name
                        ))
                    }
                    Mark::White => {
                        mark[c.index()] = Mark::Grey;
                        let cs = callees(c);
                        stack.push((c, cs));
                    }
                    Mark::Black => {}
                },
                None => {
                    mark[f.index()] = Mark::Black;
                    stack.pop();
                }
            }
        }
    }
    Ok(())
}

/// Replaces the call `call` in `caller` with a copy of `callee`'s body.
///
/// The caller's block is split after the call: the continuation block takes the call's
/// result as its parameter (the result value keeps its identity, so no use is rewritten).
/// Returns in the copy become jumps to the continuation.
pub fn inline_call(caller: &mut Function, call: Inst, callee: &Function) -> Result<(), String> {
    let err = |m: &str| format!("inlining `{}` into `{}`: {m}", callee.name, caller.name);
    let InstData::Call { args, .. } = caller.insts[call].clone() else {
        return Err(err("not a call instruction"));
    };
    let b = caller.layout.inst_block[call].ok_or_else(|| err("the call is not in the layout"))?;
    let pos = caller.layout.insts[b].iter().position(|&i| i == call).ok_or_else(|| err("call not in its block"))?;
    let callee_entry = callee.layout.entry().ok_or_else(|| err("the callee has no body"))?;
    if callee.blocks[callee_entry].params.len() != args.len() {
        return Err(err("argument count does not match the callee's parameters"));
    }

    // Split the caller's block after the call.
    let tail: Vec<Inst> = caller.layout.insts[b].split_off(pos + 1);
    caller.layout.insts[b].pop();
    caller.layout.inst_block[call] = None;
    let cont = caller.blocks.push(BlockData::default());
    for &i in &tail {
        caller.layout.inst_block[i] = Some(cont);
    }
    caller.layout.insts[cont] = tail;
    if let Some(r) = caller.inst_result[call] {
        caller.values[r].def = ValueDef::Param(cont, 0);
        caller.blocks[cont].params.push(r);
        caller.inst_result[call] = None;
    }
    let cont_takes_value = !caller.blocks[cont].params.is_empty();

    // Blocks and block parameters.
    let mut block_map: SecondaryMap<Block, Option<Block>> = SecondaryMap::default();
    let mut value_map: SecondaryMap<Value, Option<Value>> = SecondaryMap::default();
    let mut new_blocks = Vec::with_capacity(callee.layout.blocks.len() + 1);
    for &cb in &callee.layout.blocks {
        let nb = caller.blocks.push(BlockData::default());
        block_map[cb] = Some(nb);
        new_blocks.push(nb);
        for &p in &callee.blocks[cb].params {
            let index = caller.blocks[nb].params.len() as u32;
            let np = caller.values.push(ValueData { ty: callee.values[p].ty, def: ValueDef::Param(nb, index) });
            caller.blocks[nb].params.push(np);
            value_map[p] = Some(np);
        }
    }
    // Constants and addresses of module variables.
    for (v, vd) in callee.values.iter() {
        match vd.def {
            ValueDef::Const(_) | ValueDef::Global(_) => {
                value_map[v] = Some(caller.values.push(vd.clone()));
            }
            _ => {}
        }
    }
    // Instructions, with their results, before their operands are rewritten.
    let mut copies: Vec<Inst> = Vec::new();
    for &cb in &callee.layout.blocks {
        let nb = block_map[cb].ok_or_else(|| err("unmapped block"))?;
        for &ci in &callee.layout.insts[cb] {
            let ni = caller.insts.push(callee.insts[ci].clone());
            if let Some(r) = callee.inst_result[ci] {
                let nr = caller.values.push(ValueData { ty: callee.values[r].ty, def: ValueDef::Result(ni) });
                caller.inst_result[ni] = Some(nr);
                value_map[r] = Some(nr);
            }
            caller.layout.append_inst(nb, ni);
            caller.inst_locs[ni] = callee.inst_locs[ci];
            copies.push(ni);
        }
    }
    for v in callee.values.keys() {
        if let (Some(name), Some(nv)) = (&callee.value_names[v], value_map[v]) {
            caller.value_names[nv] = Some(name.clone());
        }
    }
    // Rewrite operands and branch targets; returns jump to the continuation.
    for &ni in &copies {
        let mut missing = false;
        let mut data = caller.insts[ni].clone();
        data.for_each_operand_mut(|v| match value_map[*v] {
            Some(nv) => *v = nv,
            None => missing = true,
        });
        if missing {
            return Err(err("an operand is not defined in the callee's body"));
        }
        for bc in data.successors_mut() {
            bc.block = block_map[bc.block].ok_or_else(|| err("branch to a block outside the layout"))?;
        }
        if let InstData::Return { value } = &data {
            let args = if cont_takes_value {
                vec![value.ok_or_else(|| err("return without a value from a non-void function"))?]
            } else {
                Vec::new()
            };
            data = InstData::Jump { dest: BlockCall { block: cont, args } };
        }
        caller.insts[ni] = data;
    }
    // Jump from the call site into the copy of the callee's entry.
    let entry = block_map[callee_entry].ok_or_else(|| err("unmapped entry block"))?;
    let jump = caller.insts.push(InstData::Jump { dest: BlockCall { block: entry, args } });
    caller.inst_result[jump] = None;
    caller.inst_locs[jump] = caller.inst_locs[call];
    caller.layout.append_inst(b, jump);

    // Layout: the copied blocks, then the continuation, right after the call's block.
    new_blocks.push(cont);
    let at = caller.layout.blocks.iter().position(|&x| x == b).ok_or_else(|| err("block not in layout"))? + 1;
    caller.layout.blocks.splice(at..at, new_blocks);
    Ok(())
}
