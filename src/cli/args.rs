//! The command-line schema (clap): the dashboard's flags, the connection flags every client
//! command shares, and the subcommands.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::dashboard::ScreenArgs;
use crate::a2a::auth::Secret;

#[derive(Parser, Debug)]
#[command(
    name = "a2a-watch",
    version,
    about = "Watch and steer the work AI agents do for each other over A2A"
)]
#[command(after_help = "With no command, opens the dashboard on the agents of --agent and the config file.")]
pub struct Cli {
    #[command(flatten)]
    pub conn: ConnArgs,
    #[command(flatten)]
    pub watch: WatchArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What the dashboard watches.
#[derive(Args, Debug, Clone)]
pub struct WatchArgs {
    /// An agent to watch, `[NAME=]URL` (repeatable). NAME selects A2A_TOKEN_<NAME>; without it
    /// the card's name is shown, and only A2A_TOKEN applies, where the card asks.
    #[arg(long = "agent", value_name = "[NAME=]URL")]
    pub agents: Vec<String>,
    /// The config file (default: ~/.config/a2a-watch/config.toml on Linux).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Watch only this context (one planner's delegations).
    #[arg(long)]
    pub context: Option<String>,
    /// Also watch this task, `AGENT:ID` (AGENT = a name or the agent's position, from 1).
    #[arg(long = "task", value_name = "AGENT:ID")]
    pub tasks: Vec<String>,
    /// Open streams per agent at most; the rest are followed by listing.
    #[arg(long)]
    pub max_streams: Option<usize>,
    /// A tap in a planner's path, `[NAME=]LISTEN=UPSTREAM` (repeatable): point the planner at
    /// http://LISTEN; its requests go on to the agent at UPSTREAM, and every task it sees shows
    /// here. The planner's credentials pass through, never kept or used.
    #[arg(long = "tap", value_name = "[NAME=]LISTEN=UPSTREAM")]
    pub taps: Vec<String>,
    /// Let a --tap listen on an address that is not loopback (other machines can reach it).
    #[arg(long)]
    pub tap_allow_remote: bool,
    /// Let a --tap rewrite a signed agent card and remove its signatures (by default a signed
    /// card passes unchanged, and the planner then calls the agent around the tap).
    #[arg(long)]
    pub tap_strip_signatures: bool,
    /// Receive push notifications here, `HOST:PORT` (loopback unless --push-allow-remote):
    /// agents whose card says pushNotifications are asked to post their tasks' events to it.
    #[arg(long, value_name = "ADDR")]
    pub push_listen: Option<std::net::SocketAddr>,
    /// The URL agents reach the push receiver at, when not http://ADDR/ (a tunnel).
    #[arg(long, value_name = "URL")]
    pub push_url: Option<url::Url>,
    /// Let --push-listen use an address other than loopback.
    #[arg(long)]
    pub push_allow_remote: bool,
    #[command(flatten)]
    pub screen: ScreenArgs,
}

/// Where Prometheus scrapes the metrics (README "Monitoring stack"); shared by the dashboard,
/// `--json`, `--headless` and `demo`.
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics at http://ADDR/metrics (loopback unless --metrics-allow-remote).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Let --metrics-listen use an address other than loopback (set metrics_token in the config
    /// to ask scrapers for a token).
    #[arg(long)]
    pub metrics_allow_remote: bool,
}

/// Where OpenTelemetry traces go (README "Monitoring stack", issue 22); shared like `MetricsArgs`.
#[derive(Args, Debug, Clone, Default)]
pub struct OtlpArgs {
    /// Send a span per task to this OpenTelemetry collector (OTLP/HTTP protobuf at
    /// ENDPOINT/v1/traces; gRPC with OTEL_EXPORTER_OTLP_PROTOCOL=grpc). Also OTEL_EXPORTER_OTLP_ENDPOINT.
    #[arg(long, value_name = "ENDPOINT")]
    pub otlp: Option<String>,
    /// Put status message text in the spans' events (left out by default: it may be private).
    #[arg(long)]
    pub otlp_include_text: bool,
}

/// How to reach an agent; shared by every client command.
#[derive(Args, Debug, Clone)]
pub struct ConnArgs {
    /// Force a binding instead of the card's first choice (rest = HTTP+JSON; grpc = gRPC, 1.0 only).
    #[arg(long, global = true, value_enum)]
    pub binding: Option<BindingArg>,
    /// Bearer token or API key. Prefer A2A_TOKEN_<NAME> or A2A_TOKEN: flags end up in shell history.
    /// On a dashboard of several agents, sent only to agents whose card asks for a credential.
    #[arg(long, global = true, value_parser = parse_secret)]
    pub token: Option<Secret>,
    /// The agent's name, which selects its token: A2A_TOKEN_<NAME>. The card's name never does.
    #[arg(long, global = true)]
    pub name: Option<String>,
    /// Extra request header, `Name: value` (repeatable). Treated as a credential: never printed,
    /// never sent to another origin or over plain http to a host that is not loopback. On a
    /// dashboard of several agents, sent only to agents whose card asks for a credential.
    /// Kept whole as a secret until checked, so a malformed one is never echoed.
    #[arg(long = "header", global = true, value_name = "NAME: VALUE", value_parser = parse_secret)]
    pub headers: Vec<Secret>,
    /// Send credentials over plain http to a host that is not loopback (to every --agent given).
    #[arg(long, global = true)]
    pub allow_insecure_http: bool,
    /// Timeout in seconds for calls that are not streams [default: 30; for `status`, 3 for the
    /// whole round].
    #[arg(long, global = true, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// A key the agent's card must be signed with: a JWK or JWK Set file (repeatable), like a
    /// config entry's card_keys; the only keys tried. For the agent named on the command line.
    #[arg(long = "card-key", global = true, value_name = "FILE")]
    pub card_keys: Vec<PathBuf>,
    /// Send no credential (token, headers, push token) to an agent unless its card is signed with
    /// a --card-key key or a key set on the card's own origin, like require_signed_card = true.
    #[arg(long, global = true)]
    pub require_signed_card: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingArg {
    Jsonrpc,
    Rest,
    Grpc,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the resolved agent card: interfaces, the one in use, security, skills.
    Card {
        url: String,
        /// Print the card as JSON (1.0 shape).
        #[arg(long)]
        json: bool,
        /// Fetch the authenticated extended card instead, with the configured credential (only
        /// where the card offers one).
        #[arg(long)]
        extended: bool,
    },
    /// List tasks (ListTasks, every page).
    List {
        url: String,
        #[arg(long)]
        context: Option<String>,
        /// Only tasks in this state (`working`, `INPUT_REQUIRED`, `TASK_STATE_COMPLETED`, ...).
        #[arg(long)]
        state: Option<String>,
        /// One NDJSON line per task.
        #[arg(long)]
        json: bool,
    },
    /// Send a message that starts a task; prints NDJSON.
    Send {
        url: String,
        /// The message's text (needed unless --data or --file is given).
        #[arg(required_unless_present_any = ["data", "file"])]
        text: Option<String>,
        #[command(flatten)]
        parts: PartArgs,
        #[arg(long)]
        context: Option<String>,
        /// Stream every event as NDJSON until the task is terminal or interrupted.
        #[arg(long)]
        follow: bool,
        /// Return at once instead of waiting for a terminal or interrupted state (returnImmediately).
        #[arg(long, conflicts_with = "follow")]
        no_wait: bool,
    },
    /// Answer a task waiting in INPUT_REQUIRED, on the same task and context.
    /// With --approve, --deny, --connected or --value, answers the task's interactions/v1
    /// interaction (an approval, a connection request, a question) instead.
    Reply(ReplyArgs),
    /// Get one task.
    Get {
        url: String,
        task_id: String,
        /// How many history messages to ask for.
        #[arg(long)]
        history: Option<u32>,
        /// Print the task as JSON (1.0 shape); with --save-artifacts, the files written.
        #[arg(long)]
        json: bool,
        /// Write the task's artifacts into DIR (made if missing) and say what was written, instead
        /// of printing the task: text parts as .txt, data parts as .json, file parts as their bytes;
        /// URL parts are listed, not fetched.
        #[arg(long, value_name = "DIR")]
        save_artifacts: Option<PathBuf>,
        /// With --save-artifacts: replace files of the same name instead of adding a suffix.
        #[arg(long, requires = "save_artifacts")]
        force: bool,
    },
    /// Cancel a task.
    Cancel { url: String, task_id: String },
    /// Run the four built-in demo agents on loopback until interrupted. The deployer wants the
    /// bearer token given with --token (demo-token without it).
    ServeDemo {
        #[arg(long, default_value_t = 41241)]
        base_port: u16,
        // The deployer's bearer token is the global `--token` (its own `--token` here clashed
        // with it: clap panicked at start); `demo-token` without one.
        /// Seconds between the steps of a scenario.
        #[arg(long, default_value_t = 0.6)]
        delay: f64,
    },
    /// Replay a recording (--record FILE) in the dashboard, with no network; or print its lines
    /// (--json), or write its screen as a picture (--snapshot).
    Replay(super::replay::ReplayArgs),
    /// Start the demo agents and a planner that delegates work to them, and watch it all.
    Demo {
        /// The first agent's port (the next three follow); taken ports fall back to free ones.
        #[arg(long, default_value_t = 41241)]
        base_port: u16,
        /// Seconds between the steps of a scenario.
        #[arg(long, default_value_t = 0.6)]
        delay: f64,
        #[command(flatten)]
        screen: ScreenArgs,
    },
    /// One line for a shell prompt or a tmux status bar: how many tasks wait for an answer,
    /// failed, or are at work, from one ListTasks round per agent. Nothing when all is quiet.
    /// Exit 1 when an agent could not be read (the line says so).
    Status(StatusArgs),
    /// Print a completion script for SHELL to stdout (see the README for where to put it).
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff) to stdout.
    Man,
}

/// The parts a message carries besides its text (spec section 4.5, Part).
#[derive(Args, Debug, Clone, Default)]
pub struct PartArgs {
    /// A data part: a JSON value (repeatable).
    #[arg(long, value_name = "JSON")]
    pub data: Vec<String>,
    /// A file part: the file's bytes (base64 on the wire), its name and a media type guessed
    /// from its extension (repeatable).
    #[arg(long, value_name = "PATH")]
    pub file: Vec<PathBuf>,
}

#[derive(Args, Debug)]
pub struct StatusArgs {
    /// An agent, `[NAME=]URL` (repeatable), as for the dashboard.
    #[arg(long = "agent", value_name = "[NAME=]URL")]
    pub agents: Vec<String>,
    /// The config file whose agents to count (default: the dashboard's).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Count only the agents of this group (the config's `group = "NAME"`).
    #[arg(long, value_name = "NAME")]
    pub group: Option<String>,
    #[arg(long, value_enum, default_value_t = StatusFormat::Plain)]
    pub format: StatusFormat,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFormat {
    /// `◆ 2 waiting · ✖ 1 failed`
    Plain,
    /// The plain line with `#[fg=...]` colours for tmux's status-right.
    Tmux,
    /// `{"waiting":2,"failed":1,"working":0,"unreachable":0,"unauthorized":0,"agents":2}`
    Json,
}

// A struct of its own, unlike the other commands' fields: `reply` has too many to pass one by one.
#[derive(Args, Debug)]
pub struct ReplyArgs {
    pub url: String,
    pub task_id: String,
    /// The answer, as text (needed unless an interaction flag, --data or --file is given).
    #[arg(required_unless_present_any = ["approve", "deny", "connected", "value", "data", "file"])]
    pub text: Option<String>,
    /// Parts sent with the text answer; not with an interaction flag.
    #[command(flatten)]
    pub parts: PartArgs,
    /// Approve the held tool call (interactions/v1 approval).
    #[arg(long, group = "interaction")]
    pub approve: bool,
    /// Deny the held tool call (interactions/v1 approval).
    #[arg(long, group = "interaction")]
    pub deny: bool,
    /// Answer a connection request: true once the app is connected, false to decline.
    #[arg(long, group = "interaction", value_name = "true|false")]
    pub connected: Option<bool>,
    /// Answer a question with a JSON value (text that is not JSON is sent as text).
    #[arg(long, group = "interaction", value_name = "JSON")]
    pub value: Option<String>,
    /// The answer's messageId, its idempotency key: reuse it to retry without answering twice.
    #[arg(long)]
    pub message_id: Option<String>,
    /// Stream the events that follow the answer as NDJSON.
    #[arg(long)]
    pub follow: bool,
    /// Send even if the task is not waiting for input.
    #[arg(long)]
    pub force: bool,
}

fn parse_secret(value: &str) -> Result<Secret, String> {
    Ok(Secret::new(value))
}
