//! SPIR-V specialization constants (clSetProgramSpecializationConstant): a module's scalar
//! `OpSpecConstant*` instructions found by their `SpecId`, and the application's values
//! written into them before the module is translated.

use super::link::{instructions, OP_DECORATE};
use super::spirv::words_from_bytes;
use std::collections::{BTreeMap, HashMap};

const OP_TYPE_BOOL: u32 = 20;
const OP_TYPE_INT: u32 = 21;
const OP_TYPE_FLOAT: u32 = 22;
const OP_SPEC_CONSTANT_TRUE: u32 = 48;
const OP_SPEC_CONSTANT_FALSE: u32 = 49;
const OP_SPEC_CONSTANT: u32 = 50;
const DECORATION_SPEC_ID: u32 = 1;

/// One scalar specialization constant of a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecConstant {
    pub spec_id: u32,
    /// The size clSetProgramSpecializationConstant must be given (1 for booleans).
    pub size: usize,
    /// Word offset of its OpSpecConstant* instruction.
    at: usize,
    signed: bool,
}

/// The scalar specialization constants of the SPIR-V module `il` (either byte order), in
/// module order; `Err` (the reason) when `il` is not a SPIR-V module.
pub fn spec_constants(il: &[u8]) -> Result<Vec<SpecConstant>, String> {
    let words = words_from_bytes(il).map_err(|e| e.message)?;
    Ok(constants_of(&words))
}

fn constants_of(words: &[u32]) -> Vec<SpecConstant> {
    let mut ids: HashMap<u32, u32> = HashMap::new();
    // type id -> (size in bytes, signed)
    let mut types: HashMap<u32, (usize, bool)> = HashMap::new();
    let mut constants = Vec::new();
    for (at, opcode, count) in instructions(words) {
        let op = &words[at + 1..at + count];
        match opcode {
            OP_DECORATE if op.len() >= 3 && op[1] == DECORATION_SPEC_ID => {
                ids.insert(op[0], op[2]);
            }
            OP_TYPE_BOOL if !op.is_empty() => {
                types.insert(op[0], (1, false));
            }
            OP_TYPE_INT if op.len() >= 3 => {
                types.insert(op[0], ((op[1] / 8) as usize, op[2] != 0));
            }
            OP_TYPE_FLOAT if op.len() >= 2 => {
                types.insert(op[0], ((op[1] / 8) as usize, false));
            }
            OP_SPEC_CONSTANT_TRUE | OP_SPEC_CONSTANT_FALSE | OP_SPEC_CONSTANT if op.len() >= 2 => {
                constants.push((at, op[0], op[1]));
            }
            _ => {}
        }
    }
    constants
        .into_iter()
        .filter_map(|(at, ty, id)| {
            let spec_id = *ids.get(&id)?;
            let &(size, signed) = types.get(&ty)?;
            Some(SpecConstant { spec_id, size, at, signed })
        })
        .collect()
}

/// The module `il` (either byte order) as words in host order, with `values` (by SpecId)
/// written into its specialization constants; `Err` (the reason) when `il` is not a SPIR-V
/// module.
pub fn specialize(il: &[u8], values: &BTreeMap<u32, Vec<u8>>) -> Result<Vec<u32>, String> {
    let mut words = words_from_bytes(il).map_err(|e| e.message)?;
    for c in constants_of(&words) {
        let Some(value) = values.get(&c.spec_id) else { continue };
        let opcode = words[c.at] & 0xffff;
        if opcode == OP_SPEC_CONSTANT_TRUE || opcode == OP_SPEC_CONSTANT_FALSE {
            let new = if value.iter().any(|&b| b != 0) { OP_SPEC_CONSTANT_TRUE } else { OP_SPEC_CONSTANT_FALSE };
            words[c.at] = (words[c.at] & 0xffff_0000) | new;
            continue;
        }
        let count = (words[c.at] >> 16) as usize;
        let literal = &mut words[c.at + 3..c.at + count];
        let mut bytes = value.clone();
        // Literals narrower than a word are sign-extended for signed integer types and
        // zero-extended otherwise (SPIR-V 2.2.1).
        let fill = if c.signed && value.last().is_some_and(|b| b & 0x80 != 0) { 0xff } else { 0 };
        bytes.resize(literal.len() * 4, fill);
        for (w, chunk) in literal.iter_mut().zip(bytes.chunks_exact(4)) {
            *w = u32::from_le_bytes(chunk.try_into().expect("4 bytes"));
        }
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::super::link::SPIRV_MAGIC;
    use super::*;

    /// A module header plus: OpDecorate %10 SpecId 7; OpDecorate %11 SpecId 8;
    /// OpDecorate %12 SpecId 9; %2 = OpTypeInt 32 1; %3 = OpTypeBool; %4 = OpTypeFloat 64;
    /// %10 = OpSpecConstant %2 5; %11 = OpSpecConstantTrue %3; %12 = OpSpecConstant %4 0 0.
    fn spec_module() -> Vec<u32> {
        let mut w = vec![SPIRV_MAGIC, 0x0001_0000, 0, 20, 0];
        let inst = |w: &mut Vec<u32>, op: u32, operands: &[u32]| {
            w.push(((operands.len() as u32 + 1) << 16) | op);
            w.extend_from_slice(operands);
        };
        inst(&mut w, OP_DECORATE, &[10, DECORATION_SPEC_ID, 7]);
        inst(&mut w, OP_DECORATE, &[11, DECORATION_SPEC_ID, 8]);
        inst(&mut w, OP_DECORATE, &[12, DECORATION_SPEC_ID, 9]);
        inst(&mut w, OP_TYPE_INT, &[2, 32, 1]);
        inst(&mut w, OP_TYPE_BOOL, &[3]);
        inst(&mut w, OP_TYPE_FLOAT, &[4, 64]);
        inst(&mut w, OP_SPEC_CONSTANT, &[2, 10, 5]);
        inst(&mut w, OP_SPEC_CONSTANT_TRUE, &[3, 11]);
        inst(&mut w, OP_SPEC_CONSTANT, &[4, 12, 0, 0]);
        w
    }

    #[test]
    fn specialization_constants_are_found_and_written() {
        let words = spec_module();
        let le: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let found: Vec<(u32, usize)> = spec_constants(&le).unwrap().iter().map(|c| (c.spec_id, c.size)).collect();
        assert_eq!(found, [(7, 4), (8, 1), (9, 8)]);
        // Big-endian input is accepted too, and comes back in host order.
        let be: Vec<u8> = words.iter().flat_map(|w| w.to_be_bytes()).collect();
        assert_eq!(specialize(&be, &BTreeMap::new()).unwrap(), words);

        let mut values = BTreeMap::new();
        values.insert(7, (-3i32).to_le_bytes().to_vec());
        values.insert(8, vec![0u8]);
        values.insert(9, 2.5f64.to_le_bytes().to_vec());
        let out = specialize(&le, &values).unwrap();
        let cs = constants_of(&out);
        assert_eq!(out[cs[0].at + 3], (-3i32) as u32);
        assert_eq!(out[cs[1].at] & 0xffff, OP_SPEC_CONSTANT_FALSE);
        let d = (out[cs[2].at + 3] as u64) | ((out[cs[2].at + 4] as u64) << 32);
        assert_eq!(f64::from_bits(d), 2.5);
    }

    #[test]
    fn what_is_not_spirv_is_an_error() {
        assert!(spec_constants(&[0u8; 19]).is_err());
        assert!(spec_constants(&[1u8; 24]).is_err());
        assert!(specialize(&[0u8; 22], &BTreeMap::new()).is_err());
    }
}
