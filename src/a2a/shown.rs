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
    /// [`ShownUrl::of`] shows it. Text that does not parse still loses everything after `?` or
    /// `#` and before an `@`, as a URL would.
    pub fn of_input(input: &str) -> ShownUrl {
        if super::discovery::is_card_file(input) {
            return ShownUrl(input.to_string());
        }
        match super::discovery::parse_url(input) {
            Ok(url) => ShownUrl::of(&url),
            Err(_) => ShownUrl::of_text(input),
        }
    }

    /// A URL written elsewhere (a card's interface, a recording), possibly relative: parsed if
    /// absolute, cut as text otherwise. No file system is looked at.
    pub fn of_written(text: &str) -> ShownUrl {
        Url::parse(text).map_or_else(|_| ShownUrl::of_text(text), |url| ShownUrl::of(&url))
    }

    /// Text that is not a URL, cut as one would be.
    fn of_text(input: &str) -> ShownUrl {
        let without_query = input.split(['?', '#']).next().unwrap_or_default();
        let (scheme, rest) = without_query.split_once("://").unwrap_or(("", without_query));
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let host = authority.rsplit('@').next().unwrap_or_default();
        let scheme = if scheme.is_empty() {
            String::new()
        } else {
            format!("{scheme}://")
        };
        ShownUrl(format!("{scheme}{host}{path}"))
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
    fn a_recorded_url_is_read_back_in_its_shown_form() {
        let read: ShownUrl = serde_json::from_str(r#""http://h/a2a?key=s3cret""#).unwrap();
        assert_eq!(read.as_str(), "http://h/a2a");
    }
}
