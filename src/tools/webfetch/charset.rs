//! Which charset a text body is in, and the body decoded from it (encoding_rs).
//!
//! The charset is, in this order: the one a byte order mark names (UTF-8, UTF-16LE,
//! UTF-16BE: a BOM is unambiguous, and WHATWG lets it win over a header that servers often
//! set by default); the `charset` parameter of the `Content-Type` header; for an HTML page,
//! a `<meta charset="...">` or `<meta http-equiv="Content-Type" content="...;
//! charset=...">` within the first 1024 bytes (WHATWG's prescan, comments and other tags
//! skipped); else UTF-8. Labels are WHATWG encoding labels, so `latin1`, `iso-8859-1` and
//! `us-ascii` decode as windows-1252, as every browser does. A label nobody knows counts
//! as absent, and so does one that maps to WHATWG's `replacement` encoding (ISO-2022-KR and
//! the like), which exists to stop browsers from running script and would turn the whole
//! body into one U+FFFD. Bytes that are not valid in the chosen charset become U+FFFD, and
//! the decoding reports it (`metadata.lossy`).

use std::borrow::Cow;

use encoding_rs::{
    CoderResult, Encoding, REPLACEMENT, UTF_8, UTF_16BE, UTF_16LE, WINDOWS_1252, X_USER_DEFINED,
};

/// Bytes of an HTML page searched for a `<meta>` charset declaration.
const META_PRESCAN_BYTES: usize = 1024;

/// Where a charset came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A byte order mark at the start of the body.
    Bom,
    /// The `charset` parameter of `Content-Type`.
    Header,
    /// A `<meta>` element near the start of an HTML page.
    Meta,
    /// Nothing said: UTF-8.
    Default,
}

/// The charset of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Charset {
    /// The encoding used to decode the body.
    pub encoding: &'static Encoding,
    /// What named it.
    pub source: Source,
    /// Length of the byte order mark the body starts with (0 when none).
    pub bom: usize,
}

impl Charset {
    /// The WHATWG name of the encoding (`UTF-8`, `windows-1252`, `Shift_JIS`, ...).
    pub fn name(&self) -> &'static str {
        self.encoding.name()
    }
}

/// The charset of a body whose declared type is `content_type`; `html` says whether the
/// body is an HTML page, whose `<meta>` declarations count.
pub fn detect(content_type: Option<&str>, body: &[u8], html: bool) -> Charset {
    if let Some((encoding, bom)) = Encoding::for_bom(body) {
        return Charset {
            encoding,
            source: Source::Bom,
            bom,
        };
    }
    let found = |encoding, source| Charset {
        encoding,
        source,
        bom: 0,
    };
    if let Some(encoding) = content_type.and_then(header_charset) {
        return found(encoding, Source::Header);
    }
    if html && let Some(encoding) = meta_charset(&body[..body.len().min(META_PRESCAN_BYTES)]) {
        return found(encoding, Source::Meta);
    }
    found(UTF_8, Source::Default)
}

/// The encoding a `Content-Type` value's `charset` parameter names, when it is known.
fn header_charset(content_type: &str) -> Option<&'static Encoding> {
    content_type.split(';').skip(1).find_map(|parameter| {
        let (name, value) = parameter.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("charset") {
            return None;
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        usable(Encoding::for_label(value.as_bytes())?)
    })
}

/// An encoding worth decoding with: not WHATWG's `replacement`, which would reduce the
/// body to a single U+FFFD.
fn usable(encoding: &'static Encoding) -> Option<&'static Encoding> {
    (encoding != REPLACEMENT).then_some(encoding)
}

/// Decodes a body (byte order mark left out). `complete` is false for a body cut short:
/// then a character its last bytes only begin is left out rather than replaced. Returns the
/// text, borrowed when the bytes already are it (valid UTF-8, or ASCII in a charset that
/// extends ASCII), and whether bytes had to be replaced.
pub fn decode<'a>(body: &'a [u8], charset: &Charset, complete: bool) -> (Cow<'a, str>, bool) {
    let bytes = body.get(charset.bom..).unwrap_or_default();
    if complete {
        return charset.encoding.decode_without_bom_handling(bytes);
    }
    let mut decoder = charset.encoding.new_decoder_without_bom_handling();
    // ASCII and UTF-8 need exactly their length; other text grows and is given more room
    // as it needs it, rather than the worst case (three times the length) up front.
    let mut text = String::with_capacity(bytes.len() + 16);
    let mut read = 0;
    let mut lossy = false;
    loop {
        // Not the last call: a trailing partial character stays in the decoder, unreported.
        let (result, used, replaced) = decoder.decode_to_string(&bytes[read..], &mut text, false);
        read += used;
        lossy |= replaced;
        match result {
            CoderResult::InputEmpty => break,
            CoderResult::OutputFull => {
                let left = bytes.len() - read;
                text.reserve(left.max(text.capacity() / 2).max(16));
            }
        }
    }
    (Cow::Owned(text), lossy)
}

/// The encoding a `<meta>` element in the first bytes of an HTML page declares: WHATWG's
/// "prescan a byte stream to determine its encoding", over the bytes given.
fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let mut at = 0;
    while at < head.len() {
        let rest = &head[at..];
        if rest.starts_with(b"<!--") {
            // The comment's `<!--` may share its dashes with `-->`: `<!-->` ends at once.
            at = match memchr::memmem::find(&head[at + 2..], b"-->") {
                Some(end) => at + 2 + end + 3,
                None => return None,
            };
        } else if starts_with_ignore_case(rest, b"<meta")
            && rest.get(5).is_some_and(|&b| is_space(b) || b == b'/')
        {
            let (declared, next) = meta_element(head, at + 5);
            if declared.is_some() {
                return declared;
            }
            at = next;
        } else if rest.len() >= 2
            && rest[0] == b'<'
            && (rest[1].is_ascii_alphabetic()
                || rest[1] == b'/' && rest.get(2).is_some_and(u8::is_ascii_alphabetic))
        {
            // Another tag: its attributes are read so a `>` inside a quoted value does not
            // end it early.
            at = skip_tag(head, at + 1);
        } else if rest.starts_with(b"<!") || rest.starts_with(b"</") || rest.starts_with(b"<?") {
            at = memchr::memchr(b'>', &head[at..]).map_or(head.len(), |p| at + p + 1);
        } else {
            at += 1;
        }
    }
    None
}

/// Reads the attributes of a `<meta` element from `at` (just past its name): the encoding
/// it declares, if any, and where scanning goes on. The first of `charset` and a `content`
/// with a known charset counts; `content` only with `http-equiv="content-type"`.
fn meta_element(head: &[u8], mut at: usize) -> (Option<&'static Encoding>, usize) {
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let mut pragma = false;
    // None: nothing declared yet; Some(None): a `charset` attribute nobody knows, which
    // makes the element no use.
    let mut declared: Option<Option<&'static Encoding>> = None;
    let mut needs_pragma = false;
    let end = loop {
        let (name, value) = match attribute(head, at) {
            Ok((name, value, next)) => {
                at = next;
                (name, value)
            }
            Err(end) => break end,
        };
        if seen.contains(&name) {
            continue;
        }
        match name.as_slice() {
            b"http-equiv" => pragma |= value == b"content-type",
            b"content" if declared.is_none() => {
                if let Some(encoding) =
                    content_charset(&value).and_then(|l| Encoding::for_label(&l))
                {
                    declared = Some(Some(encoding));
                    needs_pragma = true;
                }
            }
            b"charset" if declared.is_none() => {
                declared = Some(Encoding::for_label(&value));
                needs_pragma = false;
            }
            _ => {}
        }
        seen.push(name);
    };
    let next = (end + 1).min(head.len());
    if needs_pragma && !pragma {
        return (None, next);
    }
    let encoding = declared.flatten().and_then(|encoding| {
        // A page whose `<meta>` could be read as ASCII is not UTF-16, whatever it says.
        if encoding == UTF_16LE || encoding == UTF_16BE {
            Some(UTF_8)
        } else if encoding == X_USER_DEFINED {
            Some(WINDOWS_1252)
        } else {
            usable(encoding)
        }
    });
    (encoding, next)
}

/// The charset label in a `content` attribute such as `text/html; charset=iso-8859-1`
/// (WHATWG's "extract a character encoding from a meta element").
fn content_charset(content: &[u8]) -> Option<Vec<u8>> {
    let mut at = 0;
    loop {
        let found = find_ignore_case(&content[at..], b"charset")?;
        at += found + b"charset".len();
        while content.get(at).copied().is_some_and(is_space) {
            at += 1;
        }
        if content.get(at) == Some(&b'=') {
            at += 1;
            break;
        }
    }
    while content.get(at).copied().is_some_and(is_space) {
        at += 1;
    }
    let rest = &content[at..];
    match rest.first() {
        Some(&quote @ (b'"' | b'\'')) => {
            let end = memchr::memchr(quote, &rest[1..])?;
            Some(rest[1..1 + end].to_vec())
        }
        Some(_) => {
            let end = rest
                .iter()
                .position(|&b| is_space(b) || b == b';')
                .unwrap_or(rest.len());
            Some(rest[..end].to_vec())
        }
        None => None,
    }
}

/// Skips a tag's name and attributes from `at` (just past its `<`): where scanning goes on.
fn skip_tag(head: &[u8], mut at: usize) -> usize {
    while at < head.len() && !is_space(head[at]) && head[at] != b'>' {
        at += 1;
    }
    loop {
        match attribute(head, at) {
            Ok((_, _, next)) => at = next,
            Err(end) => return (end + 1).min(head.len()),
        }
    }
}

/// One attribute: lower-cased name, lower-cased value, and where the next one starts.
type Attribute = (Vec<u8>, Vec<u8>, usize);

/// WHATWG's "get an attribute": the next attribute from `at`; when there is none, the
/// position of the tag's `>` (or the end of the bytes, the tag being unfinished).
fn attribute(head: &[u8], mut at: usize) -> Result<Attribute, usize> {
    let end = head.len();
    while head
        .get(at)
        .copied()
        .is_some_and(|b| is_space(b) || b == b'/')
    {
        at += 1;
    }
    match head.get(at) {
        None => return Err(end),
        Some(b'>') => return Err(at),
        Some(_) => {}
    }
    let mut name = Vec::new();
    loop {
        let &b = head.get(at).ok_or(end)?;
        match b {
            b'=' if !name.is_empty() => {
                at += 1;
                break;
            }
            b'/' | b'>' => return Ok((name, Vec::new(), at)),
            _ if is_space(b) => {
                while head.get(at).copied().is_some_and(is_space) {
                    at += 1;
                }
                if head.get(at) != Some(&b'=') {
                    return Ok((name, Vec::new(), at));
                }
                at += 1;
                break;
            }
            _ => {
                name.push(b.to_ascii_lowercase());
                at += 1;
            }
        }
    }
    while head.get(at).copied().is_some_and(is_space) {
        at += 1;
    }
    let mut value = Vec::new();
    match *head.get(at).ok_or(end)? {
        quote @ (b'"' | b'\'') => {
            at += 1;
            loop {
                let &b = head.get(at).ok_or(end)?;
                at += 1;
                if b == quote {
                    return Ok((name, value, at));
                }
                value.push(b.to_ascii_lowercase());
            }
        }
        b'>' => Ok((name, value, at)),
        _ => {
            while let Some(&b) = head.get(at) {
                if is_space(b) || b == b'>' {
                    return Ok((name, value, at));
                }
                value.push(b.to_ascii_lowercase());
                at += 1;
            }
            // The bytes ran out inside the value: the attribute is unfinished.
            Err(end)
        }
    }
}

fn is_space(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0c | b'\r' | b' ')
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn find_ignore_case(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{EUC_JP, ISO_8859_2, SHIFT_JIS, WINDOWS_1251};

    fn name(content_type: Option<&str>, body: &[u8], html: bool) -> (&'static str, Source) {
        let found = detect(content_type, body, html);
        (found.name(), found.source)
    }

    #[test]
    fn the_header_names_the_charset_with_whatwg_labels() {
        for (content_type, expected) in [
            ("text/html; charset=iso-8859-1", "windows-1252"),
            ("text/html; charset=ISO-8859-1", "windows-1252"),
            ("text/plain;charset=\"latin1\"", "windows-1252"),
            (
                "text/plain; format=flowed; charset = us-ascii ",
                "windows-1252",
            ),
            ("text/html; charset=Shift_JIS", "Shift_JIS"),
            ("text/html; charset=sjis", "Shift_JIS"),
            ("text/html; charset=windows-1251", "windows-1251"),
            ("text/html; charset=utf-16le", "UTF-16LE"),
            ("text/html; charset=utf8", "UTF-8"),
        ] {
            assert_eq!(
                name(Some(content_type), b"x", true),
                (expected, Source::Header),
                "{content_type}"
            );
        }
        for content_type in [
            "text/html",
            "text/html; charset=",
            "text/html; charset=klingon",
            "text/html; charset=iso-2022-kr",
            "text/html; xcharset=latin1",
            "charset=latin1",
        ] {
            assert_eq!(
                name(Some(content_type), b"x", true),
                ("UTF-8", Source::Default),
                "{content_type}"
            );
        }
    }

    #[test]
    fn a_byte_order_mark_wins_over_the_header() {
        let found = detect(
            Some("text/html; charset=iso-8859-1"),
            b"\xef\xbb\xbfcaf\xc3\xa9",
            true,
        );
        assert_eq!(
            (found.name(), found.source, found.bom),
            ("UTF-8", Source::Bom, 3)
        );
        assert_eq!(
            decode(b"\xef\xbb\xbfcaf\xc3\xa9", &found, true),
            (Cow::from("café"), false)
        );
        let utf16: Vec<u8> = [0xff, 0xfe]
            .into_iter()
            .chain("café".encode_utf16().flat_map(u16::to_le_bytes))
            .collect();
        let found = detect(None, &utf16, false);
        assert_eq!((found.name(), found.bom), ("UTF-16LE", 2));
        assert_eq!(decode(&utf16, &found, true), (Cow::from("café"), false));
    }

    #[test]
    fn html_pages_declare_their_charset_in_a_meta_element() {
        for (head, expected) in [
            (&b"<meta charset=\"iso-8859-1\">"[..], Some(WINDOWS_1252)),
            (
                b"<!doctype html><html><head><META CHARSET=Shift_JIS>",
                Some(SHIFT_JIS),
            ),
            (b"<meta charset='euc-jp'/>", Some(EUC_JP)),
            (
                b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1251\">",
                Some(WINDOWS_1251),
            ),
            (
                b"<meta content='text/html;charset=\"iso-8859-2\"' http-equiv=content-type>",
                Some(ISO_8859_2),
            ),
            // `content` without the pragma declares nothing.
            (b"<meta content=\"text/html; charset=iso-8859-2\">", None),
            (
                b"<meta name=description content=\"charset=iso-8859-2\">",
                None,
            ),
            // The first `charset` attribute counts, even with an unknown label.
            (b"<meta charset=klingon charset=latin1>", None),
            (b"<meta charset=utf-16>", Some(UTF_8)),
            (b"<meta charset=x-user-defined>", Some(WINDOWS_1252)),
            (b"<meta charset=iso-2022-kr>", None),
            // Comments, quoted `>` and other tags do not fool the scan.
            (
                b"<!-- <meta charset=latin1> --><meta charset=sjis>",
                Some(SHIFT_JIS),
            ),
            (b"<!--><meta charset=sjis>", Some(SHIFT_JIS)),
            (
                b"<div title='<meta charset=latin1>'><meta charset=sjis>",
                Some(SHIFT_JIS),
            ),
            (
                b"<metadata charset=latin1><meta charset=sjis>",
                Some(SHIFT_JIS),
            ),
            (b"<script>x</script><meta/charset=sjis>", Some(SHIFT_JIS)),
            (b"<!-- <meta charset=latin1>", None),
            (b"<meta charset=\"latin1", None),
            (b"<meta charset=latin1", None),
            (b"no tags at all", None),
            (b"", None),
        ] {
            assert_eq!(
                meta_charset(head),
                expected,
                "{}",
                String::from_utf8_lossy(head)
            );
        }
    }

    #[test]
    fn only_the_first_kilobyte_of_an_html_page_is_searched() {
        let mut page = b"<!doctype html><meta name=x>".to_vec();
        let late = |page: &[u8]| {
            let mut page = page.to_vec();
            page.resize(META_PRESCAN_BYTES, b' ');
            page.extend_from_slice(b"<meta charset=latin1>");
            page
        };
        assert_eq!(name(None, &late(&page), true), ("UTF-8", Source::Default));
        page.extend_from_slice(b"<meta charset=latin1>");
        assert_eq!(name(None, &page, true), ("windows-1252", Source::Meta));
        // The header wins over the page; and a page that is not HTML has no meta.
        let header = Some("text/html; charset=sjis");
        assert_eq!(name(header, &page, true), ("Shift_JIS", Source::Header));
        assert_eq!(name(None, &page, false), ("UTF-8", Source::Default));
    }

    #[test]
    fn bodies_decode_from_their_charset() {
        let latin1 = detect(Some("text/plain; charset=iso-8859-1"), b"", false);
        assert_eq!(
            decode(b"caf\xe9 \x80", &latin1, true),
            (Cow::from("café €"), false)
        );
        let sjis = detect(Some("text/plain; charset=shift_jis"), b"", false);
        let (bytes, _, _) = SHIFT_JIS.encode("日本語のテキスト");
        assert_eq!(
            decode(&bytes, &sjis, true),
            (Cow::from("日本語のテキスト"), false)
        );
        let utf8 = detect(None, b"", false);
        assert_eq!(
            decode(b"caf\xe9", &utf8, true),
            (Cow::from("caf\u{fffd}"), true)
        );
        assert_eq!(decode(b"", &utf8, true), (Cow::from(""), false));
        // Text that grows when decoded still decodes whole.
        let high = vec![0x80u8; 100_000];
        for complete in [true, false] {
            let (text, lossy) = decode(&high, &latin1, complete);
            assert!(!lossy && text.chars().count() == 100_000 && text.chars().all(|c| c == '€'));
        }
        // Valid UTF-8, and ASCII in a charset that extends it, are not copied.
        assert!(matches!(
            decode(b"ascii", &latin1, true).0,
            Cow::Borrowed("ascii")
        ));
        assert!(matches!(
            decode("é".as_bytes(), &utf8, true).0,
            Cow::Borrowed("é")
        ));
    }

    #[test]
    fn a_cut_body_loses_only_a_partial_last_character() {
        let utf8 = detect(None, b"", false);
        let text = "aé€😀".as_bytes();
        assert_eq!(decode(text, &utf8, false), (Cow::from("aé€😀"), false));
        for cut in 1..4 {
            let partial = &text[..text.len() - cut];
            assert_eq!(
                decode(partial, &utf8, false),
                ("aé€".into(), false),
                "cut {cut}"
            );
            assert_eq!(
                decode(partial, &utf8, true),
                (Cow::from("aé€\u{fffd}"), true)
            );
        }
        let sjis = detect(Some("text/plain; charset=sjis"), b"", false);
        let (bytes, _, _) = SHIFT_JIS.encode("日本");
        assert_eq!(decode(&bytes[..3], &sjis, false), (Cow::from("日"), false));
        let utf16 = detect(Some("text/plain; charset=utf-16be"), b"", false);
        assert_eq!(decode(b"\0a\0b\0", &utf16, false), (Cow::from("ab"), false));
    }
}
