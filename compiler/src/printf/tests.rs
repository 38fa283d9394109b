//! The formatter against C's printf. The expected strings were produced by glibc's printf
//! (the C standard's conversions) for the same format and value.

// 3.14 and 3.14159 are the CTS's test values, not attempts at pi.
#![allow(clippy::approx_constant)]

use super::*;

fn fmt_int(fmt: &str, v: i32) -> String {
    let mut rec = start_record(fmt.as_bytes());
    push_arg(&mut rec, ARG_INT, 4, 1, &v.to_ne_bytes());
    String::from_utf8(format_buffer(&finish_record(rec))).unwrap()
}

fn fmt_double(fmt: &str, v: f64) -> String {
    let mut rec = start_record(fmt.as_bytes());
    push_arg(&mut rec, ARG_FLOAT, 8, 1, &v.to_ne_bytes());
    String::from_utf8(format_buffer(&finish_record(rec))).unwrap()
}

#[test]
fn integer_conversions_match_c() {
    let cases: &[(&str, i32, &str)] = &[
        ("%5d", 10, "   10"),
        ("%-5d", 10, "10   "),
        ("%05d", 10, "00010"),
        ("%+5d", 10, "  +10"),
        ("%-+5d", 10, "+10  "),
        ("%.5i", 100, "00100"),
        ("%6.5i", 100, " 00100"),
        ("%-06i", 100, "100   "),
        ("%06.5i", 100, " 00100"),
        ("% 10d", 42, "        42"),
        ("%d", -7, "-7"),
        ("%x", 255, "ff"),
        ("%X", 255, "FF"),
        ("%#x", 0, "0"),
        ("%#o", 0, "0"),
        ("%o", 8, "10"),
        ("%.0u", 0, ""),
        ("%u", -294967296, "4000000000"),
        ("%#.0o", 0, "0"),
        ("%+.3d", -5, "-005"),
        ("%08.3x", 255, "     0ff"),
        ("%#08x", 255, "0x0000ff"),
        ("%-#8o|", 8, "010     |"),
    ];
    for &(f, v, want) in cases {
        assert_eq!(fmt_int(f, v), want, "format {f:?} of {v}");
    }
}

#[test]
fn float_conversions_match_c() {
    let cases: &[(&str, f64, &str)] = &[
        ("%f", 10.3456, "10.345600"),
        ("%.1f", 10.3456, "10.3"),
        ("%.2f", 10.3456, "10.35"),
        ("%8.3f", 10.3456, "  10.346"),
        ("%08.2f", 10.3456, "00010.35"),
        ("%-8.2f", 10.3456, "10.35   "),
        ("%+8.2f", -10.3456, "  -10.35"),
        ("%.0f", 0.1, "0"),
        ("%.0f", 0.6, "1"),
        ("%0f", 0.6, "0.600000"),
        ("%4g", 12345.6789, "12345.7"),
        ("%4.2g", 12345.6789, "1.2e+04"),
        ("%4G", 2.3e-06, "2.3E-06"),
        ("%4G", 0.023, "0.023"),
        ("%-#20.15e", 789456128.0, "7.894561280000000e+08"),
        ("%+#21.15E", 789456128.0, "+7.894561280000000E+08"),
        ("%.6a", 0.5, "0x1.000000p-1"),
        ("%10.2a", 1.5, " 0x1.80p+0"),
        ("% 10.2f", 1.25, "      1.25"),
        ("%08.2f", 3.14, "00003.14"),
        ("%a", 0.1, "0x1.999999999999ap-4"),
        ("%A", -1.0, "-0X1P+0"),
        ("%g", 100000.0, "100000"),
        ("%g", 1000000.0, "1e+06"),
        ("%#g", 1.5, "1.50000"),
        ("%.0e", 12345.0, "1e+04"),
        ("%#.0f", 2.0, "2."),
        ("%e", 0.0, "0.000000e+00"),
        ("%.3g", 0.0001234, "0.000123"),
        ("%g", 1.0e-05, "1e-05"),
        ("%.0a", 1.5, "0x2p+0"),
        ("%a", 5.0e-324, "0x0.0000000000001p-1022"),
        ("%-12.3e|", 3.25, "3.250e+00   |"),
        ("%+g", 0.0, "+0"),
        ("%G", 1e+100, "1E+100"),
    ];
    for &(f, v, want) in cases {
        assert_eq!(fmt_double(f, v), want, "format {f:?} of {v}");
    }
}

#[test]
fn infinities_and_nans() {
    let inf = f64::INFINITY;
    let got: Vec<String> = ["%f", "%F", "%e", "%E", "%g", "%G", "%a", "%A"]
        .iter()
        .enumerate()
        .map(|(i, f)| fmt_double(f, if i % 2 == 0 { inf } else { -inf }))
        .collect();
    assert_eq!(got, ["inf", "-INF", "inf", "-INF", "inf", "-INF", "inf", "-INF"]);
    let padded: Vec<String> = ["%5f", "%-6e", "%+f", "%05f"].iter().map(|f| fmt_double(f, inf)).collect();
    assert_eq!(padded, ["  inf", "inf   ", "+inf", "  inf"]);
    // NaN prints without a sign whatever its sign bit (what the CTS expects).
    let neg_nan = f64::from_bits(0xfff8_0000_0000_0000);
    for (f, want) in
        [("%f", "nan"), ("%e", "nan"), ("%g", "nan"), ("%a", "nan"), ("%F", "NAN"), ("%A", "NAN"), ("%+f", "+nan")]
    {
        assert_eq!(fmt_double(f, f64::NAN), want, "{f}");
        assert_eq!(fmt_double(f, neg_nan), want, "{f} of a negative NaN");
    }
}

#[test]
fn length_modifiers_truncate_like_c() {
    let cases: &[(&str, i64, &str)] = &[
        ("%hd", 32767, "32767"),
        ("%hhd", 127, "127"),
        ("%ld", 9223372036854775807, "9223372036854775807"),
        ("%hd", -32767, "-32767"),
        ("%hhd", -128, "-128"),
        ("%ld", -9223372036854775807, "-9223372036854775807"),
        ("%hx", -32767, "8001"),
        ("%hhx", -128, "80"),
        ("%lx", 9223372036854775807, "7fffffffffffffff"),
        ("%ho", -32767, "100001"),
        ("%hho", -128, "200"),
        ("%lo", -9223372036854775807, "1000000000000000000001"),
        ("%lu", -1, "18446744073709551615"),
        ("%zu", 10000000000, "10000000000"),
        ("%+15zu", 10000000000, "    10000000000"),
        ("%-+16.15ti", -10000000000, "-000010000000000"),
    ];
    for &(f, v, want) in cases {
        // As clang passes them: int for h/hh/none, long for l.
        let mut rec = start_record(f.as_bytes());
        if f.contains(['l', 'z', 't']) {
            push_arg(&mut rec, ARG_INT, 8, 1, &v.to_ne_bytes());
        } else {
            push_arg(&mut rec, ARG_INT, 4, 1, &(v as i32).to_ne_bytes());
        }
        assert_eq!(String::from_utf8(format_buffer(&finish_record(rec))).unwrap(), want, "{f}");
    }
}

#[test]
fn chars_strings_pointers_and_percent() {
    let mut rec = start_record(b"[%4c|%-4c|%c] [%s|%4s|%.1s|%-5s|] %% %p %s");
    for c in [b'1', b'1', 66u8] {
        push_arg(&mut rec, ARG_INT, 4, 1, &u32::from(c).to_ne_bytes());
    }
    push_arg(&mut rec, ARG_STRING, 1, 1, b"");
    push_arg(&mut rec, ARG_STRING, 1, 1, b"foo");
    push_arg(&mut rec, ARG_STRING, 1, 1, b"foo");
    push_arg(&mut rec, ARG_STRING, 1, 1, b"ab");
    push_arg(&mut rec, ARG_POINTER, 8, 1, &0xdead_beefu64.to_ne_bytes());
    push_arg(&mut rec, ARG_STRING, 1, 1, b"foo%%bar");
    let out = format_buffer(&finish_record(rec));
    assert_eq!(String::from_utf8(out).unwrap(), "[   1|1   |B] [| foo|f|ab   |] % 0xdeadbeef foo%%bar");
}

#[test]
fn vectors_join_elements_with_commas() {
    let f4: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let u2: Vec<u8> = vec![0xfa, 0xfb];
    let s2: Vec<u8> = [0x1234u16, 0x8765].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let l2: Vec<u8> = [12345678i64, 98765432].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let e3: Vec<u8> = [1234.25f32, 987654.5, 0.0005].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let a4: Vec<u8> = [0.25f32, 0.5, 1.0, 1.5].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let g8: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0, 1.5, 3.14, 2.5, 3.5].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let o16: Vec<u8> =
        [1u32, 2, 3, 4, 5, 6, 7, 8, 9, 0, 32, 64, 128, 256, 512, 1024].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let i8v: Vec<u8> = [1i32, -2, 3, -4, 5, -6, 7, -8].iter().flat_map(|x| x.to_ne_bytes()).collect();
    let h2: Vec<u8> = [0x3c00u16, 0xc000].iter().flat_map(|x| x.to_ne_bytes()).collect(); // 1.0h, -2.0h
    let mut rec =
        start_record(b"%2.2v4hlf;%#v2hhx;%#v2hx;%v2ld;%.2v3hle;%.1v4hla;%v8hlg;%v16hlo;%+v8hli;%v2hf;%05v2hhu");
    push_arg(&mut rec, ARG_FLOAT, 4, 4, &f4);
    push_arg(&mut rec, ARG_INT, 1, 2, &u2);
    push_arg(&mut rec, ARG_INT, 2, 2, &s2);
    push_arg(&mut rec, ARG_INT, 8, 2, &l2);
    push_arg(&mut rec, ARG_FLOAT, 4, 3, &e3);
    push_arg(&mut rec, ARG_FLOAT, 4, 4, &a4);
    push_arg(&mut rec, ARG_FLOAT, 4, 8, &g8);
    push_arg(&mut rec, ARG_INT, 4, 16, &o16);
    push_arg(&mut rec, ARG_INT, 4, 8, &i8v);
    push_arg(&mut rec, ARG_FLOAT, 2, 2, &h2);
    push_arg(&mut rec, ARG_INT, 1, 2, &[7, 255]);
    let out = String::from_utf8(format_buffer(&finish_record(rec))).unwrap();
    // The CTS's expected strings (test_conformance/printf, vector cases).
    let want = [
        "1.00,2.00,3.00,4.00",
        "0xfa,0xfb",
        "0x1234,0x8765",
        "12345678,98765432",
        "1.23e+03,9.88e+05,5.00e-04",
        "0x1.0p-2,0x1.0p-1,0x1.0p+0,0x1.8p+0",
        "1,2,3,4,1.5,3.14,2.5,3.5",
        "1,2,3,4,5,6,7,10,11,0,40,100,200,400,1000,2000",
        "+1,-2,+3,-4,+5,-6,+7,-8",
        "1.000000,-2.000000",
        "00007,00255",
    ]
    .join(";");
    assert_eq!(out, want);
}

#[test]
fn star_width_and_precision_take_int_arguments() {
    let mut rec = start_record(b"[%*d|%-*d|%.*f|%*d]");
    for v in [5i32, 42, 4, 7] {
        push_arg(&mut rec, ARG_INT, 4, 1, &v.to_ne_bytes());
    }
    push_arg(&mut rec, ARG_INT, 4, 1, &2i32.to_ne_bytes());
    push_arg(&mut rec, ARG_FLOAT, 8, 1, &3.14159f64.to_ne_bytes());
    push_arg(&mut rec, ARG_INT, 4, 1, &(-4i32).to_ne_bytes());
    push_arg(&mut rec, ARG_INT, 4, 1, &1i32.to_ne_bytes());
    let out = String::from_utf8(format_buffer(&finish_record(rec))).unwrap();
    assert_eq!(out, "[   42|7   |3.14|1   ]");
}

#[test]
fn records_in_order_and_truncated_buffers_stop() {
    let mut buf = Vec::new();
    for i in 0..3i32 {
        let mut rec = start_record(b"line %d\n");
        push_arg(&mut rec, ARG_INT, 4, 1, &i.to_ne_bytes());
        buf.extend_from_slice(&finish_record(rec));
    }
    assert_eq!(format_buffer(&buf), b"line 0\nline 1\nline 2\n");
    // A record cut short (a reservation that did not fit) and zeroed space end the output.
    let cut = buf.len() - 3;
    assert_eq!(format_buffer(&buf[..cut]), b"line 0\nline 1\n");
    buf.extend_from_slice(&[0u8; 16]);
    assert_eq!(format_buffer(&buf), b"line 0\nline 1\nline 2\n");
    // Malformed argument headers do not panic.
    let mut rec = start_record(b"%d");
    push_arg(&mut rec, 9, 4, 1, &[0; 4]);
    assert_eq!(format_buffer(&finish_record(rec)), b"");
}

#[test]
fn parse_counts_arguments() {
    let p = parse(b"a%%b%5.2v4hlf%s%*.*d%k");
    let specs: Vec<Spec> = p
        .iter()
        .filter_map(|x| match x {
            Piece::Conv(s) => Some(*s),
            Piece::Text(_) => None,
        })
        .collect();
    assert_eq!(specs.len(), 3);
    assert_eq!(specs[0].vector, Some(4));
    assert_eq!(specs[0].length, Length::Hl);
    assert_eq!(specs[1].conv, b's');
    assert_eq!(specs[2].args(), 3);
    assert_eq!(p[0], Piece::Text(b"a%b".to_vec()));
    assert_eq!(p.last(), Some(&Piece::Text(b"%k".to_vec())));
}

#[test]
fn missing_arguments_print_nothing_but_the_text_goes_on() {
    let mut rec = start_record(b"a=%d b=%d c=%s.");
    push_arg(&mut rec, ARG_INT, 4, 1, &1i32.to_ne_bytes());
    assert_eq!(format_buffer(&finish_record(rec)), b"a=1 b= c=.");
}

#[test]
fn records_reach_the_sink_one_whole_record_at_a_time() {
    let mut buf = Vec::new();
    for (f, v) in [(&b"%5d|\n"[..], 1i32), (b"x%dy", 22)] {
        let mut rec = start_record(f);
        push_arg(&mut rec, ARG_INT, 4, 1, &v.to_ne_bytes());
        buf.extend_from_slice(&finish_record(rec));
    }
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    format_records(&buf, |t| pieces.push(t.to_vec()));
    assert_eq!(pieces, [b"    1|\n".to_vec(), b"x22y".to_vec()]);
}
