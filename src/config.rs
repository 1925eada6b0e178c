//! The config file (TOML, found through `directories`: `~/.config/a2a-watch/config.toml` on
//! Linux; `--config FILE` to choose). A commented example ships in assets/config.example.toml.
//! Mistakes are reported with the file, the line and what is wrong.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use jsonwebtoken::jwk::Jwk;
use serde::Deserialize;

use crate::a2a::Binding;
use crate::a2a::auth::Secret;
use crate::tap::{self, TapArg};

/// One line of `[keys]`: a main-screen key, or a popup's own table of keys.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum KeyOverride {
    Action(String),
    Mode(BTreeMap<String, String>),
}

impl Config {
    /// Every key override as `(mode, key, action)`; the mode is `None` for the main screen.
    pub fn key_overrides(&self) -> Vec<(Option<&str>, &str, &str)> {
        self.keys
            .iter()
            .flat_map(|(name, entry)| match entry {
                KeyOverride::Action(action) => vec![(None, name.as_str(), action.as_str())],
                KeyOverride::Mode(keys) => keys
                    .iter()
                    .map(|(key, action)| (Some(name.as_str()), key.as_str(), action.as_str()))
                    .collect(),
            })
            .collect()
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub agent: Vec<AgentConfig>,
    /// A built-in theme name or a path.
    pub theme: Option<String>,
    /// Only this context (one planner's delegations).
    pub context: Option<String>,
    /// Key overrides: `"ctrl-d" = "page_down"` for the main screen, and a table per popup
    /// (`[keys.confirm]`, see `app::keys::Mode`).
    #[serde(default)]
    pub keys: BTreeMap<String, KeyOverride>,
    /// Open streams per agent at most; the rest are followed by listing.
    pub max_streams: Option<usize>,
    /// Seconds a send or a subscription may wait for its first reply (default 30).
    pub first_byte_timeout: Option<f64>,
    /// Seconds of silence after which a stream is checked with GetTask (default 30).
    pub quiet_after: Option<f64>,
    /// GetTasks a second per agent for quiet streams (default 10).
    pub check_rate: Option<f64>,
    /// Receive push notifications here, `HOST:PORT` (`--push-listen`).
    pub push_listen: Option<std::net::SocketAddr>,
    /// The URL agents reach the push receiver at (`--push-url`).
    pub push_url: Option<String>,
    /// Let `push_listen` be an address other than loopback.
    #[serde(default)]
    pub push_allow_remote: bool,
    /// Timeline entries kept per task.
    pub timeline_limit: Option<usize>,
    /// History messages kept per task.
    pub history_limit: Option<usize>,
    pub log_file: Option<PathBuf>,
    /// Open the input box by itself when a question arrives (default true).
    pub auto_popup: Option<bool>,
    /// Ring the terminal bell when a task becomes interrupted or fails (default true).
    pub bell: Option<bool>,
    /// Send an OSC 9 / OSC 777 desktop notification then (default true).
    pub desktop_notifications: Option<bool>,
    /// Seconds an answer, approval or new task sent from the dashboard may go without an
    /// outcome before the box says so and offers a retry with the same messageId (default 30).
    pub answer_timeout: Option<f64>,
    /// Taps in a planner's path (`--tap`); each one's upstream is an agent row.
    #[serde(default)]
    pub tap: Vec<TapConfig>,
    /// Every agent's card must verify before a credential goes to it (A2A 1.0 §8.4); an
    /// agent's own `require_signed_card` overrides it.
    #[serde(default)]
    pub require_signed_card: bool,
    /// Serve Prometheus metrics at http://ADDR/metrics (`--metrics-listen`).
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Let `metrics_listen` be an address other than loopback.
    #[serde(default)]
    pub metrics_allow_remote: bool,
    /// A scrape must send `Authorization: Bearer` with this token.
    pub metrics_token: Option<Secret>,
    /// Send a span per task to this OpenTelemetry collector (`--otlp`).
    pub otlp: Option<String>,
    /// Put status message text in the spans' events (`--otlp-include-text`).
    #[serde(default)]
    pub otlp_include_text: bool,
}

/// One `[[agent]]` table; `AgentConfig::spec`, in `cli/specs.rs`, turns it into an agent to watch.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    pub name: Option<String>,
    pub url: crate::a2a::shown::GivenUrl,
    /// Agents of one group are counted and listed together (`group:NAME`, `status --group`).
    pub group: Option<String>,
    /// The env var holding this agent's token.
    pub token_env: Option<String>,
    /// A command that prints the token, like `gh auth token`.
    pub token_command: Option<String>,
    /// The token itself. Prefer token_env or token_command: a file is easier to leak.
    pub token: Option<Secret>,
    /// Extra request headers; their values may be credentials, so they never print.
    #[serde(default)]
    pub headers: BTreeMap<String, Secret>,
    /// Send credentials over plain http to a host that is not loopback (default false).
    #[serde(default)]
    pub allow_insecure_http: bool,
    /// `jsonrpc` or `rest`; the card's order otherwise.
    pub binding: Option<String>,
    /// Seconds between listings and polls.
    pub poll_interval: Option<f64>,
    /// Task ids to watch even if ListTasks does not show them.
    #[serde(default)]
    pub tasks: Vec<String>,
    /// The keys this agent's card must be signed with: paths to a JWK Set or JWK file (relative
    /// to the config file), or inline JWK tables. When given, the only keys trusted.
    #[serde(default)]
    pub card_keys: Vec<CardKey>,
    /// Withhold every credential unless the card verifies (default: the top-level setting).
    pub require_signed_card: Option<bool>,
    /// `card_keys`, read.
    #[serde(skip)]
    pub pinned_keys: Option<Arc<[Jwk]>>,
}

/// One entry of `card_keys`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum CardKey {
    File(PathBuf),
    Inline(serde_json::Value),
}

/// One `[[tap]]` table: like `--tap [NAME=]LISTEN=UPSTREAM`. The agent row it makes takes its
/// credential as `--agent NAME=URL` would; give an `[[agent]]` with the same url for more.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapConfig {
    pub name: Option<String>,
    /// `IP:PORT` the planner is pointed at.
    pub listen: String,
    /// The agent's base URL.
    pub upstream: String,
    /// Listen on an address that is not loopback (default false).
    #[serde(default)]
    pub allow_remote: bool,
    /// Rewrite a signed card and remove its signatures, rather than pass it on unchanged
    /// (default false).
    #[serde(default)]
    pub strip_signatures: bool,
}

impl TapConfig {
    /// The tap this table asks for, checked as `--tap` is.
    pub fn to_arg(&self) -> Result<TapArg, String> {
        let listen = self
            .listen
            .parse()
            .map_err(|_| format!("listen {:?} is not IP:PORT, like 127.0.0.1:9000", self.listen))?;
        tap::check_listen(listen, self.allow_remote)?;
        tap::upstream_url(&self.upstream)?;
        Ok(TapArg {
            name: self.name.clone(),
            listen,
            upstream: self.upstream.clone(),
            strip_signatures: self.strip_signatures,
        })
    }
}

/// The default location, if the platform has one.
pub fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "a2a-watch").map(|d| d.config_dir().join("config.toml"))
}

/// Where logs go unless `--log-file` says otherwise.
pub fn default_log_path() -> Option<PathBuf> {
    let dirs = directories::ProjectDirs::from("", "", "a2a-watch")?;
    let dir = dirs.state_dir().unwrap_or_else(|| dirs.data_local_dir());
    Some(dir.join("a2a-watch.log"))
}

/// What is wrong with a config file, always with the file (and the line, or the agent, when
/// there is one), as the user sees it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// Syntax, types and unknown fields, at a line and column. Neither the line nor the value
    /// found is repeated: the file may hold tokens and header values (README "Security").
    #[error("{}: line {line}, column {column}: {message}", path.display())]
    Toml {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: answer_timeout must be a positive number of seconds", path.display())]
    AnswerTimeout { path: PathBuf },
    /// `number` counts from 1, as a reader counts the `[[tap]]` tables.
    #[error("{}: [[tap]] #{number}: {problem}", path.display())]
    Tap {
        path: PathBuf,
        number: usize,
        problem: String,
    },
    /// `number` counts from 1, as a reader counts the `[[agent]]` tables.
    #[error("{}: [[agent]] #{number} ({url}): {problem}", path.display())]
    Agent {
        path: PathBuf,
        number: usize,
        url: crate::a2a::shown::ShownUrl,
        problem: AgentProblem,
    },
}

/// What is wrong with one `[[agent]]` table.
#[derive(Debug, thiserror::Error)]
pub enum AgentProblem {
    #[error("binding {0:?}: expected jsonrpc, rest or grpc")]
    Binding(String),
    #[error("poll_interval must be a positive number of seconds")]
    PollInterval,
    #[error("give one of token, token_env, token_command")]
    TokenSources,
    #[error("card_keys: {0}")]
    CardKeys(String),
}

/// Where the TOML error is, and what it says without the value it found (`invalid type: string
/// "s3cret", expected a map` becomes `invalid type: string, expected a map`).
fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> ConfigError {
    let before = e.span().and_then(|s| text.get(..s.start)).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let message = e.message();
    let message = ["invalid type: ", "invalid value: "]
        .iter()
        .find_map(|prefix| {
            let rest = message.strip_prefix(prefix)?;
            let (found, expected) = rest.split_once(", expected")?;
            let kind = found.split(['`', '"']).next().unwrap_or(found).trim_end();
            Some(format!("{prefix}{kind}, expected{expected}"))
        })
        .unwrap_or_else(|| message.to_string());
    ConfigError::Toml {
        path: path.to_path_buf(),
        line,
        column,
        message: crate::text::one_line(&message),
    }
}

pub fn parse_binding(s: &str) -> Result<Binding, AgentProblem> {
    match s.to_ascii_lowercase().as_str() {
        "jsonrpc" | "json-rpc" => Ok(Binding::JsonRpc),
        "rest" | "http+json" | "http_json" => Ok(Binding::Rest),
        "grpc" => Ok(Binding::Grpc),
        other => Err(AgentProblem::Binding(other.to_string())),
    }
}

impl Config {
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
        if config.answer_timeout.is_some_and(|t| !(t > 0.0 && t < 1e9)) {
            return Err(ConfigError::AnswerTimeout {
                path: path.to_path_buf(),
            });
        }
        let folder = path.parent().unwrap_or(Path::new("."));
        let require_signed_card = config.require_signed_card;
        for (i, a) in config.agent.iter_mut().enumerate() {
            a.require_signed_card.get_or_insert(require_signed_card);
            let checked = a.check().and_then(|()| a.read_card_keys(folder));
            checked.map_err(|problem| ConfigError::Agent {
                path: path.to_path_buf(),
                number: i + 1,
                url: crate::a2a::shown::ShownUrl::of_input(&a.url),
                problem,
            })?;
        }
        for (i, tap) in config.tap.iter().enumerate() {
            tap.to_arg().map_err(|problem| ConfigError::Tap {
                path: path.to_path_buf(),
                number: i + 1,
                problem,
            })?;
        }
        Ok(config)
    }

    /// Reads the file at `path`; a missing default file is no error, a missing chosen one is.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let (path, chosen) = match path {
            Some(p) => (p.to_path_buf(), true),
            None => match default_path() {
                Some(p) => (p, false),
                None => return Ok(Config::default()),
            },
        };
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && !chosen => Ok(Config::default()),
            Err(source) => Err(ConfigError::Read { path, source }),
        }
    }
}

impl AgentConfig {
    fn check(&self) -> Result<(), AgentProblem> {
        if let Some(b) = &self.binding {
            parse_binding(b)?;
        }
        if self.poll_interval.is_some_and(|p| !(p > 0.0 && p.is_finite())) {
            return Err(AgentProblem::PollInterval);
        }
        let sources = [
            self.token.is_some(),
            self.token_env.is_some(),
            self.token_command.is_some(),
        ];
        if sources.iter().filter(|s| **s).count() > 1 {
            return Err(AgentProblem::TokenSources);
        }
        Ok(())
    }

    /// Reads `card_keys` into `pinned_keys`.
    fn read_card_keys(&mut self, folder: &Path) -> Result<(), AgentProblem> {
        if self.card_keys.is_empty() {
            return Ok(());
        }
        let mut keys = Vec::new();
        for entry in &self.card_keys {
            let found = match entry {
                CardKey::File(file) => read_card_key_file(&folder.join(file)),
                CardKey::Inline(jwk) => usable_keys(jwk, "an inline key"),
            };
            keys.extend(found.map_err(AgentProblem::CardKeys)?);
        }
        self.pinned_keys = Some(keys.into());
        Ok(())
    }
}

/// The public keys in a JWK or JWK Set file (config `card_keys`, `--card-key`).
pub fn read_card_key_file(file: &Path) -> Result<Vec<Jwk>, String> {
    let text = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let json: serde_json::Value =
        serde_json::from_slice(&text).map_err(|_| format!("{} is not a JWK or JWK Set (JSON)", file.display()))?;
    usable_keys(&json, &file.display().to_string())
}

/// A key source that holds no key we can use is an error, not a silent "trust nothing".
fn usable_keys(json: &serde_json::Value, source: &str) -> Result<Vec<Jwk>, String> {
    let keys = crate::a2a::signature::keys_from_json(json);
    if keys.is_empty() {
        return Err(format!("{source} holds no public key we can read"));
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_example_parses() {
        let text = include_str!("../assets/config.example.toml");
        let c = Config::parse(text, Path::new("assets/config.example.toml")).unwrap();
        assert!(!c.agent.is_empty());
        let spec = c.agent[0].spec();
        assert!(!spec.url.is_empty());
        assert_eq!(spec.group.as_deref(), Some("ci"), "the group reaches the agent watched");
        assert_eq!(c.agent[1].spec().group, None);
    }

    #[test]
    fn a_mistyped_secret_is_located_but_never_repeated() {
        for text in [
            "[[agent]]\nurl = \"h\"\nheaders = \"Authorization: Bearer s3cret\"\n",
            "[[agent]]\nurl = \"h\"\ntoken = 31337\n",
            "[[agent]]\nurl = \"h\"\ntoken = [\"s3cret\"]\n",
        ] {
            let err = Config::parse(text, Path::new("c.toml")).unwrap_err().to_string();
            assert!(err.contains("line 3") && err.contains("invalid type"), "{err}");
            assert!(!err.contains("s3cret") && !err.contains("31337"), "{err}");
        }
    }

    #[test]
    fn mistakes_name_the_file_line_and_field() {
        let text = "[[agent]]\nurl = \"http://h\"\ntokn_env = \"X\"\n";
        let err = Config::parse(text, Path::new("/tmp/c.toml")).unwrap_err().to_string();
        assert!(
            err.contains("/tmp/c.toml") && err.contains("line 3") && err.contains("tokn_env"),
            "{err}"
        );
        let err = Config::parse("[[agent]]\nurl = \"h\"\nbinding = \"websocket\"\n", Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("expected jsonrpc, rest or grpc"), "{err}");
        let err = Config::parse(
            "[[agent]]\nurl = \"h\"\ntoken = \"a\"\ntoken_env = \"B\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("one of token"), "{err}");
        let err = Config::parse("theme = 3", Path::new("c.toml")).unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
    }

    #[test]
    fn a_missing_chosen_file_is_an_error() {
        assert!(Config::load(Some(Path::new("/nonexistent/a2a-watch.toml"))).is_err());
    }
}
