//! The parts of a message sent from the command line (`send`/`reply` `--data`, `--file`): the
//! 1.0 Part (spec section 4.5), which `a2a::v03` turns into a 0.3 `kind: "file"` part.

use std::path::Path;

use base64::Engine;

use super::Error;
use super::args::PartArgs;
use crate::a2a::{Part, PartContent};

/// The message's parts: the text first, if any, then every `--data`, then every `--file`.
pub fn message_parts(text: Option<String>, args: &PartArgs) -> Result<Vec<Part>, Error> {
    let mut parts: Vec<Part> = text.into_iter().map(Part::text).collect();
    for json in &args.data {
        let value = serde_json::from_str(json).map_err(|e| Error::Usage(format!("--data is not valid JSON: {e}")))?;
        parts.push(Part::data(value));
    }
    for path in &args.file {
        parts.push(file_part(path)?);
    }
    Ok(parts)
}

/// A raw part: the bytes in base64 (the JSON binding of `bytes`, spec section 4.5), the file's
/// name without its directories, and its media type.
fn file_part(path: &Path) -> Result<Part, Error> {
    let bytes =
        std::fs::read(path).map_err(|e| Error::Usage(format!("--file {}: cannot read it: {e}", path.display())))?;
    Ok(Part {
        content: PartContent::Raw(base64::engine::general_purpose::STANDARD.encode(bytes)),
        media_type: Some(media_type(path).to_string()),
        filename: path.file_name().map(|n| n.to_string_lossy().into_owned()),
        metadata: None,
    })
}

/// Extensions and their media types, both ways: guessed on send, and the extension a saved file
/// part gets from its media type when it has no name (`artifacts`).
pub const MEDIA_TYPES: &[(&str, &str)] = &[
    ("txt", "text/plain"),
    ("md", "text/markdown"),
    ("html", "text/html"),
    ("csv", "text/csv"),
    ("json", "application/json"),
    ("yaml", "application/yaml"),
    ("yml", "application/yaml"),
    ("toml", "application/toml"),
    ("xml", "application/xml"),
    ("pdf", "application/pdf"),
    ("zip", "application/zip"),
    ("gz", "application/gzip"),
    ("tar", "application/x-tar"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("svg", "image/svg+xml"),
    ("mp3", "audio/mpeg"),
    ("wav", "audio/wav"),
    ("mp4", "video/mp4"),
    ("diff", "text/x-diff"),
    ("patch", "text/x-diff"),
];

/// What the extension says, or `application/octet-stream` (bytes of no known kind).
pub fn media_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    MEDIA_TYPES
        .iter()
        .find(|(e, _)| *e == ext)
        .map_or("application/octet-stream", |(_, m)| m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_come_from_the_extension_whatever_its_case() {
        assert_eq!(media_type(Path::new("a/b/report.PDF")), "application/pdf");
        assert_eq!(media_type(Path::new("plot.png")), "image/png");
        assert_eq!(media_type(Path::new("Makefile")), "application/octet-stream");
        assert_eq!(media_type(Path::new("x.unknownext")), "application/octet-stream");
    }

    #[test]
    fn data_that_is_not_json_names_the_flag() {
        let args = PartArgs {
            data: vec!["{budget: 900}".into()],
            file: vec![],
        };
        let err = message_parts(None, &args).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(err.to_string().starts_with("--data is not valid JSON"), "{err}");
    }
}
