//! The generator's Intel sub-group feature (`Features::intel_sub_groups`): Intel's shuffles
//! (`intel_sub_group_shuffle`, `_xor`, `_down` of two sources, `_up` of two sources) of ints,
//! shorts and char vectors, and block reads of `in` and block writes to a program-scope
//! buffer with one region per sub-group, each in a form whose value is the same at every
//! sub-group size: 0 when correct. A shuffle in divergent control flow reads only the
//! work-item's own value (another work-item may not run it); in uniform control flow it is
//! checked against the standard `sub_group_shuffle` of the same lane, and a lane outside a
//! partial sub-group, whose value the extension leaves undefined, counts 0. Block reads and
//! writes run where every work-item of the sub-group does and count only in whole
//! sub-groups. Every choice comes from the feature's own generator.

use super::ast::Node;
use super::gen::{Ctx, Gen, Launch, Scope};

impl Gen {
    /// The program-scope buffer of the block writes: two words per work-item of each
    /// sub-group of the launch at the largest sub-group count any width gives (a sub-group
    /// of one work-item each, or rows of up to 32 lanes begun anew in each row).
    pub(super) fn intel_sub_group_globals(launch: &Launch) -> Node {
        let groups: usize = launch.global.iter().zip(&launch.local).map(|(g, l)| g.div_ceil(*l)).product();
        let rows = launch.local.get(1).copied().unwrap_or(1);
        let words = groups * (launch.group_size() + 32 * rows) * 2;
        Node::fixed(format!("global uint gblk[{words}];"))
    }

    /// An Intel sub-group function where every work-item of the sub-group runs it.
    pub(super) fn uniform_intel_sub_group(&mut self, s: &Scope, c: &Ctx) -> Node {
        let x = self.rng.pick(&s.ints).clone();
        let ids = "uint sz = get_sub_group_size(), lid = get_sub_group_local_id(), \
                   whole = sz == get_max_sub_group_size();";
        let text = match self.is_side.below(6) {
            0 => {
                let u = self.u(s, c, 2);
                format!(
                    "{{ uint sv = {u}, ss = 0u;\nfor (uint j = 0; j < get_sub_group_size(); j++) ss += intel_sub_group_shuffle(sv, j);\n\
                     {x} ^= (int)(ss - sub_group_reduce_add(sv)); }}"
                )
            }
            1 => {
                // Down: `sv` of lane lid + d, or `sv + 7` of lane lid + d - size past the end
                // (defined in whole sub-groups only).
                let (u, d) = (self.u(s, c, 2), self.is_side.below(40));
                format!(
                    "{{ {ids}\nuint sv = {u}, d = {d}u % sz;\nuint t = intel_sub_group_shuffle_down(sv, sv + 7u, d);\n\
                     uint a = sub_group_shuffle(sv, (lid + d) % sz);\n\
                     {x} ^= (int)(lid + d < sz ? t - a : (whole ? t - 7u - a : 0u)); }}"
                )
            }
            2 => {
                // Up: `sv` of lane lid - d, or `sv ^ 5` of lane lid - d + size before the start.
                let (u, d) = (self.u(s, c, 2), self.is_side.below(40));
                format!(
                    "{{ {ids}\nuint sv = {u}, d = {d}u % sz;\nuint t = intel_sub_group_shuffle_up(sv ^ 5u, sv, d);\n\
                     uint a = sub_group_shuffle(sv, (lid + sz - d) % sz);\n\
                     {x} ^= (int)(lid >= d ? t - a : (whole ? t - (a ^ 5u) : 0u)); }}"
                )
            }
            3 => {
                let (v, m) = (self.i(s, c, 2), self.is_side.below(32));
                format!(
                    "{{ {ids}\nint sv = {v};\nuint m = {m}u;\nint t = intel_sub_group_shuffle_xor(sv, m);\n\
                     int a = sub_group_shuffle(sv, (lid ^ m) % sz);\n{x} ^= (lid ^ m) < sz ? t - a : 0; }}"
                )
            }
            4 => {
                // A block read of `in` against plain loads of the same elements.
                let (k, parts) = (self.is_side.below(1000), *self.is_side.pick(&[1usize, 2, 4]));
                let (read, ty) = match parts {
                    1 => ("intel_sub_group_block_read", "uint"),
                    2 => ("intel_sub_group_block_read2", "uint2"),
                    _ => ("intel_sub_group_block_read4", "uint4"),
                };
                let comps: Vec<String> = (0..parts)
                    .map(|j| {
                        let c = if parts == 1 { String::new() } else { format!(".s{j}") };
                        format!("bv{c} - bp[{j}u * mx + lid]")
                    })
                    .collect();
                format!(
                    "{{ {ids}\nuint mx = get_max_sub_group_size();\nif ({parts}u * mx <= NITEMS) {{\n\
                     const __global uint *bp = (const __global uint *)in + {k}u % (NITEMS - {parts}u * mx + 1u);\n\
                     {ty} bv = {read}(bp);\n{x} ^= whole ? (int)({}) : 0; }} }}",
                    comps.join(" + ")
                )
            }
            _ => {
                // A block write to this sub-group's region, read back by each work-item.
                let (u0, u1) = (self.u(s, c, 1), self.u(s, c, 1));
                format!(
                    "{{ {ids}\nuint mx = get_max_sub_group_size(), w0 = {u0}, w1 = {u1};\n\
                     __global uint *bw = gblk + (uint)(grp * get_enqueued_num_sub_groups() + get_sub_group_id()) * 2u * mx;\n\
                     intel_sub_group_block_write2(bw, (uint2)(w0, w1));\n\
                     {x} ^= whole ? (int)(bw[lid] - w0 + bw[mx + lid] - w1) : 0; }}"
                )
            }
        };
        Node::line(text)
    }

    /// An Intel shuffle anywhere: of the work-item's own value, which it always reads.
    pub(super) fn non_uniform_intel_sub_group(&mut self, s: &Scope, c: &Ctx) -> Node {
        let Some(x) = s.ints.first().cloned() else { return Node::line(";") };
        let v = self.i(s, c, 2);
        let text = match self.is_side.below(5) {
            0 => format!("{{ int sv = {v};\n{x} ^= intel_sub_group_shuffle(sv, get_sub_group_local_id()) - sv; }}"),
            1 => format!("{{ int sv = {v};\n{x} ^= intel_sub_group_shuffle_xor(sv, 0u) - sv; }}"),
            2 => format!("{{ int sv = {v};\n{x} ^= intel_sub_group_shuffle_down(sv, sv + 1, 0u) - sv; }}"),
            3 => format!(
                "{{ short sv = (short){v};\n{x} ^= (int)(intel_sub_group_shuffle_up((short)(sv ^ 3), sv, 0u) - sv); }}"
            ),
            _ => format!(
                "{{ uchar2 sv = (uchar2)((uchar){v}, (uchar)({v} >> 8));\n\
                 uchar2 t = intel_sub_group_shuffle(sv, get_sub_group_local_id());\n{x} ^= (int)(t.x - sv.x) + (int)(t.y - sv.y); }}"
            ),
        };
        Node::line(text)
    }
}
