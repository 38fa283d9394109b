//! Statements of the generated kernels: assignments, stores, atomics, branches, loads
//! guarded around the work-item's own index, divisions under divergent control, loops,
//! `switch`, vector, float, long and struct statements, helper calls. Each is well defined
//! whatever the values of the variables it reads (see `expr`), so the reducer may delete
//! any of them.

use super::ast::{BlockKind, Node};
use super::gen::{Ctx, Gen, Member, Mode, Scope};

impl Gen {
    /// `n` statements (fewer when the budget runs out, at least one).
    pub(super) fn stmts(&mut self, s: &Scope, c: &Ctx, n: usize) -> Vec<Node> {
        let mut out = Vec::new();
        for i in 0..n {
            if i > 0 && self.budget == 0 {
                break;
            }
            out.push(self.stmt(s, c));
            if self.f.sub_groups && self.sg_side.chance(12) {
                out.push(self.non_uniform_sub_group(s, c));
            }
            if self.f.intel_sub_groups && self.is_side.chance(10) {
                out.push(self.non_uniform_intel_sub_group(s, c));
            }
        }
        out
    }

    /// A non-uniform sub-group function (valid in any control flow: it combines the
    /// work-items that run it), in a form whose value is the same at every sub-group size:
    /// 0 when correct.
    fn non_uniform_sub_group(&mut self, s: &Scope, c: &Ctx) -> Node {
        let Some(x) = s.ints.first().cloned() else { return Node::line(";") };
        let text = match self.sg_side.below(4) {
            0 => {
                let u = self.u(s, c, 2);
                format!(
                    "{{ uint sv = {u};\n{x} ^= (int)(sub_group_non_uniform_scan_inclusive_add(sv) - \
                     sub_group_non_uniform_scan_exclusive_add(sv) - sv); }}"
                )
            }
            1 => {
                let v = self.i(s, c, 2);
                format!(
                    "{{ int sv = {v};\n{x} ^= (sub_group_non_uniform_reduce_max(sv) < sv) \
                     + (sub_group_non_uniform_reduce_min(sv) > sv) * 2; }}"
                )
            }
            2 => {
                let v = self.i(s, c, 2);
                format!(
                    "{{ int sv = {v};\n{x} ^= sub_group_non_uniform_all(sv == sub_group_broadcast_first(sv)) \
                     - sub_group_non_uniform_all_equal(sv); }}"
                )
            }
            _ => {
                let cond = self.cond(s, c, 2);
                format!(
                    "{{ int sc = {cond};\n{x} ^= (int)(sub_group_ballot_bit_count(sub_group_ballot(sc)) - \
                     sub_group_non_uniform_reduce_add(sc ? 1u : 0u)); }}"
                )
            }
        };
        Node::line(text)
    }

    fn stmt(&mut self, s: &Scope, c: &Ctx) -> Node {
        self.budget = self.budget.saturating_sub(1);
        loop {
            // assign, mix, array, buf, t, atomic, if, guarded load, division, loop, switch,
            // break/continue, return, vector, float, long, struct, helper call, narrow,
            // pointer
            let k = self.rng.weighted(&[30, 12, 6, 5, 6, 6, 12, 9, 5, 8, 3, 5, 2, 6, 5, 4, 5, 4, 3, 2]);
            if let Some(n) = self.try_stmt(k, s, c) {
                return n;
            }
        }
    }

    fn try_stmt(&mut self, k: usize, s: &Scope, c: &Ctx) -> Option<Node> {
        let nest = c.depth < 4 && self.budget > 0;
        let inner = Ctx { depth: c.depth + 1, ..c.clone() };
        let line = |t: String| Some(Node::line(t));
        match k {
            0 => {
                if !s.uints.is_empty() && (s.ints.is_empty() || self.rng.chance(45)) {
                    let x = self.rng.pick(&s.uints).clone();
                    let e = self.u(s, c, 3);
                    line(match self.rng.below(4) {
                        0 => format!("{x} = {e};"),
                        1 => format!("{x} += {e};"),
                        2 => format!("{x} ^= {e};"),
                        _ => format!("{x} = {x} * ({e} | 1u) + 0x3c6ef372u;"),
                    })
                } else {
                    let x = self.rng.pick(&s.ints).clone();
                    line(match self.rng.below(3) {
                        0 => format!("{x} = {};", self.i(s, c, 3)),
                        1 => format!("{x} = (int)((uint){x} + {});", self.u(s, c, 2)),
                        _ => format!("{x} ^= {};", self.i(s, c, 2)),
                    })
                }
            }
            1 if s.kernel => line(format!("h = mix(h, {});", self.u(s, c, 3))),
            2 if !s.arrays.is_empty() => {
                let (a, len) = self.rng.pick(&s.arrays).clone();
                let idx = self.index(s, c, len);
                line(format!("{a}[{idx}] = {};", self.i(s, c, 2)))
            }
            3 if s.kernel => line(match self.rng.below(4) {
                0 => format!("buf[gid * 4 + ({} & 3u)] = {};", self.u_leaf(s, c), self.i(s, c, 2)),
                1 => format!("gb[{} & 3u] = {};", self.u_leaf(s, c), self.i(s, c, 2)),
                2 if self.f.vectors => format!("vstore4({}, 0, buf + gid * 4);", self.i4(s, c, 1)),
                _ => format!("buf[gid * 4 + 3 - (l & 3)] = {};", self.i(s, c, 2)),
            }),
            4 if s.kernel && c.t_mode == Some(Mode::Write) => line(if self.rng.chance(50) {
                format!("t[l] = {};", self.i(s, c, 2))
            } else {
                format!("t[l] = (int)((uint)t[l] + {});", self.u(s, c, 2))
            }),
            5 if s.kernel && (self.f.global_atomics || c.lc_mode == Some(Mode::Write)) => {
                let local = c.lc_mode == Some(Mode::Write) && (!self.f.global_atomics || self.rng.chance(50));
                let (arr, space) = if local { ("lc", "__local") } else { ("cnt", "__global") };
                let slot = self.rng.below(8);
                if self.f.c11_atomics && slot != 1 && self.rng.chance(50) {
                    let scope = if local { "memory_scope_work_group" } else { "memory_scope_device" };
                    let (ty, f, v) = match slot {
                        0 => (
                            "atomic_uint",
                            *self.rng.pick(&["atomic_fetch_add_explicit", "atomic_fetch_sub_explicit"]),
                            self.u(s, c, 2),
                        ),
                        2 => ("atomic_uint", "atomic_fetch_min_explicit", self.u(s, c, 2)),
                        3 => ("atomic_uint", "atomic_fetch_max_explicit", self.u(s, c, 2)),
                        4 => ("atomic_int", "atomic_fetch_min_explicit", self.i(s, c, 2)),
                        5 => ("atomic_int", "atomic_fetch_max_explicit", self.i(s, c, 2)),
                        6 => ("atomic_uint", "atomic_fetch_or_explicit", self.u(s, c, 2)),
                        _ => ("atomic_uint", "atomic_fetch_xor_explicit", self.u(s, c, 2)),
                    };
                    return line(format!(
                        "{f}((volatile {space} {ty} *)&{arr}[{slot}], {v}, memory_order_relaxed, {scope});"
                    ));
                }
                let call = match slot {
                    0 => format!("{}(&{arr}[0], {})", self.rng.pick(&["atomic_add", "atomic_sub"]), self.u(s, c, 2)),
                    1 => format!("{}(&{arr}[1])", self.rng.pick(&["atomic_inc", "atomic_dec"])),
                    2 => format!("atomic_min(&{arr}[2], {})", self.u(s, c, 2)),
                    3 => format!("atomic_max(&{arr}[3], {})", self.u(s, c, 2)),
                    4 | 5 => {
                        let f = if slot == 4 { "atomic_min" } else { "atomic_max" };
                        format!("{f}((volatile {space} int *)&{arr}[{slot}], {})", self.i(s, c, 2))
                    }
                    6 => format!("atomic_or(&{arr}[6], {})", self.u(s, c, 2)),
                    _ => format!("atomic_xor(&{arr}[7], {})", self.u(s, c, 2)),
                };
                line(format!("{call};"))
            }
            6 if nest && self.f.branches => {
                let cond = self.cond(s, c, 2);
                let n = self.rng.range(1, 4);
                let body = self.stmts(s, &inner, n);
                let mut b = Node::block(BlockKind::If, format!("if ({cond})"), body);
                if self.rng.chance(40) {
                    let n = self.rng.range(1, 3);
                    let e = self.stmts(s, &inner, n);
                    if let Node::Block { else_body, .. } = &mut b {
                        *else_body = Some(e);
                    }
                }
                Some(b)
            }
            7 => self.guarded_load(s, c),
            8 if self.f.division => {
                let (head, body) = if s.kernel && self.rng.chance(40) {
                    // Lane-dependent divisors: the lanes the `if` turns off divide by zero.
                    let (m, guard) = *self.rng.pick(&[
                        ("(gid & 3)", "(gid & 3) != 0"),
                        ("(l % 3)", "(l % 3) != 0"),
                        ("(gid % 5 - 2)", "gid % 5 - 2 > 0"),
                        ("(2 - l % 4)", "l % 4 != 2 && l % 4 != 3"),
                    ]);
                    let x = self.rng.pick(&s.ints).clone();
                    let op = *self.rng.pick(&["/", "%"]);
                    (format!("if ({guard})"), format!("{x} = {} {op} {m};", self.i(s, c, 1)))
                } else if !s.uints.is_empty() && self.rng.chance(40) {
                    let (a, b) = (self.u_leaf(s, c), self.u_leaf(s, c));
                    let x = self.rng.pick(&s.uints).clone();
                    (format!("if ({b} != 0u)"), format!("{x} = {a} {} {b};", self.rng.pick(&["/", "%"])))
                } else {
                    let (a, b) = (self.i_leaf(s, c), self.i_leaf(s, c));
                    let x = self.rng.pick(&s.ints).clone();
                    let extra =
                        if self.rng.chance(50) { format!(" && ({})", self.cond(s, c, 0)) } else { String::new() };
                    (
                        format!("if ({b} != 0 && ({a} != INT_MIN || {b} != -1){extra})"),
                        format!("{x} = {a} {} {b};", self.rng.pick(&["/", "%"])),
                    )
                };
                Some(Node::block(BlockKind::Guard, head, vec![Node::line(body)]))
            }
            9 if nest && self.f.loops && c.loops < 3 => Some(self.loop_stmt(s, c)),
            10 if nest && self.f.switch => Some(self.switch_stmt(s, c)),
            11 if c.loops > 0 || c.in_switch => {
                let what = if c.loops > 0 && self.rng.chance(40) { "continue" } else { "break" };
                if self.rng.chance(10) {
                    return line(format!("{what};"));
                }
                line(format!("if ({}) {what};", self.cond(s, c, 1)))
            }
            12 if c.ret.is_some() => {
                let r = c.ret.clone().unwrap_or_default();
                let cond = self.cond(s, c, 1);
                Some(Node::block(BlockKind::If, format!("if ({cond})"), vec![Node::line(r)]))
            }
            13 if !s.int4s.is_empty() || !s.uint4s.is_empty() => self.vector_stmt(s, c),
            14 if !s.float4s.is_empty() => {
                let v = self.rng.pick(&s.float4s).clone();
                line(if self.rng.chance(60) {
                    format!("{v} = clamp(floor({} * 4.0f) * 0.25f, -256.0f, 256.0f);", self.f4(s, c))
                } else {
                    let e = self.f(s, c, 1);
                    format!("{v}.s{} = clamp(floor({e} * 4.0f) * 0.25f, -256.0f, 256.0f);", self.rng.below(4))
                })
            }
            15 if !s.ulongs.is_empty() || !s.long16s.is_empty() => {
                if !s.ulongs.is_empty() && (s.long16s.is_empty() || self.rng.chance(50)) {
                    let q = self.rng.pick(&s.ulongs).clone();
                    return line(format!("{q} = {};", self.ul(s, c)));
                }
                let x = self.rng.pick(&s.long16s).clone();
                line(match self.rng.below(5) {
                    0 => format!(
                        "{x} = as_long16(as_ulong16({x}) * (ulong16)((ulong){}) + (ulong16)((ulong)(long){}));",
                        self.u(s, c, 1),
                        self.i(s, c, 1)
                    ),
                    1 => format!(
                        "{x}.s{:x} = (long){} * (long){};",
                        self.rng.below(16),
                        self.i(s, c, 1),
                        self.i(s, c, 1)
                    ),
                    2 => format!("{x} = {x} ^ {x}.sfedcba9876543210;"),
                    3 => format!("{x} = {x} >> (long16)((long)({} & 63u));", self.u_leaf(s, c)),
                    _ => format!("{x}.lo = {x}.hi ^ (long8)((long){});", self.i(s, c, 1)),
                })
            }
            16 if !s.structs.is_empty() => self.struct_stmt(s, c),
            17 if !self.helpers_u.is_empty() || (!self.helpers_i.is_empty() && s.global_in.is_some()) => {
                if !self.helpers_u.is_empty() && !s.uints.is_empty() && self.rng.chance(60) {
                    let h = self.rng.pick(&self.helpers_u).clone();
                    let x = self.rng.pick(&s.uints).clone();
                    return line(format!("{x} = {h}({}, {});", self.u(s, c, 2), self.i(s, c, 2)));
                }
                if self.helpers_i.is_empty() || s.global_in.is_none() {
                    return None;
                }
                let h = self.rng.pick(&self.helpers_i).clone();
                let x = self.rng.pick(&s.ints).clone();
                let g = s.global_in.clone().unwrap_or_default();
                line(format!("{x} = {h}({g}, {});", self.i(s, c, 2)))
            }
            18 if !s.narrow.is_empty() => {
                let (x, ty) = self.rng.pick(&s.narrow).clone();
                line(format!("{x} = ({ty}){};", self.i(s, c, 2)))
            }
            19 if s.kernel && self.f.pointers => {
                let t = self.rng.pick(&s.targets).clone();
                line(format!("pp = &{t};"))
            }
            _ => None,
        }
    }

    /// A load guarded by an `if` on the index, around the work-item's own index (below it
    /// only with the `neighbours` feature).
    fn guarded_load(&mut self, s: &Scope, c: &Ctx) -> Option<Node> {
        let x = self.rng.pick(&s.ints).clone();
        let k = self.rng.range(1, 3);
        let (cond, load) = match self.rng.below(7) {
            0 if s.kernel && self.f.neighbours => (format!("gid >= {k}"), format!("in[gid - {k}]")),
            1 if s.kernel => (format!("gid + {k} < NITEMS"), format!("in[gid + {k}]")),
            2 if s.kernel && self.f.neighbours && c.t_mode == Some(Mode::Read) => {
                (format!("l >= {k}"), format!("t[l - {k}]"))
            }
            3 if s.kernel && c.t_mode == Some(Mode::Read) => {
                let bound = *self.rng.pick(&["ls", "LSZ"]);
                (format!("l + {k} < {bound}"), format!("t[l + {k}]"))
            }
            4 if s.kernel && self.f.neighbours && !s.arrays.is_empty() => {
                let (a, len) = self.rng.pick(&s.arrays).clone();
                (format!("l >= 1 && l <= {len}"), format!("{a}[l - 1]"))
            }
            5 if s.kernel && self.f.neighbours => {
                let extra = self.cond(s, c, 0);
                (format!("gid >= 2 && ({extra})"), "in[gid - 2]".to_string())
            }
            6 if s.kernel && self.f.vectors && !s.int4s.is_empty() => {
                let v = self.rng.pick(&s.int4s).clone();
                let body = if self.f.narrow_vectors && self.rng.chance(30) {
                    ("gid + 3 <= NITEMS".to_string(), format!("{v}.xyz = vload3(0, in + gid);"))
                } else if !self.f.neighbours || self.rng.chance(50) {
                    ("gid + 4 <= NITEMS".to_string(), format!("{v} = vload4(0, in + gid);"))
                } else {
                    ("gid >= 3".to_string(), format!("{v} = vload4(0, in + (gid - 3));"))
                };
                return Some(Node::block(BlockKind::Guard, format!("if ({})", body.0), vec![Node::line(body.1)]));
            }
            _ => return None,
        };
        let assign = if self.rng.chance(70) {
            format!("{x} = {load};")
        } else {
            format!("{x} = (int)((uint){x} ^ (uint){load});")
        };
        Some(Node::block(BlockKind::Guard, format!("if ({cond})"), vec![Node::line(assign)]))
    }

    fn loop_stmt(&mut self, s: &Scope, c: &Ctx) -> Node {
        let k = self.fresh("k");
        let bound = match self.rng.below(7) {
            0 => format!("{}", self.rng.range(1, 5)),
            1 => format!("(int)({} & 7u)", self.u_leaf(s, c)),
            2 => format!("min({}, 6)", self.i_leaf(s, c)),
            3 if s.kernel => "(l & 3) + 1".into(),
            4 if s.kernel => "gid % 5".into(),
            5 => format!("(int)({} % 6u)", self.u_leaf(s, c)),
            _ => format!("{}", self.rng.range(2, 4)),
        };
        let mut inner_s = s.clone();
        inner_s.ro.push(k.clone());
        let inner = Ctx { depth: c.depth + 1, loops: c.loops + 1, in_switch: false, ..c.clone() };
        let n = self.rng.range(1, 4);
        let body = self.stmts(&inner_s, &inner, n);
        match self.rng.below(4) {
            0 => Node::block(BlockKind::Loop, format!("for (int {k} = {bound}; {k} > 0; {k}--)"), body),
            1 => {
                let do_loop = Node::Block {
                    head: "do".into(),
                    body,
                    else_body: None,
                    tail: format!(" while (++{k} < {bound});"),
                    kind: BlockKind::Loop,
                };
                Node::block(BlockKind::Scope, "", vec![Node::fixed(format!("int {k} = 0;")), do_loop])
            }
            _ => Node::block(BlockKind::Loop, format!("for (int {k} = 0; {k} < {bound}; {k}++)"), body),
        }
    }

    fn switch_stmt(&mut self, s: &Scope, c: &Ctx) -> Node {
        let sel = match self.rng.below(4) {
            0 => format!("(int)({} % 5u)", self.u(s, c, 1)),
            1 if s.kernel => "l & 3".into(),
            2 if s.kernel => "gid % 4".into(),
            _ => self.i(s, c, 1),
        };
        let inner = Ctx { depth: c.depth + 1, in_switch: true, ..c.clone() };
        let mut labels = vec![-1i32, 0, 1, 2, 3, 4];
        let mut body = Vec::new();
        for _ in 0..self.rng.range(2, 4) {
            let v = labels.remove(self.rng.below(labels.len()));
            body.push(Node::line(format!("case {v}:")));
            let n = self.rng.range(0, 2);
            body.extend(self.stmts(s, &inner, n));
            if self.rng.chance(70) {
                body.push(Node::line("break;"));
            }
        }
        if self.rng.chance(50) {
            body.push(Node::line("default:"));
            let n = self.rng.range(1, 2);
            body.extend(self.stmts(s, &inner, n));
        }
        // A label must be followed by a statement.
        body.push(Node::fixed(";"));
        Node::block(BlockKind::Loop, format!("switch ({sel})"), body)
    }

    fn vector_stmt(&mut self, s: &Scope, c: &Ctx) -> Option<Node> {
        let line = |t: String| Some(Node::line(t));
        if !s.uint4s.is_empty() && (s.int4s.is_empty() || self.rng.chance(35)) {
            let w = self.rng.pick(&s.uint4s).clone();
            return line(match self.rng.below(3) {
                0 => format!("{w} = {};", self.u4(s, c)),
                1 => format!("{w}.s{} = {};", self.rng.below(4), self.u(s, c, 2)),
                _ => format!("{w} ^= {};", self.u4(s, c)),
            });
        }
        let v = self.rng.pick(&s.int4s).clone();
        let arr = s.arrays.iter().filter(|(_, n)| *n >= 4).cloned().collect::<Vec<_>>();
        match self.rng.below(7) {
            0 => line(format!("{v} = {};", self.i4(s, c, 2))),
            1 => line(format!("{v}.s{} = {};", self.rng.below(4), self.i(s, c, 2))),
            2 => line(format!(
                "{v}.s{} = (int2)({}, {});",
                ["01", "23", "12", "30"][self.rng.below(4)],
                self.i_leaf(s, c),
                self.i_leaf(s, c)
            )),
            3 if !arr.is_empty() => {
                let (a, n) = self.rng.pick(&arr).clone();
                let off = self.rng.below(n / 4);
                line(format!("{v} = vload4({off}, {a});"))
            }
            4 if !arr.is_empty() => {
                let (a, n) = self.rng.pick(&arr).clone();
                let off = self.rng.below(n / 4);
                line(format!("vstore4({v}, {off}, {a});"))
            }
            5 if self.f.narrow_vectors => {
                let arr3 = s.arrays.iter().filter(|(_, n)| *n >= 3).cloned().collect::<Vec<_>>();
                match self.rng.below(3) {
                    0 if s.kernel => {
                        line(format!("vstore3({v}.{}, 0, buf + gid * 4);", self.rng.pick(&["xyz", "wzy", "s130"])))
                    }
                    1 if !arr3.is_empty() => {
                        let (a, n) = self.rng.pick(&arr3).clone();
                        line(format!("{v}.xyz = vload3({}, {a});", self.rng.below(n / 3)))
                    }
                    2 if !arr3.is_empty() => {
                        let (a, n) = self.rng.pick(&arr3).clone();
                        line(format!("vstore3({v}.zyx, {}, {a});", self.rng.below(n / 3)))
                    }
                    _ => line(format!(
                        "{v}.s013 = as_int3(as_uint3({v}.s013) * (uint3)(3u, 5u, {}));",
                        self.u_leaf(s, c)
                    )),
                }
            }
            _ => line(format!("{v} = {v}.{};", self.rng.pick(&["wzyx", "yzwx", "xxzz", "s3120"]))),
        }
    }

    fn struct_stmt(&mut self, s: &Scope, c: &Ctx) -> Option<Node> {
        let (name, def) = self.rng.pick(&s.structs).clone();
        let same: Vec<String> =
            s.structs.iter().filter(|(n, d)| *d == def && *n != name).map(|(n, _)| n.clone()).collect();
        let by_ptr: Vec<String> = self.helpers_p.iter().filter(|(_, d)| *d == def).map(|(h, _)| h.clone()).collect();
        let by_val: Vec<String> = self.helpers_s.iter().filter(|(_, d)| *d == def).map(|(h, _)| h.clone()).collect();
        let ptrs: Vec<usize> =
            self.structs[def].members.iter().enumerate().filter(|(_, m)| **m == Member::Ptr).map(|(i, _)| i).collect();
        match self.rng.below(4) {
            0 if !same.is_empty() => Some(Node::line(format!("{name} = {};", self.rng.pick(&same)))),
            // Helpers take private struct pointers: not the `__local` array's element.
            1 if !by_ptr.is_empty() && !name.contains("->") && !name.starts_with("ts[") => {
                let h = self.rng.pick(&by_ptr).clone();
                Some(Node::line(format!("{h}(&{name}, {});", self.i(s, c, 2))))
            }
            2 if !by_val.is_empty() => {
                let h = self.rng.pick(&by_val).clone();
                Some(Node::line(format!("{name} = {h}({name}, {});", self.u(s, c, 2))))
            }
            3 if !ptrs.is_empty() && s.kernel && !s.targets.is_empty() => {
                let m = *self.rng.pick(&ptrs);
                Some(Node::line(format!("{name}.m{m} = &{};", self.rng.pick(&s.targets))))
            }
            _ => None,
        }
    }
}
