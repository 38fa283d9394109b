//! softcl-fuzz: the differential fuzzer (`scripts/fuzz.sh` runs it).
//!
//! For each seed it generates a kernel (`softcl_conformance::fuzz::gen`), runs it in every
//! configuration in child processes of this binary (`fuzz::run`), compares each with the
//! scalar run, and on a failure prints the seed, the kernel and a reduced kernel
//! (`fuzz::reduce`), and saves them under the output directory.
//!
//! ```text
//! softcl-fuzz [--seed S] [--count K] [--minutes M] [--jobs J] [--timeout SECS]
//!             [--without FEATURE,...] [--configs NAME,...] [--no-reduce]
//!             [--reduce-limit N] [--reduce-for CONFIG] [--advisory NAME,...]
//!             [--out DIR] [--quiet]
//! softcl-fuzz --file KERNEL.cl ...   run one kernel file (a corpus entry) everywhere
//! softcl-fuzz --emit SEED            print the kernel of a seed
//! softcl-fuzz --child CONFIG FILE    (a child: run FILE in CONFIG and print the results)
//! ```
//!
//! `--reduce-limit N` (default 2): reduce the first N failing kernels of each kind of failure
//! (the set of failure signatures, whichever configurations show them). `--reduce-for CONFIG`:
//! reduce for that configuration's failure when it has one (by default the reference's, else
//! the first). `--advisory NAME,...`: failures only in these configurations are printed,
//! saved and summed up, but leave the exit status 0: for another platform with defects of
//! its own (PoCL 3.1 saturates `sub_sat((int)abs(INT_MIN), y)` as if the absolute value
//! were 2^31), which a fixed-seed regression run of this driver cannot triage.

use softcl_conformance::fuzz::ast::{emit, size_of};
use softcl_conformance::fuzz::gen::{self, generate, Case, GenOptions};
use softcl_conformance::fuzz::reduce::{reduce, Budget};
use softcl_conformance::fuzz::run::{self, judge, run_all, Config, Failure, Outcome, REFERENCE};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Args {
    seed: u64,
    count: Option<u64>,
    minutes: Option<f64>,
    jobs: usize,
    timeout: Duration,
    opts: GenOptions,
    configs: Option<Vec<String>>,
    reduce: bool,
    reduce_limit: usize,
    /// Reduce for this configuration's failure when it has one.
    reduce_for: Option<String>,
    /// Configurations whose failures alone do not fail the run.
    advisory: Vec<String>,
    out: PathBuf,
    file: Option<PathBuf>,
    quiet: bool,
}

fn usage() -> ! {
    print_usage();
    std::process::exit(2)
}

fn print_usage() {
    eprintln!(
        "usage: softcl-fuzz [--seed S] [--count K] [--minutes M] [--jobs J] [--timeout SECS]\n\
         \x20                  [--without FEATURE,...] [--configs NAME,...] [--no-reduce]\n\
         \x20                  [--reduce-limit N] [--reduce-for CONFIG] [--advisory NAME,...]\n\
         \x20                  [--out DIR] [--quiet]\n\
         \x20      softcl-fuzz --file KERNEL.cl [--configs ...] [--timeout SECS]\n\
         \x20      softcl-fuzz --emit SEED [--without ...]\n\
         features: {}\n\
         configurations: {}",
        gen::FEATURES.join(" "),
        run::configs().iter().map(|c| c.name).collect::<Vec<_>>().join(" ")
    );
}

fn parse_args(argv: &[String]) -> Args {
    let mut a = Args {
        seed: 1,
        count: None,
        minutes: None,
        jobs: 2,
        timeout: Duration::from_secs(120),
        opts: GenOptions::default(),
        configs: None,
        reduce: true,
        reduce_limit: 2,
        reduce_for: None,
        advisory: Vec::new(),
        out: run::default_out_dir(),
        file: None,
        quiet: false,
    };
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().unwrap_or_else(|| usage());
        let num = |v: String| v.parse::<u64>().unwrap_or_else(|_| usage());
        match flag.as_str() {
            "--seed" => a.seed = num(value()),
            "--count" => a.count = Some(num(value())),
            "--minutes" => a.minutes = Some(value().parse().unwrap_or_else(|_| usage())),
            "--jobs" => a.jobs = num(value()) as usize,
            "--timeout" => a.timeout = Duration::from_secs(num(value())),
            "--without" => {
                for f in value().split(',').filter(|f| !f.is_empty()) {
                    if !gen::FEATURES.contains(&f) {
                        eprintln!("unknown feature {f}");
                        usage();
                    }
                    a.opts.disabled.push(f.to_string());
                }
            }
            "--configs" => a.configs = Some(value().split(',').map(str::to_string).collect()),
            "--no-reduce" => a.reduce = false,
            "--reduce-limit" => a.reduce_limit = num(value()) as usize,
            "--reduce-for" => a.reduce_for = Some(value()),
            "--advisory" => a.advisory = value().split(',').map(str::to_string).collect(),
            "--out" => a.out = PathBuf::from(value()),
            "--file" => a.file = Some(PathBuf::from(value())),
            "--quiet" => a.quiet = true,
            "--help" | "-h" => {
                print_usage();
                std::process::exit(0)
            }
            _ => usage(),
        }
    }
    if a.count.is_none() && a.minutes.is_none() && a.file.is_none() {
        a.count = Some(100);
    }
    a
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match argv.first().map(String::as_str) {
        Some("--child") if argv.len() == 3 => std::process::exit(run::child_main(&argv[1], Path::new(&argv[2]))),
        Some("--emit") if argv.len() >= 2 => {
            let args = parse_args(&argv[2..]);
            let seed = argv[1].parse().unwrap_or_else(|_| usage());
            print!("{}", generate(seed, &args.opts).source());
            return;
        }
        _ => {}
    }
    let args = parse_args(&argv);
    let exe = std::env::current_exe().expect("the fuzzer's own path");
    let mut configs = run::configs();
    if let Some(names) = &args.configs {
        for n in names {
            if !configs.iter().any(|c| c.name == n) {
                eprintln!("unknown configuration {n}");
                usage();
            }
        }
        configs.retain(|c| c.name == REFERENCE || names.iter().any(|n| n == c.name));
    }
    for n in &args.advisory {
        if n == REFERENCE || !run::configs().iter().any(|c| c.name == n) {
            eprintln!("--advisory: {n} is not a configuration other than the reference");
            usage();
        }
    }
    let work = args.out.join(format!("work-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("create the work directory");
    let code = if let Some(file) = &args.file {
        run_file(&args, &exe, &configs, file)
    } else {
        fuzz(&args, &exe, &configs, &work)
    };
    let _ = std::fs::remove_dir_all(&work);
    std::process::exit(code);
}

/// Runs one kernel file in every configuration and prints what each gave.
fn run_file(args: &Args, exe: &Path, configs: &[Config], file: &Path) -> i32 {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let (launch, _) = gen::parse_header(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let results = run_all(exe, configs, file, args.jobs, args.timeout);
    for (c, o, t) in &results {
        let what = match o {
            Outcome::Ok { note, .. } => format!("ok ({note})"),
            o => o.class(),
        };
        println!("{:<11} {:>6.2} s  {what}", c.name, t.as_secs_f64());
    }
    let failures = judge(&results, launch.items());
    print_failures(&failures);
    i32::from(fails_the_run(args, &failures))
}

/// Whether `failures` fail the run: one of them is in a configuration that is not advisory.
fn fails_the_run(args: &Args, failures: &[Failure]) -> bool {
    failures.iter().any(|f| !args.advisory.contains(&f.config))
}

fn print_failures(failures: &[Failure]) {
    for f in failures {
        let detail: String = f.detail.lines().next().unwrap_or("").chars().take(200).collect();
        println!("  FAIL {}: {}: {detail}", f.config, f.class);
    }
}

/// A failure class for the summary: each failure signature with the configurations that
/// show it.
fn class_key(failures: &[Failure]) -> String {
    let mut by: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for f in failures {
        by.entry(f.signature()).or_default().push(&f.config);
    }
    by.iter().map(|(k, v)| format!("{k} on {}", v.join(","))).collect::<Vec<_>>().join("; ")
}

fn fuzz(args: &Args, exe: &Path, configs: &[Config], work: &Path) -> i32 {
    let start = Instant::now();
    let deadline = args.minutes.map(|m| start + Duration::from_secs_f64(m * 60.0));
    let mut classes: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    // Reductions per kind of failure, whichever configurations show it.
    let mut reduced: BTreeMap<String, usize> = BTreeMap::new();
    let mut vectorized: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut kernels = 0u64;
    // Kernels that failed outside the advisory configurations.
    let mut failed = 0u64;
    println!(
        "softcl-fuzz: seeds from {}{}{}, configurations {}",
        args.seed,
        args.count.map_or(String::new(), |c| format!(", {c} kernels")),
        args.minutes.map_or(String::new(), |m| format!(", {m} minutes")),
        configs.iter().map(|c| c.name).collect::<Vec<_>>().join(" ")
    );
    let mut seed = args.seed;
    loop {
        if args.count.is_some_and(|c| kernels >= c) || deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let case = generate(seed, &args.opts);
        let file = work.join(format!("seed-{seed}.cl"));
        std::fs::write(&file, case.source()).expect("write the kernel file");
        let t0 = Instant::now();
        let results = run_all(exe, configs, &file, args.jobs, args.timeout);
        for (c, o, _) in &results {
            if let Outcome::Ok { note, .. } = o {
                let e = vectorized.entry(c.name).or_default();
                e.1 += 1;
                if note.starts_with("vectorized") {
                    e.0 += 1;
                }
            }
        }
        let failures = judge(&results, case.launch.items());
        kernels += 1;
        let launch = format!("global {:?} local {:?}", case.launch.global, case.launch.local);
        if failures.is_empty() {
            let _ = std::fs::remove_file(&file);
            if !args.quiet {
                println!(
                    "seed {seed}: ok ({launch}, {} nodes, {:.1} s)",
                    size_of(&case.nodes),
                    t0.elapsed().as_secs_f64()
                );
            }
        } else {
            let key = class_key(&failures);
            classes.entry(key.clone()).or_default().push(seed);
            if fails_the_run(args, &failures) {
                failed += 1;
                println!("seed {seed}: FAILED ({launch}): {key}");
            } else {
                println!("seed {seed}: differs only in advisory configurations ({launch}): {key}");
            }
            print_failures(&failures);
            std::fs::create_dir_all(&args.out).expect("create the output directory");
            let saved = args.out.join(format!("seed-{seed}.cl"));
            std::fs::write(&saved, with_failures(&case.source(), &failures)).expect("save the kernel");
            println!("  kernel: {}", saved.display());
            if !args.quiet {
                println!("----- kernel, seed {seed} -----\n{}-----", case.source());
            }
            let mut kinds: Vec<String> = failures.iter().map(Failure::signature).collect();
            kinds.sort();
            kinds.dedup();
            let n = reduced.entry(kinds.join("; ")).or_default();
            if args.reduce && *n < args.reduce_limit {
                *n += 1;
                reduce_case(args, exe, configs, work, &case, &failures);
            }
        }
        seed += 1;
    }
    println!(
        "\nsoftcl-fuzz: {kernels} kernels in {:.0} s, seeds {}..{}",
        start.elapsed().as_secs_f64(),
        args.seed,
        seed
    );
    for (c, (v, n)) in &vectorized {
        match *c {
            REFERENCE => {}
            c if run::is_other_platform(c) => println!("  {c:<11} ran {n} kernels"),
            _ => println!("  {c:<11} ran vectorized in {v} of {n} kernels"),
        }
    }
    if classes.is_empty() {
        println!("no failure");
        return 0;
    }
    println!("failures by class:");
    for (k, seeds) in &classes {
        println!("  {} kernels: {k}\n    seeds {:?}", seeds.len(), seeds);
    }
    if failed == 0 {
        println!("only advisory configurations ({}) failed: exit status 0", args.advisory.join(","));
    }
    i32::from(failed > 0)
}

/// The kernel text with its failures as comments after the header.
fn with_failures(source: &str, failures: &[Failure]) -> String {
    let mut notes = String::new();
    for f in failures {
        notes.push_str(&format!("// failure: {}: {}: {}\n", f.config, f.class, f.detail.lines().next().unwrap_or("")));
    }
    let at = source.find("// features:").unwrap_or(0);
    format!("{}{notes}{}", &source[..at], &source[at..])
}

/// Reduces a failing case for its first failure (the reference's own, if it has one) and
/// prints and saves the reduced kernel with the configurations it fails in.
fn reduce_case(args: &Args, exe: &Path, configs: &[Config], work: &Path, case: &Case, failures: &[Failure]) {
    let chosen = args.reduce_for.as_deref().and_then(|c| failures.iter().find(|f| f.config == c));
    let primary = chosen.or_else(|| failures.iter().find(|f| f.config == REFERENCE)).unwrap_or(&failures[0]).clone();
    let sig = primary.signature();
    let pair: Vec<Config> =
        configs.iter().filter(|c| c.name == REFERENCE || c.name == primary.config).cloned().collect();
    let cand_file = work.join("candidate.cl");
    let items = case.launch.items();
    println!("  reducing for {} on {} ({} nodes)...", sig, primary.config, size_of(&case.nodes));
    let t0 = Instant::now();
    let budget = Budget { tries: 600, time: Duration::from_secs(20 * 60) };
    let reduced = reduce(case.nodes.clone(), budget, |nodes| {
        let cand = Case { nodes: nodes.to_vec(), ..case.clone() };
        std::fs::write(&cand_file, cand.source()).expect("write the candidate");
        let results = run_all(exe, &pair, &cand_file, args.jobs, args.timeout);
        let reference_ok = matches!(results[0].1, Outcome::Ok { .. });
        let f = judge(&results, items);
        (primary.config == REFERENCE || reference_ok)
            && f.iter().any(|f| f.config == primary.config && f.signature() == sig)
    });
    let small = Case { nodes: reduced.nodes.clone(), ..case.clone() };
    let file = args.out.join(format!("seed-{}-reduced.cl", case.seed));
    std::fs::write(&file, small.source()).expect("save the reduced kernel");
    let results = run_all(exe, configs, &file, args.jobs, args.timeout);
    let now = judge(&results, items);
    std::fs::write(&file, with_failures(&small.source(), &now)).expect("save the reduced kernel");
    println!(
        "  reduced to {} nodes in {} tries, {:.0} s{}: {}",
        size_of(&reduced.nodes),
        reduced.tries,
        t0.elapsed().as_secs_f64(),
        if reduced.complete { "" } else { " (budget spent)" },
        file.display()
    );
    println!("  the reduced kernel fails: {}", class_key(&now));
    println!("----- reduced kernel, seed {} -----\n{}-----", case.seed, emit(&reduced.nodes));
}
