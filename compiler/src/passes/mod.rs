//! IR passes and analyses (inlining, barrier regions, ...).
