//! `get --save-artifacts DIR`: a task's artifacts as files. Every name comes from the agent and
//! is hostile: it is cut down to one plain file name inside DIR (no separators, no `..`, no
//! control characters, bounded), and an existing file is kept (the new one gets a suffix) unless
//! `--force` replaces it.

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::Serialize;

use super::Error;
use super::parts::MEDIA_TYPES;
use crate::a2a::{Artifact, Part, PartContent};
use crate::text::{is_invisible, one_line};

/// Bytes a file name keeps at most, before a suffix and an extension: well under the 255 of
/// common file systems.
const NAME_BYTES: usize = 100;

/// Suffixes tried for a name already taken before giving up.
const MAX_SUFFIX: usize = 1000;

/// What `save` did, for people and for `--json`.
#[derive(Debug, Default, Serialize)]
pub struct Saved {
    pub files: Vec<SavedFile>,
    /// URL parts: listed, never fetched (the agent chose the URL).
    pub urls: Vec<SavedUrl>,
    /// Parts not written: of a kind we cannot write, or file parts whose bytes do not decode.
    pub skipped: Vec<SkippedPart>,
}

#[derive(Debug, Serialize)]
pub struct SavedFile {
    pub artifact: String,
    pub path: PathBuf,
    pub bytes: usize,
}

#[derive(Debug, Serialize)]
pub struct SavedUrl {
    pub artifact: String,
    pub url: String,
}

#[derive(Debug, Serialize)]
pub struct SkippedPart {
    pub artifact: String,
    /// The part's place in the artifact, from 1.
    pub part: usize,
    pub reason: &'static str,
}

impl Saved {
    /// One line per file written, URL listed and part skipped; agent text sanitised.
    pub fn describe(&self) -> String {
        let mut out = String::new();
        for f in &self.files {
            out.push_str(&format!("wrote {} ({} bytes)\n", f.path.display(), f.bytes));
        }
        for u in &self.urls {
            out.push_str(&format!("url   {} (artifact {}, not fetched)\n", u.url, u.artifact));
        }
        for s in &self.skipped {
            out.push_str(&format!(
                "skipped part {} of artifact {}: {}\n",
                s.part, s.artifact, s.reason
            ));
        }
        if out.is_empty() {
            out.push_str("the task has no artifacts; nothing written\n");
        }
        out
    }
}

/// Writes every part of every artifact into `dir` (made if missing).
pub fn save(artifacts: &[Artifact], dir: &Path, force: bool) -> Result<Saved, Error> {
    let io = |what: String| move |source| Error::Io { what, source };
    fs::create_dir_all(dir).map_err(io(format!("cannot make {}", dir.display())))?;
    let mut saved = Saved::default();
    let mut taken = HashSet::new();
    for artifact in artifacts {
        let label = one_line(artifact.name.as_deref().unwrap_or(&artifact.artifact_id));
        let stem = file_name(artifact.name.as_deref().unwrap_or(&artifact.artifact_id), "artifact");
        for (index, part) in artifact.parts.iter().enumerate() {
            let stem = if artifact.parts.len() > 1 {
                format!("{stem}-{}", index + 1)
            } else {
                stem.clone()
            };
            let (name, bytes) = match contents(part, &stem) {
                Contents::File(name, bytes) => (name, bytes),
                Contents::Url(url) => {
                    saved.urls.push(SavedUrl {
                        artifact: label.clone(),
                        url: one_line(url),
                    });
                    continue;
                }
                // One part that cannot be written does not cost the others.
                Contents::Skipped(reason) => {
                    saved.skipped.push(SkippedPart {
                        artifact: label.clone(),
                        part: index + 1,
                        reason,
                    });
                    continue;
                }
            };
            let path = write_new(dir, &name, &bytes, force, &mut taken)?;
            saved.files.push(SavedFile {
                artifact: label.clone(),
                path,
                bytes: bytes.len(),
            });
        }
    }
    Ok(saved)
}

/// What becomes of one part.
enum Contents<'a> {
    /// Written under this name.
    File(String, Vec<u8>),
    /// Listed, never fetched.
    Url(&'a str),
    /// Not written, for this reason.
    Skipped(&'static str),
}

fn contents<'a>(part: &'a Part, stem: &str) -> Contents<'a> {
    match &part.content {
        PartContent::Text(text) => Contents::File(format!("{stem}.txt"), text.clone().into_bytes()),
        PartContent::Data(value) => {
            let mut json = serde_json::to_string_pretty(value).unwrap_or_default();
            json.push('\n');
            Contents::File(format!("{stem}.json"), json.into_bytes())
        }
        PartContent::Raw(b64) => {
            let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(b64.trim()) else {
                return Contents::Skipped("its bytes are not valid base64");
            };
            let name = match &part.filename {
                Some(name) => file_name(name, stem),
                None => format!("{stem}.{}", extension(part.media_type.as_deref())),
            };
            Contents::File(name, bytes)
        }
        PartContent::Url(url) => Contents::Url(url),
        PartContent::Unsupported(_) => Contents::Skipped("not text, data, a file or a URL"),
    }
}

/// The extension for a media type we know, `bin` otherwise.
fn extension(media_type: Option<&str>) -> &'static str {
    let media_type = media_type.unwrap_or_default();
    // Parameters (`; charset=utf-8`) say nothing about the extension.
    let essence = media_type.split(';').next().unwrap_or_default().trim();
    MEDIA_TYPES
        .iter()
        .find(|(_, m)| m.eq_ignore_ascii_case(essence))
        .map_or("bin", |(e, _)| e)
}

/// One plain file name from agent text: separators, controls, invisible characters and characters
/// file systems refuse become `_`, leading dots go (no `..`, no hidden files), a Windows device
/// name becomes `_`, and it is cut to `NAME_BYTES` on a character boundary. `fallback` when
/// nothing is left.
pub fn file_name(agent_text: &str, fallback: &str) -> String {
    let cleaned: String = agent_text
        .chars()
        .map(|c| match c {
            '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|' => '_',
            c if c.is_control() => '_',
            // Bidi controls would show the name in another order than it is; zero-width and
            // blank characters would hide part of it, or make two names look the same.
            c if is_invisible(c) => '_',
            c => c,
        })
        .collect();
    let trimmed = cleaned.trim_start_matches(['.', ' ']).trim_end_matches(['.', ' ']);
    let mut end = trimmed.len().min(NAME_BYTES);
    while !trimmed.is_char_boundary(end) {
        end -= 1;
    }
    let name = trimmed[..end].trim_end_matches(['.', ' ']);
    if name.is_empty() {
        return fallback.to_string();
    }
    // Windows opens the device whatever the extension: `nul.txt` is NUL. Suffixes and extensions
    // added later cannot make a device name: they come after a `-` or a dot.
    let (base, extension) = name.split_at(name.find('.').unwrap_or(name.len()));
    if is_windows_device(base) {
        format!("_{extension}")
    } else {
        name.to_string()
    }
}

/// Names Windows reserves for devices, in any case, and with trailing spaces (which Windows
/// drops): CON, PRN, AUX, NUL, COM0-9, LPT0-9, with superscript 1-3 too, and the console's CONIN$
/// and CONOUT$ ("Naming Files, Paths, and Namespaces", Microsoft's Win32 documentation).
fn is_windows_device(base: &str) -> bool {
    let base = base.trim_end_matches(' ').to_ascii_uppercase();
    let numbered = |prefix: &str| {
        base.strip_prefix(prefix).is_some_and(|n| {
            let mut digits = n.chars();
            matches!(
                (digits.next(), digits.next()),
                (Some('0'..='9' | '¹' | '²' | '³'), None)
            )
        })
    };
    matches!(base.as_str(), "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$") || numbered("COM") || numbered("LPT")
}

/// Writes a new file named `name` (or `name-2.ext`, ... when taken) in `dir`. `create_new`
/// never follows a link planted at the path; `--force` removes what is there first, so it
/// replaces a link rather than writing through it.
fn write_new(dir: &Path, name: &str, bytes: &[u8], force: bool, taken: &mut HashSet<String>) -> Result<PathBuf, Error> {
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    for n in 1..=MAX_SUFFIX {
        let candidate = if n == 1 {
            name.to_string()
        } else {
            format!("{stem}-{n}{ext}")
        };
        // Two parts of this one run never share a file, --force or not.
        if !taken.insert(candidate.clone()) {
            continue;
        }
        let path = dir.join(&candidate);
        if force && let Ok(meta) = fs::symlink_metadata(&path) {
            if meta.is_dir() {
                continue;
            }
            fs::remove_file(&path).map_err(|source| Error::Io {
                what: format!("cannot replace {}", path.display()),
                source,
            })?;
        }
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                file.write_all(bytes).map_err(|source| Error::Io {
                    what: format!("cannot write {}", path.display()),
                    source,
                })?;
                return Ok(path);
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(source) => {
                return Err(Error::Io {
                    what: format!("cannot write {}", path.display()),
                    source,
                });
            }
        }
    }
    Err(Error::Io {
        what: format!("cannot write {name} in {}", dir.display()),
        source: std::io::Error::new(ErrorKind::AlreadyExists, "every suffix up to 1000 is taken"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_become_one_plain_file_name() {
        assert_eq!(file_name("../../etc/passwd", "x"), "_.._etc_passwd");
        assert_eq!(file_name("..", "x"), "x");
        assert_eq!(file_name(".bashrc", "x"), "bashrc");
        assert_eq!(file_name("a\u{1b}[31mred\u{7}.txt", "x"), "a_[31mred_.txt");
        assert_eq!(file_name("C:\\Windows\\win.ini", "x"), "C__Windows_win.ini");
        assert_eq!(file_name("evil\u{202e}txt.exe", "x"), "evil_txt.exe");
        let long = "é".repeat(300);
        let cut = file_name(&long, "x");
        assert!(cut.len() <= NAME_BYTES && cut.chars().all(|c| c == 'é'), "{cut}");
        assert_eq!(file_name(" . ", "x"), "x");
    }

    #[test]
    fn windows_device_names_and_invisible_characters_become_underscores() {
        for device in [
            "CON",
            "nul",
            "nul.txt",
            "Aux.tar.gz",
            "COM1",
            "lpt9.log",
            "COM¹",
            "LPT³.x",
            "CON .txt",
            "prn.",
            "conin$",
        ] {
            let name = file_name(device, "x");
            assert!(name == "_" || name.starts_with("_."), "{device:?} became {name:?}");
        }
        assert_eq!(file_name("nul.txt", "x"), "_.txt");
        for kept in ["CONSOLE", "COM10", "LPT", "null.txt", "a.con", "com-1", "COM1x"] {
            assert_eq!(file_name(kept, "x"), kept);
        }
        assert_eq!(file_name("pay\u{200b}roll\u{2028}.pdf", "x"), "pay_roll_.pdf");
        assert_eq!(file_name("\u{feff}\u{2060}", "x"), "__");
    }

    #[test]
    fn saved_file_parts_take_an_extension_from_their_media_type() {
        assert_eq!(extension(Some("application/pdf")), "pdf");
        assert_eq!(extension(Some("text/plain; charset=utf-8")), "txt");
        assert_eq!(extension(Some("application/x-unheard-of")), "bin");
        assert_eq!(extension(None), "bin");
    }
}
