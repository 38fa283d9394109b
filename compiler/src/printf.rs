//! OpenCL C `printf`: the format-string parser, the record layout generated code writes into
//! a launch's printf buffer, and the host-side formatter that turns those records into text.
//!
//! Generated code formats nothing (see `back/printf.rs`). Each `printf` call reserves a
//! record in the launch's [`crate::abi::PrintfBuffer`] with one atomic add and writes:
//!
//! ```text
//! u32 record length in bytes (this header included)
//! u32 format length n, then the n bytes of the format string (no NUL)
//! per argument: u8 kind (ARG_*), u8 element size in bytes, u8 lanes, u8 0, then
//!   ARG_STRING: u32 length m and m bytes (the string up to its NUL)
//!   otherwise:  lanes x element-size bytes, native byte order
//! ```
//!
//! All fields are unaligned. The device formats the records in buffer order after the launch
//! ([`format_buffer`]); one record is one call's whole output.
//!
//! Conversions follow the OpenCL C specification (C99 printf without `%n`, plus the vector
//! specifier `%vN` with the `hh`, `h`, `hl` and `l` length modifiers) and glibc's spelling
//! where C leaves a choice: `inf`/`nan` (never `-nan`), `%a` with a leading `1` digit
//! (`0x1.8p+0`), `%p` as `0x` and lowercase hex. The format is known at compile time, so
//! which argument is a `%s` string is decided by the compiler.

/// An integer argument (any signedness; the conversion decides).
pub const ARG_INT: u8 = 0;
/// A floating-point argument (2, 4 or 8 bytes per element).
pub const ARG_FLOAT: u8 = 1;
/// The string of a `%s` conversion, copied into the record.
pub const ARG_STRING: u8 = 2;
/// A pointer (8 bytes), printed by `%p`.
pub const ARG_POINTER: u8 = 3;

/// Bytes of the record header before the format string.
pub const RECORD_HEADER: usize = 8;
/// Bytes before each argument's payload.
pub const ARG_HEADER: usize = 4;

/// A field width or precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Fixed(usize),
    /// `*`: taken from the next (int) argument.
    Arg,
}

/// Length modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    None,
    Hh,
    H,
    /// `hl`: 32-bit elements of a vector (only with `%v`).
    Hl,
    /// `l`, `ll`, `z`, `t`, `j`: 64 bits.
    L,
    /// `L`: long double (printed as double).
    BigL,
}

/// One conversion specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spec {
    pub minus: bool,
    pub plus: bool,
    pub space: bool,
    pub hash: bool,
    pub zero: bool,
    pub width: Option<Count>,
    pub precision: Option<Count>,
    /// `%vN`: the number of vector elements.
    pub vector: Option<u8>,
    pub length: Length,
    /// The conversion character (`d`, `s`, `%`, ...).
    pub conv: u8,
}

impl Spec {
    /// The arguments the conversion consumes: `*` counts first, then the value (none for `%%`).
    pub fn args(&self) -> usize {
        let star = |c: Option<Count>| usize::from(c == Some(Count::Arg));
        star(self.width) + star(self.precision) + usize::from(self.conv != b'%')
    }
}

/// A piece of a parsed format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Text(Vec<u8>),
    Conv(Spec),
}

const CONVERSIONS: &[u8] = b"diouxXfFeEgGaAcsp%";

/// Parses a format string (without its NUL). A `%` not followed by a valid specification is
/// kept as text.
pub fn parse(fmt: &[u8]) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut text = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            text.push(fmt[i]);
            i += 1;
            continue;
        }
        match parse_spec(fmt, i + 1) {
            Some((spec, next)) if spec.conv == b'%' && next == i + 2 => {
                text.push(b'%');
                i = next;
            }
            Some((spec, next)) => {
                if !text.is_empty() {
                    out.push(Piece::Text(std::mem::take(&mut text)));
                }
                out.push(Piece::Conv(spec));
                i = next;
            }
            None => {
                text.push(b'%');
                i += 1;
            }
        }
    }
    if !text.is_empty() {
        out.push(Piece::Text(text));
    }
    out
}

fn parse_spec(f: &[u8], mut i: usize) -> Option<(Spec, usize)> {
    let mut s = Spec {
        minus: false,
        plus: false,
        space: false,
        hash: false,
        zero: false,
        width: None,
        precision: None,
        vector: None,
        length: Length::None,
        conv: 0,
    };
    while let Some(&c) = f.get(i) {
        match c {
            b'-' => s.minus = true,
            b'+' => s.plus = true,
            b' ' => s.space = true,
            b'#' => s.hash = true,
            b'0' => s.zero = true,
            _ => break,
        }
        i += 1;
    }
    let number = |i: &mut usize| -> Option<Count> {
        if f.get(*i) == Some(&b'*') {
            *i += 1;
            return Some(Count::Arg);
        }
        let start = *i;
        let mut n: usize = 0;
        while let Some(d) = f.get(*i).filter(|c| c.is_ascii_digit()) {
            n = n.saturating_mul(10).saturating_add(usize::from(d - b'0'));
            *i += 1;
        }
        (*i > start).then_some(Count::Fixed(n.min(1 << 20)))
    };
    s.width = number(&mut i);
    if f.get(i) == Some(&b'.') {
        i += 1;
        s.precision = Some(number(&mut i).unwrap_or(Count::Fixed(0)));
    }
    if f.get(i) == Some(&b'v') {
        i += 1;
        let start = i;
        while f.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let n: u8 = std::str::from_utf8(&f[start..i]).ok()?.parse().ok()?;
        if ![2, 3, 4, 8, 16].contains(&n) {
            return None;
        }
        s.vector = Some(n);
    }
    let rest = &f[i..];
    let (length, skip) = if rest.starts_with(b"hh") {
        (Length::Hh, 2)
    } else if rest.starts_with(b"hl") {
        (Length::Hl, 2)
    } else if rest.starts_with(b"ll") {
        (Length::L, 2)
    } else {
        match rest.first() {
            Some(b'h') => (Length::H, 1),
            Some(b'l' | b'z' | b't' | b'j') => (Length::L, 1),
            Some(b'L') => (Length::BigL, 1),
            _ => (Length::None, 0),
        }
    };
    s.length = length;
    i += skip;
    let conv = *f.get(i)?;
    if !CONVERSIONS.contains(&conv) || (s.vector.is_some() && matches!(conv, b'c' | b's' | b'p' | b'%')) {
        return None;
    }
    s.conv = conv;
    Some((s, i + 1))
}

// ------------------------------------------------------------------------------------------
// Records

/// One decoded argument of a record.
#[derive(Debug, Clone, PartialEq)]
enum Arg<'a> {
    /// Elements zero-extended to 64 bits, with their size in bytes.
    Int(Vec<u64>, usize),
    Float(Vec<f64>),
    Str(&'a [u8]),
    Pointer(u64),
}

fn read_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at.checked_add(4)?)?.try_into().ok()?))
}

fn element(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    let n = bytes.len().min(8);
    if cfg!(target_endian = "little") {
        buf[..n].copy_from_slice(&bytes[..n]);
        u64::from_le_bytes(buf)
    } else {
        buf[8 - n..].copy_from_slice(&bytes[..n]);
        u64::from_be_bytes(buf)
    }
}

fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x3ff);
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        31 if mant == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + mant / 1024.0) * 2f64.powi(e - 15),
    }
}

fn to_float(bits: u64, size: usize) -> f64 {
    match size {
        2 => half_to_f64(bits as u16),
        4 => f64::from(f32::from_bits(bits as u32)),
        _ => f64::from_bits(bits),
    }
}

/// Decodes one record: (format, arguments). `None` if it is malformed.
fn decode(rec: &[u8]) -> Option<(&[u8], Vec<Arg<'_>>)> {
    let flen = read_u32(rec, 4)? as usize;
    let fmt = rec.get(RECORD_HEADER..RECORD_HEADER.checked_add(flen)?)?;
    let mut at = RECORD_HEADER + flen;
    let mut args = Vec::new();
    while at < rec.len() {
        let head = rec.get(at..at + ARG_HEADER)?;
        let (kind, size, lanes) = (head[0], usize::from(head[1]), usize::from(head[2]).max(1));
        at += ARG_HEADER;
        match kind {
            ARG_STRING => {
                let len = read_u32(rec, at)? as usize;
                at += 4;
                args.push(Arg::Str(rec.get(at..at.checked_add(len)?)?));
                at += len;
            }
            ARG_INT | ARG_FLOAT | ARG_POINTER => {
                if !matches!(size, 1 | 2 | 4 | 8) {
                    return None;
                }
                let data = rec.get(at..at.checked_add(size * lanes)?)?;
                at += size * lanes;
                let elems: Vec<u64> = data.chunks(size).map(element).collect();
                args.push(match kind {
                    ARG_INT => Arg::Int(elems, size),
                    ARG_FLOAT => Arg::Float(elems.iter().map(|&b| to_float(b, size)).collect()),
                    _ => Arg::Pointer(elems[0]),
                });
            }
            _ => return None,
        }
    }
    Some((fmt, args))
}

/// Formats the records of a printf buffer (`used` bytes of it) in order, handing each
/// record's whole output to `sink` (so memory stays bounded by one record's text however much
/// a launch prints). A truncated or malformed record ends the output.
pub fn format_records(buf: &[u8], mut sink: impl FnMut(&[u8])) {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(len) = read_u32(buf, at) {
        let len = len as usize;
        if len < RECORD_HEADER {
            break;
        }
        let Some(rec) = at.checked_add(len).and_then(|end| buf.get(at..end)) else { break };
        let Some((fmt, args)) = decode(rec) else { break };
        out.clear();
        format_into(&mut out, fmt, &args);
        sink(&out);
        at += len;
    }
}

/// [`format_records`] into one byte string.
pub fn format_buffer(buf: &[u8]) -> Vec<u8> {
    let mut all = Vec::new();
    format_records(buf, |text| all.extend_from_slice(text));
    all
}

fn format_into(out: &mut Vec<u8>, fmt: &[u8], args: &[Arg<'_>]) {
    let mut next = args.iter();
    for piece in parse(fmt) {
        let spec = match piece {
            Piece::Text(t) => {
                out.extend_from_slice(&t);
                continue;
            }
            Piece::Conv(s) => s,
        };
        let mut spec = spec;
        let mut count = |c: Option<Count>, spec: &mut Spec, is_width: bool| -> Option<usize> {
            match c {
                Some(Count::Arg) => {
                    let v = match next.next() {
                        Some(Arg::Int(v, _)) => v.first().map_or(0, |&x| x as u32 as i32),
                        _ => 0,
                    };
                    if v < 0 {
                        if is_width {
                            spec.minus = true;
                            Some(v.unsigned_abs() as usize)
                        } else {
                            None
                        }
                    } else {
                        Some(v as usize)
                    }
                }
                Some(Count::Fixed(n)) => Some(n),
                None => None,
            }
        };
        let width = count(spec.width, &mut spec, true).unwrap_or(0).min(1 << 20);
        let precision = count(spec.precision, &mut spec, false).map(|p| p.min(1 << 20));
        if spec.conv == b'%' {
            out.push(b'%');
            continue;
        }
        // Too few arguments (undefined in C): the conversion prints nothing, the text goes on.
        let Some(arg) = next.next() else { continue };
        let f = Field { spec, width, precision };
        match arg {
            Arg::Str(s) => {
                if spec.conv == b's' {
                    f.pad(out, b"", s, false);
                }
            }
            Arg::Pointer(p) => match spec.conv {
                b'p' => f.pad(out, b"0x", format!("{p:x}").as_bytes(), false),
                _ => f.int(out, *p, 8),
            },
            Arg::Int(v, size) => {
                for (n, &x) in v.iter().enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    match spec.conv {
                        b'c' => f.pad(out, b"", &[x as u8], false),
                        c if b"fFeEgGaA".contains(&c) => f.float(out, to_float(x, *size)),
                        b'p' => f.pad(out, b"0x", format!("{x:x}").as_bytes(), false),
                        _ => f.int(out, x, *size),
                    }
                }
            }
            Arg::Float(v) => {
                for (n, &x) in v.iter().enumerate() {
                    if n > 0 {
                        out.push(b',');
                    }
                    match spec.conv {
                        c if b"fFeEgGaA".contains(&c) => f.float(out, x),
                        b'c' => f.pad(out, b"", &[x as i64 as u8], false),
                        _ => f.int(out, x as i64 as u64, 8),
                    }
                }
            }
        }
    }
}

/// A conversion with its resolved width and precision.
struct Field {
    spec: Spec,
    width: usize,
    precision: Option<usize>,
}

impl Field {
    /// Writes `prefix` (sign, 0x) and `body` padded to the width: spaces on the left (or the
    /// right with `-`), or zeros between prefix and body when `zeros`.
    fn pad(&self, out: &mut Vec<u8>, prefix: &[u8], body: &[u8], zeros: bool) {
        let body = match (self.spec.conv, self.precision) {
            (b's', Some(p)) => &body[..p.min(body.len())],
            _ => body,
        };
        let len = prefix.len() + body.len();
        let fill = self.width.saturating_sub(len);
        if self.spec.minus {
            out.extend_from_slice(prefix);
            out.extend_from_slice(body);
            out.resize(out.len() + fill, b' ');
        } else if zeros {
            out.extend_from_slice(prefix);
            out.resize(out.len() + fill, b'0');
            out.extend_from_slice(body);
        } else {
            out.resize(out.len() + fill, b' ');
            out.extend_from_slice(prefix);
            out.extend_from_slice(body);
        }
    }

    /// Integer conversions. `raw` holds `size` bytes zero-extended; the length modifier (or,
    /// without one, int) decides the width the value is read at.
    fn int(&self, out: &mut Vec<u8>, raw: u64, size: usize) {
        let s = &self.spec;
        let bits = match s.length {
            Length::Hh => 8,
            Length::H => 16,
            Length::Hl => 32,
            Length::L | Length::BigL => 64,
            Length::None if s.vector.is_some() => (size * 8) as u32,
            Length::None => 32,
        };
        let mask = if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let u = raw & mask;
        let signed = matches!(s.conv, b'd' | b'i');
        let (neg, mag) = if signed && bits < 64 && u >> (bits - 1) & 1 == 1 {
            (true, (!u).wrapping_add(1) & mask)
        } else if signed && bits == 64 && (u as i64) < 0 {
            (true, (u as i64).unsigned_abs())
        } else {
            (false, u)
        };
        let mut digits = match s.conv {
            b'o' => format!("{mag:o}"),
            b'x' => format!("{mag:x}"),
            b'X' => format!("{mag:X}"),
            _ => mag.to_string(),
        }
        .into_bytes();
        if self.precision == Some(0) && mag == 0 {
            digits.clear();
        }
        if let Some(p) = self.precision {
            if digits.len() < p {
                let mut d = vec![b'0'; p - digits.len()];
                d.extend_from_slice(&digits);
                digits = d;
            }
        }
        if s.hash && s.conv == b'o' && digits.first() != Some(&b'0') {
            digits.insert(0, b'0');
        }
        let prefix: &[u8] = if signed {
            self.sign(neg)
        } else if s.hash && mag != 0 && s.conv == b'x' {
            b"0x"
        } else if s.hash && mag != 0 && s.conv == b'X' {
            b"0X"
        } else {
            b""
        };
        self.pad(out, prefix, &digits, s.zero && !s.minus && self.precision.is_none());
    }

    /// The sign a signed conversion prints: `-` for a negative value, else `+` with the `+`
    /// flag, a space with the ` ` flag, or nothing.
    fn sign(&self, negative: bool) -> &'static [u8] {
        if negative {
            b"-"
        } else if self.spec.plus {
            b"+"
        } else if self.spec.space {
            b" "
        } else {
            b""
        }
    }

    fn float(&self, out: &mut Vec<u8>, x: f64) {
        let s = &self.spec;
        let upper = s.conv.is_ascii_uppercase();
        let sign = self.sign(x.is_sign_negative() && !x.is_nan());
        if !x.is_finite() {
            let word: &[u8] = match (x.is_nan(), upper) {
                (true, false) => b"nan",
                (true, true) => b"NAN",
                (false, false) => b"inf",
                (false, true) => b"INF",
            };
            return self.pad(out, sign, word, false);
        }
        let a = x.abs();
        let (prefix, body): (&[u8], String) = match s.conv.to_ascii_lowercase() {
            b'f' => (b"", fixed(a, self.precision.unwrap_or(6), s.hash)),
            b'e' => (b"", exponential(a, self.precision.unwrap_or(6), s.hash)),
            b'g' => (b"", general(a, self.precision.unwrap_or(6), s.hash)),
            _ => (if upper { b"0X" } else { b"0x" }, hex_float(a, self.precision, s.hash)),
        };
        let body = if upper { body.to_ascii_uppercase() } else { body };
        let mut full = sign.to_vec();
        full.extend_from_slice(prefix);
        self.pad(out, &full, body.as_bytes(), s.zero && !s.minus);
    }
}

/// `%f` of a non-negative finite value.
fn fixed(a: f64, p: usize, hash: bool) -> String {
    let mut s = format!("{a:.p$}");
    if hash && p == 0 {
        s.push('.');
    }
    s
}

/// `%e` of a non-negative finite value: `d.ddde+XX`.
fn exponential(a: f64, p: usize, hash: bool) -> String {
    let s = format!("{a:.p$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let dot = if hash && p == 0 { "." } else { "" };
    format!("{mant}{dot}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
}

/// `%g`: `%e` or `%f` by the exponent the value has at `p` significant digits.
fn general(a: f64, p: usize, hash: bool) -> String {
    let p = p.max(1);
    let e = format!("{a:.*e}", p - 1);
    let exp: i64 = e.split_once('e').and_then(|(_, x)| x.parse().ok()).unwrap_or(0);
    let mut s = if exp < -4 || exp >= p as i64 {
        exponential(a, p - 1, hash)
    } else {
        fixed(a, (p as i64 - 1 - exp) as usize, hash)
    };
    if !hash {
        let (num, tail) = match s.find('e') {
            Some(i) => (s[..i].to_string(), s[i..].to_string()),
            None => (s.clone(), String::new()),
        };
        let num = if num.contains('.') { num.trim_end_matches('0').trim_end_matches('.').to_string() } else { num };
        s = num + &tail;
    }
    s
}

/// `%a` of a non-negative finite value, glibc style: `1.8p+0` (the caller adds `0x`).
fn hex_float(a: f64, precision: Option<usize>, hash: bool) -> String {
    let bits = a.to_bits();
    let biased = (bits >> 52) as i64;
    let mut mant = bits & ((1u64 << 52) - 1);
    if a == 0.0 {
        let frac = "0".repeat(precision.unwrap_or(0));
        let dot = if !frac.is_empty() || hash { "." } else { "" };
        return format!("0{dot}{frac}p+0");
    }
    let (mut lead, exp) = if biased == 0 { (0u64, -1022) } else { (1u64, biased - 1023) };
    // 13 hex digits of fraction.
    let digits = match precision {
        None => {
            let mut n = 13;
            while n > 0 && (mant >> (4 * (13 - n))) & 0xf == 0 {
                n -= 1;
            }
            n
        }
        Some(p) if p >= 13 => p,
        Some(p) => {
            // Round to p digits, ties to even.
            let drop = 4 * (13 - p) as u32;
            let rem = mant & ((1u64 << drop) - 1);
            let half = 1u64 << (drop - 1);
            mant >>= drop;
            // The last digit kept is the leading one when no fraction digit is.
            let odd = if p == 0 { lead & 1 == 1 } else { mant & 1 == 1 };
            if rem > half || (rem == half && odd) {
                mant += 1;
                if mant >> (4 * p) != 0 {
                    mant &= (1u64 << (4 * p)) - 1;
                    lead += 1;
                }
            }
            mant <<= drop;
            p
        }
    };
    let full = format!("{mant:013x}");
    let mut frac: String = full.chars().take(digits.min(13)).collect();
    while frac.len() < digits {
        frac.push('0');
    }
    let dot = if !frac.is_empty() || hash { "." } else { "" };
    format!("{lead}{dot}{frac}p{}{}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs())
}

// ------------------------------------------------------------------------------------------
// Building records (the host-side mirror of what generated code writes; used by tests)

/// Appends an argument to a record under construction (for tests and host-side callers).
pub fn push_arg(rec: &mut Vec<u8>, kind: u8, size: u8, lanes: u8, payload: &[u8]) {
    rec.extend_from_slice(&[kind, size, lanes, 0]);
    if kind == ARG_STRING {
        rec.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    }
    rec.extend_from_slice(payload);
}

/// Starts a record for `fmt`; finish it with [`finish_record`].
pub fn start_record(fmt: &[u8]) -> Vec<u8> {
    let mut rec = vec![0u8; 4];
    rec.extend_from_slice(&(fmt.len() as u32).to_ne_bytes());
    rec.extend_from_slice(fmt);
    rec
}

/// Writes the record length into its header.
pub fn finish_record(mut rec: Vec<u8>) -> Vec<u8> {
    let len = rec.len() as u32;
    rec[..4].copy_from_slice(&len.to_ne_bytes());
    rec
}

#[cfg(test)]
mod tests;
