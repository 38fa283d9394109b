//! IR passes and analyses (inlining, barrier regions, ...).

pub mod inline;
