//! What the dashboard does outside its own screen: the terminal title, the bell, desktop
//! notifications (OSC 9 and OSC 777), the clipboard (OSC 52, which works over SSH and in tmux,
//! plus the native clipboard where there is one), and opening links in the browser. The `App`
//! only asks for these; the loop carries them out, so the app stays pure.

use std::io::Write;

use base64::Engine as _;

use crate::a2a::{Message, Part, PartContent};
use crate::text::{head, one_line};

/// How much of a status message is searched for links.
const LINK_SCAN_BYTES: usize = 16 * 1024;

/// The longest link opened or copied, in bytes: what browsers and servers take in practice.
const MAX_LINK: usize = 2048;

/// Is `link` a web link that may be opened or copied: `http` or `https` with a host, as the
/// `url` crate parses it, and shown exactly as it is (no control, bidi or blank character that
/// sanitising for the screen would change). Anything else (`file:`, `javascript:`, custom
/// schemes, bare paths) is only ever shown as text. A link too long to be shown whole is not one.
pub fn is_web_link(link: &str) -> bool {
    if link.len() > MAX_LINK {
        return false;
    }
    let lower = link.get(..8).unwrap_or(link).to_ascii_lowercase();
    let web_scheme = lower.starts_with("http://") || lower.starts_with("https://");
    let shown_as_is = one_line(link) == link && !link.contains(char::is_whitespace);
    web_scheme
        && shown_as_is
        && url::Url::parse(link).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}

/// The links of a status message, found in its first few kilobytes: a huge message costs no more.
pub fn links(m: &Message) -> Vec<String> {
    let mut budget = LINK_SCAN_BYTES;
    let parts = m
        .parts
        .iter()
        .take(32)
        .map(|p| match &p.content {
            PartContent::Text(text) => {
                let (start, _) = head(text, budget);
                budget -= start.len();
                Part::text(start)
            }
            _ => p.clone(),
        })
        .collect();
    Message {
        parts,
        ..Message::default()
    }
    .links()
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    Title(String),
    Bell,
    Notify(String),
    Copy(String),
    Open(String),
    /// The screen as SVG in the current directory: the loop draws it (`run::shot`), the app cannot.
    Screenshot,
}

/// The escape sequences an effect writes to the terminal, if any. Text from agents is made a
/// single clean line first, so it cannot end the sequence early or smuggle another one in.
pub fn sequence(effect: &Effect) -> Option<String> {
    match effect {
        Effect::Title(t) => Some(format!("\x1b]0;{}\x07", one_line(t))),
        Effect::Bell => Some("\x07".into()),
        Effect::Notify(text) => {
            let text = one_line(text).replace(';', ",");
            // OSC 9 (iTerm2, Windows Terminal, kitty) and OSC 777 (rxvt, foot, WezTerm).
            Some(format!("\x1b]9;{text}\x07\x1b]777;notify;a2a-watch;{text}\x07"))
        }
        // The last line of defence: only web links reach the clipboard (see `is_web_link`).
        Effect::Copy(text) if !is_web_link(text) => None,
        Effect::Copy(text) => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
            Some(format!("\x1b]52;c;{encoded}\x07"))
        }
        Effect::Open(_) | Effect::Screenshot => None,
    }
}

/// Carries an effect out; what cannot be done here is said in the returned message.
pub fn perform(effect: &Effect, out: &mut impl Write) -> Result<(), String> {
    if let Some(seq) = sequence(effect) {
        out.write_all(seq.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|e| e.to_string())?;
    }
    match effect {
        Effect::Open(link) | Effect::Copy(link) if !is_web_link(link) => {
            Err(format!("not a web link, not opened or copied: {}", one_line(link)))
        }
        Effect::Copy(text) => {
            // The native clipboard as well, where one exists (not on a headless machine).
            if let Ok(mut clipboard) = arboard::Clipboard::new() {
                let _ = clipboard.set_text(text.clone());
            }
            Ok(())
        }
        Effect::Open(url) => open::that_detached(url).map_err(|e| format!("could not open {}: {e}", one_line(url))),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_are_well_formed_and_agent_text_cannot_break_out() {
        assert_eq!(
            sequence(&Effect::Copy("http://x/approve/1".into())).unwrap(),
            "\x1b]52;c;aHR0cDovL3gvYXBwcm92ZS8x\x07"
        );
        let evil = Effect::Notify("done\x07\x1b]52;c;ZXZpbA==\x07; rm -rf".into());
        let seq = sequence(&evil).unwrap();
        assert_eq!(seq.matches('\x07').count(), 2, "only our own terminators: {seq:?}");
        assert!(!seq.contains("52;c"), "{seq:?}");
        assert_eq!(
            sequence(&Effect::Title("a2a-watch (2 waiting)".into())).unwrap(),
            "\x1b]0;a2a-watch (2 waiting)\x07"
        );
    }

    #[test]
    fn only_web_links_are_opened_or_copied() {
        for ok in ["http://127.0.0.1:41243/approve/1", "https://ops.example/a?b=c#d"] {
            assert!(is_web_link(ok), "{ok}");
        }
        for bad in [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "vscode://open?x",
            "/approve/1",
            "ops.example/approve",
            "http://",
            "https://ops.example/a\u{1b}]52;c;eA==\u{7}",
            "https://ops.example/\u{202e}gpj.exe",
            "https://ops.example/a b",
            "HTTP:/x",
        ] {
            assert!(!is_web_link(bad), "{bad:?}");
            assert_eq!(sequence(&Effect::Copy(bad.into())), None, "{bad:?}");
            let mut out = Vec::new();
            for effect in [Effect::Open(bad.into()), Effect::Copy(bad.into())] {
                let err = perform(&effect, &mut out).unwrap_err();
                assert!(err.contains("not a web link"), "{err}");
            }
            assert!(out.is_empty(), "nothing written for {bad:?}");
        }
    }
}
