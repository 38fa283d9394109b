//! IR passes: inlining (`inline`), short-circuit chains folded into one branch
//! (`short_circuit`).

pub mod inline;
pub mod short_circuit;
