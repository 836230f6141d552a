//! What webfetch does with a body: decide whether it is HTML, other text, or binary, and
//! turn HTML into Markdown (htmd) or plain text (html2text).
//!
//! Both conversions first drop what a reader never sees: the content of `script`, `style`,
//! `noscript`, `template` and `head` (the page title included), and make relative link and
//! image addresses absolute against the page's URL, so a link can be fetched as it is.
//! Markdown uses ATX headings (`#`), inline links `[text](url)`, `-` bullets and fenced
//! code blocks; text is plain text without Markdown marks ([`plain`]), wrapped at 120
//! columns, with links as numbered references listed at the end.
//!
//! Hostile nesting is defused twice. The HTML parser's work grows with the square of the
//! nesting depth (a 1 MB page of nested `<div>`s would take minutes), so a linear scan first
//! estimates that work ([`nesting_cost`]); a page over [`PARSE_BUDGET`] is not parsed but
//! reduced to its text by a linear extractor, with a note saying so. And the converters
//! walk the document recursively, so elements nested deeper than [`MAX_DEPTH`] are
//! flattened into their text before conversion.

use std::cell::RefCell;
use std::rc::Rc;

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE};
use markup5ever_rcdom::{Handle, Node, NodeData};
use url::Url;

use super::{groups, plain};

/// Elements whose content is dropped before conversion.
pub const DROPPED: &[&str] = &["script", "style", "noscript", "template", "head"];

/// Nesting depth beyond which elements are flattened into their text.
pub const MAX_DEPTH: usize = 512;

/// Estimated parser work ([`nesting_cost`]) above which a page is not parsed. Ordinary
/// pages stay far below: a 5 MB page of 150,000 elements nested 40 deep costs 6,000,000.
const PARSE_BUDGET: u64 = 50_000_000;

/// The note that starts the output of a page too deeply nested to convert.
const TOO_DEEP_NOTE: &str = "[the page nests its elements too deeply to convert; its text follows]";

/// Width plain text is wrapped at.
pub const TEXT_WIDTH: usize = 120;

/// Bytes looked at to tell text from binary.
const SNIFF_BYTES: usize = 8_192;

/// What a body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// HTML (or XHTML): converted for the `text` and `markdown` formats.
    Html,
    /// Other text (plain, JSON, XML, CSS, ...): returned as it is.
    Text,
    /// Not text: described, never shown.
    Binary,
}

/// What a body's declared `Content-Type` says before its bytes are looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Declared {
    /// Image, audio, video, font.
    Binary,
    /// HTML or XHTML.
    Html,
    /// A text type.
    Text,
    /// No type, or one that says nothing (`application/octet-stream`).
    Unknown,
}

fn declared(content_type: Option<&str>) -> Declared {
    let mime = content_type
        .and_then(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty());
    let Some(mime) = mime else {
        return Declared::Unknown;
    };
    let (top, sub) = mime.split_once('/').unwrap_or((mime.as_str(), ""));
    if matches!(top, "image" | "audio" | "video" | "font") && !sub.ends_with("+xml") {
        Declared::Binary
    } else if mime == "text/html" || mime == "application/xhtml+xml" {
        Declared::Html
    } else if top == "text" || is_textual_application(sub) {
        Declared::Text
    } else {
        Declared::Unknown
    }
}

/// Decides what a body is from its declared `Content-Type` and its first bytes, read in
/// `encoding` (the body's charset). A declared image, audio, video or font type is binary;
/// a declared text type is trusted unless its bytes hold a NUL or many control characters
/// ([`has_control_bytes`]): text in a charset it does not name is shown decoded as UTF-8
/// with replacements, not hidden as binary. An unknown or generic type
/// (`application/octet-stream`) is judged by its bytes ([`looks_binary`]); text in it is
/// shown, and converted when it starts like an HTML page, so a page served without a
/// proper type still converts.
pub fn classify(content_type: Option<&str>, body: &[u8], encoding: &'static Encoding) -> Kind {
    match declared(content_type) {
        Declared::Binary => Kind::Binary,
        Declared::Html | Declared::Text if has_control_bytes(body, encoding) => Kind::Binary,
        Declared::Html => Kind::Html,
        Declared::Text => Kind::Text,
        Declared::Unknown if looks_binary(body, encoding) => Kind::Binary,
        Declared::Unknown if looks_like_html(body) => Kind::Html,
        Declared::Unknown => Kind::Text,
    }
}

/// Whether a body may be an HTML page, before its charset is known: its `<meta>`
/// declarations then count (an ASCII-compatible page is assumed, as WHATWG's prescan does).
pub fn may_be_html(content_type: Option<&str>, body: &[u8]) -> bool {
    match declared(content_type) {
        Declared::Html => true,
        Declared::Unknown => looks_like_html(body),
        Declared::Binary | Declared::Text => false,
    }
}

fn is_textual_application(sub: &str) -> bool {
    sub.ends_with("+json")
        || sub.ends_with("+xml")
        || matches!(
            sub,
            "json"
                | "xml"
                | "javascript"
                | "ecmascript"
                | "x-javascript"
                | "x-www-form-urlencoded"
                | "yaml"
                | "x-yaml"
                | "toml"
                | "graphql"
                | "sql"
                | "x-sh"
                | "x-httpd-php"
                | "x-ndjson"
                | "jsonl"
        )
}

/// Whether the first bytes of a body, in `encoding`, hold a NUL or more than 10% control
/// characters: no text does. In a legacy charset every other byte may be text; UTF-16 is
/// judged by its characters, half its bytes being NUL.
fn has_control_bytes(body: &[u8], encoding: &'static Encoding) -> bool {
    let window = &body[..body.len().min(SNIFF_BYTES)];
    let is_control = |c: u32| c < 0x20 && !matches!(c, 0x09 | 0x0a | 0x0d | 0x0c | 0x1b);
    if encoding == UTF_16LE || encoding == UTF_16BE {
        let (text, _) = encoding.decode_without_bom_handling(window);
        let chars = text.chars().count();
        let control = text.chars().filter(|&c| is_control(u32::from(c))).count();
        return text.contains('\0') || control * 10 > chars;
    }
    let control = window.iter().filter(|&&b| is_control(u32::from(b))).count();
    window.contains(&0) || control * 10 > window.len()
}

/// Whether the first bytes of a body of no known type, in `encoding`, are not text:
/// [`has_control_bytes`], or (for UTF-8, the charset of a body that names none) invalid
/// UTF-8 with more than 30% of bytes outside ASCII: compressed or encrypted data; text in
/// a legacy 8-bit charset stays under that share.
fn looks_binary(body: &[u8], encoding: &'static Encoding) -> bool {
    if has_control_bytes(body, encoding) {
        return true;
    }
    if encoding != UTF_8 {
        return false;
    }
    let window = &body[..body.len().min(SNIFF_BYTES)];
    let valid = match std::str::from_utf8(window) {
        Ok(_) => true,
        // A window cut inside a character is still UTF-8.
        Err(err) => err.error_len().is_none(),
    };
    let high = window.iter().filter(|&&b| b >= 0x80).count();
    !valid && high * 10 > window.len() * 3
}

/// Whether a body without a usable type starts like an HTML document.
fn looks_like_html(body: &[u8]) -> bool {
    let window = &body[..body.len().min(1_024)];
    let text = String::from_utf8_lossy(window);
    let start = text
        .trim_start_matches('\u{feff}')
        .trim_start()
        .to_ascii_lowercase();
    start.starts_with("<!doctype html")
        || start.starts_with("<html")
        || start.starts_with("<head")
        || start.starts_with("<body")
        || (start.starts_with("<!--") || start.starts_with("<?xml")) && start.contains("<html")
}

/// HTML to Markdown, written to `sink` (a line or so at a time); relative links resolve
/// against `base`.
pub fn markdown_into(html: &str, base: Option<&Url>, sink: &mut dyn FnMut(&str)) {
    if nesting_cost(html) > PARSE_BUDGET {
        return sink(&too_deep(html));
    }
    let options = htmd::options::Options {
        bullet_list_marker: htmd::options::BulletListMarker::Dash,
        ul_bullet_spacing: 1,
        ol_number_spacing: 1,
        ..Default::default()
    };
    let converter = htmd::HtmlToMarkdown::builder()
        .options(options)
        .skip_tags(DROPPED.to_vec())
        .build();
    // Parsing into a tree cannot fail for a string (html5ever recovers from anything);
    // the Result is the converter's general signature.
    let tree = match converter.html_to_tree(html) {
        Ok(tree) => tree,
        Err(_) => return sink(html),
    };
    prune(&tree, &[], base);
    let markdown = converter.tree_to_markdown(&tree);
    drop(tree);
    // Tidied into the sink: no second copy of the whole text.
    let mut tidy = Tidy::new(sink);
    for line in markdown.lines() {
        tidy.line(line);
    }
}

/// HTML to readable plain text ([`plain`] says what it looks like), wrapped at
/// [`TEXT_WIDTH`] columns, written to `sink` (a line or so at a time); relative links
/// resolve against `base`.
pub fn text_into(html: &str, base: Option<&Url>, sink: &mut dyn FnMut(&str)) {
    text_in_groups(html, base, groups::GROUP_NODES, sink);
}

/// [`text_into`] rendering groups of about `group_nodes` nodes ([`groups`]).
pub(super) fn text_in_groups(
    html: &str,
    base: Option<&Url>,
    group_nodes: usize,
    sink: &mut dyn FnMut(&str),
) {
    if nesting_cost(html) > PARSE_BUDGET {
        return sink(&too_deep(html));
    }
    let dom = match plain::config().0.parse_html(html.as_bytes()) {
        Ok(dom) => dom,
        Err(_) => return sink(&extract_text(html)),
    };
    if !prune_text_dom(&dom.document, base) {
        drop(dom);
        return flattened_text(html, base, group_nodes, sink);
    }
    if render_text(&dom, group_nodes, sink).is_err() {
        sink(&extract_text(html));
    }
}

/// Renders a pruned html2text document as plain text, a group of blocks at a time
/// ([`groups`]), into `sink`; the document is consumed. Nothing is written on failure:
/// the groups are gathered, and finished once all have rendered.
fn render_text(
    dom: &html2text::RcDom,
    group_nodes: usize,
    sink: &mut dyn FnMut(&str),
) -> Result<(), html2text::Error> {
    let (config, links) = plain::config();
    let rendered = groups::render(dom, &config, group_nodes)?;
    plain::finish_into(&rendered, &links.borrow(), sink);
    Ok(())
}

/// [`text_into`] for a document nested deeper than [`MAX_DEPTH`]: html2text's own tree
/// cannot take a new text node, so the document is parsed here, flattened, serialized and
/// handed over.
fn flattened_text(html: &str, base: Option<&Url>, group_nodes: usize, sink: &mut dyn FnMut(&str)) {
    let Ok(tree) = htmd::HtmlToMarkdown::new().html_to_tree(html) else {
        return sink(&extract_text(html));
    };
    prune(&tree, DROPPED, base);
    let mut cleaned = Vec::with_capacity(html.len());
    let handle: markup5ever_rcdom::SerializableHandle = tree.into();
    if html5ever::serialize(&mut cleaned, &handle, Default::default()).is_err() {
        return sink(&extract_text(html));
    }
    drop(handle);
    // Parsing the serialization again gives a document no deeper than the flattening
    // left it, with nothing left to drop or resolve.
    let rendered = plain::config()
        .0
        .parse_html(cleaned.as_slice())
        .and_then(|dom| render_text(&dom, group_nodes, sink));
    if rendered.is_err() {
        sink(&extract_text(html));
    }
}

/// [`prune`] on html2text's tree, without the flattening, and links around blocks moved
/// into their first block ([`plain::move_block_links`]): false when the document is nested
/// deeper than [`MAX_DEPTH`] (the caller then takes the flattening path).
fn prune_text_dom(root: &html2text::Handle, base: Option<&Url>) -> bool {
    // The elements entered, each with the index of its next child: as long as the nesting
    // is deep, where a stack of every child met would grow with the longest child list
    // (600,000 entries for a page of 200,000 paragraphs).
    let mut path: Vec<(html2text::Handle, usize)> = Vec::new();
    let mut entering = Some(Rc::clone(root));
    loop {
        if let Some(node) = entering.take() {
            if path.len() >= MAX_DEPTH {
                return false;
            }
            if let (Some(base), html2text::Element { name, attrs, .. }) = (base, &node.data) {
                absolutize(name.local.as_ref(), attrs, base);
            }
            plain::move_block_links(&node);
            node.children
                .borrow_mut()
                .retain(|child| match &child.data {
                    html2text::Element { name, .. } => !DROPPED.contains(&name.local.as_ref()),
                    _ => true,
                });
            path.push((node, 0));
        }
        let Some((parent, next)) = path.last_mut() else {
            return true;
        };
        entering = parent.children.borrow().get(*next).cloned();
        *next += 1;
        if entering.is_none() {
            path.pop();
        }
    }
}

/// Makes the link or image address of an element absolute against `base`.
fn absolutize(element: &str, attrs: &RefCell<Vec<html5ever::Attribute>>, base: &Url) {
    let Some(attr) = link_attribute(element) else {
        return;
    };
    for a in attrs.borrow_mut().iter_mut() {
        if a.name.local.as_ref() == attr
            && let Some(absolute) = absolute(base, &a.value)
        {
            a.value = absolute.into();
        }
    }
}

/// The attribute of an element that holds an address to make absolute.
fn link_attribute(element: &str) -> Option<&'static str> {
    match element {
        "a" | "area" | "link" => Some("href"),
        "img" | "source" | "video" | "audio" | "iframe" => Some("src"),
        _ => None,
    }
}

/// Removes the elements named in `drop` (with their content), makes link and image
/// addresses absolute against `base`, and flattens elements nested deeper than
/// [`MAX_DEPTH`] into one text node, without recursion.
fn prune(root: &Handle, drop: &[&str], base: Option<&Url>) {
    // Walked as in `prune_text_dom`: the stack holds the elements entered, not every child.
    let mut path: Vec<(Handle, usize)> = Vec::new();
    let mut entering = Some(Rc::clone(root));
    loop {
        if let Some(node) = entering.take() {
            if let (Some(base), NodeData::Element { name, attrs, .. }) = (base, &node.data) {
                absolutize(name.local.as_ref(), attrs, base);
            }
            if !drop.is_empty() {
                node.children
                    .borrow_mut()
                    .retain(|child| !is_element(child, drop));
            }
            if path.len() >= MAX_DEPTH {
                let text = subtree_text(&node);
                let leaf = Node::new(NodeData::Text {
                    contents: RefCell::new(text.into()),
                });
                leaf.parent.set(Some(Rc::downgrade(&node)));
                // Dropping deep children one level at a time here would recurse in their
                // destructors; markup5ever_rcdom's Node::drop is iterative.
                *node.children.borrow_mut() = vec![leaf];
            } else {
                path.push((node, 0));
            }
        }
        let Some((parent, next)) = path.last_mut() else {
            return;
        };
        entering = parent.children.borrow().get(*next).cloned();
        *next += 1;
        if entering.is_none() {
            path.pop();
        }
    }
}

/// A link address made absolute, unless it already is, is a fragment of the same page,
/// or does not resolve.
fn absolute(base: &Url, href: &str) -> Option<String> {
    let href = href.trim();
    if href.is_empty() || href.starts_with('#') || Url::parse(href).is_ok() {
        return None;
    }
    base.join(href).ok().map(String::from)
}

fn is_element(node: &Handle, names: &[&str]) -> bool {
    match &node.data {
        NodeData::Element { name, .. } => names.contains(&name.local.as_ref()),
        _ => false,
    }
}

/// The text of a subtree in document order, without recursion; dropped elements and
/// block boundaries become spaces.
fn subtree_text(root: &Handle) -> String {
    let mut text = String::new();
    let mut stack: Vec<Handle> = root.children.borrow().iter().rev().cloned().collect();
    while let Some(node) = stack.pop() {
        match &node.data {
            NodeData::Text { contents } => text.push_str(&contents.borrow()),
            NodeData::Element { .. } if is_element(&node, DROPPED) => {}
            NodeData::Element { .. } => {
                if !text.ends_with(' ') {
                    text.push(' ');
                }
                stack.extend(node.children.borrow().iter().rev().cloned());
            }
            _ => {}
        }
    }
    text
}

fn too_deep(html: &str) -> String {
    format!("{TOO_DEEP_NOTE}\n\n{}", extract_text(html))
}

/// Elements that hold no child elements.
const VOID: &[&str] = &[
    "area", "base", "basefont", "bgsound", "br", "col", "embed", "frame", "hr", "img", "input",
    "keygen", "link", "meta", "param", "source", "track", "wbr",
];

/// Elements whose end tag may be left out (the parser closes them): not counted as
/// nesting, so pages that omit those end tags are not taken for deep ones.
const IMPLIED_END: &[&str] = &[
    "p", "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot",
    "colgroup", "caption", "rb", "rt", "rtc", "rp", "html", "head", "body",
];

/// Elements whose content is text to the parser, up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript",
];

/// Elements that end a line in extracted text.
const BLOCK: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "br",
    "dd",
    "details",
    "div",
    "dl",
    "dt",
    "fieldset",
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
    "hr",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "summary",
    "table",
    "tr",
    "ul",
];

/// One tag found by [`next_tag`].
struct Tag {
    /// Byte index of its `<`.
    start: usize,
    /// Byte index just past its `>` (or the end of the text).
    end: usize,
    /// Lower-case name; empty for comments, doctypes and processing instructions.
    name: String,
    closing: bool,
    self_closing: bool,
}

impl Tag {
    /// A comment, doctype or processing instruction spanning `start..end`.
    fn unnamed(start: usize, end: usize) -> Tag {
        Tag {
            start,
            end,
            name: String::new(),
            closing: false,
            self_closing: false,
        }
    }
}

/// The next tag at or after `from`, skipping a `<` that starts no tag.
fn next_tag(html: &str, mut from: usize) -> Option<Tag> {
    let bytes = html.as_bytes();
    loop {
        let start = from + memchr::memchr(b'<', bytes.get(from..)?)?;
        let rest = &bytes[start + 1..];
        if rest.starts_with(b"!--") {
            let end = find(bytes, start + 4, b"-->").map_or(bytes.len(), |p| p + 3);
            return Some(Tag::unnamed(start, end));
        }
        if matches!(rest.first(), Some(b'!' | b'?')) {
            let end = memchr::memchr(b'>', rest).map_or(bytes.len(), |p| start + p + 2);
            return Some(Tag::unnamed(start, end));
        }
        let closing = rest.first() == Some(&b'/');
        let name_start = start + 1 + usize::from(closing);
        let name_len = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-' || **b == b':')
            .count();
        if name_len == 0 || !bytes[name_start].is_ascii_alphabetic() {
            from = start + 1;
            continue;
        }
        let name = html[name_start..name_start + name_len].to_ascii_lowercase();
        let end =
            memchr::memchr(b'>', &bytes[name_start..]).map_or(bytes.len(), |p| name_start + p + 1);
        let self_closing = end >= 2 && bytes[end - 2] == b'/' && bytes.get(end - 1) == Some(&b'>');
        return Some(Tag {
            start,
            end,
            name,
            closing,
            self_closing,
        });
    }
}

/// The index of `needle` at or after `from`.
fn find(haystack: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    let hay = haystack.get(from..)?;
    memchr::memmem::find(hay, needle).map(|p| from + p)
}

/// The index just past the end tag `</name ...>` at or after `from`, ASCII case ignored.
fn after_end_tag(html: &str, from: usize, name: &str) -> Option<usize> {
    let mut at = from;
    while let Some(tag) = next_tag(html, at) {
        if tag.closing && tag.name == name {
            return Some(tag.end);
        }
        // Inside raw text only the matching end tag counts: move past this `<` only.
        at = tag.start + 1;
    }
    None
}

/// An estimate of the HTML parser's work on a document: the sum, over start tags, of the
/// elements open at that point (each start tag makes the parser look through the open
/// elements). Linear in the length of the text; stops counting past [`PARSE_BUDGET`].
fn nesting_cost(html: &str) -> u64 {
    let mut depth: u64 = 0;
    let mut foreign: u64 = 0;
    let mut cost: u64 = 0;
    let mut at = 0;
    while let Some(tag) = next_tag(html, at) {
        at = tag.end;
        let name = tag.name.as_str();
        if name.is_empty() || VOID.contains(&name) || IMPLIED_END.contains(&name) {
            continue;
        }
        let is_foreign_root = name == "svg" || name == "math";
        if tag.closing {
            depth = depth.saturating_sub(1);
            if is_foreign_root {
                foreign = foreign.saturating_sub(1);
            }
            continue;
        }
        if RAW_TEXT.contains(&name) {
            at = after_end_tag(html, tag.end, name).unwrap_or(html.len());
            continue;
        }
        // `<div/>` opens a div in HTML; only inside SVG and MathML does `/>` close.
        if tag.self_closing && (foreign > 0 || is_foreign_root) {
            continue;
        }
        if is_foreign_root {
            foreign += 1;
        }
        depth += 1;
        cost = cost.saturating_add(depth);
        if cost > PARSE_BUDGET {
            break;
        }
    }
    cost
}

/// The text of a document without parsing it: tags removed, the content of dropped and
/// raw-text elements skipped, block elements on their own lines, common character
/// references decoded. Linear in the length of the text.
fn extract_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let mut at = 0;
    while let Some(tag) = next_tag(html, at) {
        push_text(&mut out, &html[at..tag.start]);
        at = tag.end;
        let name = tag.name.as_str();
        if tag.closing || name.is_empty() {
            if BLOCK.contains(&name) {
                out.push('\n');
            }
            continue;
        }
        let skipped = DROPPED.contains(&name) || RAW_TEXT.contains(&name) && name != "textarea";
        if skipped {
            match after_end_tag(html, tag.end, name) {
                Some(end) => at = end,
                // An unclosed head ends where the body starts; anything else runs to the end.
                None if name == "head" => {}
                None => at = html.len(),
            }
            continue;
        }
        if BLOCK.contains(&name) {
            out.push('\n');
        }
    }
    push_text(&mut out, html.get(at..).unwrap_or_default());
    tidy(&out)
}

/// Appends text with white space collapsed and character references decoded.
fn push_text(out: &mut String, text: &str) {
    let mut rest = text;
    while !rest.is_empty() {
        let (plain, tail) = match rest.find(['&', ' ', '\t', '\n', '\r', '\u{c}']) {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        out.push_str(plain);
        rest = tail;
        let Some(c) = rest.chars().next() else {
            break;
        };
        if c == '&' {
            let (decoded, used) = decode_reference(rest);
            out.push_str(&decoded);
            rest = &rest[used..];
        } else {
            if !out.ends_with([' ', '\n']) && !out.is_empty() {
                out.push(' ');
            }
            rest = rest.trim_start_matches([' ', '\t', '\n', '\r', '\u{c}']);
        }
    }
}

/// Decodes the character reference at the start of `text` (which starts with `&`):
/// the text it stands for and the bytes it used. Unknown ones stay as they are.
fn decode_reference(text: &str) -> (String, usize) {
    let end = text.as_bytes().iter().take(12).position(|&b| b == b';');
    let Some(end) = end else {
        return ("&".to_string(), 1);
    };
    let entity = &text[1..end];
    let decoded = match entity {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        "nbsp" => Some(' '),
        _ => entity
            .strip_prefix("#x")
            .or_else(|| entity.strip_prefix("#X"))
            .map(|hex| u32::from_str_radix(hex, 16))
            .or_else(|| entity.strip_prefix('#').map(str::parse::<u32>))
            .and_then(Result::ok)
            .and_then(char::from_u32),
    };
    match decoded {
        Some(c) => (c.to_string(), end + 1),
        None => ("&".to_string(), 1),
    }
}

/// Trims trailing spaces of every line and collapses runs of blank lines to one.
pub(super) fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut sink = |part: &str| out.push_str(part);
    let mut tidy = Tidy::new(&mut sink);
    for line in text.lines() {
        tidy.line(line);
    }
    out
}

/// [`tidy`] a line at a time, writing to a sink as it goes: no leading or trailing blank
/// lines, one blank line for a run of them, no spaces at the end of a line.
pub(super) struct Tidy<'a> {
    sink: &'a mut dyn FnMut(&str),
    written: bool,
    /// A blank line is due before the next line that is not blank.
    blank: bool,
}

impl<'a> Tidy<'a> {
    /// A tidy pass writing to `sink`.
    pub(super) fn new(sink: &'a mut dyn FnMut(&str)) -> Self {
        Tidy {
            sink,
            written: false,
            blank: false,
        }
    }

    /// Takes one line, without its line end.
    pub(super) fn line(&mut self, line: &str) {
        let line = line.trim_end();
        if line.is_empty() {
            self.blank = self.written;
            return;
        }
        if self.blank {
            (self.sink)("\n");
            self.blank = false;
        }
        (self.sink)(line);
        (self.sink)("\n");
        self.written = true;
    }

    /// Whether a line has been written.
    pub(super) fn written(&self) -> bool {
        self.written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// HTML to Markdown; relative links resolve against `base`.
    fn to_markdown(html: &str, base: Option<&Url>) -> String {
        let mut out = String::new();
        markdown_into(html, base, &mut |part: &str| out.push_str(part));
        out
    }

    /// HTML to readable plain text ([`plain`] says what it looks like), wrapped
    /// at [`TEXT_WIDTH`] columns; relative links resolve against `base`.
    fn to_text(html: &str, base: Option<&Url>) -> String {
        let mut out = String::new();
        text_into(html, base, &mut |part: &str| out.push_str(part));
        out
    }

    const PAGE: &str = r#"<!DOCTYPE html>
<html><head><title>Title text</title><style>body { color: red }</style>
<script>var secret = "script text";</script></head>
<body>
<noscript>noscript text</noscript>
<template><p>template text</p></template>
<h1>Main heading</h1>
<p>A paragraph with a <a href="https://example.com/docs">link to docs</a> and <b>bold</b>.</p>
<h2>Second level</h2>
<ul><li>first item</li><li>second item</li></ul>
<ol><li>one</li><li>two</li></ol>
<pre><code class="language-rust">fn main() {
    println!("hi");
}</code></pre>
<script>document.write("inline script")</script>
</body></html>"#;

    #[test]
    fn markdown_keeps_structure_and_drops_invisible_content() {
        let md = to_markdown(PAGE, None);
        insta::assert_snapshot!(md, @r#"
        # Main heading

        A paragraph with a [link to docs](https://example.com/docs) and **bold**.

        ## Second level

        - first item
        - second item

        1. one
        2. two

        ```rust
        fn main() {
            println!("hi");
        }
        ```
        "#);
    }

    #[test]
    fn text_is_readable_and_drops_invisible_content() {
        let text = to_text(PAGE, None);
        for hidden in [
            "Title text",
            "color: red",
            "script text",
            "noscript text",
            "template text",
            "inline script",
        ] {
            assert!(!text.contains(hidden), "{hidden:?} in {text}");
        }
        insta::assert_snapshot!(text, @r#"
        Main heading

        A paragraph with a link to docs [1] and bold.

        Second level

        - first item
        - second item
        1. one
        2. two

        fn main() {
            println!("hi");
        }

        Links:
        [1] https://example.com/docs
        "#);
    }

    #[test]
    fn deep_nesting_is_flattened_not_a_stack_overflow() {
        let depth = 3 * MAX_DEPTH;
        let html = format!(
            "{}<p>deep &amp; text</p>{}",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        );
        assert!(nesting_cost(&html) < PARSE_BUDGET);
        let md = to_markdown(&html, None);
        assert!(
            md.contains("deep & text") && !md.contains(TOO_DEEP_NOTE),
            "{md}"
        );
        let text = to_text(&html, None);
        assert!(
            text.contains("deep & text") && !text.contains(TOO_DEEP_NOTE),
            "{text}"
        );
    }

    #[test]
    fn pages_too_costly_to_parse_fall_back_to_their_text() {
        for (open, close) in [("<div>", "</div>"), ("<div/>", ""), ("<ul><li>", "")] {
            let depth = 50_000;
            let html = format!(
                "<head><title>T</title></head>{}<script>no</script>deep <b>text</b>{}",
                open.repeat(depth),
                close.repeat(depth)
            );
            assert!(nesting_cost(&html) > PARSE_BUDGET, "{open}");
            for out in [to_markdown(&html, None), to_text(&html, None)] {
                assert_eq!(out, format!("{TOO_DEEP_NOTE}\n\ndeep text\n"), "{open}");
            }
        }
    }

    #[test]
    fn ordinary_pages_are_far_under_the_parse_budget() {
        let row = "<tr><td><a href=\"/x\">cell</a><td><span>more</span><br><img src=x>";
        let svg = format!("<svg>{}</svg>", "<path d=\"M0 0\"/>".repeat(20_000));
        let html = format!(
            "<html><body><div><div><table>{}</table></div><p>para{}</div>{svg}</body></html>",
            row.repeat(50_000),
            "<p>unclosed".repeat(20_000)
        );
        assert!(nesting_cost(&html) < 1_000_000, "{}", nesting_cost(&html));
        assert!(nesting_cost(&"<b>x</b>".repeat(100_000)) == 100_000);
    }

    #[test]
    fn text_extraction_skips_invisible_content_and_decodes_references() {
        let html = "<!doctype html><html><head><title>T</title><style>x{}</style></head>\
            <body><!-- c --><h1>Head&nbsp;line</h1><p>a &lt;b&gt; &#x41;&#66; &unknown; &amp</p>\
            <noscript>ns</noscript><template>t</template><SCRIPT>if (a<b) {}</script >\
            <ul><li>one<li>two</ul>1 < 2 <textarea>kept</textarea></body>";
        assert_eq!(
            extract_text(html),
            "Head line\n\na <b> AB &unknown; &amp\n\none\ntwo\n1 < 2 kept\n"
        );
    }

    #[test]
    fn relative_links_become_absolute() {
        let base = Url::parse("https://docs.example/guide/intro.html").unwrap();
        let html = r##"<p><a href="setup.html">setup</a> <a href="/api?q=1">api</a>
            <a href="#top">top</a> <a href="mailto:a@b.example">mail</a>
            <a href="https://other.example/x">other</a> <img src="../img/a.png" alt="pic"></p>"##;
        assert_eq!(
            to_markdown(html, Some(&base)),
            "[setup](https://docs.example/guide/setup.html) \
             [api](https://docs.example/api?q=1) [top](#top) [mail](mailto:a@b.example) \
             [other](https://other.example/x) ![pic](https://docs.example/img/a.png)\n"
        );
        let text = to_text(html, Some(&base));
        assert_eq!(
            text,
            "setup [1] api [2] top mail [3] other [4] [image: pic]\n\n\
             Links:\n\
             [1] https://docs.example/guide/setup.html\n\
             [2] https://docs.example/api?q=1\n\
             [3] mailto:a@b.example\n\
             [4] https://other.example/x\n"
        );
    }

    /// A page with every kind of element that Markdown would mark.
    const MARKED: &str = r##"<html><body>
<h1>Main Title</h1>
<p>Intro with <em>emphasis</em>, <i>italic</i>, <strong>strong</strong>, <b>bold</b>,
<del>deleted</del>, <s>struck</s>, <code>code()</code>, <kbd>Ctrl</kbd>, E = mc<sup>2</sup>,
x<sup>n+1</sup> and <a href="https://example.com/docs">link here</a>.</p>
<h2>Sub <em>heading</em> with <a href="https://example.com/docs">a link</a></h2>
<ul><li>one <b>bold</b> item</li><li>two<ul><li>nested <a href="#top">same page</a></li></ul></li></ul>
<h3>Numbered</h3>
<ol><li>first</li><li>second <a href="javascript:void(0)">script link</a></li></ol>
<blockquote><p>Quoted <em>text</em>.</p></blockquote>
<h4>Code</h4>
<pre><code class="language-rust">fn main() {
    let v = vec![1, 2];
}</code></pre>
<h5>Table</h5>
<table><thead><tr><th>Name</th><th>Kind</th></tr></thead>
<tbody><tr><td><a href="https://docs.example/struct.Foo.html">Foo</a></td><td>struct</td></tr>
<tr><td><a href="https://docs.example/a/rather/long/address/that/would/never/fit/in/its/column/fn.bar_baz_quux.html">bar_baz_quux</a></td><td><code>fn</code></td></tr></tbody></table>
<h6>Images</h6>
<p><img src="diagram.png" alt="Architecture diagram"> <img src="spacer.gif"> <a href="https://example.com/"><img src="logo.png" alt="Logo"></a></p>
<dl><dt>Term</dt><dd>Its <strong>definition</strong></dd></dl>
</body></html>"##;

    #[test]
    fn text_has_no_markdown_marks() {
        let text = to_text(MARKED, None);
        insta::assert_snapshot!(text, @r#"
        Main Title

        Intro with emphasis, italic, strong, bold, deleted, struck, code(), Ctrl, E = mc², x^(n+1) and link here [1].

        Sub heading with a link [1]

        - one bold item
        - two
          - nested same page

        Numbered

        1. first
        2. second script link

          Quoted text.

        Code

        fn main() {
            let v = vec![1, 2];
        }

        Table

        Name              Kind
        Foo [2]           struct
        bar_baz_quux [3]  fn

        Images

        [image: Architecture diagram] [image: Logo] [4]

        Term
          Its definition

        Links:
        [1] https://example.com/docs
        [2] https://docs.example/struct.Foo.html
        [3] https://docs.example/a/rather/long/address/that/would/never/fit/in/its/column/fn.bar_baz_quux.html
        [4] https://example.com/
        "#);
        for mark in [
            "#", "*", "`", "_", "~", "](", "][", "> ", "│", "─", "┼", "\0",
        ] {
            let body = text.split("\nLinks:\n").next().unwrap_or_default();
            let found = body
                .lines()
                .find(|l| l.contains(mark) && !l.contains("bar_baz"));
            assert!(found.is_none(), "{mark:?} in {found:?}");
        }
    }

    #[test]
    fn headings_have_a_blank_line_before_and_after() {
        let html = "<p>intro</p><h2>List</h2><ul><li>a</li></ul><h3>Ordered</h3><ol><li>b</li></ol>\
            <h4>A heading long enough to be wrapped over more than one line of the text, since \
            it goes on and on and on, well past the width</h4><ul><li>c</li></ul><div>\
            <h5>In a div</h5>text</div><ul><li><h6>In a list</h6><ul><li>d</li></ul></li></ul>\
            <blockquote><h2>Quoted</h2><ul><li>e</li></ul></blockquote>";
        assert_eq!(
            to_text(html, None),
            "intro\n\nList\n\n- a\n\nOrdered\n\n1. b\n\n\
             A heading long enough to be wrapped over more than one line of the text, since it \
             goes on and on and on, well past the\nwidth\n\n- c\n\nIn a div\n\ntext\n\n\
             - In a list\n\n  - d\n\n  Quoted\n\n  - e\n"
        );
    }

    #[test]
    fn nul_characters_in_a_page_are_neither_shown_nor_taken_for_headings() {
        let html = "<p>\0a&#0;b</p>\0<pre>\0pre&#0;</pre><textarea>\0t</textarea>\
            <svg><text>\0s&#0;</text></svg><math><mi><![CDATA[\0c]]></mi></math>\
            <p><img src=x alt=\"\0alt\"></p><p title=\"&#0;\">after</p>";
        let text = to_text(html, None);
        assert!(!text.contains('\0'), "{text:?}");
        // The parser drops a NUL or makes it U+FFFD; no blank line is added around those.
        assert_eq!(
            text,
            "a\u{fffd}b\n\npre\u{fffd}\n\n\u{fffd}tc\n\n[image: \u{fffd}alt]\n\nafter\n"
        );
    }

    #[test]
    fn a_link_around_blocks_is_numbered_after_its_first_block() {
        let html = "<a href=\"/p1\"><div><h3>First post</h3><p>Excerpt one.</p></div></a>\
            <a href=\"/p2\"><div><div><p>Only <b>paragraphs</b></p></div><p>two</p></div></a>\
            <a href=\"/p3\"><noscript><p>hidden</p></noscript><img src=t.png alt=thumb>\
            <h4>Skips dropped content</h4>tail</a>\
            <a href=\"/p4\"><ul><li>listed</li><li>other</li></ul></a>\
            <a href=\"/p5\"><span>inline</span> only</a> next <a href=\"#top\"><p>top</p></a>\
            <p>After.</p>";
        let base = Url::parse("https://example.com/").unwrap();
        assert_eq!(
            to_text(html, Some(&base)),
            "First post [1]\n\nExcerpt one.\n\nOnly paragraphs [2]\n\ntwo\n\n[image: thumb]\n\n\
             Skips dropped content [3]\n\ntail\n- listed [4]\n- other\ninline only [5] next\n\n\
             top\n\nAfter.\n\nLinks:\n[1] https://example.com/p1\n[2] https://example.com/p2\n\
             [3] https://example.com/p3\n[4] https://example.com/p4\n[5] https://example.com/p5\n"
        );
    }

    #[test]
    fn repeated_addresses_keep_their_number_and_long_ones_stay_whole() {
        let long = format!("https://example.com/{}", "segment/".repeat(40));
        let html = format!(
            "<p><a href=\"{long}\">long</a> <a href=\"/b\">b</a> <a href=\"{long}\">again</a></p>\
             <table><tr><td><a href=\"/c\">c</a></td><td><a href=\"/b\">b2</a></td></tr></table>"
        );
        let base = Url::parse("https://example.com/").unwrap();
        let text = to_text(&html, Some(&base));
        assert_eq!(
            text,
            format!(
                "long [1] b [2] again [1]\n\nc [3]  b2 [2]\n\nLinks:\n[1] {long}\n\
                 [2] https://example.com/b\n[3] https://example.com/c\n"
            )
        );
    }

    /// Pages whose text must not change when rendered a few nodes at a time: the fixtures
    /// above and pages with what a cut could break (inline text between blocks, white space
    /// and comments next to a cut, empty blocks, ids, links, lists, tables around blocks).
    fn grouping_pages() -> Vec<String> {
        let mut pages: Vec<String> = [
            PAGE,
            MARKED,
            "<p>intro</p><h2>List</h2><ul><li>a</li></ul><h3>Ordered</h3><ol><li>b</li></ol>\
             <div><h5>In a div</h5>text</div><ul><li><h6>In a list</h6><ul><li>d</li></ul></li></ul>\
             <blockquote><h2>Quoted</h2><ul><li>e</li></ul></blockquote>",
            "<a href=\"/p1\"><div><h3>First post</h3><p>Excerpt one.</p></div></a>\
             <a href=\"/p2\"><div><div><p>Only <b>paragraphs</b></p></div><p>two</p></div></a>\
             <a href=\"/p5\"><span>inline</span> only</a> next <a href=\"#top\"><p>top</p></a>\
             <p>After.</p>",
            "<p>\0a&#0;b</p>\0<pre>\0pre&#0;</pre><p><img src=x alt=\"\0alt\"></p><p title=\"&#0;\">after</p>",
            "text before <p>para</p> text between <b>bold</b> <p>next</p>tail<h2>H</h2>more",
            "<p></p><p><!-- c --></p><h1></h1><p> </p>\n\n<p>x</p><p>\n</p><blockquote> </blockquote>y",
            "<div id=top>\n  <section id=s1>\n    <h2 id=h>One</h2>\n    <p id=p>a <a href=\"/a\">link</a></p>\n  \
             </section>\n  <!-- between -->\n  <section><p>b</p> inline <p>c</p></section>\n</div>",
            "<main><article><header><h1>T</h1></header><p>x</p><div>in div</div><p>y</p>\
             <footer><p>z <a href=\"/a\">again</a> <a href=\"/b\">b</a></p></footer></article></main>",
            "<span><p>in span</p><p>two</p></span><em><p>em</p><p>em2</p></em><ul><li><p>li</p><p>li2</p></li></ul>\
             <table><tr><td><p>cell</p><p>cell2</p></td></tr></table><p>after table</p>",
            "<div>a <b>b</b></div> tail <p>x</p><div>c</div><p>d</p><br><p>e</p><hr><p>f</p>\
             <pre>  pre\n  text</pre><p>g</p><blockquote>quote <p>q</p></blockquote><dl><dt>t</dt><dd>d</dd></dl>",
            "<p>A paragraph long enough to be wrapped over more than one line of the text, since it \
             goes on and on and on, well past the width of one hundred and twenty columns.</p><p>short</p>",
        ]
        .iter()
        .map(|page| page.to_string())
        .collect();
        let depth = 3 * MAX_DEPTH;
        pages.push(format!(
            "<p>before</p>{}<p>deep &amp; text</p>{}<p>after</p><p>end</p>",
            "<div>".repeat(depth),
            "</div>".repeat(depth)
        ));
        // Fragments mixed and nested at random, the same every run.
        let fragments = [
            "<p>para <a href=\"/x\">x</a></p>",
            "<h3>head</h3>",
            "inline <i>text</i> ",
            "\n  ",
            "<!-- c -->",
            "<ul><li>item <a href=\"/y\">y</a></li></ul>",
            "<blockquote>quote</blockquote>",
            "<p></p>",
            "<div>div text</div>",
            "<table><tr><td>a</td><td><a href=\"/z\">z</a></td></tr></table>",
            "<pre>pre\n formatted</pre>",
            "<br>",
            "<img src=i.png alt=img>",
            "<h2 id=x>id head</h2>",
        ];
        let wrappers = [
            ("<div>", "</div>"),
            ("<section>", "</section>"),
            ("<main>", "</main>"),
        ];
        let mut seed: u64 = 0x2545_f491;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % n
        };
        for _ in 0..20 {
            let mut page = String::new();
            let mut open = Vec::new();
            for _ in 0..60 {
                match next(10) {
                    0 if open.len() < 4 => {
                        let (start, end) = wrappers[next(wrappers.len())];
                        page.push_str(start);
                        open.push(end);
                    }
                    1 => page.push_str(open.pop().unwrap_or_default()),
                    _ => page.push_str(fragments[next(fragments.len())]),
                }
            }
            pages.push(page);
        }
        pages
    }

    #[test]
    fn text_rendered_in_groups_is_the_text_rendered_at_once() {
        let base = Url::parse("https://example.com/").unwrap();
        for page in grouping_pages() {
            let mut whole = String::new();
            text_in_groups(&page, Some(&base), usize::MAX, &mut |p: &str| {
                whole.push_str(p)
            });
            assert!(!whole.is_empty(), "{page}");
            for group_nodes in [1, 2, 3, 5, 8] {
                let mut grouped = String::new();
                text_in_groups(&page, Some(&base), group_nodes, &mut |p: &str| {
                    grouped.push_str(p)
                });
                assert_eq!(grouped, whole, "groups of {group_nodes} nodes:\n{page}");
            }
        }
    }

    #[test]
    fn tidy_trims_lines_and_folds_blank_runs() {
        for (text, tidied) in [
            ("", ""),
            ("\n \n\n", ""),
            ("a", "a\n"),
            ("a\n", "a\n"),
            ("\n\na  \n\n\n b\n\n", "a\n\n b\n"),
            ("x\n \n\t\ny\r\nz", "x\n\ny\nz\n"),
        ] {
            assert_eq!(tidy(text), tidied, "{text:?}");
        }
    }

    #[test]
    fn bodies_are_classified_by_type_then_bytes() {
        let html = b"<!doctype html><p>x</p>";
        assert_eq!(
            classify(Some("text/html; charset=utf-8"), b"x", UTF_8),
            Kind::Html
        );
        assert_eq!(
            classify(Some("application/xhtml+xml"), b"x", UTF_8),
            Kind::Html
        );
        assert_eq!(classify(None, html, UTF_8), Kind::Html);
        assert_eq!(
            classify(Some("application/octet-stream"), html, UTF_8),
            Kind::Html
        );
        assert_eq!(classify(Some("text/plain"), html, UTF_8), Kind::Text);
        assert_eq!(classify(Some("application/json"), b"{}", UTF_8), Kind::Text);
        assert_eq!(
            classify(Some("application/ld+json"), b"{}", UTF_8),
            Kind::Text
        );
        assert_eq!(
            classify(Some("image/svg+xml"), b"<svg/>", UTF_8),
            Kind::Text
        );
        assert_eq!(
            classify(Some("image/png"), b"not really", UTF_8),
            Kind::Binary
        );
        assert_eq!(classify(Some("font/woff2"), b"wOF2", UTF_8), Kind::Binary);
        assert_eq!(classify(Some("text/plain"), b"a\0b", UTF_8), Kind::Binary);
        assert_eq!(classify(None, b"plain words", UTF_8), Kind::Text);
        assert_eq!(classify(None, b"", UTF_8), Kind::Text);
        assert_eq!(classify(Some(""), b"x", UTF_8), Kind::Text);
        let gzip: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8 | 0x80)
            .collect();
        assert_eq!(
            classify(Some("application/octet-stream"), &gzip, UTF_8),
            Kind::Binary
        );
        let latin1 = b"caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade";
        assert_eq!(
            classify(Some("text/plain; charset=iso-8859-1"), latin1, UTF_8),
            Kind::Text
        );
        let cut = "ééé".as_bytes();
        assert!(!looks_binary(&cut[..5], UTF_8));
        // Text in a multi-byte charset: a declared text type stays text whatever the
        // charset (read as UTF-8 it is shown with replacements); without a type it is
        // taken for binary only when read as UTF-8.
        let page = "日本語のページです。".repeat(50);
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode(&page);
        for encoding in [UTF_8, encoding_rs::SHIFT_JIS] {
            assert_eq!(classify(Some("text/html"), &sjis, encoding), Kind::Html);
            assert_eq!(classify(Some("text/plain"), &sjis, encoding), Kind::Text);
        }
        let octets = Some("application/octet-stream");
        assert_eq!(classify(octets, &sjis, UTF_8), Kind::Binary);
        assert_eq!(classify(octets, &sjis, encoding_rs::SHIFT_JIS), Kind::Text);
        let utf16: Vec<u8> = "<p>plain words</p>\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(classify(Some("text/plain"), &utf16, UTF_8), Kind::Binary);
        assert_eq!(classify(Some("text/plain"), &utf16, UTF_16LE), Kind::Text);
        let nul16: Vec<u8> = "a\0b".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(classify(Some("text/plain"), &nul16, UTF_16BE), Kind::Binary);
        // A legacy charset does not make binary data text.
        assert_eq!(
            classify(
                Some("text/plain; charset=latin1"),
                b"a\0b",
                encoding_rs::WINDOWS_1252
            ),
            Kind::Binary
        );
        assert!(may_be_html(Some("text/html"), b"x"));
        assert!(may_be_html(None, html));
        assert!(!may_be_html(None, b"x"));
        assert!(!may_be_html(Some("text/plain"), html));
    }
}
