//! Entity references: `u32` newtype indices into dense arenas (cranelift style).

use std::marker::PhantomData;

macro_rules! entity {
    ($(#[$m:meta])* $name:ident, $prefix:literal) => {
        $(#[$m])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub u32);
        impl EntityRef for $name {
            fn new(index: usize) -> Self { $name(index as u32) }
            fn index(self) -> usize { self.0 as usize }
        }
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

pub trait EntityRef: Copy + Eq + std::fmt::Debug {
    fn new(index: usize) -> Self;
    fn index(self) -> usize;
}

entity!(/// An interned type in `Module::types`.
    Type, "t");
entity!(/// A constant in `Module::constants`.
    Const, "c");
entity!(/// A module-scope variable (`__local`, `__constant`, program-scope, built-in inputs).
    GlobalVar, "g");
entity!(/// A function in `Module::functions`.
    Func, "f");
entity!(/// A basic block of a function.
    Block, "block");
entity!(/// An instruction of a function.
    Inst, "i");
entity!(/// An SSA value of a function (instruction result, block parameter, constant or address).
    Value, "v");

/// A dense arena owning values of `V`, indexed by `K` (a primary map).
#[derive(Clone)]
pub struct Arena<K: EntityRef, V> {
    items: Vec<V>,
    _k: PhantomData<K>,
}

impl<K: EntityRef, V> Default for Arena<K, V> {
    fn default() -> Self {
        Self { items: Vec::new(), _k: PhantomData }
    }
}

impl<K: EntityRef, V> Arena<K, V> {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn push(&mut self, v: V) -> K {
        self.items.push(v);
        K::new(self.items.len() - 1)
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = K> + ExactSizeIterator {
        (0..self.items.len()).map(K::new)
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (K, &V)> {
        self.items.iter().enumerate().map(|(i, v)| (K::new(i), v))
    }
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (K, &mut V)> {
        self.items.iter_mut().enumerate().map(|(i, v)| (K::new(i), v))
    }
    pub fn get(&self, k: K) -> Option<&V> {
        self.items.get(k.index())
    }
    pub fn is_valid(&self, k: K) -> bool {
        k.index() < self.items.len()
    }
}

impl<K: EntityRef, V> std::ops::Index<K> for Arena<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        &self.items[k.index()]
    }
}

impl<K: EntityRef, V> std::ops::IndexMut<K> for Arena<K, V> {
    fn index_mut(&mut self, k: K) -> &mut V {
        &mut self.items[k.index()]
    }
}

impl<K: EntityRef + std::fmt::Debug, V: std::fmt::Debug> std::fmt::Debug for Arena<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// A side table keyed by an entity, with a default for entries never set (a secondary map).
#[derive(Clone, Debug)]
pub struct SecondaryMap<K: EntityRef, V: Clone> {
    items: Vec<V>,
    default: V,
    _k: PhantomData<K>,
}

impl<K: EntityRef, V: Clone> SecondaryMap<K, V> {
    pub fn with_default(default: V) -> Self {
        Self { items: Vec::new(), default, _k: PhantomData }
    }
}

impl<K: EntityRef, V: Clone + Default> Default for SecondaryMap<K, V> {
    fn default() -> Self {
        Self::with_default(V::default())
    }
}

impl<K: EntityRef, V: Clone> std::ops::Index<K> for SecondaryMap<K, V> {
    type Output = V;
    fn index(&self, k: K) -> &V {
        self.items.get(k.index()).unwrap_or(&self.default)
    }
}

impl<K: EntityRef, V: Clone> std::ops::IndexMut<K> for SecondaryMap<K, V> {
    fn index_mut(&mut self, k: K) -> &mut V {
        if k.index() >= self.items.len() {
            self.items.resize(k.index() + 1, self.default.clone());
        }
        &mut self.items[k.index()]
    }
}
