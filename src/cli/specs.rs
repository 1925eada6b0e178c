//! What to watch and how to reach it: the one place where `--agent`, the connection flags and
//! the config file's `[[agent]]` tables become `AgentSpec`s and `WatchOptions`.

use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::jwk::Jwk;

use super::Error;
use super::args::{BindingArg, ConnArgs, WatchArgs};
use crate::a2a::auth::{Given, Secret};
use crate::a2a::signature::CardTrust;
use crate::a2a::{Binding, Client, ClientOptions};
use crate::config::{AgentConfig, Config, parse_binding, read_card_key_file};
use crate::push::{Push, PushError, PushSettings};
use crate::tap::TapArg;
use crate::watch::{AgentSpec, Credential, WatchOptions};

/// `--timeout` when not given, for every command but `status`.
const REQUEST_TIMEOUT: f64 = 30.0;

impl ConnArgs {
    /// `--timeout`, or `default` when not given; checked.
    pub fn timeout_or(&self, default: f64) -> Result<Duration, Error> {
        let seconds = self.timeout.unwrap_or(default);
        if !(seconds > 0.0 && seconds.is_finite()) {
            return Err(Error::Usage("--timeout must be a positive number of seconds".into()));
        }
        Ok(Duration::from_secs_f64(seconds))
    }

    pub fn options(&self) -> Result<ClientOptions, Error> {
        Ok(ClientOptions {
            name: self.name.clone(),
            binding: self.binding.map(|b| match b {
                BindingArg::Jsonrpc => Binding::JsonRpc,
                BindingArg::Rest => Binding::Rest,
                BindingArg::Grpc => Binding::Grpc,
            }),
            token: self.token.clone(),
            headers: self.headers.iter().map(parse_header).collect::<Result<_, _>>()?,
            allow_insecure_http: self.allow_insecure_http,
            request_timeout: self.timeout_or(REQUEST_TIMEOUT)?,
            card_trust: CardTrust::new(self.pinned_keys()?, self.require_signed_card),
            ..ClientOptions::default()
        })
    }

    /// `--card-key` files, read with the config's `card_keys` reader.
    fn pinned_keys(&self) -> Result<Option<Arc<[Jwk]>>, Error> {
        if self.card_keys.is_empty() {
            return Ok(None);
        }
        let mut keys = Vec::new();
        for file in &self.card_keys {
            keys.extend(read_card_key_file(file).map_err(|e| Error::Usage(format!("--card-key {e}")))?);
        }
        Ok(Some(keys.into()))
    }

    pub async fn connect(&self, url: &str) -> Result<Client, Error> {
        Ok(Client::connect(url, self.options()?).await?)
    }
}

/// `Name: value`; the value is kept as a secret, so it never shows in Debug output. A malformed
/// header is reported without any of it: with no `:`, a value cannot be told from a name.
fn parse_header(header: &Secret) -> Result<(String, Secret), Error> {
    let (name, value) = header.expose().split_once(':').ok_or_else(|| {
        Error::Usage("a --header has no `:` (expected `Name: value`; not shown, as it may hold a secret)".into())
    })?;
    Ok((name.trim().to_string(), Secret::new(value)))
}

/// `NAME=URL` or `URL`. A `=` after the scheme belongs to the URL (`?a=b`).
fn parse_agent_arg(arg: &str) -> (Option<String>, String) {
    match arg.split_once('=') {
        Some((name, url)) if !name.is_empty() && !name.contains(['/', ':']) => {
            (Some(name.to_string()), url.to_string())
        }
        _ => (None, arg.to_string()),
    }
}
/// The agents of the config file and of `--agent`, with `--task` ids attached.
pub fn agent_specs(conn: &ConnArgs, args: &WatchArgs, config: &Config) -> Result<Vec<AgentSpec>, Error> {
    let mut specs: Vec<AgentSpec> = config.agent.iter().map(AgentConfig::spec).collect();
    let mut options = conn.options()?;
    options.card_trust.required |= config.require_signed_card;
    // `--token` is meant for the one agent watched; among several, no one agent is meant.
    let shared = specs.len() + args.agents.len() + args.taps.len() + config.tap.len() > 1;
    // `--name` names the one `--agent` (its own `NAME=` first); among several it would name none.
    if conn.name.is_some() && args.agents.len() > 1 {
        return Err(Error::Usage(
            "--name names one agent; with several --agent, name each: --agent NAME=URL".into(),
        ));
    }
    // An agent named on the command line takes the connection flags.
    let flag_agent = |name: Option<String>, url: String| {
        let mut spec = AgentSpec::new(url);
        spec.client = ClientOptions {
            name: name.clone(),
            token: None,
            headers_shared: shared,
            ..options.clone()
        };
        spec.name = name;
        if let Some(token) = &options.token {
            spec.credential = if shared {
                Credential::Shared(token.clone())
            } else {
                Credential::Value(token.clone())
            };
        }
        spec
    };
    for arg in &args.agents {
        let (name, url) = parse_agent_arg(arg);
        specs.push(flag_agent(name.or_else(|| conn.name.clone()), url));
    }
    for (i, tap) in config.tap.iter().enumerate() {
        let tap = tap
            .to_arg()
            .map_err(|e| Error::Usage(format!("[[tap]] #{} of the config: {e}", i + 1)))?;
        attach_tap(&mut specs, tap, |name, url| {
            let mut spec = AgentSpec::new(url);
            spec.client.name.clone_from(&name);
            spec.client.card_trust.required = config.require_signed_card;
            spec.name = name;
            spec
        })?;
    }
    for arg in &args.taps {
        let mut tap = crate::tap::parse_arg(arg).map_err(Error::Usage)?;
        tap.strip_signatures = args.tap_strip_signatures;
        crate::tap::check_listen(tap.listen, args.tap_allow_remote).map_err(|e| Error::Usage(format!("--tap: {e}")))?;
        attach_tap(&mut specs, tap, flag_agent)?;
    }
    for task in &args.tasks {
        attach_task(&mut specs, task)?;
    }
    // `--require-signed-card` only ever adds the rule: it holds for the config's agents too.
    if conn.require_signed_card {
        for spec in &mut specs {
            spec.client.card_trust.required = true;
        }
    }
    refuse_shared_token_vars(&specs)?;
    Ok(specs)
}

/// `--task AGENT:ID`: the id attached to the agent given by its 1-based place, name or URL.
fn attach_task(specs: &mut [AgentSpec], task: &str) -> Result<(), Error> {
    let (agent, id) = task
        .split_once(':')
        .filter(|(a, i)| !a.is_empty() && !i.is_empty())
        .ok_or_else(|| Error::Usage(format!("--task {task:?}: expected AGENT:ID")))?;
    let index = match agent.parse::<usize>() {
        Ok(n) if (1..=specs.len()).contains(&n) => Some(n - 1),
        _ => specs
            .iter()
            .position(|s| s.name.as_deref() == Some(agent) || &*s.url == agent),
    };
    let Some(index) = index else {
        let names: Vec<String> = specs.iter().map(AgentSpec::label).collect();
        return Err(Error::Usage(format!(
            "--task {task:?}: no agent {agent:?} (agents: {})",
            names.join(", ")
        )));
    };
    specs[index].tasks.push(id.to_string());
    Ok(())
}

/// Two names that map to one `A2A_TOKEN_<NAME>` (`prod-db` and `prod_db`; non-ASCII names of
/// one length) would silently share a token meant for one of them: refused, naming both.
fn refuse_shared_token_vars(specs: &[AgentSpec]) -> Result<(), Error> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for name in specs.iter().filter_map(|s| s.name.as_deref()) {
        let var = crate::a2a::auth::env_var_for(name);
        match seen.get(var.as_str()) {
            Some(first) => {
                return Err(Error::Usage(format!(
                    "agents {first:?} and {name:?} both read {var}: one token would go to both; \
                     give them names that differ in letters or digits"
                )));
            }
            None => {
                seen.insert(var, name);
            }
        }
    }
    Ok(())
}

/// A tap in front of an agent already listed (the same URL) is that agent's; otherwise its
/// upstream becomes an agent of its own, made by `new`.
fn attach_tap(
    specs: &mut Vec<AgentSpec>,
    tap: TapArg,
    new: impl FnOnce(Option<String>, String) -> AgentSpec,
) -> Result<(), Error> {
    let same = |s: &AgentSpec| s.url.trim_end_matches('/') == tap.upstream.trim_end_matches('/');
    let Some(spec) = specs.iter_mut().find(|s| same(s)) else {
        let mut spec = new(tap.name, tap.upstream);
        spec.tap = Some(tap.listen);
        spec.tap_strip_signatures = tap.strip_signatures;
        specs.push(spec);
        return Ok(());
    };
    let shown = crate::a2a::shown::ShownUrl::of_input(&tap.upstream);
    if spec.tap.is_some() {
        return Err(Error::Usage(format!("two taps in front of {shown}: one is enough")));
    }
    if tap.name.is_some() && spec.name.is_some() && tap.name != spec.name {
        return Err(Error::Usage(format!(
            "the tap in front of {shown} names it {:?}, its agent entry {:?}: give one name",
            tap.name.unwrap_or_default(),
            spec.name.clone().unwrap_or_default()
        )));
    }
    if spec.name.is_none() {
        spec.client.name.clone_from(&tap.name);
        spec.name = tap.name;
    }
    spec.tap = Some(tap.listen);
    spec.tap_strip_signatures = tap.strip_signatures;
    Ok(())
}

/// Built here rather than in `config`, so that flags and config become agents in one place.
impl AgentConfig {
    /// One `[[agent]]` table of the config file, with its own token source, binding and headers.
    pub fn spec(&self) -> AgentSpec {
        let mut spec = AgentSpec::new(self.url.to_string());
        spec.name = self.name.clone();
        spec.client = ClientOptions {
            name: self.name.clone(),
            binding: self.binding.as_deref().and_then(|b| parse_binding(b).ok()),
            headers: self.headers.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            allow_insecure_http: self.allow_insecure_http,
            card_trust: CardTrust::new(self.pinned_keys.clone(), self.require_signed_card.unwrap_or(false)),
            ..ClientOptions::default()
        };
        (spec.credential, spec.client.token_from) = match (&self.token, &self.token_env, &self.token_command) {
            (Some(t), _, _) => (Credential::Value(t.clone()), Given::ConfigToken),
            (_, Some(var), _) => (Credential::Env(var.clone()), Given::ConfigEnv(var.clone())),
            (_, _, Some(cmd)) => (Credential::Command(cmd.clone()), Given::ConfigCommand),
            _ => (Credential::Default, Given::default()),
        };
        if let Some(p) = self.poll_interval {
            spec.poll_interval = Duration::from_secs_f64(p);
        }
        spec.tasks = self.tasks.clone();
        spec.group.clone_from(&self.group);
        spec
    }
}

pub fn watch_options(args: &WatchArgs, config: &Config) -> WatchOptions {
    let defaults = WatchOptions::default();
    WatchOptions {
        context: args.context.clone().or(config.context.clone()),
        max_streams: args
            .max_streams
            .or(config.max_streams)
            .unwrap_or(defaults.max_streams)
            .max(1),
        first_byte_timeout: seconds(config.first_byte_timeout).unwrap_or(defaults.first_byte_timeout),
        quiet_after: seconds(config.quiet_after).unwrap_or(defaults.quiet_after),
        check_rate: config
            .check_rate
            .filter(|rate| rate.is_finite() && *rate > 0.0)
            .unwrap_or(defaults.check_rate),
        ..defaults
    }
}

/// The push receiver, bound, if `--push-listen` (or the config's `push_listen`) asks for one.
pub async fn push_receiver(args: &WatchArgs, config: &Config) -> Result<Option<Arc<Push>>, Error> {
    let Some(listen) = args.push_listen.or(config.push_listen) else {
        return Ok(None);
    };
    let url = match (&args.push_url, &config.push_url) {
        (Some(url), _) => Some(url.clone()),
        (None, Some(text)) => {
            Some(url::Url::parse(text).map_err(|e| Error::Usage(format!("push_url in the config: {e}")))?)
        }
        (None, None) => None,
    };
    let settings = PushSettings {
        listen,
        url,
        allow_remote: args.push_allow_remote || config.push_allow_remote,
    };
    match Push::bind(&settings).await {
        Ok(push) => Ok(Some(Arc::new(push))),
        Err(PushError::Bind { addr, source }) => Err(Error::Io {
            what: format!("listening for push notifications on {addr}"),
            source,
        }),
        Err(e) => Err(Error::Usage(e.to_string())),
    }
}

/// A config value in seconds, if it is a usable one.
fn seconds(value: Option<f64>) -> Option<Duration> {
    value
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .filter(|d| !d.is_zero())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use clap::Parser;

    use serde_json::json;

    use super::*;
    use crate::a2a::discovery::Discovered;
    use crate::cli::Cli;

    fn cli(args: &[&str]) -> Cli {
        Cli::try_parse_from([&["a2a-watch"], args].concat()).expect("parses")
    }

    #[test]
    fn debug_of_the_command_line_never_shows_a_token_or_a_header_value() {
        let cli = cli(&[
            "--token",
            "tok-s3cret",
            "--header",
            "X-Api-Key: hdr-s3cret",
            "--agent",
            "ops=http://127.0.0.1:1",
        ]);
        let options = cli.conn.options().unwrap();
        let specs = agent_specs(&cli.conn, &cli.watch, &Config::default()).unwrap();
        for shown in [
            format!("{cli:?}"),
            format!("{:?}", cli.conn),
            format!("{options:?}"),
            format!("{specs:?}"),
        ] {
            assert!(!shown.contains("s3cret"), "{shown}");
        }
        assert!(format!("{options:?}").contains("X-Api-Key"), "header names still show");
    }

    #[test]
    fn name_names_the_one_agent_and_is_refused_among_several() {
        let one = cli(&["--name", "ops", "--agent", "http://127.0.0.1:1", "--task", "ops:t-1"]);
        let specs = agent_specs(&one.conn, &one.watch, &Config::default()).unwrap();
        assert_eq!(specs[0].name.as_deref(), Some("ops"));
        assert_eq!(specs[0].client.name.as_deref(), Some("ops"), "it selects A2A_TOKEN_OPS");
        assert_eq!(specs[0].tasks, ["t-1"]);
        let own = cli(&["--name", "ops", "--agent", "dev=http://127.0.0.1:1"]);
        let specs = agent_specs(&own.conn, &own.watch, &Config::default()).unwrap();
        assert_eq!(specs[0].name.as_deref(), Some("dev"), "NAME= wins");
        let two = cli(&[
            "--name",
            "ops",
            "--agent",
            "http://127.0.0.1:1",
            "--agent",
            "http://127.0.0.1:2",
        ]);
        let err = agent_specs(&two.conn, &two.watch, &Config::default()).unwrap_err();
        assert!(err.to_string().contains("--agent NAME=URL"), "{err}");
    }

    #[test]
    fn token_goes_to_the_one_agent_but_is_shared_among_several() {
        let one = cli(&["--token", "t", "--agent", "http://127.0.0.1:1"]);
        let specs = agent_specs(&one.conn, &one.watch, &Config::default()).unwrap();
        assert!(matches!(specs[0].credential, Credential::Value(_)));
        let two = cli(&[
            "--token",
            "t",
            "--agent",
            "http://127.0.0.1:1",
            "--agent",
            "b=http://127.0.0.1:2",
        ]);
        let specs = agent_specs(&two.conn, &two.watch, &Config::default()).unwrap();
        assert!(specs.iter().all(|s| matches!(s.credential, Credential::Shared(_))));
        assert!(
            specs.iter().all(|s| s.client.token.is_none()),
            "only through the credential"
        );
    }

    #[test]
    fn headers_go_to_the_one_agent_but_are_shared_among_several() {
        let header = ["--header", "X-Key: k"];
        let one = cli(&[&header[..], &["--agent", "http://127.0.0.1:1"]].concat());
        let specs = agent_specs(&one.conn, &one.watch, &Config::default()).unwrap();
        assert!(!specs[0].client.headers_shared && specs[0].client.headers.len() == 1);
        let two = cli(&[
            &header[..],
            &["--agent", "http://127.0.0.1:1", "--agent", "http://127.0.0.1:2"],
        ]
        .concat());
        let specs = agent_specs(&two.conn, &two.watch, &Config::default()).unwrap();
        assert!(specs.iter().all(|s| s.client.headers_shared));
    }

    #[test]
    fn a_malformed_header_is_refused_without_echoing_it() {
        let bad = cli(&[
            "--header",
            "Authorization Bearer s3cret",
            "--agent",
            "http://127.0.0.1:1",
        ]);
        let err = bad.conn.options().unwrap_err();
        assert!(matches!(err, Error::Usage(_)), "{err}");
        assert!(!err.to_string().contains("s3cret"), "{err}");
    }

    #[test]
    fn credentials_come_from_one_source() {
        let c = Config::parse(
            "[[agent]]\nurl = \"h\"\ntoken_command = \"gh auth token\"\n",
            Path::new("c"),
        )
        .unwrap();
        assert!(matches!(c.agent[0].spec().credential, Credential::Command(ref cmd) if cmd == "gh auth token"));
    }

    #[test]
    fn debug_output_never_shows_a_token_a_header_value_or_a_url_query() {
        let url = "http://127.0.0.1:9/a2a?key=url-s3cret";
        let text =
            format!("[[agent]]\nurl = \"{url}\"\ntoken = \"s3cret\"\nheaders = {{ \"X-Api-Key\" = \"hdr-s3cret\" }}\n");
        let c = Config::parse(&text, Path::new("c")).unwrap();
        let spec = c.agent[0].spec();
        // A client on a card whose interface carries the key too.
        let interface = json!({"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"});
        let found = Discovered {
            card: serde_json::from_value(json!({"name": "a", "supportedInterfaces": [interface]})).unwrap(),
            source: url.to_string(),
            base: Some(url::Url::parse(url).unwrap()),
            signature: None,
        };
        let client = Client::from_discovered(reqwest::Client::new(), found, spec.client.clone()).unwrap();
        for shown in [
            format!("{c:?}"),
            format!("{:?}", c.agent[0]),
            format!("{spec:?}"),
            format!("{:?}", spec.client),
            format!("{:?}", spec.credential),
            format!("{client:?}"),
        ] {
            assert!(!shown.contains("s3cret"), "{shown}");
        }
        assert!(
            format!("{spec:?}").contains("http://127.0.0.1:9/a2a"),
            "the URL still shows"
        );
        assert!(
            format!("{:?}", spec.client).contains("X-Api-Key"),
            "header names still show"
        );
    }

    #[test]
    fn a_tap_joins_the_agent_of_its_url_or_makes_its_own() {
        let c = cli(&[
            "--agent",
            "ops=http://127.0.0.1:1/",
            "--tap",
            "127.0.0.1:9000=http://127.0.0.1:1",
            "--tap",
            "dev=127.0.0.1:9001=http://127.0.0.1:2",
            "--task",
            "dev:t-1",
        ]);
        let specs = agent_specs(&c.conn, &c.watch, &Config::default()).unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].name.as_deref(), Some("ops"));
        assert_eq!(specs[0].tap, Some("127.0.0.1:9000".parse().unwrap()));
        assert_eq!(&*specs[1].url, "http://127.0.0.1:2");
        assert_eq!(specs[1].client.name.as_deref(), Some("dev"), "it selects A2A_TOKEN_DEV");
        assert_eq!(specs[1].tap, Some("127.0.0.1:9001".parse().unwrap()));
        assert_eq!(specs[1].tasks, ["t-1"]);
        let config = Config::parse(
            "[[agent]]\nurl = \"http://127.0.0.1:3\"\ntoken_env = \"T\"\n[[tap]]\nname = \"qa\"\nlisten = \"127.0.0.1:9002\"\nupstream = \"http://127.0.0.1:3\"\n",
            Path::new("c"),
        )
        .unwrap();
        let none = cli(&[]);
        let specs = agent_specs(&none.conn, &none.watch, &config).unwrap();
        assert_eq!(specs.len(), 1, "the tap is the configured agent's");
        assert!(matches!(specs[0].credential, Credential::Env(ref v) if v == "T"));
        assert_eq!(specs[0].name.as_deref(), Some("qa"));
    }

    #[test]
    fn taps_off_loopback_twice_or_misnamed_are_refused() {
        for (args, says) in [
            (&["--tap", "0.0.0.0:9000=http://127.0.0.1:1"][..], "--tap-allow-remote"),
            (
                &[
                    "--tap",
                    "127.0.0.1:9000=http://127.0.0.1:1",
                    "--tap",
                    "127.0.0.1:9001=http://127.0.0.1:1",
                ],
                "two taps",
            ),
            (
                &[
                    "--agent",
                    "a=http://127.0.0.1:1",
                    "--tap",
                    "b=127.0.0.1:9000=http://127.0.0.1:1",
                ],
                "give one name",
            ),
        ] {
            let c = cli(args);
            let err = agent_specs(&c.conn, &c.watch, &Config::default()).unwrap_err();
            assert!(
                matches!(err, Error::Usage(_)) && err.to_string().contains(says),
                "{err}"
            );
        }
        let allowed = cli(&["--tap-allow-remote", "--tap", "0.0.0.0:9000=http://127.0.0.1:1"]);
        assert!(agent_specs(&allowed.conn, &allowed.watch, &Config::default()).is_ok());
    }

    #[test]
    fn allow_insecure_http_reaches_the_client_options() {
        let c = Config::parse("[[agent]]\nurl = \"h\"\nallow_insecure_http = true\n", Path::new("c")).unwrap();
        assert!(c.agent[0].spec().client.allow_insecure_http);
        let c = Config::parse("[[agent]]\nurl = \"h\"\n", Path::new("c")).unwrap();
        assert!(!c.agent[0].spec().client.allow_insecure_http);
    }

    #[tokio::test]
    async fn push_settings_come_from_flags_or_the_config() {
        let config = Config::parse(
            "push_listen = \"127.0.0.1:0\"\npush_url = \"https://tunnel.example/\"\n",
            Path::new("c"),
        )
        .unwrap();
        let none = cli(&["--agent", "h"]);
        let push = push_receiver(&none.watch, &config)
            .await
            .unwrap()
            .expect("the config asks for one");
        assert_eq!(push.url_for(1), "https://tunnel.example/push/1");
        assert!(push_receiver(&none.watch, &Config::default()).await.unwrap().is_none());
        let remote = cli(&["--agent", "h", "--push-listen", "0.0.0.0:0"]);
        let err = push_receiver(&remote.watch, &config).await.unwrap_err();
        assert_eq!(err.exit_code(), 2, "{err}");
        let allowed = cli(&["--agent", "h", "--push-listen", "0.0.0.0:0", "--push-allow-remote"]);
        let push = push_receiver(&allowed.watch, &Config::default())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(push.url_for(0), format!("http://{}/push/0", push.local_addr()));
    }
}
