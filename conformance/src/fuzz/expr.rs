//! Expressions of the generated kernels. Every expression is free of undefined behaviour
//! whatever the values of the variables it reads: signed arithmetic that could overflow is
//! done on `uint`, shift counts are masked, divisions are guarded in the expression itself,
//! indices are masked, reduced modulo the length or guarded by a condition on the index,
//! floats stay small multiples of 1/4 so that every operation is exact (and a contracted
//! `a * b + c` gives the same result as two operations).

use super::gen::{Ctx, Gen, Mode, Scope};

/// Constants around the edges of 32-bit arithmetic.
const UINT_EDGES: &[&str] = &[
    "0u",
    "1u",
    "2u",
    "3u",
    "7u",
    "31u",
    "32u",
    "0xffffffffu",
    "0x80000000u",
    "0x7fffffffu",
    "0xfffffffeu",
    "0x10000u",
];
const INT_EDGES: &[&str] =
    &["0", "1", "-1", "2", "-2", "3", "7", "-8", "100", "-100", "INT_MIN", "INT_MAX", "(INT_MIN + 1)"];

impl Gen {
    /// A `uint` expression of at most `d` levels.
    pub(super) fn u(&mut self, s: &Scope, c: &Ctx, d: u32) -> String {
        if d == 0 || self.rng.chance(30) {
            return self.u_leaf(s, c);
        }
        let d = d - 1;
        match self.rng.below(26) {
            0..=2 => format!("({} + {})", self.u(s, c, d), self.u(s, c, d)),
            3 => format!("({} - {})", self.u(s, c, d), self.u(s, c, d)),
            4 | 5 => format!("({} * {})", self.u(s, c, d), self.u(s, c, d)),
            6 | 7 => format!("({} ^ {})", self.u(s, c, d), self.u(s, c, d)),
            8 => format!("({} & {})", self.u(s, c, d), self.u(s, c, d)),
            9 => format!("({} | {})", self.u(s, c, d), self.u(s, c, d)),
            10 => format!("({} << ({} & 31u))", self.u(s, c, d), self.u(s, c, d)),
            11 => format!("({} >> ({} & 31u))", self.u(s, c, d), self.u(s, c, d)),
            12 if self.f.division => {
                let (a, b) = (self.u_leaf(s, c), self.u_leaf(s, c));
                if self.rng.chance(50) {
                    format!("({b} != 0u ? {a} / {b} : {a})")
                } else {
                    format!("({b} != 0u ? {a} % {b} : 0u)")
                }
            }
            13 => {
                let f = *self
                    .rng
                    .pick(&["min", "max", "rotate", "abs_diff", "add_sat", "sub_sat", "hadd", "rhadd", "mul_hi"]);
                format!("{f}({}, {})", self.u(s, c, d), self.u(s, c, d))
            }
            14 => {
                let (x, a, b) = (self.u(s, c, d), self.u_leaf(s, c), self.u_leaf(s, c));
                format!("clamp({x}, min({a}, {b}), max({a}, {b}))")
            }
            15 => format!("{}({})", self.rng.pick(&["popcount", "clz"]), self.u(s, c, d)),
            16 => format!("mul24({} & 0xfffu, {} & 0xfffu)", self.u(s, c, d), self.u(s, c, d)),
            17 => format!("mad24({} & 0xfffu, {} & 0xfffu, {})", self.u(s, c, d), self.u(s, c, d), self.u(s, c, d)),
            18 => format!("select({}, {}, {})", self.u(s, c, d), self.u(s, c, d), self.u(s, c, d)),
            19 | 20 => format!("({} ? {} : {})", self.cond(s, c, d), self.u(s, c, d), self.u(s, c, d)),
            21 => format!("(uint){}", self.i(s, c, d)),
            22 if !self.helpers_u.is_empty() => {
                let h = self.rng.pick(&self.helpers_u).clone();
                format!("{h}({}, {})", self.u(s, c, d), self.i(s, c, d))
            }
            23 if self.f.floats && !s.float4s.is_empty() => {
                // Every rounding mode and saturation: the floats are multiples of 1/4, so
                // ties and fractions of each side occur.
                let conv = *self.rng.pick(&[
                    "(int)",
                    "convert_int_rte",
                    "convert_int_rtz",
                    "convert_int_rtp",
                    "convert_int_rtn",
                    "convert_int_sat_rtn",
                ]);
                format!("(uint){conv}({})", self.f(s, c, 2))
            }
            24 | 25 if self.f.narrow_vectors => self.narrow_vector(s, c, d),
            _ => format!("(~{})", self.u(s, c, d)),
        }
    }

    /// A `uint` computed on vectors of 8- and 16-bit lanes (conversions with and without
    /// saturation, reinterpretations, lane-wise built-ins).
    fn narrow_vector(&mut self, s: &Scope, c: &Ctx, d: u32) -> String {
        let i4 = |g: &mut Gen| g.i4(s, c, 0);
        match self.rng.below(8) {
            0 => format!("as_uint(convert_uchar4_sat({}))", i4(self)),
            1 => format!("as_uint(convert_char4({}))", i4(self)),
            2 => format!("as_uint(convert_short2_sat((int2)({}, {})))", self.i(s, c, d), self.i(s, c, d)),
            3 => format!("(uint)as_ushort2({}).y", self.u(s, c, d)),
            4 => format!("as_uint(as_uchar4({}).wzyx)", self.u(s, c, d)),
            5 => format!("as_uint(rotate(as_uchar4({}), (uchar4)(1, 2, 3, 4)))", self.u(s, c, d)),
            6 => format!("as_uint(add_sat(as_char4({}), as_char4({})))", self.u(s, c, d), self.u(s, c, d)),
            _ => format!("(uint)upsample((uchar){}, (uchar){})", self.u(s, c, d), self.u(s, c, d)),
        }
    }

    /// An `int` expression of at most `d` levels.
    pub(super) fn i(&mut self, s: &Scope, c: &Ctx, d: u32) -> String {
        if d == 0 || self.rng.chance(30) {
            return self.i_leaf(s, c);
        }
        let d = d - 1;
        match self.rng.below(18) {
            0..=3 => format!("(int){}", self.u(s, c, d + 1)),
            4 => {
                let f = *self.rng.pick(&["min", "max", "add_sat", "sub_sat", "hadd", "rhadd", "mul_hi"]);
                format!("{f}({}, {})", self.i(s, c, d), self.i(s, c, d))
            }
            5 => format!("(int)abs({})", self.i(s, c, d)),
            6 => {
                let (x, a, b) = (self.i(s, c, d), self.i_leaf(s, c), self.i_leaf(s, c));
                format!("clamp({x}, min({a}, {b}), max({a}, {b}))")
            }
            7 => format!("({} >> ({} & 31u))", self.i(s, c, d), self.u(s, c, d)),
            8 if self.f.division => {
                let (a, b) = (self.i_leaf(s, c), self.i_leaf(s, c));
                let op = if self.rng.chance(50) { "/" } else { "%" };
                format!("(({b} != 0 && ({a} != INT_MIN || {b} != -1)) ? {a} {op} {b} : {a})")
            }
            9 => {
                let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("({} {op} {})", self.i(s, c, d), self.i(s, c, d))
            }
            10 => format!("mul24(({} & 0xfff) - 0x800, ({} & 0xfff) - 0x800)", self.i(s, c, d), self.i(s, c, d)),
            // The addend is bounded so that the signed sum cannot overflow (undefined).
            11 => format!(
                "mad24(({} & 0xfff) - 0x800, ({} & 0xfff) - 0x800, ({} & 0x3fffffff) - 0x20000000)",
                self.i(s, c, d),
                self.i(s, c, d),
                self.i(s, c, d)
            ),
            12 | 13 => format!("({} ? {} : {})", self.cond(s, c, d), self.i(s, c, d), self.i(s, c, d)),
            14 => format!("select({}, {}, {})", self.i(s, c, d), self.i(s, c, d), self.i(s, c, d)),
            15 if !self.helpers_i.is_empty() && s.global_in.is_some() => {
                let h = self.rng.pick(&self.helpers_i).clone();
                let g = s.global_in.clone().unwrap_or_default();
                format!("{h}({g}, {})", self.i(s, c, d))
            }
            16 if !s.int4s.is_empty() => {
                let v = self.rng.pick(&s.int4s).clone();
                let op = *self.rng.pick(&["<", ">", "==", "!="]);
                let f = *self.rng.pick(&["any", "all"]);
                format!("{f}({v} {op} {})", self.i4(s, c, 0))
            }
            _ => format!("(!{})", self.i(s, c, d)),
        }
    }

    /// A leaf `uint`: a variable, a constant, an id, a load.
    pub(super) fn u_leaf(&mut self, s: &Scope, c: &Ctx) -> String {
        match self.rng.below(10) {
            0..=2 if !s.uints.is_empty() => self.rng.pick(&s.uints).clone(),
            3 => {
                if s.kernel && self.rng.chance(15) {
                    "kb".to_string()
                } else if self.rng.chance(70) {
                    (*self.rng.pick(UINT_EDGES)).to_string()
                } else {
                    format!("0x{:x}u", self.rng.next_u32())
                }
            }
            4 | 5 => format!("(uint){}", self.i_leaf(s, c)),
            6 if !s.uint4s.is_empty() => format!("{}.s{}", self.rng.pick(&s.uint4s).clone(), self.rng.below(4)),
            7 if !s.ulongs.is_empty() => {
                let q = self.rng.pick(&s.ulongs).clone();
                if self.rng.chance(50) {
                    format!("(uint){q}")
                } else {
                    format!("(uint)({q} >> 32)")
                }
            }
            8 if !s.long16s.is_empty() => {
                format!("(uint){}.s{:x}", self.rng.pick(&s.long16s).clone(), self.rng.below(16))
            }
            9 if s.kernel && c.lc_mode == Some(Mode::Read) => format!("lc[{}]", self.rng.below(8)),
            _ => format!("(uint){}", self.i_leaf(s, c)),
        }
    }

    /// A leaf `int`.
    pub(super) fn i_leaf(&mut self, s: &Scope, c: &Ctx) -> String {
        match self.rng.below(14) {
            0..=2 if !s.ints.is_empty() => self.rng.pick(&s.ints).clone(),
            3 | 4 if !s.ro.is_empty() => self.rng.pick(&s.ro).clone(),
            5 => {
                if self.rng.chance(75) {
                    (*self.rng.pick(INT_EDGES)).to_string()
                } else {
                    format!("{}", self.rng.next_u32() as i32 / 3)
                }
            }
            6 if !s.narrow.is_empty() => format!("(int){}", self.rng.pick(&s.narrow).0.clone()),
            7 if !s.arrays.is_empty() => self.array_load(s, c),
            8 | 9 if s.global_in.is_some() => self.global_load(s, c),
            10 if s.kernel && c.t_mode.is_some() => self.local_load(s, c),
            11 if s.kernel => format!("buf[gid * 4 + ({} & 3u)]", self.u_leaf(s, c)),
            12 if !s.int4s.is_empty() => format!("{}.s{}", self.rng.pick(&s.int4s).clone(), self.rng.below(4)),
            13 if !s.float4s.is_empty() => {
                format!("(int){}.s{}", self.rng.pick(&s.float4s).clone(), self.rng.below(4))
            }
            _ if !s.ints.is_empty() => self.rng.pick(&s.ints).clone(),
            _ => (*self.rng.pick(INT_EDGES)).to_string(),
        }
    }

    /// A load of the read-only global array: masked, reduced, mirrored, or guarded around
    /// the work-item's own index (`gid + 1 < NITEMS ? in[gid + 1] : x`; with the
    /// `neighbours` feature also below it, `gid >= 2 ? in[gid - 2] : x`).
    pub(super) fn global_load(&mut self, s: &Scope, c: &Ctx) -> String {
        let g = s.global_in.clone().unwrap_or_else(|| "in".into());
        let k = self.rng.range(1, 3);
        if !s.kernel {
            return format!("{g}[{} % {}u]", self.u_leaf(s, c), self.n_items);
        }
        match self.rng.below(8) {
            0 if self.f.neighbours => format!("(gid >= {k} ? {g}[gid - {k}] : {})", self.i_leaf(s, c)),
            // A tile of rows `w` wide at a stride of `w + k`, element `gid` of it (OpenCV's
            // filters load their local tiles so: consecutive but for a step to the next row).
            6 if self.f.neighbours => {
                let w = self.rng.range(3, 19);
                format!("{g}[min((gid % {w}) + (gid / {w}) * {}, NITEMS - 1)]", w + k)
            }
            // A column reflected at the border, as OpenCV's BORDER_REFLECT_101.
            7 if self.f.neighbours => {
                format!("{g}[clamp(min(max(gid - {k}, {k} - gid), 2 * (NITEMS - 1) - (gid - {k})), 0, NITEMS - 1)]")
            }
            1 => format!("(gid + {k} < NITEMS ? {g}[gid + {k}] : {})", self.i_leaf(s, c)),
            2 => format!("{g}[NITEMS - 1 - gid]"),
            // The own element, or the same through `mad24` (row-major, as OpenCV indexes:
            // an affine index once `mad24` is a multiply and add).
            3 if self.rng.chance(30) => format!("{g}[mad24(gy, (int)get_global_size(0), gx)]"),
            3 => format!("{g}[gid]"),
            4 if self.f.neighbours => format!("((gid & 1) != 0 ? {g}[gid - 1] : {g}[gid])"),
            _ => format!("{g}[{} % NITEMS]", self.u_leaf(s, c)),
        }
    }

    /// A load of the `__local` array `t`: the work-item's own slot while the phase writes
    /// it, guarded neighbours and mirrored slots while it only reads it.
    pub(super) fn local_load(&mut self, s: &Scope, c: &Ctx) -> String {
        if c.t_mode != Some(Mode::Read) {
            return "t[l]".into();
        }
        let k = self.rng.range(1, 2);
        match self.rng.below(7) {
            0 if self.f.neighbours => format!("(l >= {k} ? t[l - {k}] : {})", self.i_leaf(s, c)),
            1 => format!("(l + {k} < ls ? t[l + {k}] : {})", self.i_leaf(s, c)),
            2 => format!("(l + {k} < LSZ ? t[l + {k}] : {})", self.i_leaf(s, c)),
            3 => "t[ls - 1 - l]".into(),
            4 => "t[LSZ - 1 - l]".into(),
            5 => format!("t[{} % LSZ]", self.u_leaf(s, c)),
            _ => "t[l]".into(),
        }
    }

    /// An in-bounds index of a private array of `len` elements.
    pub(super) fn index(&mut self, s: &Scope, c: &Ctx, len: usize) -> String {
        match self.rng.below(5) {
            0 if len.is_power_of_two() => format!("({} & {}u)", self.u_leaf(s, c), len - 1),
            1 if s.kernel => format!("({len} - 1 - l % {len})"),
            2 => format!("{}", self.rng.below(len)),
            3 if s.kernel => format!("(l < {len} ? l : {})", len - 1),
            _ => format!("({} % {len}u)", self.u_leaf(s, c)),
        }
    }

    /// A load of a private array (or an array member of a struct).
    pub(super) fn array_load(&mut self, s: &Scope, c: &Ctx) -> String {
        let (a, len) = self.rng.pick(&s.arrays).clone();
        if s.kernel && self.f.neighbours && self.rng.chance(30) {
            let k = self.rng.range(1, 2);
            return format!("(l >= {k} && l - {k} < {len} ? {a}[l - {k}] : {})", self.i_leaf(s, c));
        }
        let idx = self.index(s, c, len);
        format!("{a}[{idx}]")
    }

    /// A condition, lane-dependent more often than not.
    pub(super) fn cond(&mut self, s: &Scope, c: &Ctx, d: u32) -> String {
        let d = d.min(2);
        match self.rng.below(16) {
            0 if s.kernel => format!("(gid & {}) == {}", [1, 3, 7][self.rng.below(3)], self.rng.below(2)),
            1 if s.kernel => "l < (ls >> 1)".into(),
            2 if s.kernel => format!("gid % 3 == {}", self.rng.below(3)),
            3 if s.kernel => (*self.rng.pick(&["l == 0", "l == ls - 1", "(l & 3) != 2", "l > 0", "grp & 1"])).into(),
            4..=6 => {
                let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("{} {op} {}", self.i(s, c, d), self.i(s, c, d))
            }
            7 => {
                let op = *self.rng.pick(&["<", ">", "!="]);
                format!("{} {op} {}", self.u(s, c, d), self.u(s, c, d))
            }
            8 => format!("({} & 1u) != 0u", self.u(s, c, d)),
            9 if s.kernel && self.f.neighbours => {
                let k = self.rng.range(1, 2);
                format!("gid >= {k} && in[gid - {k}] > {}", self.i_leaf(s, c))
            }
            10 if s.kernel && c.t_mode == Some(Mode::Read) => {
                format!("l + 1 < ls && t[l + 1] != {}", self.i_leaf(s, c))
            }
            11 if self.f.floats && !s.float4s.is_empty() => {
                let op = *self.rng.pick(&["<", "<=", ">", "=="]);
                format!("{} {op} {}", self.f(s, c, 0), self.f(s, c, 0))
            }
            12 if d > 0 => format!("({}) && ({})", self.cond(s, c, d - 1), self.cond(s, c, d - 1)),
            13 if d > 0 => format!("({}) || ({})", self.cond(s, c, d - 1), self.cond(s, c, d - 1)),
            14 if d > 0 => format!("!({})", self.cond(s, c, d - 1)),
            15 if !s.arrays.is_empty() && s.kernel => {
                let (a, len) = self.rng.pick(&s.arrays).clone();
                format!("l < {len} && {a}[l] > {}", self.i_leaf(s, c))
            }
            _ => format!("{} != 0", self.i(s, c, d)),
        }
    }

    /// A `float` expression: sums of up to four terms, each a leaf, a product of leaves or
    /// a half of one. Leaves are multiples of 1/4 in [-256, 256], so every value is exact.
    pub(super) fn f(&mut self, s: &Scope, c: &Ctx, d: u32) -> String {
        let mut e = self.f_term(s, c);
        for _ in 0..self.rng.below(4) {
            let op = *self.rng.pick(&["+", "-"]);
            e = format!("({e} {op} {})", self.f_term(s, c));
        }
        if d > 0 {
            e = match self.rng.below(6) {
                0 => format!("fmin({e}, {})", self.f(s, c, 0)),
                1 => format!("fmax({e}, {})", self.f(s, c, 0)),
                2 => format!("fabs({e})"),
                3 => format!("floor({e})"),
                4 => format!("({} ? {e} : {})", self.cond(s, c, 0), self.f(s, c, 0)),
                _ => format!("(-({e}))"),
            };
        }
        e
    }

    fn f_term(&mut self, s: &Scope, c: &Ctx) -> String {
        match self.rng.below(5) {
            0 => format!("({} * {})", self.f_leaf(s, c), self.f_leaf(s, c)),
            1 => format!("({} * 0.5f)", self.f_leaf(s, c)),
            _ => self.f_leaf(s, c),
        }
    }

    fn f_leaf(&mut self, s: &Scope, c: &Ctx) -> String {
        match self.rng.below(4) {
            0 | 1 if !s.float4s.is_empty() => format!("{}.s{}", self.rng.pick(&s.float4s).clone(), self.rng.below(4)),
            2 => (*self.rng.pick(&["0.25f", "(-3.0f)", "100.5f", "0.0f", "(-0.0f)", "256.0f", "1.75f"])).into(),
            _ => format!("(float)((int)({} & 0x1ffu) - 256)", self.u_leaf(s, c)),
        }
    }

    /// A `float4` expression whose components follow the rules of [`Gen::f`].
    pub(super) fn f4(&mut self, s: &Scope, c: &Ctx) -> String {
        let v = |g: &mut Gen| -> String {
            if !s.float4s.is_empty() && g.rng.chance(70) {
                let v = g.rng.pick(&s.float4s).clone();
                match g.rng.below(3) {
                    0 => format!("{v}.wzyx"),
                    1 => format!("{v}.yxwz"),
                    _ => v,
                }
            } else {
                format!("((float4)({}, {}, {}, {}))", g.f_leaf(s, c), g.f_leaf(s, c), g.f_leaf(s, c), g.f_leaf(s, c))
            }
        };
        let a = v(self);
        let b = v(self);
        match self.rng.below(8) {
            0 => format!("({a} + {b})"),
            1 => format!("({a} - {b} * {})", v(self)),
            2 => format!("({a} * {b})"),
            3 => format!("fmin({a}, {b})"),
            4 => format!("fmax({a}, fabs({b}))"),
            5 if !s.int4s.is_empty() => format!("select({a}, {b}, {} < {})", self.i4(s, c, 0), self.i4(s, c, 0)),
            6 => format!("({a} * 0.5f + (float4)({}))", self.f(s, c, 0)),
            _ => format!("floor({a})"),
        }
    }

    /// An `int4` expression (vector arithmetic that could overflow goes through `uint4`).
    pub(super) fn i4(&mut self, s: &Scope, c: &Ctx, d: u32) -> String {
        let leaf = |g: &mut Gen| -> String {
            match g.rng.below(5) {
                0 | 1 if !s.int4s.is_empty() => {
                    let v = g.rng.pick(&s.int4s).clone();
                    let sw = *g.rng.pick(&["", ".wzyx", ".xxyy", ".s1302", ".zwxy"]);
                    format!("{v}{sw}")
                }
                2 => format!("((int4)({}))", g.i_leaf(s, c)),
                3 if !s.uint4s.is_empty() => format!("as_int4({})", g.rng.pick(&s.uint4s).clone()),
                _ => {
                    format!("((int4)({}, {}, {}, {}))", g.i_leaf(s, c), g.i_leaf(s, c), g.i_leaf(s, c), g.i_leaf(s, c))
                }
            }
        };
        if d == 0 {
            return leaf(self);
        }
        let (a, b) = (self.i4(s, c, d - 1), leaf(self));
        match self.rng.below(13) {
            // Lanes whose divisor is 0, or -1 under INT_MIN, divide by 1 instead (undefined).
            12 if self.f.division => {
                let op = if self.rng.chance(50) { "/" } else { "%" };
                let safe = format!(
                    "select({b}, (int4)(1), ({b} == (int4)(0)) | (({a} == (int4)(INT_MIN)) & ({b} == (int4)(-1))))"
                );
                format!("({a} {op} {safe})")
            }
            10 => format!("shuffle({a}, as_uint4({b}) & 3u)"),
            11 => format!("shuffle2({a}, {b}, (uint4)(7u, 0u, 5u, 2u))"),
            0 => format!("as_int4(as_uint4({a}) + as_uint4({b}))"),
            1 => format!("as_int4(as_uint4({a}) * as_uint4({b}))"),
            2 => format!("({a} ^ {b})"),
            3 => format!("min({a}, {b})"),
            4 => format!("max({a}, {b})"),
            5 => format!("({a} >> ({b} & 31))"),
            6 => format!("select({a}, {b}, {a} < {b})"),
            7 => format!("({a} == {b})"),
            8 => format!("clamp({a}, (int4)(-5), (int4)(100))"),
            _ => format!("((int4)(({a}).hi, ({b}).lo))"),
        }
    }

    /// A `uint4` expression.
    pub(super) fn u4(&mut self, s: &Scope, c: &Ctx) -> String {
        let a = if !s.uint4s.is_empty() && self.rng.chance(70) {
            self.rng.pick(&s.uint4s).clone()
        } else {
            format!(
                "((uint4)({}, {}, {}, {}))",
                self.u_leaf(s, c),
                self.u_leaf(s, c),
                self.u_leaf(s, c),
                self.u_leaf(s, c)
            )
        };
        match self.rng.below(9) {
            8 if self.f.division => {
                let b = format!("((uint4)({}, {}, 7u, {}))", self.u_leaf(s, c), self.u_leaf(s, c), self.u_leaf(s, c));
                let op = if self.rng.chance(50) { "/" } else { "%" };
                format!("({a} {op} select({b}, (uint4)(1u), {b} == (uint4)(0u)))")
            }
            0 => format!("({a} * (uint4)({}) + {a}.wzyx)", self.u(s, c, 1)),
            1 => format!("rotate({a}, (uint4)({}))", self.u_leaf(s, c)),
            2 => format!("convert_uint4({})", self.i4(s, c, 1)),
            3 => format!("as_uint4({})", self.i4(s, c, 1)),
            4 => format!("(popcount({a}) + (uint4)({}))", self.u_leaf(s, c)),
            5 => format!("abs_diff({a}, {a}.yzwx)"),
            6 if !s.float4s.is_empty() => format!("convert_uint4(convert_int4({}))", self.f4(s, c)),
            _ => format!("({a} >> ((uint4)({}) & 31u))", self.u_leaf(s, c)),
        }
    }

    /// A `ulong` expression.
    pub(super) fn ul(&mut self, s: &Scope, c: &Ctx) -> String {
        let q = if !s.ulongs.is_empty() && self.rng.chance(70) {
            self.rng.pick(&s.ulongs).clone()
        } else {
            format!("(ulong){}", self.u_leaf(s, c))
        };
        match self.rng.below(7) {
            0 => format!("({q} * (ulong){} + (ulong){})", self.u(s, c, 1), self.i(s, c, 1)),
            1 => format!("mul_hi({q}, (ulong){} << 32)", self.u_leaf(s, c)),
            2 => format!("rotate({q}, (ulong)({} & 63u))", self.u_leaf(s, c)),
            3 => format!("upsample({}, {})", self.u(s, c, 1), self.u(s, c, 1)),
            4 => format!("({q} >> ({} & 63u))", self.u_leaf(s, c)),
            5 => format!("(ulong)popcount({q}) + (ulong)(long){}", self.i_leaf(s, c)),
            _ => format!("({q} ^ ((ulong){} << 29))", self.u(s, c, 1)),
        }
    }
}
