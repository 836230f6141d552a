//! Images in results: the parts a result carries beside its text, each receiver's shape
//! for them, and an image file made fit to send.
//!
//! A result is its text (`output`) and, when it holds images, its [`Part`]s: the text and
//! the images in order. The text never holds an image's data: where an image stands it
//! says `[image N: LABEL]` ([`Image::placeholder`]), so a receiver that keeps only the text
//! (MCP's `structuredContent`, `--text`) refers to the image instead of repeating it.
//!
//! [`render`] turns the parts into the content list of one receiver ([`Shape`]):
//!
//! ```text
//! shape              text part                          image part
//! mcp                {"type":"text","text"}             {"type":"image","data","mimeType"}
//! openai (chat)      {"type":"text","text"}             {"type":"image_url","image_url":{"url": DATA_URI}}
//! openai-responses   {"type":"input_text","text"}       {"type":"input_image","image_url": DATA_URI}
//! anthropic          {"type":"text","text"}             {"type":"image","source":{"type":"base64","media_type","data"}}
//! gemini             {"text"}                           {"inlineData":{"mimeType","data"}}
//! gemini (snake)     {"text"}                           {"inline_data":{"mime_type","data"}}
//! ```
//!
//! When no part is text, the result's text follows the images as a last text part, so the
//! label (path, size, a downscale) reaches the model too.
//!
//! [`fit`] makes an image file fit to send: its format is judged by its content (PNG, JPEG,
//! GIF or WebP; the extension only chose to try), its header gives its size without
//! decoding anything, an image of more than [`Caps::max_pixels`] pixels is refused before
//! any decoding (a decompression bomb costs a header read), one of at most
//! [`Caps::max_bytes`] bytes is sent as it is, and a larger one is decoded within those
//! limits and downscaled until it fits (JPEG stays JPEG, the others become PNG; an EXIF
//! orientation is applied to the pixels, since the metadata that carried it is not kept).

use std::io::Cursor;

use base64::Engine;
use serde_json::{Value, json};

/// Largest image sent as it is, by default: 3.75 MiB, which is 5 MiB as base64 (the most
/// Anthropic's API takes per image, well within OpenAI's and Gemini's limits).
pub const DEFAULT_MAX_BYTES: u64 = 3 * 1024 * 1024 + 768 * 1024;
/// Most pixels an image may have, by default: 32 million (a 6,500 × 4,900 photo), 128 MB
/// decoded at four bytes a pixel.
pub const DEFAULT_MAX_PIXELS: u64 = 32_000_000;
/// Largest image file read at all: a file over it is refused unread.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// Longest side an image is sent with, by default: 8,000 pixels, the most Anthropic's API
/// takes (OpenAI and Gemini scale larger ones down themselves).
pub const DEFAULT_MAX_SIDE: u32 = 8000;
/// Images decoded at once in the whole process: each may take `max_pixels` × 8 bytes, so
/// sixteen calls reading large images at once must not hold sixteen of them.
const DECODING_AT_ONCE: usize = 2;

/// One piece of a result's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// Text.
    Text(String),
    /// An image.
    Image(Image),
}

/// An image ready to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime: String,
    /// The image's bytes, base64 (standard alphabet, padded).
    pub data: String,
    /// What the placeholder says about it: where it comes from, its size, a downscale.
    pub label: String,
}

impl Image {
    /// The image from its bytes.
    pub fn new(mime: &str, bytes: &[u8], label: String) -> Image {
        Image {
            mime: mime.to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            label,
        }
    }

    /// What stands in a result's text for the `n`-th image (1-based) of its parts.
    pub fn placeholder(&self, n: usize) -> String {
        format!("[image {n}: {}]", self.label)
    }

    /// The image as a `data:` URI.
    fn data_uri(&self) -> String {
        format!("data:{};base64,{}", self.mime, self.data)
    }
}

/// The text of `parts`: text parts as they are, each image as its placeholder on a line
/// of its own.
pub fn text_of(parts: &[Part]) -> String {
    let mut text = String::new();
    let mut n = 0;
    for part in parts {
        match part {
            Part::Text(t) => text.push_str(t),
            Part::Image(image) => {
                n += 1;
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&image.placeholder(n));
                text.push('\n');
            }
        }
    }
    text
}

/// The receiver a result's content is shaped for (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    /// MCP content blocks (also what a subcommand prints: the protocol's neutral shape).
    #[default]
    Mcp,
    /// OpenAI Chat Completions content parts.
    OpenAiChat,
    /// OpenAI Responses `function_call_output` items.
    OpenAiResponses,
    /// Anthropic `tool_result` content blocks.
    Anthropic,
    /// Gemini `Part`s, camelCase (REST, JavaScript).
    Gemini,
    /// Gemini `Part`s, snake_case (as the Python SDK dumps them).
    GeminiSnake,
}

/// `parts` as content in `shape`; `output` is the result's text, added as a last text part
/// when no part is text.
pub fn render(parts: &[Part], output: &str, shape: Shape) -> Vec<Value> {
    let mut content: Vec<Value> = parts.iter().map(|part| one(part, shape)).collect();
    if !parts.iter().any(|p| matches!(p, Part::Text(_))) {
        content.push(one(&Part::Text(output.to_string()), shape));
    }
    content
}

fn one(part: &Part, shape: Shape) -> Value {
    match (part, shape) {
        (Part::Text(text), Shape::Mcp | Shape::OpenAiChat | Shape::Anthropic) => {
            json!({"type": "text", "text": text})
        }
        (Part::Text(text), Shape::OpenAiResponses) => json!({"type": "input_text", "text": text}),
        (Part::Text(text), Shape::Gemini | Shape::GeminiSnake) => json!({"text": text}),
        (Part::Image(i), Shape::Mcp) => {
            json!({"type": "image", "data": i.data, "mimeType": i.mime})
        }
        (Part::Image(i), Shape::OpenAiChat) => {
            json!({"type": "image_url", "image_url": {"url": i.data_uri()}})
        }
        (Part::Image(i), Shape::OpenAiResponses) => {
            json!({"type": "input_image", "image_url": i.data_uri()})
        }
        (Part::Image(i), Shape::Anthropic) => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": i.mime, "data": i.data},
        }),
        (Part::Image(i), Shape::Gemini) => {
            json!({"inlineData": {"mimeType": i.mime, "data": i.data}})
        }
        (Part::Image(i), Shape::GeminiSnake) => {
            json!({"inline_data": {"mime_type": i.mime, "data": i.data}})
        }
    }
}

/// The caps an image is made to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Largest image sent: a larger one is downscaled until it fits (`images.max_bytes`).
    pub max_bytes: u64,
    /// Most pixels an image may have: a larger one is refused before decoding
    /// (`images.max_pixels`).
    pub max_pixels: u64,
    /// Longest side sent: a longer one is downscaled to it (`images.max_side`).
    pub max_side: u32,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            max_bytes: DEFAULT_MAX_BYTES,
            max_pixels: DEFAULT_MAX_PIXELS,
            max_side: DEFAULT_MAX_SIDE,
        }
    }
}

/// An image made fit to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fitted {
    /// Its type, judged by its content.
    pub mime: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Its width and height in pixels.
    pub size: (u32, u32),
    /// When it was downscaled: the original's width, height and bytes.
    pub downscaled_from: Option<(u32, u32, usize)>,
}

impl Fitted {
    /// A label for the placeholder: `NAME, MIME, WxH, N bytes`, and the downscale, naming
    /// the cap.
    pub fn label(&self, name: &str, caps: &Caps) -> String {
        let (w, h) = self.size;
        let mut label = format!("{name}, {}, {w}x{h}, {} bytes", self.mime, self.bytes.len());
        if let Some((ow, oh, ob)) = self.downscaled_from {
            let cap = if ow.max(oh) > caps.max_side {
                format!(
                    "the {}-pixel side cap (images.max_side in config.json raises it)",
                    caps.max_side
                )
            } else {
                format!(
                    "the {}-byte cap (images.max_bytes in config.json raises it)",
                    caps.max_bytes
                )
            };
            label.push_str(&format!(
                "; downscaled from {ow}x{oh} ({ob} bytes) to fit {cap}"
            ));
        }
        label
    }
}

/// The formats sent, with their types.
fn mime_of(format: image::ImageFormat) -> Option<&'static str> {
    match format {
        image::ImageFormat::Png => Some("image/png"),
        image::ImageFormat::Jpeg => Some("image/jpeg"),
        image::ImageFormat::Gif => Some("image/gif"),
        image::ImageFormat::WebP => Some("image/webp"),
        _ => None,
    }
}

/// Makes `bytes` (a whole image file) fit `caps`, or says why it cannot be sent: not an
/// image of a known format, a header that does not read, more pixels than the cap, or
/// data that does not decode (see the module doc). Never decodes more than
/// `caps.max_pixels` pixels.
pub fn fit(bytes: Vec<u8>, caps: &Caps) -> Result<Fitted, String> {
    let format = image::guess_format(&bytes).ok().and_then(|f| {
        let mime = mime_of(f)?;
        Some((f, mime))
    });
    let Some((format, mime)) = format else {
        return Err(format!(
            "not a PNG, JPEG, GIF or WebP image (its content is none of them; {} bytes)",
            bytes.len()
        ));
    };
    let mut reader = image::ImageReader::with_format(Cursor::new(&bytes), format);
    // Only the header is read here: the pixel cap below, not the decoder's memory limit,
    // judges what the header claims.
    reader.no_limits();
    let (width, height) = match reader.into_dimensions() {
        Ok(size) => size,
        // The PNG decoder sizes its buffers from the header before it says the size.
        Err(image::ImageError::Limits(_)) if format == image::ImageFormat::Png => {
            png_size(&bytes).ok_or_else(|| format!("a broken {} header", short(mime)))?
        }
        Err(err) => {
            return Err(format!(
                "a broken {} header: {}",
                short(mime),
                plain_error(&err)
            ));
        }
    };
    let pixels = u64::from(width) * u64::from(height);
    if width == 0 || height == 0 {
        return Err(format!(
            "the {} header says {width}x{height} pixels",
            short(mime)
        ));
    }
    if pixels > caps.max_pixels {
        return Err(format!(
            "{width}x{height} is {pixels} pixels, more than the {}-pixel cap (images.max_pixels \
             in config.json raises it); nothing was decoded",
            caps.max_pixels
        ));
    }
    let _slot = DecodeSlot::take();
    // Decoded whole even when it is sent as it is: a receiver refuses a request that holds
    // an image it cannot decode (a truncated file, a damaged chunk), and would refuse every
    // later request of the conversation that still holds it.
    let decoded = decode(&bytes, format, mime, (width, height), caps)?;
    if bytes.len() as u64 <= caps.max_bytes && width.max(height) <= caps.max_side {
        return Ok(Fitted {
            mime,
            bytes,
            size: (width, height),
            downscaled_from: None,
        });
    }
    downscale(decoded, bytes.len(), format, (width, height), caps)
}

/// The width and height a PNG's IHDR chunk (always the first) gives.
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.get(12..16)? != b"IHDR" {
        return None;
    }
    let word = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    Some((word(16)?, word(20)?))
}

/// An error of the image crate in words, without the debug dump some of them carry.
fn plain_error(err: &image::ImageError) -> String {
    let text = err.to_string();
    match text.find('{') {
        Some(at) => format!("{} (damaged data)", text[..at].trim_end()),
        None => text,
    }
}

/// A place among the [`DECODING_AT_ONCE`] decodes the process runs at once, held until
/// dropped.
struct DecodeSlot;

static DECODING: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
static DECODE_DONE: std::sync::Condvar = std::sync::Condvar::new();

impl DecodeSlot {
    fn take() -> DecodeSlot {
        let mut busy = DECODING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *busy >= DECODING_AT_ONCE {
            busy = DECODE_DONE
                .wait(busy)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *busy += 1;
        DecodeSlot
    }
}

impl Drop for DecodeSlot {
    fn drop(&mut self) {
        let mut busy = DECODING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *busy = busy.saturating_sub(1);
        DECODE_DONE.notify_one();
    }
}

/// `image/png` -> `PNG`.
fn short(mime: &str) -> String {
    mime.trim_start_matches("image/").to_ascii_uppercase()
}

/// Tries at most this many sizes before giving up.
const ATTEMPTS: usize = 8;
/// An image is never made smaller than this many pixels on its longer side.
const MIN_SIDE: u32 = 32;

/// Decodes `bytes` (its first frame) within the caps, its EXIF orientation applied.
fn decode(
    bytes: &[u8],
    format: image::ImageFormat,
    mime: &'static str,
    (width, height): (u32, u32),
    caps: &Caps,
) -> Result<image::DynamicImage, String> {
    let mut reader = image::ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(width);
    limits.max_image_height = Some(height);
    // Room for the decoded pixels at up to 8 bytes each (16-bit RGBA is the widest these
    // formats decode to), and nothing near a bomb's claim.
    limits.max_alloc = Some(caps.max_pixels.saturating_mul(8).max(64 * 1024 * 1024));
    reader.limits(limits);
    let broken = |err: image::ImageError| {
        format!(
            "the {} data does not decode: {}",
            short(mime),
            plain_error(&err)
        )
    };
    let mut decoder = reader.into_decoder().map_err(broken)?;
    // A photo's EXIF orientation would be lost with its metadata: turn the pixels instead.
    let orientation = image::ImageDecoder::orientation(&mut decoder)
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let mut decoded = image::DynamicImage::from_decoder(decoder).map_err(broken)?;
    decoded.apply_orientation(orientation);
    Ok(decoded)
}

/// Re-encodes `decoded` (of a file of `file_bytes`) smaller until it fits `caps`: its
/// longer side at most `caps.max_side`, its bytes at most `caps.max_bytes`.
fn downscale(
    decoded: image::DynamicImage,
    file_bytes: usize,
    format: image::ImageFormat,
    original: (u32, u32),
    caps: &Caps,
) -> Result<Fitted, String> {
    let (width, height) = (decoded.width(), decoded.height());
    let (out_mime, jpeg) = if format == image::ImageFormat::Jpeg {
        ("image/jpeg", true)
    } else {
        ("image/png", false)
    };
    // Encoded size grows with the pixels: start from the share that should fit, a little
    // under, and shrink again from what each attempt weighed.
    let by_side = f64::from(caps.max_side) / f64::from(width.max(height));
    let by_bytes = (caps.max_bytes as f64 / file_bytes as f64).sqrt() * 0.9;
    let mut scale = by_side.min(if file_bytes as u64 > caps.max_bytes {
        by_bytes
    } else {
        1.0
    });
    for _ in 0..ATTEMPTS {
        let w = ((f64::from(width) * scale).floor() as u32).clamp(1, caps.max_side);
        let h = ((f64::from(height) * scale).floor() as u32).clamp(1, caps.max_side);
        if w.max(h) < MIN_SIDE {
            break;
        }
        // Area averaging on the 8-bit pixels: no buffer of floats the size of the
        // original (a 31,000,000 x 1 strip took 587 MB that way).
        let small = decoded.thumbnail_exact(w, h);
        let encoded = encode(&small, jpeg)
            .map_err(|err| format!("the downscaled image does not encode: {err}"))?;
        if encoded.len() as u64 <= caps.max_bytes {
            return Ok(Fitted {
                mime: out_mime,
                bytes: encoded,
                size: (w, h),
                downscaled_from: Some((original.0, original.1, file_bytes)),
            });
        }
        scale *= (caps.max_bytes as f64 / encoded.len() as f64).sqrt() * 0.9;
    }
    Err(format!(
        "{file_bytes} bytes, over the {}-byte cap, and no downscale of it fits (images.max_bytes \
         in config.json raises the cap)",
        caps.max_bytes
    ))
}

/// `image` as JPEG (quality 85) or as 8-bit PNG (with alpha when it has any).
fn encode(image: &image::DynamicImage, jpeg: bool) -> image::ImageResult<Vec<u8>> {
    let mut out = Vec::new();
    if jpeg {
        let rgb = image.to_rgb8();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85).encode_image(&rgb)?;
    } else {
        let encoder = image::codecs::png::PngEncoder::new_with_quality(
            &mut out,
            image::codecs::png::CompressionType::Fast,
            image::codecs::png::FilterType::Adaptive,
        );
        if image.color().has_alpha() {
            image.to_rgba8().write_with_encoder(encoder)?;
        } else {
            image.to_rgb8().write_with_encoder(encoder)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A PNG of `w`x`h` pixels of noise (incompressible: about 3 bytes a pixel).
    fn noise_png(w: u32, h: u32) -> Vec<u8> {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let pixels: Vec<u8> = (0..w * h * 3)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let img = image::RgbImage::from_raw(w, h, pixels).unwrap();
        encode(&image::DynamicImage::ImageRgb8(img), false).unwrap()
    }

    #[test]
    fn a_small_image_is_sent_as_it_is_and_judged_by_its_content() {
        let png = noise_png(10, 4);
        let fitted = fit(png.clone(), &Caps::default()).unwrap();
        assert_eq!(
            (fitted.mime, fitted.size, fitted.bytes == png),
            ("image/png", (10, 4), true)
        );
        assert!(fitted.downscaled_from.is_none());
        assert!(
            fitted
                .label("a.jpg", &Caps::default())
                .starts_with("a.jpg, image/png, 10x4, ")
        );
    }

    #[test]
    fn a_large_image_is_downscaled_under_the_cap() {
        let png = noise_png(200, 150);
        let caps = Caps {
            max_bytes: 20_000,
            ..Caps::default()
        };
        let fitted = fit(png.clone(), &caps).unwrap();
        assert!(fitted.bytes.len() <= 20_000, "{}", fitted.bytes.len());
        assert_eq!(fitted.downscaled_from, Some((200, 150, png.len())));
        let (w, h) = fitted.size;
        assert!(w < 200 && h < 150 && (w as f64 / h as f64 - 4.0 / 3.0).abs() < 0.1);
        // The result is a PNG of that size.
        let back = image::load_from_memory(&fitted.bytes).unwrap();
        assert_eq!((back.width(), back.height()), (w, h));
        assert!(fitted.label("n.png", &caps).contains("images.max_bytes"));
    }

    #[test]
    fn a_large_jpeg_stays_a_jpeg() {
        let png = noise_png(120, 80);
        let decoded = image::load_from_memory(&png).unwrap();
        let mut jpeg = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 100)
            .encode_image(&decoded.to_rgb8())
            .unwrap();
        let caps = Caps {
            max_bytes: jpeg.len() as u64 / 3,
            ..Caps::default()
        };
        let fitted = fit(jpeg, &caps).unwrap();
        assert_eq!(fitted.mime, "image/jpeg");
        assert!(fitted.bytes.len() as u64 <= caps.max_bytes);
        assert_eq!(
            image::guess_format(&fitted.bytes).unwrap(),
            image::ImageFormat::Jpeg
        );
    }

    #[test]
    fn bad_images_are_refused_with_a_reason_never_decoded_past_the_cap() {
        assert!(
            fit(b"\x89PNG\r\n\x1a\n1234".to_vec(), &Caps::default())
                .unwrap_err()
                .contains("broken PNG header")
        );
        assert!(
            fit(b"hello".to_vec(), &Caps::default())
                .unwrap_err()
                .contains("not a PNG, JPEG, GIF or WebP")
        );
        // A header claiming 100000 x 100000 pixels: refused from the header alone.
        let mut bomb = noise_png(4, 4);
        bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        // The IHDR's CRC no longer matches: fix it so only the size is wrong.
        let crc = crc32fast::hash(&bomb[12..29]);
        bomb[29..33].copy_from_slice(&crc.to_be_bytes());
        let err = fit(bomb, &Caps::default()).unwrap_err();
        assert!(
            err.contains("100000x100000") && err.contains("images.max_pixels"),
            "{err}"
        );
        // A valid header over truncated data, over the byte cap so it must decode.
        let mut cut = noise_png(64, 64);
        cut.truncate(cut.len() / 2);
        let caps = Caps {
            max_bytes: 100,
            ..Caps::default()
        };
        assert!(fit(cut, &caps).unwrap_err().contains("does not decode"));
    }

    #[test]
    fn parts_render_in_each_shape_and_the_text_refers_to_images() {
        let image = Image::new("image/png", b"abc", "a.png, image/png, 1x1, 3 bytes".into());
        let parts = vec![Part::Image(image.clone())];
        let text = text_of(&parts);
        assert_eq!(text, "[image 1: a.png, image/png, 1x1, 3 bytes]\n");
        assert!(!text.contains("YWJj"));
        let first = |shape| render(&parts, &text, shape)[0].clone();
        assert_eq!(
            first(Shape::Mcp),
            json!({"type": "image", "data": "YWJj", "mimeType": "image/png"})
        );
        assert_eq!(
            first(Shape::Anthropic)["source"],
            json!({"type": "base64", "media_type": "image/png", "data": "YWJj"})
        );
        assert_eq!(
            first(Shape::OpenAiChat)["image_url"]["url"],
            "data:image/png;base64,YWJj"
        );
        assert_eq!(first(Shape::OpenAiResponses)["type"], "input_image");
        assert_eq!(first(Shape::Gemini)["inlineData"]["mimeType"], "image/png");
        assert_eq!(
            first(Shape::GeminiSnake)["inline_data"]["mime_type"],
            "image/png"
        );
        // No text part: the text follows as one.
        assert_eq!(
            render(&parts, &text, Shape::Anthropic)[1],
            json!({"type": "text", "text": text})
        );
        let mixed = vec![
            Part::Text("a\n".into()),
            Part::Image(image),
            Part::Text("b\n".into()),
        ];
        assert_eq!(render(&mixed, "", Shape::Mcp).len(), 3);
        assert_eq!(
            text_of(&mixed),
            "a\n[image 1: a.png, image/png, 1x1, 3 bytes]\nb\n"
        );
    }
}
