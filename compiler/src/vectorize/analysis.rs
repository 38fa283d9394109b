//! Work-item analysis: how each value of a kernel varies across the W work-items of a
//! packet (consecutive work-items of dimension 0 in one row of the work-group).
//!
//! Every value is [`Shape::Uniform`] (the same in every lane), [`Shape::Strided`] (lane k
//! holds `base + k * stride`; integers count in their own units, pointers in bytes) or
//! [`Shape::Varying`]. Seeds: get_local_id(0) / get_global_id(0) and the linear ids are
//! consecutive (lanes are packed along dimension 0 within one row, so the other dimensions
//! are uniform); kernel arguments, constants, module variables and the other work-item
//! queries are uniform. Affine rules keep add/sub of uniform values, multiplication and
//! shifts by uniform constants, integer resizes (ids are assumed not to wrap, as Intel's and
//! PoCL's vectorizers do) and pointer arithmetic strided. Loads from uniform addresses are
//! uniform; results of atomics and calls are varying.
//!
//! Divergence: a branch or switch on a non-uniform condition is divergent. The blocks
//! between it and its immediate post-dominator are divergently reached (their code runs
//! under a mask); the parameters of the blocks where lanes from different edges of the
//! branch meet again (the post-dominator and blocks two edges reach) are varying. A loop containing a divergent branch whose post-dominator lies outside the loop
//! has a divergent exit: lanes leave it in different iterations, so values defined in the
//! loop and used outside it, and the parameters of its exit blocks, are varying (temporal
//! divergence). In irreducible control flow (cycles that are not natural loops) a divergent
//! branch makes every block but the entry divergent and every value used outside its
//! non-entry block varying. Masked blocks (`passes::linearize`) run under a mask as
//! divergently reached blocks do; the selects of their joins vary with their masks.
//!
//! Memory accesses are classified as uniform (one scalar access), consecutive (one vector
//! access), strided or random (gather / scatter), and masked when they lie in a divergently
//! reached block or a loop with a divergent exit.

use crate::analysis::{Cfg, DomTree, LoopInfo, PostDomTree};
use crate::ir::{self, BinaryOp, Block, ConstData, ConvertOp, Function, Inst, InstData, TypeData, Value, ValueDef};
use crate::ir::{SecondaryMap, WorkItemQuery};
use std::collections::HashSet;

/// How a value varies across the lanes of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    Uniform,
    /// Lane k = lane 0 + k * stride (integers: in units of the value; pointers: bytes).
    Strided(i64),
    /// Only in packets of whole rows of a known width `wx` ([`WorkItemAnalysis::row_width`]):
    /// lane k = lane 0 + (k mod wx) * sx + (k div wx) * sy, `sy` the same for every row of
    /// the packet but not always known at compile time (`None`). Never `sy == sx * wx`
    /// (that is `Strided(sx)`).
    Rows {
        sx: i64,
        sy: Option<i64>,
    },
    Varying,
}

impl Shape {
    pub fn is_uniform(self) -> bool {
        self == Shape::Uniform
    }
    /// Join of two shapes reaching the same place.
    fn meet(self, o: Shape) -> Shape {
        match (self, o) {
            (a, b) if a == b => a,
            _ => Shape::Varying,
        }
    }
}

/// How one memory access is done in vector code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// One scalar access for the whole packet.
    Uniform,
    /// One vector access (lane k at address + k * size of the element).
    Consecutive,
    /// Lanes a constant distance apart that is not the element size.
    Strided(i64),
    /// Whole rows of a known width (`Shape::Rows`): lanes of a row `sx` bytes apart, the
    /// rows' first lanes some uniform distance apart.
    Rows(i64),
    /// Gather / scatter.
    Random,
}

/// The analysis of one kernel function.
#[derive(Debug, Clone)]
pub struct WorkItemAnalysis {
    pub shapes: SecondaryMap<Value, Option<Shape>>,
    /// Branches and switches on a non-uniform condition.
    pub divergent_branches: Vec<Inst>,
    /// Blocks that run under a mask: between a divergent branch and its post-dominator,
    /// and the blocks of loops with a divergent exit.
    pub divergent_blocks: HashSet<Block>,
    /// Blocks whose parameters are varying joins.
    join_blocks: HashSet<Block>,
    /// Values made varying by temporal divergence.
    forced: HashSet<Value>,
    /// Memory accesses (loads, stores, atomics) with their class.
    pub accesses: Vec<(Inst, Access)>,
    /// Private scalar or vector variables only loaded and stored whole whose content varies:
    /// each lane's copy lives in one `<W x T>` register variable (structure of arrays).
    /// Such variables that only ever hold uniform values (stored outside divergent code) are
    /// uniform: one scalar variable for the packet.
    pub private_regs: HashSet<Value>,
    /// Whole-access scalar, vector and pointer variables: registers, uniform or not.
    pub reg_candidates: HashSet<Value>,
    /// The shape of what a register variable holds: the meet of the values stored to it,
    /// varying when a store lies in divergent code (none before a store's shape is known).
    var_shape: std::collections::HashMap<Value, Shape>,
    /// Lanes are consecutive linear local ids (the Gen device's hardware threads across
    /// rows, [`analyze_lanes`]): every dimension of the ids varies, only the local linear id
    /// is consecutive.
    pub linear_lanes: bool,
    /// The dimension whose consecutive ids the lanes are (0 for the vector code; 1 or 2 only
    /// in [`analyze_dimension`], which reads the strides of addresses along it).
    pub lane_dim: u64,
    /// With `linear_lanes`, when not 0: every packet is whole rows of this many work-items
    /// of one plane of the work-group (`local_size[0]` is this width, which divides the
    /// packet's, and a plane's work-items fill whole packets), so the ids of dimension 0 and
    /// 1 are [`Shape::Rows`] and those of dimension 2 uniform ([`analyze_rows`]).
    pub row_width: u64,
    /// Branches on a varying condition whose region reaches a work-group barrier. OpenCL
    /// requires every work-item of a work-group to reach a barrier, so in a valid program
    /// such a branch goes the same way for all of them: it runs as a uniform branch.
    pub barrier_uniform: HashSet<Inst>,
    /// Their conditions: uniform, computed from the last active lane (`back::vector`).
    pub uniform_conds: HashSet<Value>,
}

/// The blocks where lanes that took different edges of the divergent branch ending `b`
/// meet again before its immediate post-dominator `ipdom`: blocks reachable from two of its
/// edges (a target of two edges included) without passing `b` again. Their parameters
/// vary; a block only one edge reaches takes its lanes from one side. A loop header is such
/// a join only when two edges of the branch reach it in the same iteration (different
/// latches): the loop-mask form runs the lanes of a loop in lock step, so all of them come
/// over the one back edge.
fn joins_of(f: &Function, cfg: &Cfg, b: Block, ipdom: Option<Block>) -> HashSet<Block> {
    let edges = f.successors(b);
    let mut count: std::collections::HashMap<Block, u32> = std::collections::HashMap::new();
    let mut joins = HashSet::new();
    for (k, &s) in edges.iter().enumerate() {
        if edges[..k].contains(&s) {
            joins.insert(s);
            continue;
        }
        let mut seen = HashSet::new();
        let mut work = vec![s];
        while let Some(x) = work.pop() {
            if x == b || !seen.insert(x) {
                continue;
            }
            if Some(x) != ipdom {
                work.extend(cfg.succs(x).iter().copied());
            }
        }
        for x in seen {
            *count.entry(x).or_default() += 1;
        }
    }
    joins.extend(count.into_iter().filter(|(_, n)| *n >= 2).map(|(x, _)| x));
    joins
}

/// Counts for the vectorizer report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccessCounts {
    pub uniform: u32,
    pub consecutive: u32,
    pub strided: u32,
    pub gather_scatter: u32,
    pub masked: u32,
    pub atomics: u32,
}

impl WorkItemAnalysis {
    /// The shape of `v` (constants and module variables are uniform).
    pub fn shape(&self, f: &Function, v: Value) -> Shape {
        match f.values.get(v).map(|d| d.def) {
            Some(ValueDef::Const(_)) | Some(ValueDef::Global(_)) => Shape::Uniform,
            _ => self.shapes[v].unwrap_or(Shape::Varying),
        }
    }

    pub fn access(&self, i: Inst) -> Option<Access> {
        self.accesses.iter().find(|(x, _)| *x == i).map(|(_, a)| *a)
    }

    pub fn counts(&self, f: &Function) -> AccessCounts {
        let mut c = AccessCounts::default();
        for &(i, a) in &self.accesses {
            if matches!(f.insts[i], InstData::Atomic { .. }) {
                c.atomics += 1;
            }
            match a {
                Access::Uniform => c.uniform += 1,
                Access::Consecutive => c.consecutive += 1,
                Access::Strided(_) | Access::Rows(_) => c.strided += 1,
                Access::Random => c.gather_scatter += 1,
            }
            if f.layout.inst_block[i].is_some_and(|b| self.divergent_blocks.contains(&b)) {
                c.masked += 1;
            }
        }
        c
    }
}

/// Sign-extends the constant `v` of `f` from its type's width, if it is an integer constant.
pub fn const_int(m: &ir::Module, f: &Function, v: Value) -> Option<i64> {
    let ValueDef::Const(c) = f.values.get(v)?.def else { return None };
    match m.constants.get(c)? {
        ConstData::Int { ty, bits } => {
            let w = match m.types.get(*ty) {
                TypeData::Int { bits } => *bits as u32,
                TypeData::Bool => 1,
                _ => return None,
            };
            if w >= 64 {
                Some(*bits as i64)
            } else {
                let sh = 64 - w;
                Some(((*bits << sh) as i64) >> sh)
            }
        }
        ConstData::Null { .. } => Some(0),
        _ => None,
    }
}

/// The pointee of a pointer type.
fn pointee(m: &ir::Module, t: ir::Type) -> Option<ir::Type> {
    match m.types.get(t) {
        TypeData::Pointer { pointee, .. } => Some(*pointee),
        _ => None,
    }
}

/// Analyses kernel function `f` of module `m`.
pub fn analyze(m: &ir::Module, f: &Function) -> WorkItemAnalysis {
    analyze_lanes(m, f, false)
}

/// [`analyze`] for packets of consecutive ids of dimension 0 in one row (`linear_lanes`
/// false) or of consecutive linear local ids (true).
pub fn analyze_lanes(m: &ir::Module, f: &Function, linear_lanes: bool) -> WorkItemAnalysis {
    analyze_with(m, f, linear_lanes, 0, 0)
}

/// [`analyze_lanes`] with linear lanes, for packets of whole rows of `row_width` work-items
/// ([`WorkItemAnalysis::row_width`]; 0: rows of any width).
pub fn analyze_rows(m: &ir::Module, f: &Function, row_width: u64) -> WorkItemAnalysis {
    analyze_with(m, f, true, 0, row_width)
}

/// The analysis a Gen variant's lanes need (`None`: the CPU device's packets).
pub fn analyze_gen(m: &ir::Module, f: &Function, gen: Option<crate::GenBuild>) -> WorkItemAnalysis {
    match gen {
        Some(g) if g.linear_lanes => analyze_rows(m, f, u64::from(g.row_width)),
        _ => analyze_lanes(m, f, false),
    }
}

/// [`analyze`] as if the lanes were consecutive ids of dimension `dim` (the other
/// dimensions' ids uniform): a value's `Strided(s)` is its step per id of that dimension.
/// Not for vector code (the lowering packs dimension 0); the Gen counting reads the strides
/// of its sites' addresses along each dimension from it.
pub fn analyze_dimension(m: &ir::Module, f: &Function, dim: u64) -> WorkItemAnalysis {
    analyze_with(m, f, false, dim, 0)
}

fn analyze_with(m: &ir::Module, f: &Function, linear_lanes: bool, lane_dim: u64, row_width: u64) -> WorkItemAnalysis {
    let mut a = WorkItemAnalysis {
        linear_lanes,
        lane_dim,
        row_width: if linear_lanes { row_width } else { 0 },
        shapes: SecondaryMap::default(),
        divergent_branches: Vec::new(),
        divergent_blocks: HashSet::new(),
        join_blocks: HashSet::new(),
        forced: HashSet::new(),
        accesses: Vec::new(),
        private_regs: HashSet::new(),
        reg_candidates: register_variables(m, f),
        var_shape: std::collections::HashMap::new(),
        barrier_uniform: HashSet::new(),
        uniform_conds: HashSet::new(),
    };
    let Some(entry) = f.layout.entry() else { return a };
    let cfg = Cfg::new(f);
    let pdom = PostDomTree::new(&cfg);
    let dom = DomTree::new(&cfg);
    let loops = LoopInfo::new(&cfg, &dom);
    let has_barrier =
        |b: Block| f.layout.insts[b].iter().any(|&i| crate::passes::inline::is_work_group_barrier(&f.insts[i]));
    let def_block = |v: Value| -> Option<Block> {
        match f.values.get(v)?.def {
            ValueDef::Result(i) => f.layout.inst_block[i],
            ValueDef::Param(b, _) => Some(b),
            _ => None,
        }
    };
    for &p in &f.blocks[entry].params {
        a.shapes[p] = Some(Shape::Uniform);
    }
    // Masked blocks (`passes::linearize`) run under a mask as divergently reached ones do.
    a.divergent_blocks.extend(f.layout.blocks.iter().copied().filter(|&b| f.blocks[b].mask.is_some()));
    // Irreducible control flow (what `passes::reducible` could not split stays scalar):
    // cycles that are not natural loops escape the temporal-divergence rule above, so once
    // any branch diverges, every block but the entry is divergent and every value crossing
    // blocks there varies.
    let irreducible = loops.is_irreducible();
    let mut irreducible_forced = false;
    // A branch on a condition whose shape is still unknown (it waits for a store into a
    // register variable further down, such as the state variables of `passes::barriers`)
    // waits too; once nothing changes, unknown conditions count as varying.
    let mut unknown_varies = false;
    // Fixed point: shapes only move up (unknown -> uniform -> strided -> varying) and the set
    // of divergent blocks only grows.
    loop {
        let mut changed = false;
        for &b in &f.layout.blocks {
            for &i in &f.layout.insts[b] {
                let Some(r) = f.inst_result[i] else { continue };
                let s = if a.uniform_conds.contains(&r) {
                    Some(Shape::Uniform)
                } else if a.forced.contains(&r) {
                    Some(Shape::Varying)
                } else {
                    inst_shape(m, f, &a, i)
                };
                let Some(s) = s else { continue };
                let old = a.shapes[r];
                let new = match old {
                    _ if a.uniform_conds.contains(&r) => Shape::Uniform,
                    None => s,
                    Some(o) => o.meet(s),
                };
                if old != Some(new) {
                    a.shapes[r] = Some(new);
                    changed = true;
                }
            }
            // Block arguments flow into the successors' parameters.
            let Some(t) = f.layout.last_inst(b) else { continue };
            for call in f.insts[t].successors() {
                let params = &f.blocks[call.block].params;
                let join_forced = a.join_blocks.contains(&call.block);
                for (&p, &arg) in params.iter().zip(&call.args) {
                    let s = if join_forced || a.forced.contains(&p) {
                        Some(Shape::Varying)
                    } else {
                        match f.values.get(arg).map(|d| d.def) {
                            Some(ValueDef::Const(_)) | Some(ValueDef::Global(_)) => Some(Shape::Uniform),
                            _ => a.shapes[arg],
                        }
                    };
                    let Some(s) = s else { continue };
                    let old = a.shapes[p];
                    let new = match old {
                        None => s,
                        Some(o) => o.meet(s),
                    };
                    if old != Some(new) {
                        a.shapes[p] = Some(new);
                        changed = true;
                    }
                }
            }
        }
        // Register variables holding varying values (or written under divergence).
        for &b in &f.layout.blocks {
            for &i in &f.layout.insts[b] {
                let InstData::Store { ptr, value, .. } = &f.insts[i] else { continue };
                // Every store counts until the variable is varying: one that holds a strided
                // value (an address) can be given another stride later.
                if !a.reg_candidates.contains(ptr) || a.var_shape.get(ptr) == Some(&Shape::Varying) {
                    continue;
                }
                let s = match f.values.get(*value).map(|d| d.def) {
                    Some(ValueDef::Const(_)) | Some(ValueDef::Global(_)) => Some(Shape::Uniform),
                    _ => a.shapes[*value],
                };
                let Some(s) = s else { continue };
                let s = if a.divergent_blocks.contains(&b) { Shape::Varying } else { s };
                let old = a.var_shape.get(ptr).copied();
                let new = old.map_or(s, |o| o.meet(s));
                if old != Some(new) {
                    a.var_shape.insert(*ptr, new);
                    changed = true;
                }
                if new != Shape::Uniform {
                    a.private_regs.insert(*ptr);
                }
            }
        }
        // Divergent branches and what they reach.
        for &b in &f.layout.blocks {
            let Some(t) = f.layout.last_inst(b) else { continue };
            let cond = match &f.insts[t] {
                InstData::Branch { cond, .. } => *cond,
                InstData::Switch { selector, .. } => *selector,
                _ => continue,
            };
            let unknown = matches!(f.values.get(cond).map(|d| d.def), Some(ValueDef::Result(_) | ValueDef::Param(..)))
                && a.shapes[cond].is_none();
            if unknown && !unknown_varies {
                continue;
            }
            if a.shape(f, cond).is_uniform() || a.divergent_branches.contains(&t) {
                continue;
            }
            // The region up to the immediate post-dominator runs under a mask.
            let ipdom = pdom.ipdom(b);
            let mut work: Vec<Block> = cfg.succs(b).to_vec();
            let mut region = HashSet::new();
            while let Some(x) = work.pop() {
                if Some(x) == ipdom || !region.insert(x) {
                    continue;
                }
                work.extend(cfg.succs(x).iter().copied());
            }
            // A branch that controls a barrier is work-group uniform in a valid program:
            // its condition is taken from one active lane (an element-wise result only).
            let elementwise_cond = matches!(
                f.values.get(cond).map(|d| d.def),
                Some(ValueDef::Result(ci)) if matches!(
                    f.insts[ci],
                    InstData::Compare { .. } | InstData::Binary { .. } | InstData::Unary { .. } | InstData::Convert { .. }
                )
            );
            if matches!(f.insts[t], InstData::Branch { .. })
                && elementwise_cond
                && region.iter().any(|&x| has_barrier(x))
                && !a.divergent_blocks.contains(&b)
            {
                a.barrier_uniform.insert(t);
                a.uniform_conds.insert(cond);
                a.shapes[cond] = Some(Shape::Uniform);
                changed = true;
                continue;
            }
            a.divergent_branches.push(t);
            changed = true;
            a.join_blocks.extend(joins_of(f, &cfg, b, ipdom));
            a.join_blocks.extend(ipdom);
            a.divergent_blocks.extend(region);
            // Loops the lanes may leave in different iterations.
            let mut l = loops.loop_of(b);
            while let Some(id) = l {
                let lp = loops.get(id);
                if ipdom.is_some_and(|p| loops.contains(id, p)) {
                    break;
                }
                a.divergent_blocks.extend(lp.blocks.iter().copied());
                a.join_blocks.extend(lp.exits.iter().copied());
                let inside: HashSet<Block> = lp.blocks.iter().copied().collect();
                for &ob in &f.layout.blocks {
                    if inside.contains(&ob) {
                        continue;
                    }
                    for &oi in &f.layout.insts[ob] {
                        f.insts[oi].for_each_operand(|v| {
                            if def_block(v).is_some_and(|db| inside.contains(&db)) {
                                a.forced.insert(v);
                            }
                        });
                    }
                }
                l = lp.parent;
            }
        }
        if irreducible && !irreducible_forced && !a.divergent_branches.is_empty() {
            irreducible_forced = true;
            changed = true;
            for &b in &f.layout.blocks {
                if b == entry {
                    continue;
                }
                a.divergent_blocks.insert(b);
                a.join_blocks.insert(b);
                for &i in &f.layout.insts[b] {
                    f.insts[i].for_each_operand(|v| {
                        if def_block(v).is_some_and(|db| db != b && db != entry) {
                            a.forced.insert(v);
                        }
                    });
                }
            }
        }
        if !changed && !unknown_varies {
            unknown_varies = true;
            continue;
        }
        if !changed {
            break;
        }
    }
    // Memory accesses.
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            let (ptr, ty) = match &f.insts[i] {
                InstData::Load { ptr, .. } => match f.inst_result[i] {
                    Some(r) => (*ptr, f.value_type(r)),
                    None => continue,
                },
                InstData::Store { ptr, value, .. } => (*ptr, f.value_type(*value)),
                InstData::Atomic { ptr, .. } => match pointee(m, f.value_type(*ptr)) {
                    Some(t) => (*ptr, t),
                    None => continue,
                },
                _ => continue,
            };
            if a.reg_candidates.contains(&ptr) {
                continue;
            }
            let size = m.types.size_of(ty) as i64;
            let class = match a.shape(f, ptr) {
                Shape::Uniform => Access::Uniform,
                Shape::Strided(s) if s == size => Access::Consecutive,
                Shape::Strided(s) => Access::Strided(s),
                Shape::Rows { sx, .. } => Access::Rows(sx),
                Shape::Varying => Access::Random,
            };
            a.accesses.push((i, class));
        }
    }
    a
}

/// Variables of scalar or vector type whose address is only used by whole loads and
/// stores (at -O0, or when the translator needed clang's unoptimised module, every local
/// variable is one).
fn register_variables(m: &ir::Module, f: &Function) -> HashSet<Value> {
    let mut vars = HashSet::new();
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            if let (InstData::Variable { ty, .. }, Some(r)) = (&f.insts[i], f.inst_result[i]) {
                if matches!(
                    m.types.get(*ty),
                    TypeData::Int { .. }
                        | TypeData::Float { .. }
                        | TypeData::Bool
                        | TypeData::Vector { .. }
                        | TypeData::Pointer { .. }
                ) {
                    vars.insert(r);
                }
            }
        }
    }
    for &b in &f.layout.blocks {
        for &i in &f.layout.insts[b] {
            match &f.insts[i] {
                InstData::Load { .. } => {}
                InstData::Store { value, .. } => {
                    vars.remove(value);
                }
                d => d.for_each_operand(|v| {
                    vars.remove(&v);
                }),
            }
        }
    }
    vars
}

/// The shape of the result of `i` from its operands' shapes; `None` while an operand is
/// still unknown.
fn inst_shape(m: &ir::Module, f: &Function, a: &WorkItemAnalysis, i: Inst) -> Option<Shape> {
    use Shape::*;
    let sh = |v: Value| -> Option<Shape> {
        match f.values.get(v).map(|d| d.def) {
            Some(ValueDef::Const(_)) | Some(ValueDef::Global(_)) => Some(Uniform),
            _ => a.shapes[v],
        }
    };
    // Uniform if every operand is, varying otherwise.
    let elementwise = |ops: &[Value]| -> Option<Shape> {
        let mut s = Uniform;
        for &o in ops {
            if sh(o)? != Uniform {
                s = Varying;
            }
        }
        Some(s)
    };
    // A load of a register variable no store has given a shape yet.
    let undefined_content = |v: Value| match f.values.get(v).map(|d| d.def) {
        Some(ValueDef::Result(li)) => matches!(&f.insts[li], InstData::Load { ptr, .. }
            if a.reg_candidates.contains(ptr) && !a.var_shape.contains_key(ptr)),
        _ => false,
    };
    let is_vector = |v: Value| matches!(m.types.get(f.value_type(v)), TypeData::Vector { .. });
    if a.row_width > 0 {
        if let Some(s) = rows_shape(m, f, a, i, &sh) {
            return s;
        }
    }
    Some(match &f.insts[i] {
        InstData::WorkItem { query } if a.linear_lanes => {
            use WorkItemQuery as Q;
            match query {
                Q::LocalLinearId if !f.inst_result[i].is_some_and(is_vector) => Strided(1),
                Q::GlobalId | Q::LocalId | Q::GlobalLinearId | Q::LocalLinearId => Varying,
                // A sub-group is the packet: its lanes' local ids are 0..W.
                Q::SubgroupLocalId => Strided(1),
                _ => Uniform,
            }
        }
        InstData::WorkItem { query } => {
            use WorkItemQuery as Q;
            match query {
                // The v3ulong of the built-in variable: component 0 varies, see ExtractElement.
                Q::GlobalId | Q::LocalId => {
                    if f.inst_result[i].is_some_and(is_vector) {
                        Varying
                    } else if a.lane_dim == 0 {
                        Strided(1)
                    } else {
                        Uniform
                    }
                }
                // Along dimension 1 or 2 the linear ids step by the rows' length.
                Q::GlobalLinearId | Q::LocalLinearId if a.lane_dim == 0 => Strided(1),
                Q::GlobalLinearId | Q::LocalLinearId => Varying,
                Q::SubgroupLocalId => Strided(1),
                _ => Uniform,
            }
        }
        InstData::ExtractElement { vector, index } => {
            // Component 0 of the id vectors (`lane_dim`'s) is consecutive, the others uniform.
            if let Some(ValueDef::Result(def)) = f.values.get(*vector).map(|d| d.def).filter(|_| !a.linear_lanes) {
                if let InstData::WorkItem { query: WorkItemQuery::GlobalId | WorkItemQuery::LocalId } = f.insts[def] {
                    return Some(match const_int(m, f, *index) {
                        Some(d) if d as u64 == a.lane_dim => Strided(1),
                        Some(_) => Uniform,
                        None => Varying,
                    });
                }
            }
            elementwise(&[*vector, *index])?
        }
        InstData::Binary { op, lhs, rhs } => {
            let (x, y) = (sh(*lhs)?, sh(*rhs)?);
            let vector = is_vector(*lhs);
            match (op, x, y) {
                (_, Uniform, Uniform) => Uniform,
                _ if vector => Varying,
                (BinaryOp::IAdd, Strided(s), Uniform) | (BinaryOp::IAdd, Uniform, Strided(s)) => Strided(s),
                (BinaryOp::IAdd, Strided(s), Strided(t)) => Strided(s.wrapping_add(t)),
                (BinaryOp::ISub, Strided(s), Uniform) => Strided(s),
                (BinaryOp::ISub, Uniform, Strided(s)) => Strided(s.wrapping_neg()),
                (BinaryOp::ISub, Strided(s), Strided(t)) => Strided(s.wrapping_sub(t)),
                (BinaryOp::IMul, Strided(s), Uniform) => match const_int(m, f, *rhs) {
                    Some(c) => Strided(s.wrapping_mul(c)),
                    None => Varying,
                },
                (BinaryOp::IMul, Uniform, Strided(s)) => match const_int(m, f, *lhs) {
                    Some(c) => Strided(s.wrapping_mul(c)),
                    None => Varying,
                },
                (BinaryOp::Shl, Strided(s), Uniform) => match const_int(m, f, *rhs) {
                    Some(c) if (0..63).contains(&c) && s.checked_shl(c as u32).is_some_and(|x| x >> c == s) => {
                        Strided(s << c)
                    }
                    _ => Varying,
                },
                // (x << c) >> c: the sign/zero extension idiom of a narrowed id (no wrap assumed).
                (BinaryOp::AShr | BinaryOp::LShr, Strided(s), Uniform) => match const_int(m, f, *rhs) {
                    Some(c) if (0..63).contains(&c) && s % (1i64 << c) == 0 => Strided(s >> c),
                    _ => Varying,
                },
                _ => Varying,
            }
        }
        InstData::Convert { op, arg, .. } => {
            let s = sh(*arg)?;
            match (op, s) {
                (_, Uniform) => Uniform,
                (
                    ConvertOp::UConvert
                    | ConvertOp::SConvert
                    | ConvertOp::PtrCast
                    | ConvertOp::PtrToInt
                    | ConvertOp::IntToPtr,
                    Strided(st),
                ) => Strided(st),
                (ConvertOp::Bitcast, Strided(st))
                    if matches!(m.types.get(f.value_type(*arg)), TypeData::Pointer { .. }) =>
                {
                    Strided(st)
                }
                _ => Varying,
            }
        }
        InstData::AccessChain { base, element, indices, .. } => {
            let mut stride = match sh(*base)? {
                Uniform => 0i64,
                Strided(s) => s,
                Rows { .. } | Varying => return Some(Varying),
            };
            let mut ty = pointee(m, f.value_type(*base))?;
            if let Some(e) = element {
                match sh(*e)? {
                    Uniform => {}
                    Strided(s) => stride = stride.wrapping_add(s.wrapping_mul(m.types.size_of(ty) as i64)),
                    Rows { .. } | Varying => return Some(Varying),
                }
            }
            for &ix in indices {
                let s = sh(ix)?;
                match m.types.get(ty).clone() {
                    TypeData::Struct { fields, .. } => {
                        let Some(k) = const_int(m, f, ix) else { return Some(Varying) };
                        ty = *fields.get(k as usize)?;
                    }
                    TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                        match s {
                            Uniform => {}
                            Strided(st) => stride = stride.wrapping_add(st.wrapping_mul(m.types.size_of(elem) as i64)),
                            Rows { .. } | Varying => return Some(Varying),
                        }
                        ty = elem;
                    }
                    _ => return Some(Varying),
                }
            }
            if stride == 0 {
                Uniform
            } else {
                Strided(stride)
            }
        }
        // A register variable holds values of one shape (or is varying).
        InstData::Load { ptr, .. } if a.reg_candidates.contains(ptr) => *a.var_shape.get(ptr)?,
        InstData::Load { ptr, .. } => match sh(*ptr)? {
            Uniform => Uniform,
            _ => Varying,
        },
        // Each lane has its own private variable, unless all lanes always hold the same.
        InstData::Variable { .. } => {
            let r = f.inst_result[i]?;
            if a.reg_candidates.contains(&r) && !a.private_regs.contains(&r) {
                Uniform
            } else if a.reg_candidates.contains(&r) {
                Varying
            } else {
                // Arrays and variables whose address is used: W copies, lane k's at k times
                // the lane copy stride (the size, rounded up to the variable's alignment).
                let InstData::Variable { ty, align, .. } = &f.insts[i] else { return Some(Varying) };
                Strided(crate::passes::align::lane_copy_stride(&m.types, *ty, *align) as i64)
            }
        }
        InstData::Select { cond, if_true, if_false } => match (sh(*cond)?, sh(*if_true)?, sh(*if_false)?) {
            (Uniform, x, y) if x == y => x,
            (c, x, y) => {
                let _ = (c, x, y);
                Varying
            }
        },
        InstData::Atomic { .. } | InstData::Call { .. } => Varying,
        InstData::Unary { arg, .. } => elementwise(&[*arg])?,
        InstData::Compare { lhs, rhs, .. } => elementwise(&[*lhs, *rhs])?,
        // A vector first written one component at a time (load, insert, store) inserts into
        // its variable's undefined initial content before any store gave the variable a
        // shape: that content takes the shape of whatever is stored (it is no constraint), and
        // waiting for it would wait for the store, which waits for this insert.
        InstData::InsertElement { vector, value, index } if undefined_content(*vector) => {
            elementwise(&[*value, *index])?
        }
        InstData::InsertElement { vector, value, index } => elementwise(&[*vector, *value, *index])?,
        InstData::Shuffle { a: x, b: y, .. } => elementwise(&[*x, *y])?,
        InstData::ExtractValue { aggregate, .. } => elementwise(&[*aggregate])?,
        InstData::InsertValue { aggregate, value, .. } if undefined_content(*aggregate) => elementwise(&[*value])?,
        InstData::InsertValue { aggregate, value, .. } => elementwise(&[*aggregate, *value])?,
        InstData::Construct { parts } => elementwise(parts)?,
        InstData::ExtInst { args, .. } => elementwise(args)?,
        InstData::GenericSpace { ptr } => elementwise(&[*ptr])?,
        // One answer for every active work-item of the packet.
        InstData::AnyActive { .. } => Uniform,
        // A sub-group is the packet: these give each of its work-items the same answer.
        InstData::Group { scope: ir::Scope::SubGroup, op, .. } if op.gives_one_value() => Uniform,
        _ => Varying,
    })
}

/// A shape as the steps of lane k = (k mod wx) * sx + (k div wx) * sy, in packets of whole
/// rows of `wx` (`None`: varying).
fn row_steps(s: Shape, wx: u64) -> Option<(i64, Option<i64>)> {
    match s {
        Shape::Uniform => Some((0, Some(0))),
        Shape::Strided(st) => Some((st, Some(st.wrapping_mul(wx as i64)))),
        Shape::Rows { sx, sy } => Some((sx, sy)),
        Shape::Varying => None,
    }
}

/// The shape of steps `sx`, `sy` in rows of `wx` ([`row_steps`]' inverse).
fn of_row_steps(sx: i64, sy: Option<i64>, wx: u64) -> Shape {
    match sy {
        Some(y) if y == sx.wrapping_mul(wx as i64) => Shape::Strided(sx),
        _ => Shape::Rows { sx, sy },
    }
}

/// [`inst_shape`] in packets of whole rows ([`WorkItemAnalysis::row_width`]) for what the
/// rows change: the ids of dimensions 0 to 2 and the affine rules where an operand is
/// [`Shape::Rows`]. `None`: the usual rules apply (`Some(None)`: an operand is unknown).
fn rows_shape(
    m: &ir::Module,
    f: &Function,
    a: &WorkItemAnalysis,
    i: Inst,
    sh: &dyn Fn(Value) -> Option<Shape>,
) -> Option<Option<Shape>> {
    use Shape::*;
    let wx = a.row_width;
    let is_vector = |v: Value| matches!(m.types.get(f.value_type(v)), TypeData::Vector { .. });
    let is_rows = |v: Value| matches!(sh(v), Some(Rows { .. }));
    Some(match &f.insts[i] {
        InstData::ExtractElement { vector, index } => {
            let Some(ValueDef::Result(def)) = f.values.get(*vector).map(|d| d.def) else { return None };
            let InstData::WorkItem { query: WorkItemQuery::GlobalId | WorkItemQuery::LocalId } = f.insts[def] else {
                return None;
            };
            // Lane k is at x0 + k mod wx, y0 + k div wx, z0.
            Some(match const_int(m, f, *index) {
                Some(0) => Rows { sx: 1, sy: Some(0) },
                Some(1) => of_row_steps(0, Some(1), wx),
                Some(2) => Uniform,
                _ => Varying,
            })
        }
        InstData::Binary { op, lhs, rhs } if (is_rows(*lhs) || is_rows(*rhs)) && !is_vector(*lhs) => {
            let (x, y) = (row_steps(sh(*lhs)?, wx), row_steps(sh(*rhs)?, wx));
            let add = |p: Option<i64>, q: Option<i64>, k: i64| Some(p?.wrapping_add(q?.wrapping_mul(k)));
            let scaled = |(sx, sy): (i64, Option<i64>), c: Option<i64>| match c {
                Some(c) => Some(of_row_steps(sx.wrapping_mul(c), sy.map(|y| y.wrapping_mul(c)), wx)),
                // Times a uniform value not known here: only a step of 0 stays known.
                None if sx == 0 => Some(Rows { sx: 0, sy: None }),
                None => Some(Varying),
            };
            Some(match (op, x, y) {
                (BinaryOp::IAdd, Some(p), Some(q)) => of_row_steps(p.0.wrapping_add(q.0), add(p.1, q.1, 1), wx),
                (BinaryOp::ISub, Some(p), Some(q)) => of_row_steps(p.0.wrapping_sub(q.0), add(p.1, q.1, -1), wx),
                (BinaryOp::IMul, Some(p), Some(_)) if sh(*rhs)? == Uniform => scaled(p, const_int(m, f, *rhs))?,
                (BinaryOp::IMul, Some(_), Some(q)) if sh(*lhs)? == Uniform => scaled(q, const_int(m, f, *lhs))?,
                (BinaryOp::Shl, Some((sx, sy)), Some(_)) if sh(*rhs)? == Uniform => {
                    match const_int(m, f, *rhs).filter(|c| (0..63).contains(c)) {
                        Some(c) => {
                            let shl = |v: i64| v.checked_shl(c as u32).filter(|r| r >> c == v);
                            match (shl(sx), sy.map(shl)) {
                                (Some(x), Some(Some(y))) => of_row_steps(x, Some(y), wx),
                                (Some(x), None) => of_row_steps(x, None, wx),
                                _ => Varying,
                            }
                        }
                        None => Varying,
                    }
                }
                _ => Varying,
            })
        }
        InstData::Convert { op, arg, .. } if is_rows(*arg) => Some(match op {
            ConvertOp::UConvert
            | ConvertOp::SConvert
            | ConvertOp::PtrCast
            | ConvertOp::PtrToInt
            | ConvertOp::IntToPtr => sh(*arg)?,
            ConvertOp::Bitcast if matches!(m.types.get(f.value_type(*arg)), TypeData::Pointer { .. }) => sh(*arg)?,
            _ => Varying,
        }),
        InstData::AccessChain { base, element, indices, .. }
            if is_rows(*base) || element.is_some_and(is_rows) || indices.iter().any(|&x| is_rows(x)) =>
        {
            let Some((mut sx, mut sy)) = row_steps(sh(*base)?, wx) else { return Some(Some(Varying)) };
            let mut ty = pointee(m, f.value_type(*base))?;
            let mut step = |ix: Value, size: i64| -> Option<bool> {
                let Some((x, y)) = row_steps(sh(ix)?, wx) else { return Some(false) };
                sx = sx.wrapping_add(x.wrapping_mul(size));
                sy = sy.zip(y).map(|(a, b)| a.wrapping_add(b.wrapping_mul(size)));
                Some(true)
            };
            if let Some(e) = element {
                if !step(*e, m.types.size_of(ty) as i64)? {
                    return Some(Some(Varying));
                }
            }
            for &ix in indices {
                match m.types.get(ty).clone() {
                    TypeData::Struct { fields, .. } => {
                        let Some(k) = const_int(m, f, ix) else { return Some(Some(Varying)) };
                        ty = *fields.get(k as usize)?;
                    }
                    TypeData::Array { elem, .. } | TypeData::Vector { elem, .. } => {
                        if !step(ix, m.types.size_of(elem) as i64)? {
                            return Some(Some(Varying));
                        }
                        ty = elem;
                    }
                    _ => return Some(Some(Varying)),
                }
            }
            Some(of_row_steps(sx, sy, wx))
        }
        _ => return None,
    })
}
