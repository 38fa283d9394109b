//! Analyses of an IR [`Function`](crate::ir::Function), separate from the IR and recomputed
//! on demand (nothing here is kept up to date by edits: recompute after changing the CFG).
//!
//! - [`Cfg`]: successors and predecessors of the blocks reachable from the entry, the one
//!   reverse post-order every pass uses ([`Cfg::rpo`]) and a loop-contiguous topological
//!   order ([`Cfg::loop_order`]).
//! - [`DomTree`] and [`PostDomTree`]: immediate (post-)dominators, dominance queries and
//!   (post-)dominance frontiers. The post-dominator tree has a virtual exit joining every
//!   block without successors and every region that cannot reach one (infinite loops).
//! - [`LoopInfo`]: natural loops (header, blocks, latches, exits, nesting); irreducible
//!   control flow is detected and reported, never a panic.
//! - [`DefUse`]: the users of every value (instruction operands and branch arguments) and
//!   the block defining it.
//!
//! Every analysis accepts any function, valid or not (the validator runs them on broken
//! IR): branches to blocks outside the layout and instructions that do not exist are
//! ignored, never a panic.

mod cfg;
mod defuse;
mod dom;
mod loops;

pub use cfg::{reverse_post_order, Cfg};
pub use defuse::{DefUse, Use, UseKind};
pub use dom::{DomTree, PostDomTree};
pub use loops::{Loop, LoopId, LoopInfo};

#[cfg(test)]
mod tests;
