//! Agent text is untrusted: before any of it reaches a terminal, escape sequences and control
//! characters are removed, so a status message cannot move the cursor, retitle the window,
//! write to the clipboard (OSC 52) or hide text behind bidirectional overrides.
//! `escape_xml` does the same for the HTML and SVG a2a-watch writes (screenshots, the approval page).

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

/// Characters that show nothing, or pass for a plain space, where a name is read: the Unicode
/// format controls (general category Cf: zero-width space and joiners, bidi controls, the BOM,
/// soft hyphen, tags...), the line and paragraph separators (Zl, Zp), every space but U+0020 (Zs),
/// and the blank letters and marks outside those categories (Hangul fillers, the combining
/// grapheme joiner, Khmer's inherent vowels, variation selectors, the braille blank). The Cf
/// ranges are those of Unicode 16.0 (UnicodeData.txt), so no table crate is needed.
pub fn is_invisible(c: char) -> bool {
    // `is_whitespace` is White_Space: Zs, Zl, Zp and some controls.
    (c.is_whitespace() && c != ' ')
        || matches!(
            c,
            // Cf
            '\u{ad}'
                | '\u{600}'..='\u{605}'
                | '\u{61c}'
                | '\u{6dd}'
                | '\u{70f}'
                | '\u{890}'..='\u{891}'
                | '\u{8e2}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{206f}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{110bd}'
                | '\u{110cd}'
                | '\u{13430}'..='\u{1343f}'
                | '\u{1bca0}'..='\u{1bca3}'
                | '\u{1d173}'..='\u{1d17a}'
                | '\u{e0001}'
                | '\u{e0020}'..='\u{e007f}'
                // blank letters and marks
                | '\u{34f}'
                | '\u{115f}'..='\u{1160}'
                | '\u{17b4}'..='\u{17b5}'
                | '\u{2800}'
                | '\u{3164}'
                | '\u{fe00}'..='\u{fe0f}'
                | '\u{ffa0}'
                | '\u{e0100}'..='\u{e01ef}'
        )
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

/// Text for XML and HTML (screenshots, the approval page): the five special characters escaped,
/// characters XML 1.0 forbids replaced.
pub fn escape_xml(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
}

/// The start of `text`, at most `max` bytes, cut at a character boundary; true if it was cut.
pub fn head(text: &str, max: usize) -> (&str, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_specials_are_escaped_and_forbidden_characters_replaced() {
        let mut s = String::new();
        escape_xml("<a href=\"x\">&'\u{1b}\u{7}", &mut s);
        assert_eq!(s, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;\u{fffd}\u{fffd}");
    }

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

    #[test]
    fn invisible_characters_are_known_and_visible_ones_are_not() {
        for c in [
            '\u{200b}',
            '\u{200d}',
            '\u{2028}',
            '\u{2029}',
            '\u{feff}',
            '\u{ad}',
            '\u{2060}',
            '\u{202e}',
            '\u{a0}',
            '\u{3000}',
            '\u{3164}',
            '\u{fe0f}',
            '\u{e0041}',
            '\u{1d173}',
            '\u{85}',
        ] {
            assert!(is_invisible(c), "U+{:04X}", c as u32);
        }
        for c in [' ', 'a', 'é', '日', '✔', '-', '_', '\u{2010}'] {
            assert!(!is_invisible(c), "U+{:04X}", c as u32);
        }
    }
}
