//! Plain text from HTML for `format: text`: an html2text decorator that adds no
//! Markdown-like marks, and the finishing html2text leaves to its caller.
//!
//! What the text looks like: a heading is its text, with a blank line before and after;
//! emphasis, strong, struck-out and code text are their text; list items start with `- `
//! or `1. `, nested ones indented; a quotation is indented by two spaces; a table is its
//! columns separated by spaces, without borders; an image is `[image: ALT]` (nothing
//! without alt text); superscript that has no Unicode form is `^(TEXT)`.
//!
//! A link is its text followed by ` [N]`, and the addresses follow the text, under a line
//! `Links:`, one `[N] URL` per line. A repeated address keeps its first number; links to a
//! part of the same page (`#...`) and `javascript:` links get none. Numbered references
//! rather than addresses in the text: an address longer than the line, or than its table
//! column, would be broken across lines there (html2text wraps words that do not fit, and
//! sizes table columns before decorations are added), while in the list it stays whole;
//! and the prose stays readable on pages with hundreds of links.
//!
//! A link around blocks (a card: `<a href><div><h3>Title</h3><p>Excerpt</p></div></a>`)
//! would get its number after its last block, at the start of a line of its own that the
//! next inline text then joins (`[1] Next card`), as if it were a line of the list. Such a
//! link is moved into its first block that holds no other block ([`move_block_links`]), so
//! the number follows that block's text: `Title [1]`, then `Excerpt`.
//!
//! Headings are marked for the finishing pass by a NUL byte as their line prefix: the HTML
//! parser never leaves a NUL in a document (it drops it, or turns it into U+FFFD, whatever
//! the spelling: raw, `&#0;`, in attributes), so a NUL in the rendering can only be ours.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use html2text::Handle;
use html2text::render::TextDecorator;

use super::convert::Tidy;

/// The line prefix that marks a heading line until [`finish_into`] removes it.
const HEADING: char = '\0';

/// The links of one rendering, numbered in the order they are first met.
#[derive(Debug, Default)]
pub struct Links {
    /// The addresses, the first one numbered 1.
    urls: Vec<String>,
    numbers: HashMap<String, usize>,
    /// The number of each link being rendered (none for a link that gets none).
    open: Vec<Option<usize>>,
}

impl Links {
    /// The number of an address, given it on first sight; none for an address not worth
    /// listing.
    fn number(&mut self, url: &str) -> Option<usize> {
        let url = url.trim();
        let scheme = url.split_once(':').map(|(scheme, _)| scheme);
        if url.is_empty()
            || url.starts_with('#')
            || scheme.is_some_and(|s| s.eq_ignore_ascii_case("javascript"))
        {
            return None;
        }
        if let Some(&n) = self.numbers.get(url) {
            return Some(n);
        }
        self.urls.push(url.to_string());
        self.numbers.insert(url.to_string(), self.urls.len());
        Some(self.urls.len())
    }
}

/// The decorator; its copies (html2text makes one per block) share the links.
#[derive(Debug, Clone, Default)]
pub struct Plain {
    links: Rc<RefCell<Links>>,
}

impl Plain {
    /// A decorator and the links it will number.
    pub fn new() -> (Plain, Rc<RefCell<Links>>) {
        let plain = Plain::default();
        let links = Rc::clone(&plain.links);
        (plain, links)
    }
}

impl TextDecorator for Plain {
    type Annotation = ();

    fn decorate_link_start(&mut self, url: &str) -> (String, ()) {
        let mut links = self.links.borrow_mut();
        let number = links.number(url);
        links.open.push(number);
        (String::new(), ())
    }

    fn decorate_link_end(&mut self) -> String {
        match self.links.borrow_mut().open.pop().flatten() {
            Some(n) => format!(" [{n}]"),
            None => String::new(),
        }
    }

    fn decorate_em_start(&self) -> (String, ()) {
        (String::new(), ())
    }

    fn decorate_em_end(&self) -> String {
        String::new()
    }

    fn decorate_strong_start(&self) -> (String, ()) {
        (String::new(), ())
    }

    fn decorate_strong_end(&self) -> String {
        String::new()
    }

    fn decorate_strikeout_start(&self) -> (String, ()) {
        (String::new(), ())
    }

    fn decorate_strikeout_end(&self) -> String {
        String::new()
    }

    fn decorate_code_start(&self) -> (String, ()) {
        (String::new(), ())
    }

    fn decorate_code_end(&self) -> String {
        String::new()
    }

    fn decorate_preformat_first(&self) {}

    fn decorate_preformat_cont(&self) {}

    fn decorate_image(&mut self, _src: &str, title: &str) -> (String, ()) {
        (format!("[image: {}]", title.trim()), ())
    }

    fn header_prefix(&self, _level: usize) -> String {
        HEADING.to_string()
    }

    // html2text takes the byte length of these prefixes for their width: ASCII only.
    fn quote_prefix(&self) -> String {
        "  ".to_string()
    }

    fn unordered_item_prefix(&self) -> String {
        "- ".to_string()
    }

    fn ordered_item_prefix(&self, i: i64) -> String {
        format!("{i}. ")
    }

    fn decorate_superscript_start(&self) -> (String, ()) {
        ("^(".to_string(), ())
    }

    fn decorate_superscript_end(&self) -> String {
        ")".to_string()
    }

    fn make_subblock_decorator(&self) -> Self {
        self.clone()
    }
}

/// Elements a link may be moved into: blocks that render their children as text. Lists,
/// tables and void elements are left out, as their content is not free text.
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "dd",
    "details",
    "div",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "li",
    "main",
    "nav",
    "p",
    "pre",
    "section",
    "summary",
];

/// Elements of a link's content looked at for its first block; a link holding more is
/// left as it is (the search stays linear in the size of the page).
const LINK_SEARCH_NODES: usize = 4_096;

fn element_name(node: &Handle) -> Option<&str> {
    match &node.data {
        html2text::Element { name, .. } => Some(name.local.as_ref()),
        _ => None,
    }
}

fn is_link(node: &Handle) -> bool {
    match &node.data {
        html2text::Element { name, attrs, .. } => {
            name.local.as_ref() == "a"
                && attrs
                    .borrow()
                    .iter()
                    .any(|a| a.name.local.as_ref() == "href")
        }
        _ => false,
    }
}

/// The first block in a link's content that holds no other block (document order; the
/// content of dropped elements not looked at); none when the link holds no block.
fn first_leaf_block(link: &Handle) -> Option<Handle> {
    let mut candidate: Option<(Handle, usize)> = None;
    let mut stack: Vec<(Handle, usize)> = link
        .children
        .borrow()
        .iter()
        .rev()
        .map(|child| (Rc::clone(child), 1))
        .collect();
    let mut seen = 0;
    while let Some((node, depth)) = stack.pop() {
        // Depth first: a node no deeper than the candidate is past the candidate's content,
        // so the candidate holds no further block.
        if candidate.as_ref().is_some_and(|(_, d)| depth <= *d) {
            break;
        }
        seen += 1;
        if seen > LINK_SEARCH_NODES {
            return None;
        }
        let Some(name) = element_name(&node) else {
            continue;
        };
        if super::convert::DROPPED.contains(&name) {
            continue;
        }
        if BLOCKS.contains(&name) {
            candidate = Some((Rc::clone(&node), depth));
        }
        stack.extend(
            node.children
                .borrow()
                .iter()
                .rev()
                .map(|child| (Rc::clone(child), depth + 1)),
        );
    }
    candidate.map(|(block, _)| block)
}

/// Moves each link among `parent`'s children that holds blocks into its first block
/// without blocks: the link's content takes its place in `parent`, and the link wraps
/// that block's content instead. Content of the link outside that block stays, unlinked.
pub fn move_block_links(parent: &Handle) {
    if !parent.children.borrow().iter().any(is_link) {
        return;
    }
    let children = std::mem::take(&mut *parent.children.borrow_mut());
    let mut moved = Vec::with_capacity(children.len());
    for child in children {
        let block = if is_link(&child) {
            first_leaf_block(&child)
        } else {
            None
        };
        let Some(block) = block else {
            moved.push(child);
            continue;
        };
        let content = std::mem::take(&mut *child.children.borrow_mut());
        for node in &content {
            node.parent.set(Some(Rc::downgrade(parent)));
        }
        moved.extend(content);
        let inner = std::mem::take(&mut *block.children.borrow_mut());
        for node in &inner {
            node.parent.set(Some(Rc::downgrade(&child)));
        }
        *child.children.borrow_mut() = inner;
        child.parent.set(Some(Rc::downgrade(&block)));
        block.children.borrow_mut().push(child);
    }
    *parent.children.borrow_mut() = moved;
}

/// The html2text configuration of plain text: this decorator, no table borders, struck-out
/// text as it is (no combining characters), no footnotes of html2text's own.
pub fn config() -> (html2text::config::Config<Plain>, Rc<RefCell<Links>>) {
    let (plain, links) = Plain::new();
    let config = html2text::config::with_decorator(plain)
        .no_table_borders()
        .unicode_strikeout(false)
        .link_footnotes(false);
    (config, links)
}

/// [`finish_into`] as one string.
#[cfg(test)]
pub fn finish(rendered: &str, links: &Links) -> String {
    let mut text = String::with_capacity(rendered.len() + 64);
    finish_into(rendered, links, &mut |part: &str| text.push_str(part));
    text
}

/// The rendering made final: heading marks turned into blank lines around each heading,
/// blank-line runs collapsed (`tidy`), and the numbered links appended; written to `sink`
/// a line at a time.
pub fn finish_into(rendered: &str, links: &Links, sink: &mut dyn FnMut(&str)) {
    let mut tidy = Tidy::new(sink);
    let mut started = false;
    let mut in_heading = false;
    let mut unmarked = String::new();
    for line in rendered.lines() {
        // A heading in a list item or a table cell is marked inside its line.
        let heading = line.contains(HEADING);
        if heading != in_heading && started {
            // Entering or leaving a heading; `tidy` folds a blank line already there.
            tidy.line("");
        }
        started = true;
        in_heading = heading;
        if heading {
            unmarked.clear();
            unmarked.extend(line.chars().filter(|&c| c != HEADING));
            tidy.line(&unmarked);
        } else {
            tidy.line(line);
        }
    }
    // The sink is free again once `tidy` is no longer used.
    let written = tidy.written();
    if !links.urls.is_empty() {
        if written {
            sink("\n");
        }
        sink("Links:\n");
        for (i, url) in links.urls.iter().enumerate() {
            sink(&format!("[{}] {url}\n", i + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_numbered_once_and_some_not_at_all() {
        let mut links = Links::default();
        assert_eq!(links.number("https://a.example/"), Some(1));
        assert_eq!(links.number("mailto:x@a.example"), Some(2));
        assert_eq!(links.number(" https://a.example/ "), Some(1));
        for unlisted in ["", "  ", "#top", "javascript:void(0)", " JavaScript:go()"] {
            assert_eq!(links.number(unlisted), None, "{unlisted:?}");
        }
        assert_eq!(links.number("https://b.example/#top"), Some(3));
        assert_eq!(links.urls.len(), 3);
    }

    #[test]
    fn finishing_spaces_headings_and_lists_the_links() {
        let mut links = Links::default();
        links.number("https://a.example/");
        let rendered = "\0Title\n- item [1]\n\n\0Next\n\0still next\ntext  \n\n\n";
        assert_eq!(
            finish(rendered, &links),
            "Title\n\n- item [1]\n\nNext\nstill next\n\ntext\n\nLinks:\n[1] https://a.example/\n"
        );
        assert_eq!(finish("", &links), "Links:\n[1] https://a.example/\n");
        assert_eq!(finish("\0Only\n", &Links::default()), "Only\n");
    }
}
