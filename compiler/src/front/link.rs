//! Separate compilation: which symbols a SPIR-V module imports and exports
//! (`LinkageAttributes`), and linking several modules into one with `spirv-link` (package
//! spirv-tools), run as a subprocess like clang.
//!
//! A compiled object or library keeps its SPIR-V with Import and Export linkage; its
//! imports are resolved only when modules are linked. `spirv-link` resolves every Import
//! against the Export of the same name, checks that their types agree, rejects duplicate
//! definitions and, for an executable, unresolved imports. Built-in variables
//! (`__spirv_BuiltInGlobalInvocationId` ...) carry Import linkage but are no symbols.

use super::opencl_c::Tool;
use crate::{BuildError, BuildErrorKind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The default SPIR-V linker; overridden by the environment variable `SOFTCL_SPIRV_LINK`.
pub const DEFAULT_SPIRV_LINK: &str = "spirv-link";

/// The first word of every SPIR-V module.
pub const SPIRV_MAGIC: u32 = 0x0723_0203;
/// The opcode of OpDecorate.
pub const OP_DECORATE: u32 = 71;
const DECORATION_BUILTIN: u32 = 11;
const DECORATION_LINKAGE_ATTRIBUTES: u32 = 41;
const LINKAGE_EXPORT: u32 = 0;
const LINKAGE_IMPORT: u32 = 1;

/// The symbols a module imports and exports, by linkage name, in module order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Linkage {
    /// Functions and variables used but defined elsewhere (built-in variables excluded).
    pub imports: Vec<String>,
    /// Functions and variables defined here and visible to other modules.
    pub exports: Vec<String>,
}

/// A literal string operand (nul-terminated UTF-8 packed little-endian into words): the
/// string and the number of words it occupies.
pub(crate) fn literal_string(words: &[u32]) -> Option<(String, usize)> {
    let mut bytes = Vec::new();
    for (i, w) in words.iter().enumerate() {
        for b in w.to_le_bytes() {
            if b == 0 {
                return Some((String::from_utf8_lossy(&bytes).into_owned(), i + 1));
            }
            bytes.push(b);
        }
    }
    None
}

/// The instructions of a module (words in host order) after its header: (word offset,
/// opcode, word count). A zero or overlong word count ends the sequence.
pub fn instructions(words: &[u32]) -> impl Iterator<Item = (usize, u32, usize)> + '_ {
    let mut at = 5;
    std::iter::from_fn(move || {
        let w = *words.get(at)?;
        let (count, opcode) = ((w >> 16) as usize, w & 0xffff);
        if count == 0 || at + count > words.len() {
            return None;
        }
        let item = (at, opcode, count);
        at += count;
        Some(item)
    })
}

/// Reads the linkage decorations of a module (words in host order). Malformed instructions
/// end the scan; the translator reports them.
pub fn linkage(words: &[u32]) -> Linkage {
    let mut builtins = std::collections::HashSet::new();
    let mut decorated: Vec<(u32, String, u32)> = Vec::new();
    for (at, opcode, count) in instructions(words) {
        let operands = &words[at + 1..at + count];
        if opcode == OP_DECORATE && operands.len() >= 2 {
            match operands[1] {
                DECORATION_BUILTIN => {
                    builtins.insert(operands[0]);
                }
                DECORATION_LINKAGE_ATTRIBUTES => {
                    if let Some((name, used)) = literal_string(&operands[2..]) {
                        if let Some(&kind) = operands.get(2 + used) {
                            decorated.push((operands[0], name, kind));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let mut linkage = Linkage::default();
    for (target, name, kind) in decorated {
        match kind {
            LINKAGE_IMPORT if !builtins.contains(&target) => linkage.imports.push(name),
            LINKAGE_EXPORT => linkage.exports.push(name),
            _ => {}
        }
    }
    linkage
}

/// A private directory for the linker's input files, removed when dropped.
struct Scratch {
    path: PathBuf,
}

impl Scratch {
    fn new() -> std::io::Result<Self> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "softcl-link-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path)?;
        Ok(Self { path })
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

fn link_failed(log: String) -> BuildError {
    BuildError { kind: BuildErrorKind::CompileFailed, log }
}

/// Rewrites spirv-link's diagnostics ("error: 0: Unresolved external reference to \"g\".")
/// into the link log.
fn link_log(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let mut log = String::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        // "error: <position>: <message>"
        let message = line.strip_prefix("error: ").unwrap_or(line);
        let message = match message.split_once(": ") {
            Some((position, rest)) if position.chars().all(|c| c.is_ascii_digit()) => rest,
            _ => message,
        };
        let message = if let Some(rest) = message.strip_prefix("Unresolved external reference to ") {
            format!("undefined symbol {}", rest.trim_end_matches('.'))
        } else if let Some(rest) = message.strip_prefix("Too many external references, ") {
            // "Too many external references, 2, were found for \"helper\"."
            let name = rest.rsplit_once("for ").map_or(rest, |(_, n)| n).trim_end_matches('.');
            format!("duplicate definition of symbol {name}")
        } else {
            message.to_string()
        };
        log.push_str("link error: ");
        log.push_str(&message);
        log.push('\n');
    }
    if log.is_empty() {
        log.push_str("link error: the SPIR-V linker failed without a diagnostic\n");
    }
    log
}

/// Links SPIR-V modules (words in host order) into one. With `create_library` the result
/// keeps its exports and may leave imports unresolved; otherwise every import must be
/// resolved and linkage is removed. Failures are `CompileFailed` with a log naming the
/// symbol; a missing linker is `CompilerNotAvailable`.
pub fn link_modules(modules: &[&[u32]], create_library: bool) -> Result<Vec<u32>, BuildError> {
    if modules.iter().any(|m| m.len() < 5 || m[0] != SPIRV_MAGIC) {
        return Err(link_failed("link error: an input is not a SPIR-V module\n".into()));
    }
    // spirv-link only reports a symbol defined twice when some module imports it; a
    // definition in two modules is an error whether used or not.
    let linkages: Vec<Linkage> = modules.iter().map(|m| linkage(m)).collect();
    let mut defined: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut duplicates = String::new();
    for (i, l) in linkages.iter().enumerate() {
        for name in &l.exports {
            if let Some(first) = defined.insert(name, i) {
                if first != i {
                    duplicates.push_str(&format!(
                        "link error: duplicate definition of symbol \"{name}\" (in inputs {} and {})\n",
                        first + 1,
                        i + 1
                    ));
                }
            }
        }
    }
    if !duplicates.is_empty() {
        return Err(link_failed(duplicates));
    }
    // spirv-link stops at the first unresolved import: name them all.
    if !create_library {
        let mut undefined: Vec<&String> =
            linkages.iter().flat_map(|l| &l.imports).filter(|n| !defined.contains_key(n.as_str())).collect();
        undefined.dedup();
        if !undefined.is_empty() {
            let mut seen = std::collections::HashSet::new();
            let log = undefined
                .into_iter()
                .filter(|n| seen.insert(*n))
                .map(|n| format!("link error: undefined symbol \"{n}\"\n"))
                .collect();
            return Err(link_failed(log));
        }
    }
    // Modules of different SPIR-V versions (OpenCL C of different -cl-std, or IL) are linked
    // at the newest version: every instruction the older modules use keeps its meaning.
    let version = modules.iter().map(|m| m[1]).max().unwrap_or(0x0001_0000);
    let scratch = Scratch::new().map_err(|e| BuildError {
        kind: BuildErrorKind::CompilerNotAvailable,
        log: format!("cannot create a directory for the SPIR-V linker: {e}"),
    })?;
    let mut args: Vec<String> = Vec::new();
    if create_library {
        args.push("--create-library".into());
        args.push("--allow-partial-linkage".into());
    }
    for (i, module) in modules.iter().enumerate() {
        let file = scratch.path.join(format!("{i}.spv"));
        let mut bytes = Vec::with_capacity(module.len() * 4);
        bytes.extend(module.iter().enumerate().flat_map(|(j, &w)| if j == 1 { version } else { w }.to_le_bytes()));
        std::fs::write(&file, bytes).map_err(|e| BuildError {
            kind: BuildErrorKind::CompilerNotAvailable,
            log: format!("cannot write the SPIR-V linker's input: {e}"),
        })?;
        args.push(file.display().to_string());
    }
    args.extend(["-o", "-"].map(String::from));
    let tool = Tool::new("SOFTCL_SPIRV_LINK", DEFAULT_SPIRV_LINK);
    let output = tool.run(&args)?;
    if !output.status.success() {
        return Err(link_failed(link_log(&output.stderr)));
    }
    if output.stdout.len() < 20 || !output.stdout.len().is_multiple_of(4) {
        return Err(link_failed(format!(
            "link error: the SPIR-V linker wrote no module ({} bytes)\n",
            output.stdout.len()
        )));
    }
    let words: Vec<u32> =
        output.stdout.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes"))).collect();
    if words[0] != SPIRV_MAGIC {
        return Err(link_failed("link error: the SPIR-V linker wrote no SPIR-V module\n".into()));
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string_words(s: &str) -> Vec<u32> {
        let mut bytes = s.as_bytes().to_vec();
        bytes.push(0);
        while !bytes.len().is_multiple_of(4) {
            bytes.push(0);
        }
        bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    fn decorate(words: &mut Vec<u32>, target: u32, decoration: u32, extra: &[u32]) {
        words.push(((3 + extra.len() as u32) << 16) | OP_DECORATE);
        words.extend([target, decoration]);
        words.extend_from_slice(extra);
    }

    #[test]
    fn linkage_lists_imports_and_exports_but_not_builtins() {
        let mut w = vec![SPIRV_MAGIC, 0x0001_0400, 0, 20, 0];
        let lit = |name: &str, kind: u32| {
            let mut v = string_words(name);
            v.push(kind);
            v
        };
        let helper = lit("helper", LINKAGE_IMPORT);
        let global = lit("g", LINKAGE_IMPORT);
        let kernel = lit("kernel_fn", LINKAGE_EXPORT);
        let gid = lit("__spirv_BuiltInGlobalInvocationId", LINKAGE_IMPORT);
        decorate(&mut w, 3, DECORATION_LINKAGE_ATTRIBUTES, &helper);
        decorate(&mut w, 4, DECORATION_LINKAGE_ATTRIBUTES, &global);
        decorate(&mut w, 5, DECORATION_LINKAGE_ATTRIBUTES, &kernel);
        decorate(&mut w, 6, DECORATION_LINKAGE_ATTRIBUTES, &gid);
        decorate(&mut w, 6, DECORATION_BUILTIN, &[28]);
        let l = linkage(&w);
        assert_eq!(l.imports, ["helper", "g"]);
        assert_eq!(l.exports, ["kernel_fn"]);
        // A truncated instruction ends the scan without a panic.
        w.push((9 << 16) | OP_DECORATE);
        assert_eq!(linkage(&w).imports.len(), 2);
    }

    #[test]
    fn linker_diagnostics_name_the_symbol() {
        let log = link_log(b"error: 0: Unresolved external reference to \"missing_fn\".\n");
        assert_eq!(log, "link error: undefined symbol \"missing_fn\"\n");
        assert!(link_log(b"").contains("without a diagnostic"));
        let log = link_log(b"error: 0: Too many external references, 2, were found for \"helper\".\n");
        assert_eq!(log, "link error: duplicate definition of symbol \"helper\"\n");
    }

    #[test]
    fn non_spirv_inputs_are_rejected() {
        let e = link_modules(&[&[1, 2, 3, 4, 5]], false).unwrap_err();
        assert_eq!(e.kind, BuildErrorKind::CompileFailed);
    }
}
