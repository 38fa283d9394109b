//! A greedy reducer over the statement tree: it tries every edit of [`super::ast::edits`]
//! (deleting a statement or a block, replacing a block by its body, dropping an `else`,
//! giving a declaration a constant initializer),
//! outer nodes first, and keeps each edit after which the failure still reproduces, until no
//! edit helps or the budget of tries or time runs out.

use super::ast::{apply, edits, emit, size_of, without_lines, Node};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// How long the reducer may work.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub tries: usize,
    pub time: Duration,
}

/// What the reducer did.
#[derive(Clone, Debug)]
pub struct Reduced {
    pub nodes: Vec<Node>,
    /// Candidates run.
    pub tries: usize,
    /// True when it stopped at a fixed point (no edit left that keeps the failure).
    pub complete: bool,
}

/// Reduces `nodes` while `fails` says the failure reproduces. `fails` is called once per
/// distinct candidate text.
pub fn reduce(nodes: Vec<Node>, budget: Budget, mut fails: impl FnMut(&[Node]) -> bool) -> Reduced {
    let start = Instant::now();
    let mut cur = nodes;
    let mut seen: HashSet<String> = HashSet::new();
    seen.insert(emit(&cur));
    let mut tries = 0;
    loop {
        let mut progress = false;
        let mut i = 0;
        loop {
            let all = edits(&cur);
            let Some(edit) = all.get(i) else { break };
            if tries >= budget.tries || start.elapsed() >= budget.time {
                return Reduced { nodes: cur, tries, complete: false };
            }
            if let Some(cand) = apply(&cur, edit) {
                // Every edit makes the tree smaller or a line simpler (a line loses its
                // `alt`), so the reduction ends.
                if seen.insert(emit(&cand)) {
                    tries += 1;
                    if fails(&cand) {
                        cur = cand;
                        progress = true;
                        // The same index now names the next edit of the smaller tree.
                        continue;
                    }
                }
            }
            i += 1;
        }
        if !progress {
            // Barriers are fixed (deleting one could leave a race on `__local` memory), but a
            // kernel left without `__local` memory does not need them.
            if !emit(&cur).contains("__local") {
                let cand = without_lines(&cur, &|t| t.starts_with("barrier("));
                if size_of(&cand) < size_of(&cur) && seen.insert(emit(&cand)) {
                    tries += 1;
                    if fails(&cand) {
                        cur = cand;
                        continue;
                    }
                }
            }
            return Reduced { nodes: cur, tries, complete: true };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::ast::BlockKind;

    #[test]
    fn keeps_only_what_the_failure_needs() {
        let inner = vec![Node::line("a = 1;"), Node::line("BUG;"), Node::line("b = 2;")];
        let nodes = vec![
            Node::fixed("int a, b;"),
            Node::line("c = 3;"),
            Node::block(BlockKind::If, "if (x)", inner),
            Node::block(BlockKind::Loop, "for (;;)", vec![Node::line("d = 4;")]),
        ];
        let r = reduce(nodes, Budget { tries: 1000, time: Duration::from_secs(10) }, |n| emit(n).contains("BUG;"));
        assert!(r.complete);
        assert_eq!(emit(&r.nodes), "int a, b;\nBUG;\n");
    }
}
