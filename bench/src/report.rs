//! The results of a run: the Markdown table and the JSON file.

use std::fmt::Write as _;

use crate::cases::Bound;
use crate::host::Roofs;

/// One device's result in a row.
#[derive(Clone, Debug)]
pub enum Cell {
    /// Verified kernel run: best kernel time, best wall time, median kernel time (ms).
    Kernel { ms: f64, wall_ms: f64, median_ms: f64, note: String },
    /// A launch probe: microseconds per launch.
    Launch { us: f64 },
    /// An OpenCL error or a wrong result.
    Failed(String),
}

/// One table row: a kernel (or a launch probe) and each device's result.
#[derive(Clone, Debug)]
pub struct Row {
    pub kernel: String,
    pub size: String,
    /// Work per launch (kernels only): the bounding roof, bytes and flops.
    pub work: Option<(Bound, f64, f64)>,
    pub cells: Vec<Cell>,
    /// The host's copy bandwidth (GB/s) measured just before and just after this kernel's
    /// runs, the better of the two (memory-bound kernels): the roof of its share. The
    /// bandwidth of the development VM drifts by a third over minutes with its neighbours'
    /// load, so a roof measured once at the start made the share a matter of timing.
    pub copy_gbs: Option<f64>,
}

impl Row {
    /// The time in milliseconds of device `d`, when it ran and was verified.
    fn ms(&self, d: usize) -> Option<f64> {
        match self.cells.get(d)? {
            Cell::Kernel { ms, .. } => Some(*ms),
            Cell::Launch { us } => Some(us / 1e3),
            _ => None,
        }
    }
}

/// A whole run.
pub struct Report {
    pub labels: Vec<String>,
    pub devices: Vec<(String, String)>,
    pub size: String,
    pub reps: usize,
    /// How many rounds the rows are the median of (1: a single round).
    pub rounds: usize,
    pub host_cpu: String,
    pub threads: usize,
    pub load_start: String,
    pub load_end: String,
    pub roofs: Roofs,
    pub rows: Vec<Row>,
}

impl Report {
    /// The device whose metric is shown (SoftCL's, else the first) and the one it is
    /// compared with (PoCL's), as indices into `labels`.
    fn subject_and_reference(&self) -> (usize, Option<usize>) {
        let subject = self.labels.iter().position(|l| l == "SoftCL").unwrap_or(0);
        let reference = self.labels.iter().position(|l| l == "PoCL").filter(|&r| r != subject);
        (subject, reference)
    }

    /// The devices the subject's speed is given against, as indices into `labels`: the
    /// reference (PoCL), then Intel's CPU runtime (its platform's name starts with "Intel").
    fn comparisons(&self) -> Vec<usize> {
        let (s, r) = self.subject_and_reference();
        let intel = self.labels.iter().position(|l| l.starts_with("Intel")).filter(|&i| i != s);
        r.into_iter().chain(intel).collect()
    }

    /// Speed ratio of the subject against the reference (reference time / subject time).
    fn ratio(&self, row: &Row) -> Option<f64> {
        self.ratio_to(row, self.subject_and_reference().1?)
    }

    /// Speed ratio of the subject against device `d` (`d`'s time / the subject's time).
    fn ratio_to(&self, row: &Row, d: usize) -> Option<f64> {
        let (s, _) = self.subject_and_reference();
        Some(row.ms(d)? / row.ms(s)?)
    }

    /// Geometric mean of the kernel rows' ratios against the reference (the launch probes
    /// excluded) and how many.
    pub fn geomean(&self) -> Option<(f64, usize)> {
        self.geomean_to(self.subject_and_reference().1?)
    }

    /// [`Self::geomean`] against device `d`.
    fn geomean_to(&self, d: usize) -> Option<(f64, usize)> {
        let ratios: Vec<f64> =
            self.rows.iter().filter(|r| r.work.is_some()).filter_map(|r| self.ratio_to(r, d)).collect();
        if ratios.is_empty() {
            return None;
        }
        let mean = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
        Some((mean.exp(), ratios.len()))
    }

    /// The copy bandwidth a memory-bound row's share is taken of: the one measured next to
    /// it, or the run's roof.
    fn copy_roof(&self, row: &Row) -> f64 {
        row.copy_gbs.unwrap_or(self.roofs.copy_gbs)
    }

    /// The metric and share of its roof for the subject's cell of a kernel row.
    fn metric(&self, row: &Row, d: usize) -> (String, String) {
        match (&row.work, row.cells.get(d)) {
            (Some((bound, bytes, flops)), Some(Cell::Kernel { ms, .. })) => match bound {
                Bound::Memory => {
                    let gbs = bytes / ms / 1e6;
                    let share = 100.0 * gbs / self.copy_roof(row);
                    let of = match row.copy_gbs {
                        Some(c) => format!("{share:.0}% of {c:.1} GB/s copy"),
                        None => format!("{share:.0}% copy"),
                    };
                    (format!("{gbs:.1} GB/s"), of)
                }
                Bound::Compute => {
                    let gf = flops / ms / 1e6;
                    (format!("{gf:.1} GFLOP/s"), format!("{:.1}% FMA", 100.0 * gf / self.roofs.fma_gflops))
                }
            },
            (None, Some(Cell::Launch { us })) => (format!("{us:.1} us/launch"), "-".into()),
            (_, Some(Cell::Failed(_))) => ("FAILED".into(), "-".into()),
            _ => ("-".into(), "-".into()),
        }
    }

    /// The Markdown table with its header lines.
    pub fn markdown(&self) -> String {
        let (s, _) = self.subject_and_reference();
        let mut out = String::new();
        let _ = writeln!(
            out,
            "- Host: {} ({} threads); copy bandwidth {:.1} GB/s (read + write), FP32 FMA peak {:.1} GFLOP/s \
             ({}-bit vectors); load average {} at start, {} at end.",
            self.host_cpu,
            self.threads,
            self.roofs.copy_gbs,
            self.roofs.fma_gflops,
            self.roofs.fma_bits,
            self.load_start,
            self.load_end
        );
        for (label, (platform, name)) in self.labels.iter().zip(&self.devices) {
            let _ = writeln!(out, "- {label}: {platform} / {name}");
        }
        let _ = writeln!(
            out,
            "- Size {}, kernel time = best of {} after a warm-up (profiling END-START). A memory-bound \
             kernel's share is of the copy bandwidth measured just before and after its runs (the \
             better of the two, shown in its row), not of the run's roof above.",
            self.size, self.reps
        );
        if self.rounds > 1 {
            let _ = writeln!(
                out,
                "- Median of {} rounds: each kernel ran once per round, round after round; each \
                 time and each copy bandwidth next to a kernel is the median of its {} rounds' values.",
                self.rounds, self.rounds
            );
        }
        out.push('\n');
        let mut header = vec!["kernel".to_string(), "size".into(), format!("{} ms", self.labels[s]), "metric".into()];
        header.push("% of roof".into());
        let others: Vec<usize> = (0..self.labels.len()).filter(|&d| d != s).collect();
        for &d in &others {
            header.push(format!("{} ms", self.labels[d]));
        }
        let compared = self.comparisons();
        for &c in &compared {
            header.push(format!("{}/{}", self.labels[s], self.labels[c]));
        }
        let _ = writeln!(out, "| {} |", header.join(" | "));
        let _ = writeln!(out, "|{}", header.iter().map(|_| "---|").collect::<String>());
        for row in &self.rows {
            let (metric, roof) = self.metric(row, s);
            let mut cols = vec![row.kernel.clone(), row.size.clone(), time_cell(row, s), metric, roof];
            for &d in &others {
                cols.push(time_cell(row, d));
            }
            for &c in &compared {
                cols.push(self.ratio_to(row, c).map_or("-".into(), |x| format!("{x:.2}x")));
            }
            let _ = writeln!(out, "| {} |", cols.join(" | "));
        }
        for &r in &compared {
            match self.geomean_to(r) {
                Some((g, n)) => {
                    let _ = writeln!(
                        out,
                        "\nGeomean {}/{} over {n} kernels: {g:.2}x (speed ratio: {} time / {} time; > 1 means {} is faster).",
                        self.labels[s], self.labels[r], self.labels[r], self.labels[s], self.labels[s]
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "\nGeomean: no kernel ran verified on both {} and {}.",
                        self.labels[s], self.labels[r]
                    );
                }
            }
        }
        out
    }

    /// The row named `kernel`.
    fn subject_row(&self, kernel: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.kernel == kernel)
    }

    /// The CPU device's performance targets, each with what this run measured and whether it is met: a
    /// Markdown table, empty when the subject is not SoftCL.
    pub fn targets(&self) -> String {
        let (s, r) = self.subject_and_reference();
        if self.labels[s] != "SoftCL" {
            return String::new();
        }
        let mut lines: Vec<(String, String, Option<bool>)> = Vec::new();
        let ratio = |k: &str| self.subject_row(k).and_then(|row| self.ratio(row));
        let share = |k: &str| {
            let row = self.subject_row(k)?;
            let (bound, bytes, flops) = row.work?;
            let ms = row.ms(s)?;
            Some(match bound {
                Bound::Memory => 100.0 * bytes / ms / 1e6 / self.copy_roof(row),
                Bound::Compute => 100.0 * flops / ms / 1e6 / self.roofs.fma_gflops,
            })
        };
        let fmt_x = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.2}x"));
        let fmt_pct = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.0}%"));
        if r.is_some() {
            let g = self.geomean().map(|g| g.0);
            lines.push(("geomean >= 2.5x PoCL".into(), fmt_x(g), g.map(|g| g >= 2.5)));
            let ratios: Vec<(String, f64)> = self
                .rows
                .iter()
                .filter(|row| row.work.is_some())
                .filter_map(|row| Some((row.kernel.clone(), self.ratio(row)?)))
                .collect();
            let below: Vec<String> =
                ratios.iter().filter(|(_, x)| *x < 1.0).map(|(k, x)| format!("{k} {x:.2}x")).collect();
            let text = if below.is_empty() { "none".to_string() } else { below.join(", ") };
            lines.push(("no kernel below 1.0x PoCL".into(), text, (!ratios.is_empty()).then_some(below.is_empty())));
        }
        for k in ["vecadd", "saxpy", "stencil5"] {
            let x = share(k);
            lines.push((format!("{k} >= 80% of copy bandwidth"), fmt_pct(x), x.map(|x| x >= 80.0)));
        }
        if r.is_some() {
            for (k, want) in [("matmul_naive", 10.0), ("black_scholes", 5.0)] {
                let x = ratio(k);
                lines.push((format!("{k} >= {want}x PoCL"), fmt_x(x), x.map(|x| x >= want)));
            }
        }
        for k in ["nbody", "mandelbrot"] {
            let x = share(k);
            lines.push((format!("{k} >= 25% of FMA peak"), fmt_pct(x), x.map(|x| x >= 25.0)));
        }
        let gflops = |k: &str| {
            let row = self.subject_row(k)?;
            Some(row.work?.2 / row.ms(s)? / 1e6)
        };
        let mad = gflops("mad_float16").zip(gflops("mad_float")).map(|(v, f)| v / f);
        lines.push(("mad_float within 1.5x of mad_float16 (GFLOP/s)".into(), fmt_x(mad), mad.map(|x| x <= 1.5)));
        let batch = self.subject_row("empty launch, batch").and_then(|row| row.ms(s)).map(|ms| ms * 1e3);
        lines.push((
            "empty launch in a batch <= 3 us".into(),
            batch.map_or("-".into(), |us| format!("{us:.1} us")),
            batch.map(|us| us <= 3.0),
        ));
        if let Some(r) = r {
            let single = self.subject_row("empty enqueue+finish");
            let pair = single.and_then(|row| Some((row.ms(s)? * 1e3, row.ms(r)? * 1e3)));
            lines.push((
                "empty enqueue+finish no slower than PoCL".into(),
                pair.map_or("-".into(), |(a, b)| format!("{a:.1} us vs {b:.1} us")),
                pair.map(|(a, b)| a <= b),
            ));
        }
        let mut out = String::from(
            "The CPU device's targets (set for --size full on the 2-core AVX-512 machine):\n\n\
             | target | measured | met |\n|---|---|---|\n",
        );
        for (target, measured, met) in lines {
            let met = match met {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            };
            let _ = writeln!(out, "| {target} | {measured} | {met} |");
        }
        out
    }

    /// The run as JSON.
    pub fn json(&self) -> String {
        let mut out = String::from("{\n");
        let _ = writeln!(out, "  \"size\": {},", json_str(&self.size));
        let _ = writeln!(out, "  \"reps\": {},", self.reps);
        let _ = writeln!(out, "  \"rounds\": {},", self.rounds);
        let _ = writeln!(
            out,
            "  \"host\": {{\"cpu\": {}, \"threads\": {}, \"copy_gbs\": {}, \"fma_gflops\": {}, \"fma_bits\": {}, \
             \"load_start\": {}, \"load_end\": {}}},",
            json_str(&self.host_cpu),
            self.threads,
            json_num(self.roofs.copy_gbs),
            json_num(self.roofs.fma_gflops),
            self.roofs.fma_bits,
            json_str(&self.load_start),
            json_str(&self.load_end)
        );
        let devices: Vec<String> = self
            .labels
            .iter()
            .zip(&self.devices)
            .map(|(l, (p, n))| {
                format!("{{\"label\": {}, \"platform\": {}, \"device\": {}}}", json_str(l), json_str(p), json_str(n))
            })
            .collect();
        let _ = writeln!(out, "  \"devices\": [{}],", devices.join(", "));
        let mut results = Vec::new();
        for row in &self.rows {
            for (d, cell) in row.cells.iter().enumerate() {
                let mut f = vec![
                    format!("\"kernel\": {}", json_str(&row.kernel)),
                    format!("\"size\": {}", json_str(&row.size)),
                    format!("\"device\": {}", json_str(&self.labels[d])),
                ];
                match cell {
                    Cell::Kernel { ms, wall_ms, median_ms, note } => {
                        f.push("\"verified\": true".into());
                        f.push(format!("\"kernel_ms\": {}", json_num(*ms)));
                        f.push(format!("\"median_ms\": {}", json_num(*median_ms)));
                        f.push(format!("\"wall_ms\": {}", json_num(*wall_ms)));
                        if let Some((bound, bytes, flops)) = row.work {
                            f.push(format!("\"gbs\": {}", json_num(bytes / ms / 1e6)));
                            f.push(format!("\"gflops\": {}", json_num(flops / ms / 1e6)));
                            let roof_pct = match bound {
                                Bound::Memory => 100.0 * bytes / ms / 1e6 / self.copy_roof(row),
                                Bound::Compute => 100.0 * flops / ms / 1e6 / self.roofs.fma_gflops,
                            };
                            let roof = if bound == Bound::Memory { "copy" } else { "fma" };
                            f.push(format!("\"roof\": \"{roof}\", \"roof_pct\": {}", json_num(roof_pct)));
                            if let (Bound::Memory, Some(gbs)) = (bound, row.copy_gbs) {
                                f.push(format!("\"copy_gbs_next_to_it\": {}", json_num(gbs)));
                            }
                        }
                        f.push(format!("\"check\": {}", json_str(note)));
                    }
                    Cell::Launch { us } => {
                        f.push("\"verified\": true".into());
                        f.push(format!("\"us_per_launch\": {}", json_num(*us)));
                    }
                    Cell::Failed(e) => {
                        f.push("\"verified\": false".into());
                        f.push(format!("\"error\": {}", json_str(e)));
                    }
                }
                results.push(format!("    {{{}}}", f.join(", ")));
            }
        }
        let _ = writeln!(out, "  \"results\": [\n{}\n  ],", results.join(",\n"));
        let ratios: Vec<String> = self
            .rows
            .iter()
            .filter_map(|r| self.ratio(r).map(|x| format!("{}: {}", json_str(&r.kernel), json_num(x))))
            .collect();
        let _ = writeln!(out, "  \"ratios\": {{{}}},", ratios.join(", "));
        let _ = writeln!(out, "  \"geomean_ratio\": {}", self.geomean().map_or("null".into(), |(g, _)| json_num(g)));
        out.push_str("}\n");
        out
    }
}

/// Each kernel's median round: for every row (matched by position; every round runs the
/// same kernels in the same order), each device's median time over the rounds and the
/// median copy bandwidth measured next to it. A device that failed in any round fails.
pub fn median_rows(rounds: &[Vec<Row>]) -> Vec<Row> {
    let Some(first) = rounds.first() else { return Vec::new() };
    if rounds.len() == 1 {
        return first.clone();
    }
    first
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let same: Vec<&Row> = rounds.iter().map(|r| &r[i]).collect();
            let cells = (0..row.cells.len()).map(|d| median_cell(same.iter().map(|r| &r.cells[d]))).collect();
            let copies: Vec<f64> = same.iter().filter_map(|r| r.copy_gbs).collect();
            Row { cells, copy_gbs: median(copies), ..row.clone() }
        })
        .collect()
}

fn median_cell<'a>(cells: impl Iterator<Item = &'a Cell>) -> Cell {
    let cells: Vec<&Cell> = cells.collect();
    if let Some(failed) = cells.iter().find(|c| matches!(c, Cell::Failed(_))) {
        return (*failed).clone();
    }
    let pick = |f: &dyn Fn(&Cell) -> Option<f64>| median(cells.iter().filter_map(|c| f(c)).collect());
    match cells.first() {
        Some(Cell::Kernel { note, .. }) => Cell::Kernel {
            ms: pick(&|c| if let Cell::Kernel { ms, .. } = c { Some(*ms) } else { None }).unwrap_or(f64::NAN),
            wall_ms: pick(&|c| if let Cell::Kernel { wall_ms, .. } = c { Some(*wall_ms) } else { None })
                .unwrap_or(f64::NAN),
            median_ms: pick(&|c| if let Cell::Kernel { median_ms, .. } = c { Some(*median_ms) } else { None })
                .unwrap_or(f64::NAN),
            note: note.clone(),
        },
        Some(Cell::Launch { .. }) => Cell::Launch {
            us: pick(&|c| if let Cell::Launch { us } = c { Some(*us) } else { None }).unwrap_or(f64::NAN),
        },
        _ => Cell::Failed("no result".into()),
    }
}

/// The median (the mean of the middle two for an even count); `None` when empty.
fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    Some(if n % 2 == 1 { xs[n / 2] } else { (xs[n / 2 - 1] + xs[n / 2]) / 2.0 })
}

fn time_cell(row: &Row, d: usize) -> String {
    match row.cells.get(d) {
        Some(Cell::Kernel { ms, .. }) => format!("{ms:.3}"),
        Some(Cell::Launch { us }) => format!("{:.4}", us / 1e3),
        Some(Cell::Failed(_)) => "FAILED".into(),
        _ => "-".into(),
    }
}

fn json_num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else {
        "null".into()
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(ms: f64) -> Cell {
        Cell::Kernel { ms, wall_ms: ms, median_ms: ms, note: String::new() }
    }

    fn report(rows: Vec<Row>) -> Report {
        Report {
            labels: vec!["PoCL".into(), "SoftCL".into()],
            devices: vec![("Portable Computing Language".into(), "cpu".into()), ("SoftCL".into(), "cpu".into())],
            size: "full".into(),
            reps: 5,
            rounds: 1,
            host_cpu: "test".into(),
            threads: 2,
            load_start: "0".into(),
            load_end: "0".into(),
            roofs: Roofs { copy_gbs: 10.0, fma_gflops: 100.0, fma_bits: 512 },
            rows,
        }
    }

    #[test]
    fn ratios_are_pocl_time_over_softcl_time_and_the_geomean_skips_launch_rows() {
        let rows = vec![
            // SoftCL twice as fast, then half as fast: geomean 1.
            Row {
                kernel: "vecadd".into(),
                size: "1".into(),
                work: Some((Bound::Memory, 1e9, 0.0)),
                cells: vec![kernel(200.0), kernel(100.0)],
                copy_gbs: None,
            },
            Row {
                kernel: "nbody".into(),
                size: "1".into(),
                work: Some((Bound::Compute, 0.0, 1e9)),
                cells: vec![kernel(50.0), kernel(100.0)],
                copy_gbs: None,
            },
            Row {
                kernel: "empty launch, batch".into(),
                size: "x1".into(),
                work: None,
                cells: vec![Cell::Launch { us: 1.0 }, Cell::Launch { us: 8.0 }],
                copy_gbs: None,
            },
            Row {
                kernel: "math".into(),
                size: "1".into(),
                work: Some((Bound::Compute, 0.0, 1e9)),
                cells: vec![kernel(10.0), Cell::Failed("wrong".into())],
                copy_gbs: None,
            },
        ];
        let r = report(rows);
        assert_eq!(r.subject_and_reference(), (1, Some(0)), "SoftCL is the subject wherever it is listed");
        assert!((r.ratio(&r.rows[0]).unwrap() - 2.0).abs() < 1e-12);
        assert!((r.ratio(&r.rows[1]).unwrap() - 0.5).abs() < 1e-12);
        assert!(r.ratio(&r.rows[3]).is_none(), "a failed run has no ratio");
        let (g, n) = r.geomean().unwrap();
        assert_eq!(n, 2);
        assert!((g - 1.0).abs() < 1e-12);
        let md = r.markdown();
        assert!(md.contains("| vecadd | 1 | 100.000 | 10.0 GB/s | 100% copy | 200.000 | 2.00x |"), "{md}");
        assert!(md.contains("| math | 1 | FAILED | FAILED | - | 10.000 | - |"), "{md}");
        let targets = r.targets();
        assert!(targets.contains("| geomean >= 2.5x PoCL | 1.00x | no |"), "{targets}");
        assert!(targets.contains("| empty launch in a batch <= 3 us | 8.0 us | no |"), "{targets}");
        assert!(targets.contains("| vecadd >= 80% of copy bandwidth | 100% | yes |"), "{targets}");
    }

    #[test]
    fn intels_runtime_gets_a_ratio_column_and_a_geomean_beside_pocls() {
        let rows = vec![Row {
            kernel: "vecadd".into(),
            size: "1".into(),
            work: Some((Bound::Memory, 1e9, 0.0)),
            // PoCL 200 ms, SoftCL 100, Intel 50.
            cells: vec![kernel(200.0), kernel(100.0), kernel(50.0)],
            copy_gbs: None,
        }];
        let mut r = report(rows);
        r.labels.push("Intel(R) OpenCL".into());
        r.devices.push(("Intel(R) OpenCL".into(), "cpu".into()));
        let md = r.markdown();
        assert!(md.contains("| PoCL ms | Intel(R) OpenCL ms | SoftCL/PoCL | SoftCL/Intel(R) OpenCL |"), "{md}");
        assert!(md.contains("| 200.000 | 50.000 | 2.00x | 0.50x |"), "{md}");
        assert!(md.contains("Geomean SoftCL/PoCL over 1 kernels: 2.00x"), "{md}");
        assert!(md.contains("Geomean SoftCL/Intel(R) OpenCL over 1 kernels: 0.50x"), "{md}");
        assert_eq!(r.geomean().map(|g| g.0), Some(2.0), "the targets' geomean stays PoCL's");
    }

    #[test]
    fn a_memory_bound_share_is_of_the_copy_bandwidth_measured_next_to_the_kernel() {
        // 1e9 bytes in 100 ms: 10 GB/s. The run's roof is 10 GB/s, the copy measured next
        // to the kernel 12.5 GB/s: the share is 80% of the latter, in the table, the targets
        // and the JSON.
        let rows = vec![Row {
            kernel: "vecadd".into(),
            size: "1".into(),
            work: Some((Bound::Memory, 1e9, 0.0)),
            cells: vec![kernel(200.0), kernel(100.0)],
            copy_gbs: Some(12.5),
        }];
        let r = report(rows);
        let md = r.markdown();
        assert!(md.contains("| vecadd | 1 | 100.000 | 10.0 GB/s | 80% of 12.5 GB/s copy |"), "{md}");
        let targets = r.targets();
        assert!(targets.contains("| vecadd >= 80% of copy bandwidth | 80% | yes |"), "{targets}");
        let json = r.json();
        assert!(json.contains("\"roof_pct\": 80") && json.contains("\"copy_gbs_next_to_it\": 12.5"), "{json}");
    }

    #[test]
    fn rounds_combine_into_each_kernel_median_time_and_median_copy_bandwidth() {
        let row = |pocl: f64, softcl: f64, copy: f64| Row {
            kernel: "vecadd".into(),
            size: "1".into(),
            work: Some((Bound::Memory, 1e9, 0.0)),
            cells: vec![kernel(pocl), kernel(softcl)],
            copy_gbs: Some(copy),
        };
        let launch = |us: f64| Row {
            kernel: "empty launch, batch".into(),
            size: "x1".into(),
            work: None,
            cells: vec![Cell::Launch { us: 2.0 * us }, Cell::Launch { us }],
            copy_gbs: None,
        };
        // Round 2 has a copy-bandwidth spike, round 3 a burst that sped up PoCL: the median
        // round is neither.
        let rounds = vec![
            vec![row(200.0, 100.0, 12.5), launch(1.0)],
            vec![row(210.0, 105.0, 20.0), launch(3.0)],
            vec![row(90.0, 98.0, 12.0), launch(2.0)],
        ];
        let rows = median_rows(&rounds);
        assert_eq!(rows.len(), 2);
        assert!(matches!(rows[0].cells[0], Cell::Kernel { ms, .. } if ms == 200.0));
        assert!(matches!(rows[0].cells[1], Cell::Kernel { ms, .. } if ms == 100.0));
        assert_eq!(rows[0].copy_gbs, Some(12.5));
        assert!(matches!(rows[1].cells[1], Cell::Launch { us } if us == 2.0));
        let mut r = report(rows);
        r.rounds = 3;
        assert!(r.markdown().contains("Median of 3 rounds"), "{}", r.markdown());
        assert!(r.targets().contains("| vecadd >= 80% of copy bandwidth | 80% | yes |"), "{}", r.targets());
        assert!(r.json().contains("\"rounds\": 3"), "{}", r.json());

        // A failure in any round fails the kernel; an even count takes the middle two's mean.
        let mut failed = rounds.clone();
        failed[1][0].cells[1] = Cell::Failed("wrong result".into());
        assert!(matches!(&median_rows(&failed)[0].cells[1], Cell::Failed(e) if e == "wrong result"));
        let rows = median_rows(&rounds[..2]);
        assert!(matches!(rows[0].cells[1], Cell::Kernel { ms, .. } if ms == 102.5));
        assert_eq!(median_rows(&rounds[..1])[0].copy_gbs, Some(12.5));
    }
}
