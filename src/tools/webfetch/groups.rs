//! Plain text rendered a group of blocks at a time, so that memory follows the size of a
//! group rather than the size of the page.
//!
//! html2text turns a whole document into a render tree, then renders that tree into
//! annotated lines, then joins the lines into a string: on a 5 MB page the three together
//! take hundreds of megabytes, many times the page. Here the document is cut before a
//! block every [`GROUP_NODES`] nodes or so; each group is rendered on its own and its nodes
//! are dropped before the next group is looked at, so only the parsed document (which
//! shrinks as it goes) and one group's tree and lines are held at once.
//!
//! The text is the same as that of the whole document rendered at once, byte for byte
//! after [`plain::finish_into`](super::plain::finish_into), because of where the cuts are made:
//!
//! - Only before an element whose rendering starts a block (html2text's `start_block`),
//!   which ends the line in progress and adds a blank line when anything was written
//!   before: a paragraph holding text, a heading, a quotation holding text. A new group
//!   starts with nothing written, so it leaves out that blank line; the groups are joined
//!   with one. When nothing had been written the whole page's text has no blank line
//!   there, but then everything before is blank and `finish` drops leading blank lines;
//!   and other blank lines next to the cut are folded by `finish` into that one.
//! - Only where every element enclosing the cut (`TRANSPARENT`) renders as nothing
//!   but line ends (`div`), or as nothing at all (`body`, `section`, ...): such an
//!   element is rendered in both groups, and its extra line ends at the end of one group
//!   and at the start of the next change nothing (a group's end ends its last line
//!   anyway). A link, emphasis, list or table around a cut would decorate or indent
//!   both halves differently; it is never cut through.
//! - The nodes before the cut (white space between blocks included) are rendered in
//!   the earlier group, in the same order and so with the same link numbers, which live
//!   in the decorator shared by all groups.
//!
//! The tests render varied pages in groups of one to a few nodes and as a whole, and
//! compare.

use html2text::Handle;
use html2text::config::Config;

use super::convert::TEXT_WIDTH;
use super::plain::Plain;

/// Nodes of the document rendered together, about: each group ends at the first cut
/// possible after this many nodes. A group of paragraphs this size takes a few hundred
/// kilobytes to render.
pub const GROUP_NODES: usize = 2_048;

/// Elements that may enclose a cut: html2text renders them as their content, with at
/// most a line end before and after (`div`).
const TRANSPARENT: &[&str] = &[
    "address", "article", "aside", "body", "center", "details", "div", "figure", "footer", "form",
    "header", "hgroup", "html", "main", "nav", "section",
];

/// The rendering of a document cut into groups of about `group_nodes` nodes (`usize::MAX`:
/// the whole document at once), not yet finished. The document is consumed: the nodes
/// of each group are dropped once rendered.
pub fn render(
    dom: &html2text::RcDom,
    config: &Config<Plain>,
    group_nodes: usize,
) -> Result<String, html2text::Error> {
    let mut rendered = String::new();
    loop {
        let cut = next_cut(&dom.document, group_nodes.max(1));
        // Detached for the time this group renders: what follows the cut.
        let after: Vec<Vec<Handle>> = cut
            .iter()
            .map(|(parent, index)| parent.children.borrow_mut().split_off(*index))
            .collect();
        let tree = config.dom_to_render_tree(dom)?;
        let part = config.render_to_string(tree, TEXT_WIDTH)?;
        if !rendered.is_empty() {
            // The blank line the block after the cut would have started with.
            rendered.push('\n');
        }
        rendered.push_str(&part);
        drop(part);
        if cut.is_empty() {
            return Ok(rendered);
        }
        // What was rendered goes; the elements enclosing the cut stay for the next group.
        let innermost = cut.len() - 1;
        for (at, ((parent, _), after)) in cut.iter().zip(after).enumerate() {
            let mut children = parent.children.borrow_mut();
            let enclosing = if at < innermost { children.pop() } else { None };
            let mut kept = Vec::with_capacity(after.len() + 1);
            kept.extend(enclosing);
            kept.extend(after);
            // The rendered nodes are dropped here.
            *children = kept;
        }
    }
}

/// Where the next group ends: the elements enclosing the cut, outermost first, each
/// with the index of its child the cut is in (for the innermost: the child the cut is
/// before; for the others: the child that holds the cut, kept in the group before).
/// Empty when the rest of the document is one group.
fn next_cut(root: &Handle, group_nodes: usize) -> Vec<(Handle, usize)> {
    let mut seen = 0;
    // The elements being walked through, each with the index of its next child.
    let mut path: Vec<(Handle, usize)> = vec![(Handle::clone(root), 0)];
    while let Some((parent, index)) = path.last().cloned() {
        let child = parent.children.borrow().get(index).cloned();
        let Some(child) = child else {
            path.pop();
            if let Some((_, next)) = path.last_mut() {
                *next += 1;
            }
            continue;
        };
        if seen >= group_nodes && starts_block(&child) {
            // The enclosing elements keep the child holding the cut in the earlier group.
            let innermost = path.len() - 1;
            for (at, (_, index)) in path.iter_mut().enumerate() {
                if at < innermost {
                    *index += 1;
                }
            }
            return path;
        }
        // The enclosing elements are not counted: they open every group, and a group that
        // held nothing else would leave the document as it was.
        if is_element_in(&child, TRANSPARENT) {
            path.push((child, 0));
            continue;
        }
        seen += 1 + subtree_size(&child, group_nodes.saturating_sub(seen));
        if let Some((_, next)) = path.last_mut() {
            *next += 1;
        }
    }
    Vec::new()
}

/// The nodes under `node`, counted up to `cap`.
fn subtree_size(node: &Handle, cap: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![Handle::clone(node)];
    while let Some(node) = stack.pop() {
        for child in node.children.borrow().iter() {
            count += 1;
            if count >= cap {
                return count;
            }
            stack.push(Handle::clone(child));
        }
    }
    count
}

/// Whether an element is an HTML element named in `names`.
fn is_element_in(node: &Handle, names: &[&str]) -> bool {
    match &node.data {
        html2text::Element { name, .. } => {
            name.ns == html2text::ns!(html) && names.contains(&name.local.as_ref())
        }
        _ => false,
    }
}

/// Whether html2text's rendering of a node surely starts with `start_block`: a heading
/// always does; a paragraph or a quotation does unless it renders nothing at all, which a
/// text child rules out (html2text renders every text node, even an empty one).
fn starts_block(node: &Handle) -> bool {
    if is_element_in(node, &["h1", "h2", "h3", "h4", "h5", "h6"]) {
        return true;
    }
    is_element_in(node, &["p", "blockquote"])
        && node.children.borrow().iter().any(|child| {
            // html2text names the element, comment and document node kinds only; the
            // parser makes no other kind but text inside an element.
            !matches!(
                child.data,
                html2text::Element { .. } | html2text::Comment { .. } | html2text::Document
            )
        })
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;

    fn parse(html: &str) -> html2text::RcDom {
        super::super::plain::config()
            .0
            .parse_html(html.as_bytes())
            .unwrap()
    }

    fn name(node: &Handle) -> String {
        match &node.data {
            html2text::Element { name, .. } => name.local.to_string(),
            _ => "#text".to_string(),
        }
    }

    /// The names on the path of the next cut, and the node it is before.
    fn cut_at(html: &str, group_nodes: usize) -> Option<(Vec<String>, String)> {
        let dom = parse(html);
        let cut = next_cut(&dom.document, group_nodes.max(1));
        let (parent, index) = cut.last()?;
        let before = name(&parent.children.borrow()[*index]);
        Some((cut.iter().skip(1).map(|(n, _)| name(n)).collect(), before))
    }

    #[test]
    fn cuts_come_before_blocks_inside_plain_wrappers_only() {
        let paragraphs = "<p>a</p>\n<p>b</p>\n<p>c</p>";
        assert_eq!(
            cut_at(paragraphs, 2),
            Some((vec!["html".into(), "body".into()], "p".into()))
        );
        // Not before inline text, a list, an empty paragraph or a div (the first paragraph
        // comes before the budget of 2 is spent: the empty head counts 1).
        assert_eq!(
            cut_at("<p>a</p>text<ul><li>x</li></ul><p></p><div>d</div>", 2),
            None
        );
        // Through sections and divs, not through a link, emphasis, list item or table.
        assert_eq!(
            cut_at("<div><section><p>a</p><h2>b</h2></section></div>", 3),
            Some((
                vec!["html".into(), "body".into(), "div".into(), "section".into()],
                "h2".into()
            ))
        );
        for (open, close) in [
            ("<a href=x>", "</a>"),
            ("<em>", "</em>"),
            ("<ul><li>", "</li></ul>"),
            ("<table><tr><td>", "</td></tr></table>"),
            ("<blockquote>", "</blockquote>"),
        ] {
            let html = format!("<p>a</p>{open}<p>b</p><p>c</p><p>d</p>{close}");
            assert_eq!(cut_at(&html, 2), None, "{html}");
        }
        // Nothing to cut before the budget is spent.
        assert_eq!(cut_at(paragraphs, 1_000), None);
    }

    #[test]
    fn rendering_in_groups_drops_what_was_rendered() {
        let html = "<div><p>a</p><p>b</p></div><p>c</p><p>d</p>";
        let dom = parse(html);
        let body = Rc::clone(&dom.document.children.borrow()[0].children.borrow()[1]);
        let first = Rc::downgrade(&body.children.borrow()[0]);
        let (config, _) = super::super::plain::config();
        let text = render(&dom, &config, 1).unwrap();
        assert_eq!(text, "a\n\nb\n\nc\n\nd\n");
        assert!(first.upgrade().is_none(), "the first div is still held");
        assert!(body.children.borrow().len() <= 1);
    }
}
