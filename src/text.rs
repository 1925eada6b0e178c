//! Agent text is untrusted: before any of it reaches a terminal, escape sequences and control
//! characters are removed, so a status message cannot move the cursor, retitle the window,
//! write to the clipboard (OSC 52) or hide text behind bidirectional overrides.

/// Removes escape sequences (CSI, OSC, DCS and the rest), C0/C1 controls except newline and tab,
/// and bidi controls (overrides, isolates and the LRM/RLM/ALM marks); tabs become spaces.
pub fn sanitize(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters, then one final byte in @..~
                Some('[') => skip_csi(&mut chars),
                // OSC, DCS, SOS, PM, APC: a string up to BEL or ST (ESC \)
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            '\t' => out.push_str("    "),
            '\n' => out.push('\n'),
            '\r' => {}
            c if c.is_control() => {}
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {}
            c => out.push(c),
        }
    }
    out
}

/// One line for a table cell: sanitized, line breaks folded into spaces.
pub fn one_line(input: &str) -> String {
    let clean = sanitize(input);
    let mut out = String::with_capacity(clean.len());
    for word in clean.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' if chars.peek() == Some(&'\\') => {
                chars.next();
                break;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_sequences_are_removed() {
        assert_eq!(sanitize("ok\x1b[2J\x1b[1;1Hdone"), "okdone");
        assert_eq!(sanitize("a\x1b]0;pwned\x07b"), "ab", "window title");
        assert_eq!(sanitize("a\x1b]52;c;aGVsbG8=\x1b\\b"), "ab", "clipboard write");
        assert_eq!(sanitize("x\u{9b}31my"), "xy", "8-bit CSI");
        assert_eq!(sanitize("bell\x07 back\x08space\r"), "bell backspace");
        assert_eq!(sanitize("evil\u{202e}txt.exe"), "eviltxt.exe");
        assert_eq!(sanitize("a\u{200f}b\u{200e}c\u{61c}d\u{2067}e"), "abcde", "bidi marks");
        assert_eq!(sanitize("tab\there\nline"), "tab    here\nline");
    }

    #[test]
    fn plain_text_and_unicode_survive() {
        assert_eq!(
            sanitize("1 failed, 11 passed ✔ — déjà vu 日本"),
            "1 failed, 11 passed ✔ — déjà vu 日本"
        );
        assert_eq!(one_line("two\nlines\x1b[31m  red"), "two lines red");
    }
}
