//! Repairs of modules that llvm-spirv-15 writes wrong, applied while the module is read.
//!
//! **Conversion decorations on a forward-referenced value.** When a conversion is used
//! before it is defined in the function's block order (a loop body placed after its exit
//! block: `x = convert_short2_sat(v)` or `convert_int_rtp(f)` in a loop whose result is
//! stored after it), the translator first gives the use a forward id F, then translates the
//! conversion under a new id D and decorates D (`SaturatedConversion`, `FPRoundingMode`),
//! and at last renumbers the conversion to F. The decoration stays on D, which nothing
//! defines, and the conversion would silently truncate or round toward zero.
//!
//! The translator allocates ids in the order it emits a function's instructions, so a
//! renumbered conversion sits where its first id would have been: after the last
//! instruction whose id is in sequence (greater than every id before it) and below that
//! id, and before the next in-sequence one. The `SaturatedConversion` and `FPRoundingMode`
//! decorations of ids nothing defines that fall in one such window move, in order, to the
//! out-of-sequence conversions of the window when there are exactly as many of them;
//! otherwise they stay where they are (ignored, as before). Debug-information instructions,
//! which the translator numbers after the code, do not count.

use super::spirv::Decorations;
use rspirv::dr;
use rspirv::spirv::{Op, Word};
use std::collections::{HashMap, HashSet};

fn is_conversion(op: Op) -> bool {
    matches!(
        op,
        Op::SConvert
            | Op::UConvert
            | Op::FConvert
            | Op::ConvertFToS
            | Op::ConvertFToU
            | Op::ConvertSToF
            | Op::ConvertUToF
            | Op::SatConvertSToU
            | Op::SatConvertUToS
    )
}

/// The ids of the imported debug-information instruction sets (`OpenCL.DebugInfo.100`,
/// `NonSemantic.*`): the translator writes their instructions after the code, with ids
/// that say nothing about the order of the code's own.
fn debug_sets(spv: &dr::Module) -> HashSet<Word> {
    spv.ext_inst_imports
        .iter()
        .filter(|i| {
            matches!(i.operands.first(), Some(dr::Operand::LiteralString(name))
                if name.contains("Debug") || name.starts_with("NonSemantic."))
        })
        .filter_map(|i| i.result_id)
        .collect()
}

/// One function's instructions with a result id, in order, debug information left out:
/// (id, is a conversion, in sequence).
fn function_ids(f: &dr::Function, debug: &HashSet<Word>) -> Vec<(Word, bool, bool)> {
    let mut out = Vec::new();
    let mut max = 0;
    for inst in f.all_inst_iter() {
        let Some(id) = inst.result_id else { continue };
        if inst.class.opcode == Op::ExtInst
            && matches!(inst.operands.first(), Some(dr::Operand::IdRef(set)) if debug.contains(set))
        {
            continue;
        }
        let in_sequence = id > max;
        max = max.max(id);
        out.push((id, is_conversion(inst.class.opcode), in_sequence));
    }
    out
}

/// The window of `ids` where the instruction first numbered `d` was emitted: the indices
/// between the last in-sequence id below `d` and the next in-sequence id.
fn window(ids: &[(Word, bool, bool)], d: Word) -> Option<(usize, usize)> {
    let before = ids.iter().rposition(|&(id, _, seq)| seq && id < d)?;
    let after = ids[before + 1..].iter().position(|&(_, _, seq)| seq).map_or(ids.len(), |k| before + 1 + k);
    Some((before + 1, after))
}

/// The conversions renumbered away from the missing ids `orphans` (ascending, all in one
/// window of `ids`): the window's out-of-sequence conversions that `taken` does not rule
/// out, matched in order when there are exactly as many as orphans (the translator numbers
/// instructions in the order it emits them).
fn renumbered_conversions(
    ids: &[(Word, bool, bool)],
    (from, to): (usize, usize),
    orphans: &[Word],
    taken: &dyn Fn(Word) -> bool,
) -> Option<Vec<(Word, Word)>> {
    let convs: Vec<Word> =
        ids[from..to].iter().filter(|&&(id, conv, seq)| conv && !seq && !taken(id)).map(|&(id, _, _)| id).collect();
    (convs.len() == orphans.len()).then(|| orphans.iter().copied().zip(convs).collect())
}

/// Moves the conversion decorations of ids nothing defines to the conversions they were
/// meant for (see the module header). Returns the number moved.
pub(super) fn move_orphan_conversion_decorations(
    spv: &dr::Module,
    decorations: &mut HashMap<Word, Decorations>,
) -> usize {
    let defined: HashSet<Word> = spv.all_inst_iter().filter_map(|i| i.result_id).collect();
    let mut orphans: Vec<Word> = decorations
        .iter()
        .filter(|(id, d)| (d.saturated || d.rounding.is_some()) && !defined.contains(id))
        .map(|(&id, _)| id)
        .collect();
    if orphans.is_empty() {
        return 0;
    }
    orphans.sort_unstable();
    let debug = debug_sets(spv);
    // Orphans grouped by the function and window they fall in.
    let mut groups: Vec<(usize, (usize, usize), Vec<Word>)> = Vec::new();
    let functions: Vec<Vec<(Word, bool, bool)>> = spv.functions.iter().map(|f| function_ids(f, &debug)).collect();
    for d in orphans {
        let Some((f, w)) = functions.iter().enumerate().find_map(|(k, ids)| Some((k, window(ids, d)?))) else {
            continue;
        };
        match groups.last_mut() {
            Some((gf, gw, members)) if *gf == f && *gw == w => members.push(d),
            _ => groups.push((f, w, vec![d])),
        }
    }
    let mut moved = 0;
    for (f, w, members) in groups {
        let taken = |id: Word| decorations.get(&id).is_some_and(|t| t.saturated || t.rounding.is_some());
        let Some(pairs) = renumbered_conversions(&functions[f], w, &members, &taken) else { continue };
        for (d, target) in pairs {
            let Some(orphan) = decorations.remove(&d) else { continue };
            let t = decorations.entry(target).or_default();
            t.saturated |= orphan.saturated;
            t.rounding = t.rounding.or(orphan.rounding);
            moved += 1;
        }
    }
    moved
}

#[cfg(test)]
mod tests {
    use super::{renumbered_conversions, window};

    #[test]
    fn the_window_of_missing_ids_names_their_conversions() {
        // A loop body with `convert_short2_sat` and `convert_int_rtp` as llvm-spirv-15 writes
        // it: labels 18 and 19 and values 47, 49, 50 were forward ids; the conversions were
        // translated as 52 and 53.
        let ids = [
            (41, false, true),
            (19, false, false),
            (42, false, true),
            (48, false, true),
            (20, false, false),
            (51, false, true),
            (47, true, false),
            (49, true, false),
            (50, false, false),
            (57, false, true),
        ];
        let none = |_| false;
        let w = window(&ids, 52).expect("a window");
        assert_eq!(w, window(&ids, 53).unwrap());
        assert_eq!(renumbered_conversions(&ids, w, &[52, 53], &none), Some(vec![(52, 47), (53, 49)]));
        // As many orphans as candidates or nothing is guessed.
        assert_eq!(renumbered_conversions(&ids, w, &[52], &none), None);
        assert_eq!(renumbered_conversions(&ids, w, &[52], &|id| id == 49), Some(vec![(52, 47)]));
        let w = window(&ids, 45).expect("a window");
        assert_eq!(renumbered_conversions(&ids, w, &[45], &none), None);
    }
}
