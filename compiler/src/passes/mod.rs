//! IR passes: inlining (`inline`), short-circuit chains folded into one branch
//! (`short_circuit`), `vloadn` / `vstoren` as loads and stores (`vload_store`), the
//! alignment every memory access is guaranteed (`align`).

pub mod align;
pub mod inline;
pub mod short_circuit;
pub mod vload_store;
