//! The persistent kernel cache: what a successful clBuildProgram produced for one device
//! target, kept on disk so that a later build of the same program (in this process or another)
//! skips clang, llvm-spirv and LLVM's optimiser and code generator.
//!
//! Location: `SOFTCL_CACHE_DIR`, else `$XDG_CACHE_HOME/softcl`, else `$HOME/.cache/softcl`.
//! `SOFTCL_CACHE=0` (or `off`, `false`, `no`) turns it off. Both are read at every build.
//!
//! **Key** ([`key_for_source`], [`key_for_il`]): SHA-256 of the kind of input, the source text or
//! the (specialized) SPIR-V, the build options' text, the device's whole compiler [`Target`]
//! ([`target_text`]: every field with its value, so that a field added later is keyed without
//! being listed here; the target holds every code-generation knob of the environment - the
//! vectorizer's, `SOFTCL_STREAMING_STORES`, `SOFTCL_PREFETCH`, `SOFTCL_VECMATH` - which the
//! devices read once when they build their targets, and what the Gen configuration changes in a
//! build: its disabled features), the host CPU as LLVM sees it (CPU name and feature string),
//! whether libsleef is present, the driver's identity ([`driver_identity`]: crate
//! version, git commit, and size, mtime and inode of the loaded library holding this code and
//! of the loaded libLLVM) and, for source, the identity of clang and llvm-spirv (the resolved
//! binaries' paths, sizes, mtimes and inodes: cheaper than running `--version`, which would cost
//! more than a warm build, and finer).
//!
//! Not cached (the build runs as before): sources with an `#include` directive or using
//! `__DATE__` / `__TIME__` (headers can change without the source changing; the expansion
//! changes with time; clang's `-include` / `-imacros` are no build options: the parsed options
//! reach clang as `-D` and `-I` arguments only, each one word), builds with a diagnostic knob that
//! prints during compilation (`SOFTCL_DUMP_LLVM`, `SOFTCL_PRINT_IR`, `SOFTCL_CODEGEN_TIMES`,
//! `SOFTCL_VECTORIZER_REPORT`), failed builds, clCompileProgram / clLinkProgram, and the Gen
//! device's SIMD-width variants compiled lazily at launch.
//!
//! **Entry** (one file `<key hex>.kc`): magic, format version, the key, payload length, CRC-32 of
//! the payload, then the payload: the front end's log, the SPIR-V (source builds) and the
//! [`NativeImage`] (`compiler::native_image`). A reader checks all of it and treats anything
//! invalid (truncated, corrupt, another format, another key) as a miss; the rebuild then
//! overwrites the entry. Writers write a temporary file in the same directory and rename it over
//! the entry (atomic on POSIX file systems), so concurrent processes building the same program
//! each install a complete entry and readers never see a partial one; a store removes temporary
//! files older than ten minutes (left by a writer that died). No error of the cache ever fails a
//! build: an unwritable directory only means no entry. There is no eviction of entries.

use crate::sha256::{hex, Sha256};
use softcl_compiler::{native_image, BuildOptions, NativeImage, Target};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

/// The first bytes of every entry.
const MAGIC: &[u8; 8] = b"SOFTCLKC";
/// Bumped whenever the entry layout changes.
const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 8 + 4;

/// Diagnostic knobs that print while compiling: a build with one of them set is not cached.
const DIAGNOSTIC_ENV: [&str; 4] =
    ["SOFTCL_DUMP_LLVM", "SOFTCL_PRINT_IR", "SOFTCL_CODEGEN_TIMES", "SOFTCL_VECTORIZER_REPORT"];

/// A cache key: the SHA-256 of everything the build's result depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl Key {
    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

/// What a cached build holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The front end's log (clang's warnings); empty for IL.
    pub front_log: String,
    /// The SPIR-V compiled from source; empty for IL (the program has it).
    pub spirv: Vec<u32>,
    pub image: NativeImage,
}

/// The cache directory, or `None` when the cache is off.
pub fn directory() -> Option<PathBuf> {
    if let Ok(v) = std::env::var("SOFTCL_CACHE") {
        if ["0", "off", "false", "no"].iter().any(|o| v.trim().eq_ignore_ascii_case(o)) {
            return None;
        }
    }
    let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = nonempty("SOFTCL_CACHE_DIR") {
        return Some(dir);
    }
    if let Some(xdg) = nonempty("XDG_CACHE_HOME").filter(|p| p.is_absolute()) {
        return Some(xdg.join("softcl"));
    }
    nonempty("HOME").map(|home| home.join(".cache").join("softcl"))
}

/// Whether a build of `source` may be cached at all (see the module comment).
fn cacheable_source(source: &str) -> bool {
    let includes =
        source.lines().any(|l| l.trim_start().strip_prefix('#').is_some_and(|d| d.trim_start().starts_with("include")));
    !includes && !source.contains("__DATE__") && !source.contains("__TIME__")
}

fn diagnostics_on() -> bool {
    DIAGNOSTIC_ENV.iter().any(|n| std::env::var_os(n).is_some_and(|v| !v.is_empty() && v != "0"))
}

/// The key of building OpenCL C `source` with `options` for `target`; `None` when this build is
/// not cached (cache off, or see the module comment).
pub fn key_for_source(source: &str, options: &BuildOptions, target: &Target) -> Option<Key> {
    if directory().is_none() || diagnostics_on() || !cacheable_source(source) {
        return None;
    }
    let mut h = common_key("source", options, target);
    h.field(toolchain_identity().as_bytes());
    h.field(source.as_bytes());
    Some(Key(h.finish()))
}

/// The key of building SPIR-V `words` with `options` for `target`.
pub fn key_for_il(words: &[u32], options: &BuildOptions, target: &Target) -> Option<Key> {
    if directory().is_none() || diagnostics_on() {
        return None;
    }
    let mut h = common_key("il", options, target);
    h.update(&(words.len() as u64).to_le_bytes());
    for w in words {
        h.update(&w.to_le_bytes());
    }
    Some(Key(h.finish()))
}

fn common_key(kind: &str, options: &BuildOptions, target: &Target) -> Sha256 {
    let mut h = Sha256::default();
    h.field(b"softcl kernel cache");
    h.field(&FORMAT_VERSION.to_le_bytes());
    h.field(&native_image::FORMAT_VERSION.to_le_bytes());
    h.field(kind.as_bytes());
    h.field(driver_identity().as_bytes());
    h.field(target_identity(target).as_bytes());
    h.field(options.text().as_bytes());
    h
}

/// Computes what every build in this process keys or links with but computes only once: the
/// driver's identity, each target's identity (which opens libsleef), LLVM's native target.
/// Called when a context is created, so that the first warm build of a process (a kernel cache
/// hit) costs about what later ones do: these took ~0.8 ms of a 2.5 ms first warm build. The
/// first context of a process pays it instead (later ones find it done); with the cache off
/// nothing is computed here.
pub fn warm_up(targets: &[&Target]) {
    if directory().is_none() {
        return;
    }
    let _ = softcl_compiler::back::warm_up();
    driver_identity();
    for t in targets {
        target_identity(t);
    }
}

type TargetIds = parking_lot::Mutex<std::collections::HashMap<Target, String>>;
static TARGETS_SEEN: OnceLock<TargetIds> = OnceLock::new();

/// The whole compiler target as text: every field with its value (its derived `Debug`, which
/// names each field), so that the key and the identity below hold a field added to [`Target`]
/// later without anyone listing it.
pub fn target_text(target: &Target) -> String {
    format!("{target:?}")
}

/// The device target ([`target_text`]) and the host CPU as the code generator sees them: what
/// native code is valid for (also checked by program binaries holding native code).
/// Computed once per target and process (the host CPU does not change; the knobs that do are
/// fields of the target).
pub fn target_identity(target: &Target) -> String {
    let seen = TARGETS_SEEN.get_or_init(Default::default);
    if let Some(id) = seen.lock().get(target) {
        return id.clone();
    }
    let host = softcl_compiler::back::target::HostTarget::resolve(target);
    let sleef = softcl_compiler::back::host::address("Sleef_sinf4_u10").is_some();
    let id = format!("{} | {} {} {} | sleef {sleef}", target_text(target), host.triple, host.cpu, host.features);
    seen.lock().insert(target.clone(), id.clone());
    id
}

/// The identity of this build of the driver: crate version, git commit at build time, and the
/// size, mtime and inode of the loaded file holding this code and of the loaded libLLVM (read
/// from /proc/self/maps once per process). A rebuilt driver or an upgraded LLVM gives another
/// identity, so an entry or binary of another build is never used.
pub fn driver_identity() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let here = driver_identity as *const () as usize;
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let mut files: Vec<String> = Vec::new();
        for line in maps.lines() {
            // address perms offset dev inode path
            let parts: Vec<&str> = line.split_whitespace().collect();
            let [range, _, _, _, inode, path, ..] = parts[..] else { continue };
            let Some((lo, hi)) = range.split_once('-') else { continue };
            let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) else { continue };
            let name = Path::new(path).file_name().and_then(|n| n.to_str()).unwrap_or("");
            if ((lo..hi).contains(&here) || name.starts_with("libLLVM")) && !files.iter().any(|f| f.starts_with(path)) {
                // A library replaced on disk since it was loaded ("(deleted)", or another
                // inode at its path) is not what runs here: this process's entries and
                // binaries get an identity of their own, which no other process matches.
                // (A path with spaces also looks so: such an install caches per process.)
                let replaced = parts.len() > 6 || {
                    use std::os::unix::fs::MetadataExt;
                    std::fs::metadata(path).map(|m| m.ino().to_string()).ok().as_deref() != Some(inode)
                };
                let path = if replaced {
                    format!(
                        "{path} (replaced on disk; process {} started {:?})",
                        std::process::id(),
                        std::time::SystemTime::now()
                    )
                } else {
                    path.to_string()
                };
                files.push(path);
            }
        }
        let files: Vec<String> = files.iter().map(|f| file_identity(Path::new(f))).collect();
        format!(
            "softcl {} commit {} | {}",
            env!("CARGO_PKG_VERSION"),
            option_env!("SOFTCL_GIT_COMMIT").unwrap_or("unknown"),
            files.join(" | ")
        )
    })
}

/// Path, size, mtime and inode of a file ("missing" if it cannot be read).
fn file_identity(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata(path) {
        Ok(m) => format!("{} {} {}.{} {}", path.display(), m.len(), m.mtime(), m.mtime_nsec(), m.ino()),
        Err(_) => format!("{} missing", path.display()),
    }
}

/// A tool's binary as the front end runs it: the variable's value or the default, looked up
/// in PATH when it has no slash, with symbolic links resolved.
fn tool_identity(env: &str, default: &str) -> String {
    let name = std::env::var(env).ok().filter(|v| !v.trim().is_empty()).unwrap_or_else(|| default.to_string());
    let found = if name.contains('/') {
        Some(PathBuf::from(&name))
    } else {
        std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join(&name)).find(|f| f.is_file()))
            .unwrap_or(None)
    };
    match found {
        Some(path) => {
            let real = std::fs::canonicalize(&path).unwrap_or(path);
            file_identity(&real)
        }
        None => format!("{name} not found"),
    }
}

fn toolchain_identity() -> String {
    use softcl_compiler::front::opencl_c::{DEFAULT_CLANG, DEFAULT_LLVM_SPIRV};
    format!(
        "{} | {}",
        tool_identity("SOFTCL_CLANG", DEFAULT_CLANG),
        tool_identity("SOFTCL_LLVM_SPIRV", DEFAULT_LLVM_SPIRV)
    )
}

fn entry_path(dir: &Path, key: &Key) -> PathBuf {
    dir.join(format!("{}.kc", key.hex()))
}

/// `SOFTCL_CACHE_TRACE=1`: one line on stderr per lookup and store.
pub fn trace(what: impl FnOnce() -> String) {
    if std::env::var_os("SOFTCL_CACHE_TRACE").is_some_and(|v| !v.is_empty() && v != "0") {
        eprintln!("softcl cache: {}", what());
    }
}

/// The entry of `key`, if the cache has a valid one.
pub fn lookup(key: &Key) -> Option<Entry> {
    let dir = directory()?;
    let path = entry_path(&dir, key);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(_) => {
            trace(|| format!("miss {}", path.display()));
            return None;
        }
    };
    match decode(&bytes, key) {
        Ok(entry) => Some(entry),
        Err(e) => {
            trace(|| format!("invalid entry {} ({e}): rebuilt", path.display()));
            None
        }
    }
}

/// Stores `entry` under `key`, ignoring every error (the build has succeeded either way).
/// Images that are not encoded (`native_image::encode`) are not stored.
pub fn store(key: &Key, front_log: &str, spirv: &[u32], image: &NativeImage) {
    let Some(dir) = directory() else { return };
    let Some(bytes) = encode(key, front_log, spirv, image) else { return };
    let path = entry_path(&dir, key);
    remove_orphans(&dir);
    match write_atomically(&dir, &path, &bytes) {
        Ok(()) => trace(|| format!("stored {}", path.display())),
        Err(e) => trace(|| format!("cannot store {}: {e}", path.display())),
    }
}

/// Temporary files older than this were left by a writer that died before its rename.
const ORPHAN_AGE: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes the temporary files of writers that died (a store is a miss, which costs a whole
/// compilation, so one listing of the directory is cheap beside it).
fn remove_orphans(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with('.') && name.ends_with(".tmp")) {
            continue;
        }
        let old =
            e.metadata().and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|a| a > ORPHAN_AGE);
        if old {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("entry");
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_data()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

fn encode(key: &Key, front_log: &str, spirv: &[u32], image: &NativeImage) -> Option<Vec<u8>> {
    let image = native_image::encode(image)?;
    let mut payload = Vec::with_capacity(16 + front_log.len() + spirv.len() * 4 + image.len());
    payload.extend_from_slice(&(front_log.len() as u64).to_le_bytes());
    payload.extend_from_slice(front_log.as_bytes());
    payload.extend_from_slice(&(spirv.len() as u64).to_le_bytes());
    for w in spirv {
        payload.extend_from_slice(&w.to_le_bytes());
    }
    payload.extend_from_slice(&image);
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&key.0);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    out.extend_from_slice(&payload);
    Some(out)
}

fn decode(bytes: &[u8], key: &Key) -> Result<Entry, String> {
    if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
        return Err("not a cache entry".into());
    }
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
    let u64_at = |b: &[u8], at: usize| -> Result<u64, String> {
        b.get(at..at + 8).map(|s| u64::from_le_bytes(s.try_into().expect("8 bytes"))).ok_or("truncated".to_string())
    };
    if u32_at(8) != FORMAT_VERSION {
        return Err("another entry format".into());
    }
    if bytes[12..44] != key.0 {
        return Err("another key".into());
    }
    let len = u64_at(bytes, 44)?;
    let payload = &bytes[HEADER_LEN..];
    if payload.len() as u64 != len {
        return Err("truncated or overlong entry".into());
    }
    if crc32fast::hash(payload) != u32_at(52) {
        return Err("checksum mismatch".into());
    }
    let log_len = usize::try_from(u64_at(payload, 0)?).map_err(|e| e.to_string())?;
    let log_end = 8usize.checked_add(log_len).filter(|&e| e <= payload.len()).ok_or("bad log length")?;
    let front_log = std::str::from_utf8(&payload[8..log_end]).map_err(|e| e.to_string())?.to_string();
    let words = usize::try_from(u64_at(payload, log_end)?).map_err(|e| e.to_string())?;
    let spirv_start = log_end + 8;
    let spirv_end = words
        .checked_mul(4)
        .and_then(|n| n.checked_add(spirv_start))
        .filter(|&e| e <= payload.len())
        .ok_or("bad SPIR-V length")?;
    let spirv = payload[spirv_start..spirv_end]
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
        .collect();
    let image = native_image::decode(&payload[spirv_end..])?;
    Ok(Entry { front_log, spirv, image })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image() -> NativeImage {
        NativeImage {
            object: vec![1, 2, 3, 4, 5],
            host_symbols: vec![],
            kernels: vec![softcl_compiler::KernelInfo { name: "k".into(), ..Default::default() }],
            log: "native note\n".into(),
        }
    }

    #[test]
    fn entries_round_trip_and_damage_is_a_miss() {
        let key = Key([7; 32]);
        let bytes = encode(&key, "warning: x\n", &[0x0723_0203, 5, 6], &image()).unwrap();
        let entry = decode(&bytes, &key).unwrap();
        assert_eq!(entry, Entry { front_log: "warning: x\n".into(), spirv: vec![0x0723_0203, 5, 6], image: image() });
        assert!(decode(&bytes, &Key([8; 32])).is_err(), "another key");
        for n in 0..bytes.len() {
            assert!(decode(&bytes[..n], &key).is_err(), "truncated at {n}");
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x5a;
            assert!(decode(&b, &key).is_err(), "byte {i} flipped");
        }
    }

    #[test]
    fn orphaned_temporary_files_are_removed() {
        let dir = std::env::temp_dir().join(format!("softcl-kcache-orphans-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let old = dir.join(".x.kc.1.2.tmp");
        let young = dir.join(".y.kc.1.3.tmp");
        let entry = dir.join("z.kc");
        for f in [&old, &young, &entry] {
            std::fs::write(f, b"x").unwrap();
        }
        let past = std::time::SystemTime::now() - ORPHAN_AGE * 2;
        std::fs::File::options().write(true).open(&old).unwrap().set_modified(past).unwrap();
        std::fs::File::options().write(true).open(&entry).unwrap().set_modified(past).unwrap();
        remove_orphans(&dir);
        assert!(!old.exists(), "an old temporary file is removed");
        assert!(young.exists(), "a temporary file being written stays");
        assert!(entry.exists(), "entries stay");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn sources_with_includes_or_dates_are_not_cached() {
        assert!(cacheable_source("__kernel void k() {}"));
        assert!(!cacheable_source("#include \"a.h\"\n__kernel void k() {}"));
        assert!(!cacheable_source("  #  include <b.h>\n"));
        assert!(!cacheable_source("int d = __DATE__;"));
        // clang's -include is no build option: such a build never reaches the cache.
        assert!(BuildOptions::parse("-include x.h").is_err());
    }

    /// Every field of the target reaches the key: changing any one changes it. The base target
    /// is written out field by field (no `..`), so that a field added to `Target` or
    /// `CodegenKnobs` does not compile here until it has a case.
    #[test]
    fn the_key_changes_with_every_field_of_the_target() {
        use softcl_compiler::{CodegenKnobs, GenBuild, Vectorizer};
        let knobs = CodegenKnobs { prefetch: true, streaming_stores: Some(16 << 20), vector_math: true };
        let base = Target {
            cpu: None,
            features: None,
            disabled_features: Vec::new(),
            cl_std_versions: vec!["CL1.2".into(), "CL3.0".into()],
            opencl_version: 300,
            vectorizer: Vectorizer::Auto { register_bytes: 64 },
            line_tables: false,
            gen: None,
            max_work_group_size: 4096,
            knobs,
        };
        let changed: Vec<(&str, Target)> = vec![
            ("cpu", Target { cpu: Some("x86-64".into()), ..base.clone() }),
            ("features", Target { features: Some("+sse2".into()), ..base.clone() }),
            ("disabled_features", Target { disabled_features: vec!["cl_khr_fp64".into()], ..base.clone() }),
            ("cl_std_versions", Target { cl_std_versions: vec!["CL1.2".into()], ..base.clone() }),
            ("opencl_version", Target { opencl_version: 120, ..base.clone() }),
            ("vectorizer off", Target { vectorizer: Vectorizer::Off, ..base.clone() }),
            (
                "vectorizer forced",
                Target { vectorizer: Vectorizer::Forced { width: 8, register_bytes: 64 }, ..base.clone() },
            ),
            ("vectorizer invalid", Target { vectorizer: Vectorizer::Invalid("x".into()), ..base.clone() }),
            ("line_tables", Target { line_tables: true, ..base.clone() }),
            ("gen", Target { gen: Some(GenBuild::default()), ..base.clone() }),
            (
                "gen simd",
                Target { gen: Some(GenBuild { simd: 16, linear_lanes: false, row_width: 0 }), ..base.clone() },
            ),
            (
                "gen lanes",
                Target { gen: Some(GenBuild { simd: 16, linear_lanes: true, row_width: 0 }), ..base.clone() },
            ),
            ("gen rows", Target { gen: Some(GenBuild { simd: 16, linear_lanes: true, row_width: 8 }), ..base.clone() }),
            ("max_work_group_size", Target { max_work_group_size: 256, ..base.clone() }),
            ("prefetch", Target { knobs: CodegenKnobs { prefetch: false, ..knobs }, ..base.clone() }),
            ("no streaming", Target { knobs: CodegenKnobs { streaming_stores: None, ..knobs }, ..base.clone() }),
            ("all streaming", Target { knobs: CodegenKnobs { streaming_stores: Some(0), ..knobs }, ..base.clone() }),
            ("vector_math", Target { knobs: CodegenKnobs { vector_math: false, ..knobs }, ..base.clone() }),
        ];
        let options = BuildOptions::parse("-cl-std=CL3.0").unwrap();
        let key = |t: &Target| hex(&common_key("il", &options, t).finish());
        let base_key = key(&base);
        assert_eq!(key(&base.clone()), base_key, "the key of one target is stable");
        let mut seen = std::collections::HashMap::new();
        seen.insert(base_key, "base");
        for (what, t) in &changed {
            assert_ne!(t, &base, "{what}: the case changes nothing");
            if let Some(other) = seen.insert(key(t), what) {
                panic!("{what}: the same key as {other}");
            }
        }
        // The options' text is keyed too.
        assert_ne!(hex(&common_key("il", &BuildOptions::default(), &base).finish()), key(&base));
    }

    #[test]
    fn the_driver_identity_names_this_code() {
        let id = driver_identity();
        assert!(id.starts_with(&format!("softcl {}", env!("CARGO_PKG_VERSION"))), "{id}");
        // The file holding this test's code is found and stated.
        assert!(id.contains(" | /"), "{id}");
    }
}
