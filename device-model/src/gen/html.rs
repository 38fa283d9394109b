//! The Gen model's report as one self-contained HTML page (`SOFTCL_GEN_REPORT=html:<file>`):
//! no network, inline CSS and SVG, one small script (a filter for the source listing).
//!
//! The page shows a summary table, a chart of where the cycles go, the occupancy limits
//! (the binding one marked), the worst source lines with their advice, and each source file
//! with per-line heat (lost cycles) and statistics. Its input is [`ReportPage`]: the model's
//! report fills it; every string in it is escaped.

use super::lines::LineStats;
use std::fmt::Write as _;
use std::sync::Arc;

/// One part of the cycle split (compute, L3, SLM, memory, barrier ...).
#[derive(Debug, Clone, PartialEq)]
pub struct CycleShare {
    pub name: String,
    pub cycles: f64,
}

/// One occupancy limit: how many work-groups per sub-slice it allows.
#[derive(Debug, Clone, PartialEq)]
pub struct OccupancyLimit {
    /// "hardware threads", "barrier registers", "SLM" ...
    pub name: String,
    pub work_groups: u32,
    /// How the limit follows ("56 threads / 4 per work-group").
    pub detail: String,
    /// The limit that binds (the smallest).
    pub binding: bool,
}

/// Everything the page shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReportPage {
    /// "Kernel matmul on gen9-gt2".
    pub title: String,
    /// Summary rows (key, value), in order: SIMD width and why, threads per work-group,
    /// occupancy, modelled time ...
    pub summary: Vec<(String, String)>,
    pub cycles: Vec<CycleShare>,
    /// The launch's modelled cycles: the terms of `cycles` overlap (the model takes the
    /// longest per wave, and the memory and atomics roofs over the launch), so each is shown
    /// against this, not stacked (0: the longest term).
    pub total_cycles: f64,
    pub occupancy: Vec<OccupancyLimit>,
    /// Per-line statistics, worst first (`lines::line_stats`).
    pub lines: Vec<LineStats>,
    /// The program's source files (`GenKernelInfo::source_files`; `SourceLoc::file` indexes
    /// them) and their texts where known (`GenKernelInfo::source_texts`).
    pub source_files: Vec<String>,
    pub source_texts: Vec<Option<Arc<str>>>,
}

/// The marker the page's script sets when it ran to its end (`<html data-ready="1">`).
pub const READY_MARKER: &str = "data-ready=\"1\"";

/// Colours of the cycle chart's parts, in order.
const PALETTE: [&str; 8] = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f"];

/// How many of the worst lines the table at the top lists.
const WORST_LINES: usize = 10;

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; }
td, th { padding: 2px 8px; text-align: left; vertical-align: top; }
table.grid td, table.grid th { border-bottom: 1px solid #ddd; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.binding { font-weight: bold; color: #b00; }
.src { font: 12px/1.35 ui-monospace, monospace; width: 100%; }
.src td { padding: 0 6px; white-space: pre; }
.src td.ln { color: #888; text-align: right; user-select: none; }
.src tr.note td { white-space: normal; font: 12px/1.35 system-ui, sans-serif; padding: 1px 6px 4px 24px; }
.src .adv { color: #8a1c00; }
.src .st { color: #555; }
.legend span { display: inline-block; width: 0.9em; height: 0.9em; margin: 0 4px 0 12px; vertical-align: middle; }
.muted { color: #777; }
";

/// A small script: the filter checkbox of the source listing; it marks the page ready last.
const SCRIPT: &str = "
(function () {
  var box = document.getElementById('only-advice');
  function apply() {
    var rows = document.querySelectorAll('.src tr.plain');
    for (var i = 0; i < rows.length; i++) rows[i].style.display = box.checked ? 'none' : '';
  }
  box.addEventListener('change', apply);
  apply();
  document.documentElement.setAttribute('data-ready', '1');
})();
";

fn file_name(page: &ReportPage, file: u32) -> String {
    super::lines::file_name(&page.source_files, file)
}

fn anchor(file: u32, line: u32) -> String {
    format!("L{file}-{line}")
}

fn percent(x: f64) -> String {
    super::lines::percent(x)
}

fn heat_colour(heat: f64) -> String {
    // White (no loss) to light red (the worst line), light enough to read the code on.
    let lightness = 100.0 - 32.0 * heat.clamp(0.0, 1.0);
    format!("hsl(4, 85%, {lightness:.0}%)")
}

/// One bar per term of the split, each against the launch's cycles `total`: the model
/// combines the terms by taking the longest (they overlap), so bars are not stacked and the
/// binding term's bar is the longest.
fn cycle_chart(out: &mut String, cycles: &[CycleShare], total: f64) {
    let longest = cycles.iter().map(|c| c.cycles.max(0.0)).fold(0.0, f64::max);
    let total = if total > 0.0 { total.max(longest) } else { longest };
    if total <= 0.0 {
        out.push_str("<p class=\"muted\">No cycles were modelled.</p>\n");
        return;
    }
    let (width, row) = (640.0, 22.0);
    let (label, bar) = (90.0, 400.0);
    let height = row * cycles.len() as f64;
    let _ = writeln!(
        out,
        "<svg width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"cycles by resource\">"
    );
    for (i, c) in cycles.iter().enumerate() {
        let share = c.cycles.max(0.0) / total;
        let y = row * i as f64;
        let binds = c.cycles > 0.0 && c.cycles >= longest;
        let _ = writeln!(
            out,
            "<text x=\"0\" y=\"{:.1}\" font-size=\"12\">{}</text><rect x=\"{label}\" y=\"{:.1}\" width=\"{:.2}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {:.0} cycles ({} of the launch)</title></rect><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\">{:.0} ({}){}</text>",
            y + 15.0,
            escape(&c.name),
            y + 3.0,
            bar * share,
            row - 6.0,
            PALETTE[i % PALETTE.len()],
            escape(&c.name),
            c.cycles,
            percent(share),
            label + bar * share + 6.0,
            y + 15.0,
            c.cycles,
            percent(share),
            if binds { ", binds" } else { "" }
        );
    }
    out.push_str("</svg>\n<p class=\"muted\">Each resource's cycles against the launch's: they overlap, and the longest binds.</p>\n");
}

fn occupancy_table(out: &mut String, limits: &[OccupancyLimit]) {
    if limits.is_empty() {
        out.push_str("<p class=\"muted\">No occupancy limits.</p>\n");
        return;
    }
    let most = limits.iter().map(|l| l.work_groups).max().unwrap_or(1).max(1);
    out.push_str("<table class=\"grid\"><tr><th>limit</th><th class=\"num\">work-groups per sub-slice</th><th></th><th>from</th></tr>\n");
    for l in limits {
        let w = 200.0 * f64::from(l.work_groups) / f64::from(most);
        let class = if l.binding { " class=\"binding\"" } else { "" };
        let _ = writeln!(
            out,
            "<tr{class}><td>{}{}</td><td class=\"num\">{}</td><td><svg width=\"200\" height=\"12\"><rect width=\"{w:.1}\" height=\"12\" fill=\"{}\"/></svg></td><td>{}</td></tr>",
            escape(&l.name),
            if l.binding { " (binding)" } else { "" },
            l.work_groups,
            if l.binding { "#c0392b" } else { "#8fa9c9" },
            escape(&l.detail)
        );
    }
    out.push_str("</table>\n");
}

fn worst_lines(out: &mut String, page: &ReportPage) {
    let worst: Vec<&LineStats> = page.lines.iter().filter(|l| !l.advice.is_empty()).take(WORST_LINES).collect();
    if worst.is_empty() {
        out.push_str("<p class=\"muted\">No line loses cycles the model can attribute.</p>\n");
        return;
    }
    out.push_str(
        "<table class=\"grid\"><tr><th>line</th><th class=\"num\">lost cycles</th><th>figures</th><th>advice</th></tr>\n",
    );
    for l in worst {
        let place = match l.loc {
            Some(loc) => format!(
                "<a href=\"#{}\">{}:{}</a>",
                anchor(loc.file, loc.line),
                escape(&file_name(page, loc.file)),
                loc.line
            ),
            None => "<span class=\"muted\">(no line information)</span>".to_string(),
        };
        let advice: Vec<String> = l.advice.iter().map(|a| escape(&a.text)).collect();
        let _ = writeln!(
            out,
            "<tr><td>{place}</td><td class=\"num\">{:.0}</td><td>{}</td><td>{}</td></tr>",
            l.lost_cycles,
            escape(&l.figures()),
            advice.join("<br>")
        );
    }
    out.push_str("</table>\n");
}

fn source_listing(out: &mut String, page: &ReportPage) {
    let worst = page.lines.iter().map(|l| l.lost_cycles).fold(0.0, f64::max);
    let mut shown_any = false;
    for (file, name) in page.source_files.iter().enumerate() {
        let file = file as u32;
        let stats: Vec<&LineStats> = page.lines.iter().filter(|l| l.loc.is_some_and(|loc| loc.file == file)).collect();
        let Some(Some(text)) = page.source_texts.get(file as usize) else {
            if !stats.is_empty() {
                let _ = writeln!(out, "<h3>{}</h3><p class=\"muted\">Source text not available.</p>", escape(name));
            }
            continue;
        };
        if stats.is_empty() && file != 0 {
            continue;
        }
        shown_any = true;
        let _ = writeln!(out, "<h3>{}</h3>\n<table class=\"src\">", escape(name));
        for (index, code) in text.lines().enumerate() {
            let line = index as u32 + 1;
            let stat = stats.iter().find(|l| l.loc.is_some_and(|loc| loc.line == line));
            let id = anchor(file, line);
            let Some(l) = stat else {
                let _ = writeln!(
                    out,
                    "<tr id=\"{id}\" class=\"plain\"><td class=\"ln\">{line}</td><td>{}</td></tr>",
                    escape(code)
                );
                continue;
            };
            // The line, shaded by its share of the worst line's lost cycles, then a note
            // with its figures and advice.
            let heat = if worst > 0.0 { l.lost_cycles / worst } else { 0.0 };
            let class = if l.advice.is_empty() { "plain" } else { "hot" };
            let advice: Vec<String> = l.advice.iter().map(|a| escape(&a.text)).collect();
            let _ = writeln!(
                out,
                "<tr id=\"{id}\" class=\"{class}\"><td class=\"ln\">{line}</td><td style=\"background:{}\">{}</td></tr>",
                heat_colour(heat),
                escape(code)
            );
            let _ = writeln!(
                out,
                "<tr class=\"note {class}\"><td></td><td><span class=\"st\">{}</span>{}{}</td></tr>",
                escape(&l.figures()),
                if advice.is_empty() { "" } else { "<br>" },
                if advice.is_empty() {
                    String::new()
                } else {
                    format!("<span class=\"adv\">{}</span>", advice.join("<br>"))
                }
            );
        }
        out.push_str("</table>\n");
    }
    if !shown_any {
        out.push_str("<p class=\"muted\">No source text (the program was not built from source here).</p>\n");
    }
}

/// The page as HTML text.
pub fn render(page: &ReportPage) -> String {
    let mut out = String::with_capacity(16 * 1024);
    let title = escape(&page.title);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{title}</h1>\n"
    );
    out.push_str("<h2>Summary</h2>\n<table class=\"grid\">\n");
    for (key, value) in &page.summary {
        let _ = writeln!(out, "<tr><th>{}</th><td>{}</td></tr>", escape(key), escape(value));
    }
    out.push_str("</table>\n<h2>Where the cycles go</h2>\n");
    cycle_chart(&mut out, &page.cycles, page.total_cycles);
    out.push_str("<h2>Occupancy limits</h2>\n");
    occupancy_table(&mut out, &page.occupancy);
    out.push_str("<h2>Worst lines</h2>\n");
    worst_lines(&mut out, page);
    out.push_str(
        "<h2>Source</h2>\n<p><label><input type=\"checkbox\" id=\"only-advice\"> only lines with advice</label></p>\n",
    );
    source_listing(&mut out, page);
    let _ = write!(out, "<script>{SCRIPT}</script>\n</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::super::lines::{Advice, AdviceKind};
    use super::*;
    use softcl_compiler::gen_abi::SourceLoc;

    pub(crate) fn sample_page() -> ReportPage {
        let source = "__kernel void k(__global float *a) {\n    a[get_global_id(0) * 16] = 1.0f; // <b>&\n}\n";
        ReportPage {
            title: "Kernel <k> on gen9-gt2".into(),
            summary: vec![("SIMD width".into(), "16 (register pressure fits 128 x 32 B)".into())],
            cycles: vec![
                CycleShare { name: "compute".into(), cycles: 100.0 },
                CycleShare { name: "L3".into(), cycles: 1500.0 },
                CycleShare { name: "barrier".into(), cycles: 0.0 },
            ],
            total_cycles: 1500.0,
            occupancy: vec![
                OccupancyLimit {
                    name: "hardware threads".into(),
                    work_groups: 14,
                    detail: "56 / 4".into(),
                    binding: true,
                },
                OccupancyLimit { name: "SLM".into(), work_groups: 64, detail: "no SLM".into(), binding: false },
            ],
            lines: vec![LineStats {
                loc: Some(SourceLoc { file: 0, line: 2, column: 0 }),
                messages: 100,
                l3_lines: 1600,
                lines_per_message: 16.0,
                ideal_lines: 100,
                efficiency: 1.0 / 16.0,
                advice: vec![Advice {
                    kind: AdviceKind::ScatteredLines,
                    text: "strided access: <16> lines".into(),
                    lost_cycles: 1500.0,
                }],
                lost_cycles: 1500.0,
                ..Default::default()
            }],
            source_files: vec!["<source>".into()],
            source_texts: vec![Some(source.into())],
        }
    }

    #[test]
    fn everything_is_escaped() {
        let html = render(&sample_page());
        assert!(html.contains("Kernel &lt;k&gt; on gen9-gt2"));
        assert!(html.contains("// &lt;b&gt;&amp;"));
        assert!(html.contains("strided access: &lt;16&gt; lines"));
        assert!(html.contains("&lt;source&gt;"));
        assert!(!html.contains("<k>") && !html.contains("<b>") && !html.contains("<16>"));
        assert!(!html.contains("http://") && !html.contains("https://"), "no network references");
    }

    #[test]
    fn the_page_has_its_parts() {
        let html = render(&sample_page());
        for part in ["Summary", "Where the cycles go", "Occupancy limits", "Worst lines", "Source", "<svg", "(binding)"]
        {
            assert!(html.contains(part), "missing {part}");
        }
        // The hot line links to its place in the listing, which is shaded.
        assert!(html.contains("href=\"#L0-2\""));
        assert!(html.contains(
            "<tr id=\"L0-2\" class=\"hot\"><td class=\"ln\">2</td><td style=\"background:hsl(4, 85%, 68%)\">"
        ));
        assert!(html.contains("<span class=\"adv\">strided access: &lt;16&gt; lines</span>"));
        assert!(!html.contains(READY_MARKER), "only the script sets the marker");
        // The cycles as the model combines them: each term against the launch, the
        // longest binding (L3's 1500 of 1500), not a stacked share of their sum (L3 was
        // 94% of 1600 when the bars were stacked).
        assert!(html.contains(">1500 (100%), binds</text>"), "{html}");
        assert!(html.contains(">100 (7%)</text>"), "{html}");
        assert!(html.contains(">0 (0%)</text>"), "{html}");
    }
}
