//! Interned types.

use super::entities::{Arena, Type};
use crate::kernel_info::AddressSpace;
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TypeData {
    Void,
    Bool,
    /// Integers have no sign: operations say how they read their operands.
    Int {
        bits: u16,
    },
    Float {
        bits: u16,
    },
    Vector {
        elem: Type,
        len: u32,
    },
    Pointer {
        space: AddressSpace,
        pointee: Type,
    },
    Array {
        elem: Type,
        len: u64,
    },
    Struct {
        fields: Vec<Type>,
        packed: bool,
    },
    Function {
        ret: Type,
        params: Vec<Type>,
    },
    /// event_t, image and sampler types, queue_t ...: carried by name.
    Opaque {
        name: String,
    },
}

/// The type table of a module: each distinct `TypeData` is stored once.
#[derive(Debug, Clone, Default)]
pub struct TypeTable {
    arena: Arena<Type, TypeData>,
    index: HashMap<TypeData, Type>,
}

impl TypeTable {
    /// The types in order, as text (without the lookup index, whose order varies).
    pub fn describe(&self) -> String {
        format!("{:?}", self.arena)
    }
    pub fn intern(&mut self, data: TypeData) -> Type {
        if let Some(&t) = self.index.get(&data) {
            return t;
        }
        let t = self.arena.push(data.clone());
        self.index.insert(data, t);
        t
    }
    pub fn lookup(&self, data: &TypeData) -> Option<Type> {
        self.index.get(data).copied()
    }
    pub fn get(&self, t: Type) -> &TypeData {
        &self.arena[t]
    }
    pub fn len(&self) -> usize {
        self.arena.len()
    }
    pub fn is_empty(&self) -> bool {
        self.arena.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = (Type, &TypeData)> {
        self.arena.iter()
    }
    pub fn is_valid(&self, t: Type) -> bool {
        self.arena.is_valid(t)
    }

    pub fn void(&mut self) -> Type {
        self.intern(TypeData::Void)
    }
    pub fn bool(&mut self) -> Type {
        self.intern(TypeData::Bool)
    }
    pub fn int(&mut self, bits: u16) -> Type {
        self.intern(TypeData::Int { bits })
    }
    pub fn float(&mut self, bits: u16) -> Type {
        self.intern(TypeData::Float { bits })
    }
    pub fn vector(&mut self, elem: Type, len: u32) -> Type {
        self.intern(TypeData::Vector { elem, len })
    }
    pub fn pointer(&mut self, space: AddressSpace, pointee: Type) -> Type {
        self.intern(TypeData::Pointer { space, pointee })
    }

    /// The element type of a vector, or the type itself for a scalar.
    pub fn scalar_of(&self, t: Type) -> Type {
        match self.get(t) {
            TypeData::Vector { elem, .. } => *elem,
            _ => t,
        }
    }
    /// Number of lanes: the vector length, or 1 for a scalar.
    pub fn lanes(&self, t: Type) -> u32 {
        match self.get(t) {
            TypeData::Vector { len, .. } => *len,
            _ => 1,
        }
    }

    /// Size in bytes with OpenCL C layout rules (3-component vectors take 4 components).
    /// The bytes a load or store of `t` reads or writes: [`Self::size_of`], except that a
    /// 3-component vector accesses its three components and not the fourth slot of padding
    /// its size includes (`vload3`, and a `float3` stored through a `float3 *`).
    pub fn access_size(&self, t: Type) -> u64 {
        match self.get(t) {
            TypeData::Vector { elem, len } => self.size_of(*elem) * u64::from(*len),
            _ => self.size_of(t),
        }
    }

    pub fn size_of(&self, t: Type) -> u64 {
        match self.get(t) {
            TypeData::Void | TypeData::Function { .. } => 0,
            TypeData::Bool => 1,
            TypeData::Int { bits } | TypeData::Float { bits } => (*bits as u64).div_ceil(8),
            TypeData::Vector { elem, len } => {
                let n = if *len == 3 { 4 } else { *len as u64 };
                self.size_of(*elem) * n
            }
            TypeData::Pointer { .. } | TypeData::Opaque { .. } => 8,
            TypeData::Array { elem, len } => self.size_of(*elem) * len,
            TypeData::Struct { fields, packed } => {
                let mut off = 0u64;
                for f in fields {
                    if !packed {
                        off = off.next_multiple_of(self.align_of(*f));
                    }
                    off += self.size_of(*f);
                }
                if *packed {
                    off
                } else {
                    off.next_multiple_of(self.align_of(t))
                }
            }
        }
    }

    /// Alignment in bytes with OpenCL C rules (vectors are aligned to their size).
    pub fn align_of(&self, t: Type) -> u64 {
        match self.get(t) {
            // A power of two: vectors of a length OpenCL C has not (5, 7...) from IL round up.
            TypeData::Vector { .. } => self.size_of(t).max(1).next_power_of_two(),
            TypeData::Array { elem, .. } => self.align_of(*elem),
            TypeData::Struct { fields, packed } => {
                if *packed {
                    1
                } else {
                    fields.iter().map(|f| self.align_of(*f)).max().unwrap_or(1)
                }
            }
            _ => self.size_of(t).max(1),
        }
    }

    /// Byte offset of field `index` of a struct type.
    pub fn field_offset(&self, t: Type, index: usize) -> u64 {
        let TypeData::Struct { fields, packed } = self.get(t) else {
            return 0;
        };
        let mut off = 0u64;
        for (i, f) in fields.iter().enumerate() {
            if !packed {
                off = off.next_multiple_of(self.align_of(*f));
            }
            if i == index {
                return off;
            }
            off += self.size_of(*f);
        }
        off
    }
}
