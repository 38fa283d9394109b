//! The generator's address-space feature (`Features::address_spaces`): program-scope
//! `__global` variables (a read-only table with an initializer, a pointer initialised with
//! the address of one of its elements, a slot per work-item), a helper taking a generic
//! pointer that asks `get_fence`, `to_global`, `to_local` and `to_private` about it and
//! writes through it, called with pointers into each space, and 64-bit atomics and float
//! atomics (`cl_ext_float_atomics`) on the work-item's own element of a program-scope `long`
//! and `float` array (memory no other access reads as another type). Every choice comes from the feature's own generator, and
//! its values reach the checksum through `i0` and `i1`.

use super::ast::Node;
use super::gen::{Ctx, Gen, Scope};

/// The helper and the program-scope variables, ahead of the kernel.
pub(super) const HELPER: &str = "\
static int gspace(int *p, int v) {
    *p = (int)((uint)*p + (uint)v);
    return (int)((uint)get_fence(p) * 1000u + (uint)(to_global(p) != 0) * 100u
        + (uint)(to_local(p) != 0) * 10u + (uint)(to_private(p) != 0) + (uint)*p);
}";

impl Gen {
    /// The program-scope declarations (and the 64-bit atomics' pragmas).
    pub(super) fn address_space_globals(&mut self) -> Vec<Node> {
        let table: Vec<String> = (0..8).map(|_| format!("{}", self.as_side.below(2001) as i64 - 1000)).collect();
        let at = self.as_side.below(8);
        vec![
            Node::fixed(
                "#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable\n\
                 #pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable",
            ),
            Node::line(format!("global int gtab[8] = {{ {} }};", table.join(", "))),
            Node::line(format!("global int *gtp = &gtab[{at}];")),
            Node::fixed("global int gslot[NITEMS];\nglobal long g64[NITEMS];\nglobal float gfl[NITEMS];"),
            Node::line(HELPER),
        ]
    }

    /// The kernel's statements (after `gb` and `t` are declared): the table and pointer as
    /// read-only values, the per-work-item slots, `gspace` on pointers into global, local and
    /// private memory, 64-bit atomics on the work-item's `g64` element.
    pub(super) fn address_space_lines(&mut self, s: &mut Scope) -> Vec<Node> {
        let c = Ctx::default();
        for _ in 0..2 {
            let k = self.as_side.below(8);
            s.ro.push(format!("gtab[{k}]"));
        }
        s.ro.push("(*gtp)".into());
        let mut out = vec![
            Node::line(format!("gslot[gid] = {};", self.i(s, &c, 2))),
            Node::line(format!("__local int ga[LSZ];\nga[l] = {};", self.i(s, &c, 1))),
        ];
        let mut places = vec!["&gslot[gid]".to_string(), "&ga[l]".into(), "gb + 3".into()];
        places.extend(s.targets.iter().map(|t| format!("&{t}")));
        for _ in 0..self.as_side.range(2, 4) {
            let place = places[self.as_side.below(places.len())].clone();
            let v = self.i(s, &c, 1);
            let into = if self.as_side.chance(50) { "i0" } else { "i1" };
            // The call may write `into` itself: its result is combined in a statement after it.
            out.push(Node::line_alt(format!("{{ int gq = gspace({place}, {v}); {into} ^= gq; }}"), ""));
        }
        let ops = ["atom_add", "atom_xor", "atom_max", "atom_min", "atom_or", "atom_and", "atom_xchg"];
        for _ in 0..self.as_side.range(1, 3) {
            let op = ops[self.as_side.below(ops.len())];
            let v = self.i(s, &c, 1);
            let into = if self.as_side.chance(50) { "i0" } else { "i1" };
            out.push(Node::line_alt(
                format!("{into} ^= (int)({op}((volatile __global long *)&g64[gid], (long)((ulong)(uint)({v}) << 20)) >> 7);"),
                "",
            ));
        }
        // Float atomics (cl_ext_float_atomics) on the work-item's `gfl` element: whole
        // numbers below 2^24, exact in any order.
        for _ in 0..self.as_side.range(1, 3) {
            let op = ["add", "min", "max"][self.as_side.below(3)];
            let v = self.i(s, &c, 1);
            let into = if self.as_side.chance(50) { "i0" } else { "i1" };
            out.push(Node::line_alt(
                format!(
                    "{into} ^= (int)atomic_fetch_{op}_explicit((volatile __global atomic_float *)&gfl[gid], \
                     (float)(({v}) & 0xfff), memory_order_relaxed, memory_scope_device);"
                ),
                "",
            ));
        }
        out.push(Node::line_alt(
            format!(
                "{} ^= gslot[gid] + ga[l] + (int)(uint)(g64[gid] >> 9) + (int)gfl[gid];",
                if self.as_side.chance(50) { "i0" } else { "i1" }
            ),
            "",
        ));
        out
    }
}
