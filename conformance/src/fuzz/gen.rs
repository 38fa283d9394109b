//! The kernel generator: a seed gives one OpenCL C kernel, its launch sizes and its input
//! data, always the same ones.
//!
//! Every kernel has the signature `fuzz(__global const int *in, __global uint *out,
//! __global int *buf, __global uint *cnt, int ka, uint kb)`: `in` holds `NITEMS` read-only
//! values (one per work-item), `buf` four slots per work-item that only it reads and writes,
//! `cnt` eight counters updated only by commutative atomics (one operation per counter),
//! `ka` and `kb` are values uniform over the launch, and each work-item ends by writing a
//! checksum of every variable it computed to `out[gid]` (`gid`: its linear global id less
//! the global offset). So the results do not depend on the order in which
//! work-items run, and the runner compares `out`, `buf` and `cnt` between configurations.
//!
//! The body is a series of phases separated by barriers in uniform control flow. In each
//! phase the `__local` array `t` is either written (each work-item its own slot `t[l]`) or
//! only read (any slot, neighbours `t[l - 1]`, `t[l + 1]` guarded), and the `__local`
//! counters `lc` either updated by atomics or only read; `return` appears only in the last
//! phase, after every barrier.

use super::ast::{emit, BlockKind, Node};
use super::rng::Rng;

/// The generator's feature switches; [`FEATURES`] names them. A kernel uses a random subset.
pub const FEATURES: &[&str] = &[
    "branches",
    "loops",
    "switch",
    "local",
    "local_atomics",
    "global_atomics",
    "private_arrays",
    "structs",
    "struct_pointers",
    "struct_arrays",
    "long16",
    "volatile",
    "vectors",
    "floats",
    "longs",
    "helpers",
    "division",
    "returns",
    "barriers",
    "neighbours",
    "pointers",
    "struct_arrays_of",
    "narrow_vectors",
    "async_copy",
    "c11_atomics",
    "offsets",
    "local_structs",
    "collectives",
    "sub_groups",
    "address_spaces",
    "intel_sub_groups",
];

/// Which features a kernel uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Features {
    /// `if`/`else` (divergent and uniform).
    pub branches: bool,
    /// `for` and `do` loops with lane-dependent trip counts, `break`, `continue`.
    pub loops: bool,
    /// `switch` with fall-through.
    pub switch: bool,
    /// the `__local` array `t`, written and read by phases.
    pub local: bool,
    /// atomics on the `__local` counters `lc`.
    pub local_atomics: bool,
    /// atomics on the `__global` counters `cnt`.
    pub global_atomics: bool,
    /// the private array `p0`.
    pub private_arrays: bool,
    /// private structs (and helpers taking them).
    pub structs: bool,
    /// pointer members initialised with `&x`, and their retargeting.
    pub struct_pointers: bool,
    /// array members.
    pub struct_arrays: bool,
    /// `long16` members and variables.
    pub long16: bool,
    /// `volatile` members.
    pub volatile: bool,
    /// `int4`/`uint4` values, `vload4`/`vstore4`, `shuffle`.
    pub vectors: bool,
    /// `float4` values (exact: small multiples of 1/4).
    pub floats: bool,
    /// `ulong` values.
    pub longs: bool,
    /// helper functions.
    pub helpers: bool,
    /// guarded divisions and remainders, also under divergent control, and of `int4` /
    /// `uint4` vectors.
    pub division: bool,
    /// `return` in the last phase.
    pub returns: bool,
    /// several phases: barriers in uniform control flow, uniform loops holding barriers.
    pub barriers: bool,
    /// loads below the work-item's own index (`gid >= 2 ? in[gid - 2] : x`, `t[l - 1]`).
    pub neighbours: bool,
    /// private pointers to variables, array elements and structs, retargeted.
    pub pointers: bool,
    /// a private array of structs indexed per lane.
    pub struct_arrays_of: bool,
    /// char and short vectors, `int3` through `vload3`/`vstore3`.
    pub narrow_vectors: bool,
    /// `async_work_group_copy` phases.
    pub async_copy: bool,
    /// C11 `atomic_fetch_*_explicit` forms.
    pub c11_atomics: bool,
    /// a global work offset.
    pub offsets: bool,
    /// a `__local` array of structs, one per work-item, assigned whole (memory copies).
    pub local_structs: bool,
    /// work-group collective functions (reductions, scans, broadcasts, any / all) in
    /// uniform control flow. Drawn from a generator of its own, so that the kernels of
    /// seeds that do not use them are those of the generator before them.
    pub collectives: bool,
    /// sub-group functions, in forms whose result does not depend on the sub-group size
    /// (an inclusive scan less the exclusive one is the work-item's own value, a reduction
    /// is the sum of shuffles over the sub-group, ...), uniform ones where collectives go
    /// and non-uniform ones anywhere. Drawn from a generator of its own, as `collectives`.
    pub sub_groups: bool,
    /// program-scope variables, generic pointers into each address space asked about their
    /// space, 64-bit atomics and float atomics (`spaces`). Drawn from a generator of its own, as `collectives`.
    pub address_spaces: bool,
    /// Intel's sub-group shuffles and block reads and writes (`intel`). Drawn from a
    /// generator of its own, as `collectives`.
    pub intel_sub_groups: bool,
}

impl Features {
    /// The switch named `name` (one of [`FEATURES`]).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "branches" => &mut self.branches,
            "loops" => &mut self.loops,
            "switch" => &mut self.switch,
            "local" => &mut self.local,
            "local_atomics" => &mut self.local_atomics,
            "global_atomics" => &mut self.global_atomics,
            "private_arrays" => &mut self.private_arrays,
            "structs" => &mut self.structs,
            "struct_pointers" => &mut self.struct_pointers,
            "struct_arrays" => &mut self.struct_arrays,
            "long16" => &mut self.long16,
            "volatile" => &mut self.volatile,
            "vectors" => &mut self.vectors,
            "floats" => &mut self.floats,
            "longs" => &mut self.longs,
            "helpers" => &mut self.helpers,
            "division" => &mut self.division,
            "returns" => &mut self.returns,
            "barriers" => &mut self.barriers,
            "neighbours" => &mut self.neighbours,
            "pointers" => &mut self.pointers,
            "struct_arrays_of" => &mut self.struct_arrays_of,
            "narrow_vectors" => &mut self.narrow_vectors,
            "async_copy" => &mut self.async_copy,
            "c11_atomics" => &mut self.c11_atomics,
            "offsets" => &mut self.offsets,
            "local_structs" => &mut self.local_structs,
            "collectives" => &mut self.collectives,
            "sub_groups" => &mut self.sub_groups,
            "address_spaces" => &mut self.address_spaces,
            "intel_sub_groups" => &mut self.intel_sub_groups,
            _ => return None,
        })
    }

    /// The names of the features that are on.
    pub fn names(&self) -> Vec<&'static str> {
        let mut copy = self.clone();
        FEATURES.iter().copied().filter(|n| copy.get_mut(n).is_some_and(|b| *b)).collect()
    }
}

/// What the generator may use.
#[derive(Clone, Debug, Default)]
pub struct GenOptions {
    /// Features never used (names of [`FEATURES`]).
    pub disabled: Vec<String>,
}

/// An NDRange of one or two dimensions with an explicit local size; the global size need not
/// be a multiple of it (the last work-groups are partial).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    pub global: Vec<usize>,
    pub local: Vec<usize>,
    /// The global work offset (all zeros: none).
    pub offset: Vec<usize>,
}

impl Launch {
    /// Work-items of the whole NDRange.
    pub fn items(&self) -> usize {
        self.global.iter().product()
    }

    /// Work-items of a full work-group.
    pub fn group_size(&self) -> usize {
        self.local.iter().product()
    }

    /// True when some work-group is partial.
    pub fn non_uniform(&self) -> bool {
        self.global.iter().zip(&self.local).any(|(g, l)| g % l != 0)
    }
}

/// One generated kernel: its launch, the seed of its input data and its statements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    pub seed: u64,
    pub launch: Launch,
    pub data_seed: u64,
    pub features: Vec<String>,
    pub nodes: Vec<Node>,
}

impl Case {
    /// The kernel's source: the header the runner reads ([`parse_header`]), then the code.
    pub fn source(&self) -> String {
        let mut s = header(self.seed, &self.launch, self.data_seed);
        s.push_str(&format!("// features: {}\n", self.features.join(" ")));
        s.push_str(&emit(&self.nodes));
        s
    }
}

/// The header lines of a kernel file: where it comes from, its launch and data seed.
pub fn header(seed: u64, launch: &Launch, data_seed: u64) -> String {
    let join = |v: &[usize]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" ");
    let offset = if launch.offset.iter().any(|&o| o != 0) {
        format!("// offset: {}\n", join(&launch.offset))
    } else {
        String::new()
    };
    format!(
        "// softcl-fuzz kernel, seed {seed}\n// global: {}\n// local: {}\n{offset}// data: {data_seed}\n",
        join(&launch.global),
        join(&launch.local)
    )
}

/// The launch and data seed of a kernel file's header (`// global: 37 5`, `// local: 7 3`,
/// `// offset: 4 0`, `// data: 12`; the offset defaults to none, the data seed to 0).
pub fn parse_header(text: &str) -> Result<(Launch, u64), String> {
    let mut global = None;
    let mut local = None;
    let mut offset = None;
    let mut data = 0u64;
    let nums = |v: &str| -> Result<Vec<usize>, String> {
        v.split_whitespace().map(|x| x.parse::<usize>().map_err(|e| format!("{x:?}: {e}"))).collect()
    };
    for line in text.lines() {
        let Some(rest) = line.trim().strip_prefix("//") else { continue };
        let rest = rest.trim();
        if let Some(v) = rest.strip_prefix("global:") {
            global = Some(nums(v)?);
        } else if let Some(v) = rest.strip_prefix("local:") {
            local = Some(nums(v)?);
        } else if let Some(v) = rest.strip_prefix("offset:") {
            offset = Some(nums(v)?);
        } else if let Some(v) = rest.strip_prefix("data:") {
            data = v.trim().parse().map_err(|e| format!("data seed {v:?}: {e}"))?;
        }
    }
    let global = global.ok_or("no `// global:` line")?;
    let local = local.ok_or("no `// local:` line")?;
    let offset = offset.unwrap_or_else(|| vec![0; global.len()]);
    if global.is_empty()
        || global.len() > 2
        || global.len() != local.len()
        || global.len() != offset.len()
        || local.contains(&0)
    {
        return Err(format!("bad launch: global {global:?}, local {local:?}, offset {offset:?}"));
    }
    Ok((Launch { global, local, offset }, data))
}

/// The initial contents of `in` (`n` values) and `buf` (`4 n` values) for a data seed:
/// integer edge values, small numbers and random bits.
pub fn input_data(data_seed: u64, n: usize) -> (Vec<i32>, Vec<i32>) {
    let mut rng = Rng::new(data_seed ^ 0x5eed_da7a);
    let value = |rng: &mut Rng| -> i32 {
        match rng.below(10) {
            0..=2 => *rng.pick(&[i32::MIN, -1, 0, 1, i32::MAX, -2, 2, i32::MIN + 1]),
            3..=6 => rng.below(33) as i32 - 16,
            _ => rng.next_u32() as i32,
        }
    };
    let a = (0..n).map(|_| value(&mut rng)).collect();
    let b = (0..4 * n).map(|_| value(&mut rng)).collect();
    (a, b)
}

/// The kernel's by-value arguments `ka` (int) and `kb` (uint) for a data seed.
pub fn kernel_args(data_seed: u64) -> (i32, u32) {
    let mut rng = Rng::new(data_seed ^ 0xa265);
    let ka = *rng.pick(&[0, 1, -1, 3, 100, i32::MIN, i32::MAX]);
    let kb = *rng.pick(&[0, 1, 2, 5, u32::MAX, 0x8000_0000]);
    (ka, kb)
}

/// The initial values of the eight counters: add/sub, inc/dec, unsigned min, unsigned max,
/// signed min, signed max, or, xor.
pub const COUNTER_INIT: [u32; 8] = [0, 0, u32::MAX, 0, i32::MAX as u32, i32::MIN as u32, 0, 0];

/// How a phase uses a `__local` object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `t`: each work-item writes and reads its own slot; `lc`: atomics.
    Write,
    /// Only reads.
    Read,
}

/// The variables visible at a point, by type (names are lvalue expressions: `i0`,
/// `s0.m1`, `(*s0.m2)`, `sp->m0`).
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub ints: Vec<String>,
    pub uints: Vec<String>,
    pub narrow: Vec<(String, &'static str)>,
    /// Read-only ints: ids, loop counters.
    pub ro: Vec<String>,
    pub arrays: Vec<(String, usize)>,
    pub int4s: Vec<String>,
    pub uint4s: Vec<String>,
    pub float4s: Vec<String>,
    pub ulongs: Vec<String>,
    pub long16s: Vec<String>,
    /// Whole structs (name, definition index), for copies and helper calls.
    pub structs: Vec<(String, usize)>,
    /// In the kernel (ids, `buf`, `t`, `lc`, `cnt` are there).
    pub kernel: bool,
    /// The readable global array: `in` in the kernel, a parameter in helpers.
    pub global_in: Option<String>,
    /// Plain int variables a pointer member may point to.
    pub targets: Vec<String>,
}

/// Where a statement goes.
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    pub depth: u32,
    /// Loops around the statement in this function (`break`, `continue`).
    pub loops: u32,
    /// The innermost breakable statement is a `switch`.
    pub in_switch: bool,
    /// The statement that returns, when a return is allowed here.
    pub ret: Option<String>,
    pub t_mode: Option<Mode>,
    pub lc_mode: Option<Mode>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Member {
    Int,
    Uint,
    Short,
    Uchar,
    Arr(usize),
    Int4,
    Float4,
    Long16,
    Volatile,
    Ptr,
    Nested(usize),
}

#[derive(Clone, Debug)]
pub(super) struct StructDef {
    pub(super) name: String,
    pub(super) members: Vec<Member>,
}

/// The generator's state for one kernel.
pub struct Gen {
    pub(super) rng: Rng,
    pub(super) f: Features,
    pub(super) n_items: usize,
    /// Helpers `uint h(uint, int)` and `int h(__global const int *, int)` defined so far.
    pub(super) helpers_u: Vec<String>,
    pub(super) helpers_i: Vec<String>,
    /// Helpers taking a struct by pointer (`void h(S *, int)`) and by value
    /// (`S h(S, uint)`), per struct definition.
    pub(super) helpers_p: Vec<(String, usize)>,
    pub(super) helpers_s: Vec<(String, usize)>,
    pub(super) structs: Vec<StructDef>,
    /// Work-items of a full work-group (the length of `t`).
    group_size: usize,
    /// The launch's dimensions.
    dims: usize,
    /// The generator of the collectives' choices (see `Features::collectives`).
    side: Rng,
    /// The generator of the sub-group functions' choices (see `Features::sub_groups`).
    pub(super) sg_side: Rng,
    /// The generator of the address-space feature's choices (`Features::address_spaces`).
    pub(super) as_side: Rng,
    /// The generator of the Intel sub-group feature's choices (`Features::intel_sub_groups`).
    pub(super) is_side: Rng,
    pub(super) budget: usize,
    names: usize,
}

/// Generates the kernel of `seed`.
pub fn generate(seed: u64, opts: &GenOptions) -> Case {
    let mut rng = Rng::new(seed);
    let mut f = Features::default();
    let own_generator = ["collectives", "sub_groups", "address_spaces", "intel_sub_groups"];
    for name in FEATURES.iter().filter(|n| !own_generator.contains(n)) {
        let on = rng.chance(if matches!(*name, "branches" | "neighbours" | "loops") { 85 } else { 55 });
        *f.get_mut(name).expect("a feature") = on && !opts.disabled.iter().any(|d| d == name);
    }
    let mut launch = random_launch(&mut rng);
    if f.offsets {
        launch.offset = launch.global.iter().map(|_| rng.below(40)).collect();
    }
    let data_seed = rng.next_u64();
    let mut side = Rng::new(seed ^ 0xc011_ec71_5eed);
    f.collectives = side.chance(50) && !opts.disabled.iter().any(|d| d == "collectives");
    // Drawn after every choice of the collectives' generator so far: seeds without
    // sub-groups keep their kernels.
    let mut sg_side = Rng::new(seed ^ 0x5b_9709_5eed);
    f.sub_groups = sg_side.chance(40) && !opts.disabled.iter().any(|d| d == "sub_groups");
    let mut as_side = Rng::new(seed ^ 0xadd5_9ace_5eed);
    f.address_spaces = as_side.chance(40) && !opts.disabled.iter().any(|d| d == "address_spaces");
    let mut is_side = Rng::new(seed ^ 0x1e7e_15b6_5eed);
    f.intel_sub_groups = is_side.chance(35) && !opts.disabled.iter().any(|d| d == "intel_sub_groups");
    let mut g = Gen {
        side,
        sg_side,
        as_side,
        is_side,
        dims: launch.global.len(),
        rng,
        n_items: launch.items(),
        f,
        helpers_u: Vec::new(),
        helpers_i: Vec::new(),
        helpers_p: Vec::new(),
        helpers_s: Vec::new(),
        structs: Vec::new(),
        group_size: launch.group_size(),
        budget: 0,
        names: 0,
    };
    g.budget = g.rng.range(20, 70);
    let nodes = g.program(&launch);
    Case { seed, launch, data_seed, features: g.f.names().iter().map(|s| s.to_string()).collect(), nodes }
}

fn random_launch(rng: &mut Rng) -> Launch {
    if rng.chance(75) {
        let lx = *rng.pick(&[1, 2, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64]);
        let groups = rng.range(1, 6);
        let rem = if lx > 1 && rng.chance(40) { rng.range(1, lx - 1) } else { 0 };
        Launch { global: vec![lx * groups + rem], local: vec![lx], offset: vec![0] }
    } else {
        // Often a shape whose rows fill whole Gen hardware threads at some width (the rows
        // variant: `local_size[0]` dividing the width, a plane a multiple of it).
        const WHOLE_ROWS: [(usize, usize); 9] =
            [(2, 4), (4, 2), (4, 4), (8, 2), (8, 4), (16, 2), (2, 8), (4, 8), (8, 8)];
        let (lx, ly) = if rng.chance(40) {
            *rng.pick(&WHOLE_ROWS)
        } else {
            (*rng.pick(&[1, 2, 3, 4, 5, 7, 8, 13, 16]), *rng.pick(&[1, 2, 3, 4, 5]))
        };
        let dim = |l: usize, rng: &mut Rng| {
            let rem = if l > 1 && rng.chance(35) { rng.range(1, l - 1) } else { 0 };
            l * rng.range(1, 3) + rem
        };
        let gx = dim(lx, rng);
        let gy = dim(ly, rng);
        Launch { global: vec![gx, gy], local: vec![lx, ly], offset: vec![0, 0] }
    }
}

/// The helpers every kernel may use: `mix` folds a value into the checksum, `fold_i4` and
/// `fold_l16` fold vectors.
const PRELUDE: [&str; 3] = [
    "static uint mix(uint h, uint v) { return rotate((h ^ v) * 0x01000193u, 13u) + 0x9e3779b9u; }",
    "static uint fold_i4(int4 v) {
    return (uint)v.x ^ rotate((uint)v.y, 8u) ^ rotate((uint)v.z, 16u) ^ rotate((uint)v.w, 24u);
}",
    "static uint fold_l16(long16 v) {
    ulong16 u = as_ulong16(v);
    ulong8 a = u.lo ^ rotate(u.hi, (ulong8)(7));
    ulong4 b = a.lo ^ rotate(a.hi, (ulong4)(11));
    ulong2 c = b.lo ^ rotate(b.hi, (ulong2)(13));
    ulong d = c.x ^ rotate(c.y, (ulong)17);
    return (uint)d ^ (uint)(d >> 32);
}",
];

impl Gen {
    pub(super) fn fresh(&mut self, prefix: &str) -> String {
        self.names += 1;
        format!("{prefix}{}", self.names)
    }

    fn program(&mut self, launch: &Launch) -> Vec<Node> {
        let mut nodes =
            vec![Node::fixed(format!("#define NITEMS {}\n#define LSZ {}", launch.items(), launch.group_size()))];
        nodes.extend(PRELUDE.iter().map(|p| Node::line(*p)));
        if self.f.structs {
            for i in 0..self.rng.range(1, 2) {
                let def = self.struct_def(i);
                nodes.push(Node::line(self.struct_text(&def)));
                self.structs.push(def);
            }
        }
        if self.f.helpers {
            for _ in 0..self.rng.range(1, 3) {
                nodes.push(self.helper());
            }
        }
        if self.f.address_spaces {
            nodes.extend(self.address_space_globals());
        }
        if self.f.intel_sub_groups {
            nodes.push(Gen::intel_sub_group_globals(launch));
        }
        nodes.push(self.kernel());
        nodes
    }

    fn struct_def(&mut self, index: usize) -> StructDef {
        let mut members = Vec::new();
        for _ in 0..self.rng.range(2, 5) {
            let mut choices = vec![Member::Int, Member::Uint, Member::Short, Member::Uchar];
            if self.f.struct_arrays {
                choices.extend([Member::Arr(*self.rng.pick(&[2, 3, 4, 5, 8])); 3]);
            }
            if self.f.vectors {
                choices.push(Member::Int4);
            }
            if self.f.floats {
                choices.push(Member::Float4);
            }
            if self.f.long16 {
                choices.extend([Member::Long16; 2]);
            }
            if self.f.volatile {
                choices.push(Member::Volatile);
            }
            if self.f.struct_pointers {
                choices.extend([Member::Ptr; 2]);
            }
            if index > 0 {
                choices.push(Member::Nested(index - 1));
            }
            members.push(*self.rng.pick(&choices));
        }
        StructDef { name: format!("S{index}"), members }
    }

    fn struct_text(&self, def: &StructDef) -> String {
        let mut s = String::from("typedef struct {\n");
        for (i, m) in def.members.iter().enumerate() {
            let decl = match m {
                Member::Int => format!("int m{i};"),
                Member::Uint => format!("uint m{i};"),
                Member::Short => format!("short m{i};"),
                Member::Uchar => format!("uchar m{i};"),
                Member::Arr(n) => format!("int m{i}[{n}];"),
                Member::Int4 => format!("int4 m{i};"),
                Member::Float4 => format!("float4 m{i};"),
                Member::Long16 => format!("long16 m{i};"),
                Member::Volatile => format!("volatile int m{i};"),
                Member::Ptr => format!("int *m{i};"),
                Member::Nested(j) => format!("{} m{i};", self.structs[*j].name),
            };
            s.push_str("    ");
            s.push_str(&decl);
            s.push('\n');
        }
        s.push_str(&format!("}} {};", def.name));
        s
    }

    /// Adds the members of a struct value `base` (`s0`, `sp`) to `scope`, reached with `sep`
    /// (`.` or `->`).
    fn flatten(&self, def: usize, base: &str, sep: &str, scope: &mut Scope) {
        let d = self.structs[def].clone();
        for (i, m) in d.members.iter().enumerate() {
            let name = format!("{base}{sep}m{i}");
            match m {
                Member::Int | Member::Volatile => scope.ints.push(name),
                Member::Uint => scope.uints.push(name),
                Member::Short => scope.narrow.push((name, "short")),
                Member::Uchar => scope.narrow.push((name, "uchar")),
                Member::Arr(n) => scope.arrays.push((name, *n)),
                Member::Int4 => scope.int4s.push(name),
                Member::Float4 => scope.float4s.push(name),
                Member::Long16 => scope.long16s.push(name),
                Member::Ptr => scope.ints.push(format!("(*{name})")),
                Member::Nested(j) => {
                    scope.structs.push((name.clone(), *j));
                    self.flatten(*j, &name, ".", scope);
                }
            }
        }
    }

    /// A designated initializer of struct `def` from the values of `s`.
    fn struct_init(&mut self, def: usize, s: &Scope, c: &Ctx) -> String {
        let d = self.structs[def].clone();
        let mut parts = Vec::new();
        for (i, m) in d.members.iter().enumerate() {
            if !matches!(m, Member::Ptr | Member::Nested(_)) && self.rng.chance(15) {
                continue; // left to the zero initialisation of the members not named
            }
            let v = match m {
                Member::Int | Member::Volatile => self.i(s, c, 1),
                Member::Uint => self.u(s, c, 1),
                Member::Short => format!("(short){}", self.i_leaf(s, c)),
                Member::Uchar => format!("(uchar){}", self.u_leaf(s, c)),
                Member::Arr(n) => {
                    let k = self.rng.range(1, *n);
                    let items: Vec<String> = (0..k).map(|_| self.i_leaf(s, c)).collect();
                    format!("{{ {} }}", items.join(", "))
                }
                Member::Int4 => self.i4(s, c, 0),
                Member::Float4 => "(float4)(0.25f, -1.0f, 3.5f, 0.0f)".to_string(),
                Member::Long16 => format!("(long16)((long){})", self.i_leaf(s, c)),
                Member::Ptr => format!("&{}", self.rng.pick(&s.targets).clone()),
                Member::Nested(j) => self.struct_init(*j, s, c),
            };
            parts.push(format!(".m{i} = {v}"));
        }
        format!("{{ {} }}", parts.join(", "))
    }

    /// A helper function (inlined by the driver into vectorized kernels). It is made visible
    /// to later code only once its body is generated, so that no helper calls itself.
    fn helper(&mut self) -> Node {
        let mut s = Scope::default();
        let by_struct = !self.structs.is_empty() && self.rng.chance(50);
        let def = if by_struct { self.rng.below(self.structs.len()) } else { 0 };
        let kind = if by_struct { self.rng.below(2) } else { 2 + usize::from(self.rng.chance(40)) };
        let (name, head, decls, ret_final, ret_early) = match kind {
            0 => {
                let name = self.fresh("hp");
                let t = self.structs[def].name.clone();
                self.flatten(def, "sp", "->", &mut s);
                s.ints.push("b".into());
                (name.clone(), format!("static void {name}({t} *sp, int b)"), vec![], "return;", "return;")
            }
            1 => {
                let name = self.fresh("hs");
                let t = self.structs[def].name.clone();
                self.flatten(def, "v", ".", &mut s);
                s.uints.push("a".into());
                s.ints.push("x".into());
                s.structs.push(("v".into(), def));
                let decls = vec![Node::line("int x = (int)a;")];
                (name.clone(), format!("static {t} {name}({t} v, uint a)"), decls, "return v;", "return v;")
            }
            2 => {
                let name = self.fresh("hf");
                s.uints.extend(["a".to_string(), "r".to_string()]);
                s.ints.extend(["b".to_string(), "x".to_string()]);
                let decls = vec![Node::line("uint r = a ^ 0x5bd1e995u;"), Node::line("int x = b;")];
                (name.clone(), format!("static uint {name}(uint a, int b)"), decls, "return r ^ (uint)x;", "return r;")
            }
            _ => {
                let name = self.fresh("hg");
                s.ints.extend(["b".to_string(), "x".to_string()]);
                s.global_in = Some("g".into());
                let decls = vec![Node::line("int x = b;")];
                (
                    name.clone(),
                    format!("static int {name}(__global const int *g, int b)"),
                    decls,
                    "return x;",
                    "return b;",
                )
            }
        };
        let c = Ctx { ret: Some(ret_early.to_string()), ..Ctx::default() };
        let saved_budget = self.budget;
        self.budget = self.rng.range(3, 10);
        let n = self.rng.range(2, 6);
        let mut body = decls;
        body.extend(self.stmts(&s, &c, n));
        body.push(Node::fixed(ret_final));
        self.budget = saved_budget;
        match kind {
            0 => self.helpers_p.push((name, def)),
            1 => self.helpers_s.push((name, def)),
            2 => self.helpers_u.push(name),
            _ => self.helpers_i.push(name),
        }
        Node::block(BlockKind::Function, head, body)
    }

    fn kernel(&mut self) -> Node {
        let mut body: Vec<Node> = [
            "const int gx = (int)(get_global_id(0) - get_global_offset(0));",
            "const int gy = (int)(get_global_id(1) - get_global_offset(1));",
            "const int gid = gy * (int)get_global_size(0) + gx;",
            "const int l = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0));",
            "const int lx = (int)get_local_id(0);",
            "const int ls = (int)(get_local_size(0) * get_local_size(1));",
            "const int grp = (int)(get_group_id(1) * get_num_groups(0) + get_group_id(0));",
            "uint h = 0x811c9dc5u ^ (uint)gid;",
        ]
        .iter()
        .map(|l| Node::line(*l))
        .collect();
        let mut s = Scope {
            kernel: true,
            global_in: Some("in".into()),
            ro: ["gid", "gx", "gy", "l", "lx", "ls", "grp", "ka"].iter().map(|x| x.to_string()).collect(),
            ..Scope::default()
        };
        let c0 = Ctx::default();
        // Scalars first (their initializers read only what is declared before them).
        for k in 0..self.rng.range(2, 4) {
            let v = format!("i{k}");
            let init = match self.rng.below(if self.f.narrow_vectors { 5 } else { 4 }) {
                0 => "in[gid]".to_string(),
                1 => "in[NITEMS - 1 - gid]".to_string(),
                2 => format!("buf[gid * 4 + {}]", self.rng.below(4)),
                3 => self.i(&s, &c0, 2),
                // A byte or a 16-bit word of the input at an index from the data: a gather
                // of narrow elements (of their dwords on hosts with gather instructions).
                _ => {
                    let (ty, per_int) = *self.rng.pick(&[("uchar", 4), ("ushort", 2), ("char", 4), ("short", 2)]);
                    let at = self.u(&s, &c0, 1);
                    format!("(int)((__global const {ty} *)in)[({at}) % ({per_int}u * NITEMS)]")
                }
            };
            body.push(Node::line_alt(format!("int {v} = {init};"), format!("int {v} = {k};")));
            s.ints.push(v.clone());
            s.targets.push(v);
        }
        for k in 0..self.rng.range(1, 3) {
            let v = format!("u{k}");
            let init = self.u(&s, &c0, 2);
            body.push(Node::line_alt(format!("uint {v} = {init};"), format!("uint {v} = {k}u;")));
            s.uints.push(v);
        }
        if self.f.private_arrays {
            let len = *self.rng.pick(&[3, 4, 5, 8, 13, 16]);
            let text = if len <= 8 && self.rng.chance(50) {
                let items: Vec<String> = (0..len).map(|_| self.i_leaf(&s, &c0)).collect();
                format!("int p0[{len}] = {{ {} }};", items.join(", "))
            } else {
                format!(
                    "int p0[{len}];\nfor (int z = 0; z < {len}; z++) p0[z] = (int)((uint)gid * 31u + (uint)z) ^ i0;"
                )
            };
            body.push(Node::line_alt(text, format!("int p0[{len}] = {{ 0 }};")));
            s.arrays.push(("p0".into(), len));
            // Pointer members and pointers may point into the array too.
            s.targets.push(format!("p0[{}]", self.rng.below(len)));
        }
        if self.f.vectors {
            let init = "(int4)(i0, gid, -1, INT_MIN + l)";
            body.push(Node::line_alt(format!("int4 v0 = {init};"), "int4 v0 = (int4)(0);"));
            s.int4s.push("v0".into());
            let init = self.u4(&s, &c0);
            body.push(Node::line_alt(format!("uint4 w0 = {init};"), "uint4 w0 = (uint4)(0);"));
            s.uint4s.push("w0".into());
        }
        if self.f.floats {
            body.push(Node::line_alt(
                "float4 f0 = (float4)((float)(gid & 255) - 128.0f, 0.25f, -3.0f, (float)(l & 15));\n\
                 float4 f1 = (float4)((float)((i0 & 511) - 256), 1.5f, (float)(gid % 7), -0.5f);",
                "float4 f0 = (float4)(0.0f);\nfloat4 f1 = (float4)(0.0f);",
            ));
            s.float4s.extend(["f0".to_string(), "f1".to_string()]);
        }
        if self.f.longs {
            body.push(Node::line_alt("ulong q0 = upsample(u0, (uint)gid);", "ulong q0 = 0;"));
            s.ulongs.push("q0".into());
        }
        if self.f.long16 && self.rng.chance(50) {
            body.push(Node::line_alt("long16 x0 = (long16)((long)i0 * (long)gid);", "long16 x0 = (long16)(0);"));
            s.long16s.push("x0".into());
        }
        if self.f.structs {
            let n = self.rng.range(1, 3);
            for k in 0..n {
                let def = if k == 2 { s.structs[0].1 } else { self.rng.below(self.structs.len()) };
                let init = self.struct_init(def, &s, &c0);
                let name = format!("s{k}");
                body.push(Node::line(format!("{} {name} = {init};", self.structs[def].name)));
                s.structs.push((name.clone(), def));
                self.flatten(def, &name, ".", &mut s);
                let member_arrays: Vec<(String, usize)> =
                    s.arrays.iter().filter(|(a, _)| a.starts_with(&format!("{name}."))).cloned().collect();
                if let Some((a, len)) = member_arrays.first() {
                    s.targets.push(format!("{a}[{}]", self.rng.below(*len)));
                }
            }
        }
        if self.f.structs && self.f.struct_arrays_of {
            let def = s.structs[0].1;
            let t = self.structs[def].name.clone();
            body.push(Node::line(format!("{t} sa[2] = {{ s0, s0 }};")));
            for name in ["sa[0]", "sa[1]", "sa[l & 1]"] {
                s.structs.push((name.to_string(), def));
                self.flatten(def, name, ".", &mut s);
            }
        }
        if self.f.pointers {
            let target = self.rng.pick(&s.targets).clone();
            body.push(Node::line(format!("int *pp = &{target};")));
            s.ints.push("(*pp)".into());
            if let Some((a, len)) = s.arrays.first().cloned() {
                let off = self.rng.below(len);
                body.push(Node::line(format!("int *pa = &{a}[{off}];")));
                s.arrays.push(("pa".into(), len - off));
            }
            if let Some((name, def)) = s.structs.first().cloned() {
                let t = self.structs[def].name.clone();
                body.push(Node::line(format!("{t} *ps = &{name};")));
                s.structs.push(("(*ps)".into(), def));
                self.flatten(def, "ps", "->", &mut s);
            }
        }
        body.push(Node::line("__global int *gb = buf + gid * 4;"));
        if self.f.local {
            body.push(Node::line(
                "__local int t[LSZ];\nfor (int z = l; z < LSZ; z += ls) t[z] = in[(grp * LSZ + z) % NITEMS] ^ z;",
            ));
        }
        if self.f.local_structs {
            // Each work-item's own element, assigned whole from and to private structs.
            if let Some((name, def)) = s.structs.first().cloned() {
                let t = self.structs[def].name.clone();
                body.push(Node::line(format!("__local {t} ts[LSZ];\nts[l] = {name};")));
                s.structs.push(("ts[l]".into(), def));
                self.flatten(def, "ts[l]", ".", &mut s);
            }
        }
        if self.f.local_atomics {
            let init: Vec<String> = super::gen::COUNTER_INIT.iter().map(|v| format!("0x{v:x}u")).collect();
            body.push(Node::line(format!(
                "__local uint lc[8];\nif (l == 0) {{ uint lc0[8] = {{ {} }}; for (int z = 0; z < 8; z++) lc[z] = lc0[z]; }}",
                init.join(", ")
            )));
        }
        if self.f.local || self.f.local_atomics {
            body.push(Node::fixed("barrier(CLK_LOCAL_MEM_FENCE);"));
        }
        if self.f.address_spaces {
            body.extend(self.address_space_lines(&mut s));
        }
        let fold = self.fold(&s);
        let fold_text = fold.join("\n");
        let phases = if self.f.barriers { self.rng.range(2, 4) } else { 1 };
        for p in 0..phases {
            let last = p + 1 == phases;
            let n = (self.budget / (phases - p)).max(2);
            if !last && self.f.async_copy && self.f.local && self.rng.chance(30) {
                let group = self.group_size;
                body.push(self.async_copy(group));
                body.push(Node::fixed("barrier(CLK_LOCAL_MEM_FENCE);"));
            }
            if !last && self.rng.chance(25) {
                // A loop, uniform in each work-group, holding barriers: a read phase, then a
                // write phase.
                let r = self.fresh("r");
                let mut inner = s.clone();
                inner.ro.push(r.clone());
                let read = self.phase_ctx(Some(Mode::Read), None);
                let write = self.phase_ctx(Some(Mode::Write), None);
                let mut lb: Vec<Node> = self.collective(&inner, &read).into_iter().collect();
                lb.extend(self.stmts(&inner, &read, n / 2 + 1));
                lb.push(Node::fixed(self.barrier()));
                lb.extend(self.stmts(&inner, &write, n / 2 + 1));
                lb.push(Node::fixed(self.barrier()));
                let trips = *self.rng.pick(&["2", "1 + (grp & 1)", "(ka & 1) + 1", "(ls > 5) + 1"]);
                body.push(Node::block(BlockKind::Loop, format!("for (int {r} = 0; {r} < {trips}; {r}++)"), lb));
                continue;
            }
            let mut c = self.phase_ctx(None, None);
            // Before any statement of the phase: before a `return` too.
            body.extend(self.collective(&s, &c));
            if last && self.f.returns {
                c.ret = Some(format!("{fold_text}\nreturn;"));
            }
            if !last && self.rng.chance(20) {
                // Each side of a branch uniform in the work-group ends with its own barrier.
                let cond = *self.rng.pick(&["grp & 1", "ka > 0", "(kb & 1u) != 0u", "ls > 4", "get_group_id(0) == 0"]);
                let mut a: Vec<Node> = self.collective(&s, &c).into_iter().collect();
                a.extend(self.stmts(&s, &c, n / 2 + 1));
                a.push(Node::fixed(self.barrier()));
                let mut b = self.stmts(&s, &c, n / 2 + 1);
                b.push(Node::fixed(self.barrier()));
                let mut node = Node::block(BlockKind::If, format!("if ({cond})"), a);
                if let Node::Block { else_body, .. } = &mut node {
                    *else_body = Some(b);
                }
                body.push(node);
                continue;
            }
            body.extend(self.stmts(&s, &c, n));
            if !last {
                body.push(Node::fixed(self.barrier()));
            }
        }
        // The fold's last line is the store.
        body.extend(fold[..fold.len() - 1].iter().map(|l| Node::line(l.clone())));
        body.push(Node::fixed("out[gid] = h;"));
        let head = "__kernel void fuzz(__global const int *in, __global uint *out, __global int *buf, \
                    __global uint *cnt, int ka, uint kb)";
        Node::block(BlockKind::Fixed, head, body)
    }

    /// `async_work_group_copy` (or its strided form) of part of `in` into `t`, with the
    /// wait: a phase of its own, between barriers. The source range depends only on the
    /// work-group, as the copy's arguments must.
    fn async_copy(&mut self, group: usize) -> Node {
        let items = self.n_items;
        let text = if self.rng.chance(50) {
            let n = group.min(items);
            format!(
                "event_t ev = async_work_group_copy(t, in + (grp * 5) % {}, {n}, 0);\nwait_group_events(1, &ev);",
                items - n + 1
            )
        } else {
            let n = group.min(items.div_ceil(2));
            format!(
                "event_t ev = async_work_group_strided_copy(t, in + grp % {}, {n}, 2, 0);\nwait_group_events(1, &ev);",
                items - (n - 1) * 2
            )
        };
        Node::block(BlockKind::Scope, "", vec![Node::line(text)])
    }

    /// Sometimes, when the kernel uses them, a work-group collective whose result goes into
    /// a variable. Only where every work-item of the work-group gets (uniform control flow,
    /// before any `return`); a broadcast names a work-item by ids uniform in the work-group,
    /// inside it. Sums are of unsigned values (they wrap), floats are exact (`Gen::f`).
    fn collective(&mut self, s: &Scope, c: &Ctx) -> Option<Node> {
        if self.f.sub_groups && self.sg_side.chance(40) {
            return Some(self.uniform_sub_group(s, c));
        }
        if self.f.intel_sub_groups && self.is_side.chance(40) {
            return Some(self.uniform_intel_sub_group(s, c));
        }
        if !self.f.collectives || !self.side.chance(45) {
            return None;
        }
        let min_max = *self.side.pick(&["min", "max"]);
        let x = self.rng.pick(&s.ints).clone();
        let uniform = ["(size_t)(uint)ka", "(size_t)kb", "(size_t)grp", "(size_t)3", "(size_t)(kb >> 1)"];
        let text = match self.side.below(9) {
            0 => format!("{x} = work_group_reduce_{min_max}({});", self.i(s, c, 2)),
            1 => format!("{x} ^= (int)work_group_reduce_add({});", self.u(s, c, 2)),
            2 => format!("{x} += work_group_scan_inclusive_{min_max}({});", self.i(s, c, 2)),
            3 => format!("{x} ^= (int)work_group_scan_exclusive_{min_max}({});", self.u(s, c, 2)),
            4 => {
                let which = *self.side.pick(&["inclusive", "exclusive"]);
                format!("{x} = (int)((uint){x} + work_group_scan_{which}_add({}));", self.u(s, c, 2))
            }
            5 => {
                let a = *self.side.pick(&uniform);
                let ids = if self.dims == 1 {
                    format!("{a} % get_local_size(0)")
                } else {
                    let b = *self.side.pick(&uniform);
                    format!("{a} % get_local_size(0), {b} % get_local_size(1)")
                };
                format!("{x} ^= work_group_broadcast({}, {ids});", self.i(s, c, 2))
            }
            6 => {
                let f = *self.side.pick(&["any", "all"]);
                format!("{x} += work_group_{f}({}) * 3;", self.cond(s, c, 2))
            }
            7 if self.f.longs && !s.ulongs.is_empty() => {
                let v = self.rng.pick(&s.ulongs).clone();
                let op = *self.side.pick(&["reduce_add", "scan_inclusive_max", "scan_exclusive_min", "reduce_min"]);
                format!("{v} ^= work_group_{op}({});", self.ul(s, c))
            }
            8 if self.f.floats => {
                let op = *self.side.pick(&["reduce_max", "reduce_min", "scan_inclusive_max", "scan_exclusive_min"]);
                format!("{x} ^= convert_int_sat(work_group_{op}({}) * 4.0f);", self.f(s, c, 1))
            }
            _ => format!("{x} = work_group_reduce_{min_max}({});", self.i(s, c, 1)),
        };
        Some(Node::line(text))
    }

    /// A sub-group function in uniform control flow (every work-item of the sub-group runs
    /// it), in a form whose value is the same at every sub-group size: 0 when correct.
    fn uniform_sub_group(&mut self, s: &Scope, c: &Ctx) -> Node {
        let x = self.rng.pick(&s.ints).clone();
        let text = match self.sg_side.below(7) {
            6 => {
                // cl_khr_subgroup_rotate against the shuffle from the same work-item.
                let (v, d) = (self.i(s, c, 2), self.sg_side.below(40));
                format!(
                    "{{ int sv = {v};\n{x} ^= sub_group_rotate(sv, {d}u) \
                     - sub_group_shuffle(sv, (get_sub_group_local_id() + {d}u) % get_sub_group_size()); }}"
                )
            }
            0 => {
                let u = self.u(s, c, 2);
                format!(
                    "{{ uint sv = {u}, ss = 0u;\nfor (uint j = 0; j < get_sub_group_size(); j++) ss += sub_group_shuffle(sv, j);\n\
                     {x} ^= (int)(ss - sub_group_reduce_add(sv)); }}"
                )
            }
            1 => format!("{x} ^= sub_group_broadcast({0}, 0) - sub_group_broadcast_first({0});", self.i(s, c, 2)),
            2 => {
                let cond = self.cond(s, c, 2);
                format!(
                    "{{ int sc = {cond};\n{x} ^= (int)(sub_group_ballot_bit_count(sub_group_ballot(sc)) - \
                     sub_group_reduce_add(sc ? 1u : 0u)); }}"
                )
            }
            3 => format!("{x} ^= (int)sub_group_reduce_add((uint)sub_group_elect()) - 1;"),
            4 => {
                let v = self.i(s, c, 2);
                format!(
                    "{{ int sv = {v};\n{x} ^= sub_group_shuffle(sv, get_sub_group_local_id()) - sv \
                     + (sub_group_reduce_max(sv) < sv) + (sub_group_scan_inclusive_min(sv) > sv); }}"
                )
            }
            _ => {
                let u = self.u(s, c, 2);
                format!(
                    "{{ uint sv = {u};\n{x} ^= (int)(sub_group_scan_inclusive_add(sv) - sub_group_scan_exclusive_add(sv) - sv); }}"
                )
            }
        };
        Node::line(text)
    }

    fn barrier(&mut self) -> String {
        let flags = *self.rng.pick(&[
            "CLK_LOCAL_MEM_FENCE",
            "CLK_GLOBAL_MEM_FENCE",
            "CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE",
        ]);
        format!("barrier({flags});")
    }

    /// The context of a phase: random modes for `t` and `lc` unless given.
    fn phase_ctx(&mut self, t: Option<Mode>, lc: Option<Mode>) -> Ctx {
        let pick = |on: bool, m: Option<Mode>, rng: &mut Rng| {
            on.then(|| m.unwrap_or(if rng.chance(50) { Mode::Read } else { Mode::Write }))
        };
        let t_mode = pick(self.f.local, t, &mut self.rng);
        let lc_mode = pick(self.f.local_atomics, lc.or(t), &mut self.rng);
        Ctx { t_mode, lc_mode, ..Ctx::default() }
    }

    /// The statements that fold every variable into `h` (and, at a `return`, store it in
    /// `out[gid]`).
    fn fold(&self, s: &Scope) -> Vec<String> {
        let mut lines = Vec::new();
        for v in &s.ints {
            lines.push(format!("h = mix(h, (uint){v});"));
        }
        for (v, _) in &s.narrow {
            lines.push(format!("h = mix(h, (uint)(int){v});"));
        }
        for v in &s.uints {
            lines.push(format!("h = mix(h, {v});"));
        }
        for (a, len) in &s.arrays {
            lines.push(format!("for (int z = 0; z < {len}; z++) h = mix(h, (uint){a}[z]);"));
        }
        for v in &s.int4s {
            lines.push(format!("h = mix(h, fold_i4({v}));"));
        }
        for v in &s.uint4s {
            lines.push(format!("h = mix(h, fold_i4(as_int4({v})));"));
        }
        for v in &s.float4s {
            lines.push(format!("h = mix(h, fold_i4(convert_int4({v} * 4.0f)));"));
        }
        for v in &s.ulongs {
            lines.push(format!("h = mix(h, (uint){v} ^ (uint)({v} >> 32));"));
        }
        for v in &s.long16s {
            lines.push(format!("h = mix(h, fold_l16({v}));"));
        }
        lines.push("out[gid] = h;".into());
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trip() {
        let launch = Launch { global: vec![37, 5], local: vec![7, 3], offset: vec![0, 0] };
        let text = header(9, &launch, 1234);
        assert_eq!(parse_header(&text).unwrap(), (launch, 1234));
        let launch = Launch { global: vec![37], local: vec![7], offset: vec![5] };
        let text = header(9, &launch, 1234);
        assert_eq!(parse_header(&text).unwrap(), (launch, 1234));
        assert!(parse_header("// global: 3\n").is_err());
    }

    #[test]
    fn same_seed_same_kernel() {
        let o = GenOptions::default();
        for seed in 0..20 {
            assert_eq!(generate(seed, &o).source(), generate(seed, &o).source());
        }
        assert_ne!(generate(1, &o).source(), generate(2, &o).source());
    }

    #[test]
    fn disabled_features_stay_off() {
        let o = GenOptions { disabled: vec!["structs".into(), "loops".into()] };
        for seed in 0..20 {
            let c = generate(seed, &o);
            assert!(!c.features.iter().any(|f| f == "structs" || f == "loops"));
            assert!(!c.source().contains("typedef struct"));
        }
    }
}
