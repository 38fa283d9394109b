//! Kernels as a tree of statements, so that the reducer can delete whole subtrees.
//!
//! A [`Node`] is one line of code or a block (`if`, a loop, `switch`, a function) with a body
//! and an optional `else` body. Every generated statement is UB-free whatever the values of
//! the variables it reads (indices are guarded or masked in the statement itself, loop
//! counters live in the loop's header), so deleting any removable node leaves a program
//! that is still well defined. Deleting a declaration or a helper function that is still used
//! makes a kernel that does not build, which the reducer rejects like any candidate that
//! fails differently. Nodes whose removal could give a kernel that builds but is not well
//! defined (barriers, a helper's last `return`, the final output store) are `fixed`.

/// One statement or block of a generated program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// One line (or a few lines that go together), emitted as is; `alt` is a simpler line
    /// that is just as well defined (a declaration with a constant initializer), for the
    /// reducer to try.
    Line { text: String, fixed: bool, alt: Option<String> },
    /// `head { body }` or `head { body } else { else_body }`; `tail` follows the closing
    /// brace (`";"` for a struct, `" while (...);"` for `do`).
    Block { head: String, body: Vec<Node>, else_body: Option<Vec<Node>>, tail: String, kind: BlockKind },
}

/// What a block is, which decides how the reducer may simplify it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockKind {
    /// `if`: may be replaced by its body or its else body, its else body may be dropped.
    If,
    /// An `if` whose condition is what makes its body defined (an index bound before a
    /// load, a non-zero divisor): deleted whole or emptied, never replaced by its body, so
    /// that a reduced kernel stays free of undefined behaviour.
    Guard,
    /// A loop or `switch`: may be replaced by its body (when its body has no `break` or
    /// `continue` left, the result still builds).
    Loop,
    /// A bare `{ }` scope: may be replaced by its body.
    Scope,
    /// A helper function: may be deleted (the build fails while it is still called).
    Function,
    /// The kernel: only its body's nodes are edited.
    Fixed,
}

impl Node {
    /// A removable line.
    pub fn line(text: impl Into<String>) -> Node {
        Node::Line { text: text.into(), fixed: false, alt: None }
    }

    /// A removable line with a simpler replacement.
    pub fn line_alt(text: impl Into<String>, alt: impl Into<String>) -> Node {
        Node::Line { text: text.into(), fixed: false, alt: Some(alt.into()) }
    }

    /// A line the reducer keeps.
    pub fn fixed(text: impl Into<String>) -> Node {
        Node::Line { text: text.into(), fixed: true, alt: None }
    }

    /// A block without `else`.
    pub fn block(kind: BlockKind, head: impl Into<String>, body: Vec<Node>) -> Node {
        Node::Block { head: head.into(), body, else_body: None, tail: String::new(), kind }
    }

    /// Number of nodes in this subtree.
    pub fn size(&self) -> usize {
        match self {
            Node::Line { .. } => 1,
            Node::Block { body, else_body, .. } => 1 + size_of(body) + else_body.as_ref().map_or(0, |e| size_of(e)),
        }
    }
}

/// Number of nodes of a list of subtrees.
pub fn size_of(nodes: &[Node]) -> usize {
    nodes.iter().map(Node::size).sum()
}

/// The program's text, indented four spaces per level.
pub fn emit(nodes: &[Node]) -> String {
    let mut out = String::new();
    emit_into(&mut out, nodes, 0);
    out
}

fn emit_into(out: &mut String, nodes: &[Node], depth: usize) {
    let pad = "    ".repeat(depth);
    for n in nodes {
        match n {
            Node::Line { text, .. } => {
                for l in text.lines() {
                    out.push_str(&pad);
                    out.push_str(l);
                    out.push('\n');
                }
            }
            Node::Block { head, body, else_body, tail, .. } => {
                out.push_str(&pad);
                out.push_str(head);
                out.push_str(" {\n");
                emit_into(out, body, depth + 1);
                out.push_str(&pad);
                out.push('}');
                if let Some(e) = else_body {
                    out.push_str(" else {\n");
                    emit_into(out, e, depth + 1);
                    out.push_str(&pad);
                    out.push('}');
                }
                out.push_str(tail);
                out.push('\n');
            }
        }
    }
}

/// Where a node is: indices from the top-level list down, each step into a block's body
/// (`false`) or else body (`true`).
pub type Path = Vec<(usize, bool)>;

/// One simplification the reducer tries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Delete the node.
    Remove(Path),
    /// Replace a block by its body.
    Unwrap(Path),
    /// Replace an `if` by its else body.
    UnwrapElse(Path),
    /// Drop an `if`'s else body.
    DropElse(Path),
    /// Replace a line by its simpler form.
    Simplify(Path),
}

/// Every edit of `nodes`, outer nodes first (so that large subtrees go first).
pub fn edits(nodes: &[Node]) -> Vec<Edit> {
    let mut out = Vec::new();
    collect(nodes, &Vec::new(), &mut out);
    out
}

fn collect(nodes: &[Node], at: &Path, out: &mut Vec<Edit>) {
    for (i, n) in nodes.iter().enumerate() {
        let mut path = at.clone();
        path.push((i, false));
        match n {
            Node::Line { fixed, alt, .. } => {
                if !fixed {
                    out.push(Edit::Remove(path.clone()));
                }
                if alt.is_some() {
                    out.push(Edit::Simplify(path));
                }
            }
            Node::Block { body, else_body, kind, .. } => {
                if matches!(kind, BlockKind::Function | BlockKind::Guard) {
                    out.push(Edit::Remove(path.clone()));
                } else if *kind != BlockKind::Fixed {
                    out.push(Edit::Remove(path.clone()));
                    out.push(Edit::Unwrap(path.clone()));
                    if else_body.is_some() {
                        out.push(Edit::UnwrapElse(path.clone()));
                        out.push(Edit::DropElse(path.clone()));
                    }
                }
                collect(body, &path, out);
                if let Some(e) = else_body {
                    let mut p = path.clone();
                    p.last_mut().expect("a path step").1 = true;
                    collect(e, &p, out);
                }
            }
        }
    }
}

/// `nodes` with `edit` applied (`None` when the path no longer names a suitable node).
pub fn apply(nodes: &[Node], edit: &Edit) -> Option<Vec<Node>> {
    let mut copy = nodes.to_vec();
    let (path, op) = match edit {
        Edit::Remove(p) => (p, 0),
        Edit::Unwrap(p) => (p, 1),
        Edit::UnwrapElse(p) => (p, 2),
        Edit::DropElse(p) => (p, 3),
        Edit::Simplify(p) => (p, 4),
    };
    let (last, parents) = path.split_last()?;
    let list = list_at(&mut copy, parents)?;
    let i = last.0;
    if i >= list.len() {
        return None;
    }
    match op {
        0 => {
            list.remove(i);
        }
        1 | 2 => {
            let Node::Block { body, else_body, .. } = list.remove(i) else { return None };
            let inner = if op == 1 { body } else { else_body? };
            for (k, n) in inner.into_iter().enumerate() {
                list.insert(i + k, n);
            }
        }
        3 => {
            let Node::Block { else_body, .. } = &mut list[i] else { return None };
            else_body.take()?;
        }
        _ => {
            let Node::Line { text, alt, .. } = &mut list[i] else { return None };
            *text = alt.take()?;
        }
    }
    Some(copy)
}

/// `nodes` without the lines, fixed ones included, whose text `drop` picks (the reducer
/// drops the barriers of a kernel left without `__local` memory this way).
pub fn without_lines(nodes: &[Node], drop: &dyn Fn(&str) -> bool) -> Vec<Node> {
    let mut out = Vec::new();
    for n in nodes {
        match n {
            Node::Line { text, .. } if drop(text) => {}
            Node::Line { .. } => out.push(n.clone()),
            Node::Block { head, body, else_body, tail, kind } => out.push(Node::Block {
                head: head.clone(),
                body: without_lines(body, drop),
                else_body: else_body.as_ref().map(|e| without_lines(e, drop)),
                tail: tail.clone(),
                kind: *kind,
            }),
        }
    }
    out
}

/// The list a path's parent steps lead to: each step enters the body (or else body) of the
/// block at that index.
fn list_at<'a>(nodes: &'a mut Vec<Node>, steps: &[(usize, bool)]) -> Option<&'a mut Vec<Node>> {
    let mut cur = nodes;
    for &(i, in_else) in steps {
        match cur.get_mut(i)? {
            Node::Block { body, else_body, .. } => {
                cur = if in_else { else_body.as_mut()? } else { body };
            }
            Node::Line { .. } => return None,
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Node> {
        let mut iff = Node::block(BlockKind::If, "if (a)", vec![Node::line("x = 1;"), Node::line("y = 2;")]);
        if let Node::Block { else_body, .. } = &mut iff {
            *else_body = Some(vec![Node::line("z = 3;")]);
        }
        vec![Node::fixed("int x = 0, y = 0, z = 0;"), iff, Node::line("w = 4;")]
    }

    #[test]
    fn emits_blocks_with_else() {
        let text = emit(&sample());
        assert_eq!(
            text,
            "int x = 0, y = 0, z = 0;\nif (a) {\n    x = 1;\n    y = 2;\n} else {\n    z = 3;\n}\nw = 4;\n"
        );
    }

    #[test]
    fn edits_reach_bodies_and_else_bodies() {
        let nodes = sample();
        let all = edits(&nodes);
        assert!(!all.iter().any(|e| *e == Edit::Remove(vec![(0, false)])), "fixed lines stay");
        let in_else = Edit::Remove(vec![(1, true), (0, false)]);
        assert!(all.contains(&in_else));
        let after = apply(&nodes, &in_else).unwrap();
        assert!(emit(&after).contains("} else {\n}"));
        let unwrapped = apply(&nodes, &Edit::UnwrapElse(vec![(1, false)])).unwrap();
        assert_eq!(emit(&unwrapped), "int x = 0, y = 0, z = 0;\nz = 3;\nw = 4;\n");
        let second_body_line = Edit::Remove(vec![(1, false), (1, false)]);
        assert!(!emit(&apply(&nodes, &second_body_line).unwrap()).contains("y = 2"));
        assert_eq!(size_of(&nodes), 6);
    }

    #[test]
    fn guards_are_removed_whole_never_unwrapped() {
        let guard = Node::block(BlockKind::Guard, "if (gid + 1 < NITEMS)", vec![Node::line("x = in[gid + 1];")]);
        let nodes = vec![Node::fixed("int x = 0;"), guard];
        let all = edits(&nodes);
        assert!(all.contains(&Edit::Remove(vec![(1, false)])));
        assert!(!all.contains(&Edit::Unwrap(vec![(1, false)])), "{all:?}");
        for e in &all {
            let text = emit(&apply(&nodes, e).expect("an edit applies"));
            assert!(!text.contains("in[gid + 1]") || text.contains("if (gid + 1 < NITEMS)"), "{text}");
        }
    }
}
