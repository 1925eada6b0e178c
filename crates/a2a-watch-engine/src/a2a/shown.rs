//! The one form in which a URL leaves a2a-watch: on screen, in `--json`, in messages, logs,
//! recordings and anything exported. User info, query and fragment are dropped, as a key or a
//! password often rides there (`?key=…`, `user:pass@`) and a server may echo it back
//! (README "Security"). [`ShownUrl`] can be built only here, so a raw URL cannot reach output by
//! mistake: every place that prints, records or stores a URL for display takes a `ShownUrl`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};
use url::Url;

/// A URL as shown: scheme, host, port and path; or a card file's path as given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct ShownUrl(String);

impl ShownUrl {
    /// The URL without user info, query or fragment.
    pub fn of(url: &Url) -> ShownUrl {
        let mut shown = url.clone();
        shown.set_query(None);
        shown.set_fragment(None);
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        ShownUrl(shown.into())
    }

    /// What the user (or a card) wrote where a URL goes: a card file's path as it is, a URL as
    /// [`ShownUrl::of`] shows it, text that does not parse as [`ShownUrl::of_unparsed`] does.
    pub fn of_input(input: &str) -> ShownUrl {
        if super::discovery::is_card_file(input) {
            return ShownUrl(input.to_string());
        }
        match super::discovery::parse_url(input) {
            Ok(url) => ShownUrl::of(&url),
            Err(_) => ShownUrl::of_unparsed(input),
        }
    }

    /// A URL written elsewhere (a card's interface, a recording), possibly relative: parsed if
    /// absolute, cut as text otherwise. No file system is looked at.
    pub fn of_written(text: &str) -> ShownUrl {
        Url::parse(text).map_or_else(|_| ShownUrl::of_unparsed(text), |url| ShownUrl::of(&url))
    }

    /// Text meant as a URL that does not parse: only what lies after the last `@` (a password
    /// may hold `/`, `?` or `#`) and before the first `?` or `#` (a query may hold `@`). When an
    /// `@` comes after a `?` or `#` there is no telling which of the two it is, so only the scheme
    /// is shown: not leaking comes before showing.
    pub fn of_unparsed(text: &str) -> ShownUrl {
        // A scheme is letters, digits, `+`, `-` and `.` (RFC 3986 §3.1); anything else before a
        // `://` (a query holding a URL, say) is not one, and is cut like the rest.
        let (scheme, rest) = match text.split_once("://") {
            Some((scheme, rest))
                if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                    && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
            {
                (format!("{scheme}://"), rest)
            }
            _ => (String::new(), text),
        };
        let after_user_info = rest.rfind('@').map_or(0, |at| at + 1);
        let query = rest.find(['?', '#']).unwrap_or(rest.len());
        if after_user_info > query {
            return ShownUrl(format!("{scheme}…"));
        }
        ShownUrl(format!("{scheme}{}", &rest[after_user_info..query]))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for ShownUrl {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ShownUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A URL as the user gave it (a flag, the config), query and all, for connecting to the agent:
/// it derefs to the text given, and its `Debug` shows only [`ShownUrl::of_input`], so a key in
/// its query cannot reach a log through a struct holding it.
#[derive(Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(transparent)]
pub struct GivenUrl(String);

impl GivenUrl {
    pub fn new(given: impl Into<String>) -> GivenUrl {
        GivenUrl(given.into())
    }
}

impl std::ops::Deref for GivenUrl {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for GivenUrl {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for GivenUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(ShownUrl::of_input(&self.0).as_str(), f)
    }
}

/// Read back (a recording) through the same cut: a file written by an older version, or edited
/// by hand, yields the shown form too.
impl<'de> Deserialize<'de> for ShownUrl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<ShownUrl, D::Error> {
        Ok(ShownUrl::of_written(&String::deserialize(deserializer)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_urls_drop_what_could_echo_a_secret() {
        let url = Url::parse("https://u:p@h:8/x?k=s3cret#f").unwrap();
        assert_eq!(ShownUrl::of(&url).as_str(), "https://h:8/x");
        assert_eq!(ShownUrl::of_input("h:9/a2a?key=s3cret").as_str(), "http://h:9/a2a");
        // User info is refused by parse_url; shown without it all the same.
        assert_eq!(ShownUrl::of_input("https://u:s3cret@h/a?k=1").as_str(), "https://h/a");
        assert_eq!(ShownUrl::of_input("http://[bad@h/x?key=s3cret").as_str(), "http://h/x");
        assert_eq!(ShownUrl::of_written("/a2a?key=s3cret").as_str(), "/a2a");
    }

    #[test]
    fn text_that_does_not_parse_shows_neither_a_password_nor_a_query() {
        for (input, shown) in [
            // A password holding `/` or `?`: the authority seems to end inside it.
            ("https://user:ab/cd==@h/a2a", "https://h/a2a"),
            ("https://user:pa?ss@h/", "https://…"),
            ("https://user:pa#ss@h/", "https://…"),
            ("https://u:s3cret@[bad/", "https://[bad/"),
            ("https://u:s3cret@h:70000/a2a?key=s3cret", "https://h:70000/a2a"),
            // A bad port, and a query holding `@`: nothing after the `?` shows.
            ("https://h:70000/a2a?key=s3cret", "https://h:70000/a2a"),
            ("https://h:70000/a2a?m=a@b&key=s3cret", "https://…"),
            // What precedes `://` in a query's URL is no scheme.
            ("u:s3cret@h:70000/x?next=http://y", "h:70000/x"),
            ("//u:s3cret@h/x", "h/x"),
        ] {
            let unparsed = ShownUrl::of_unparsed(input);
            assert_eq!(unparsed.as_str(), shown, "{input}");
            assert!(!unparsed.as_str().contains("s3cret") && !unparsed.as_str().contains("cd=="));
        }
        assert_eq!(
            ShownUrl::of_input("https://user:ab/cd==@h/a2a").as_str(),
            "https://h/a2a"
        );
        assert_eq!(ShownUrl::of_written("https://user:pa?ss@h/").as_str(), "https://…");
    }

    #[test]
    fn a_recorded_url_is_read_back_in_its_shown_form() {
        let read: ShownUrl = serde_json::from_str(r#""http://h/a2a?key=s3cret""#).unwrap();
        assert_eq!(read.as_str(), "http://h/a2a");
    }
}
