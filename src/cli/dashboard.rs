//! Running the watch engine under a front end: the terminal dashboard, `--json` or `--headless`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tokio::sync::mpsc;

use super::Error;
use super::headless::{self, Front, Until};
use crate::app::App;
use crate::app::keys::KeyMap;
use crate::app::steer::Prefs;
use crate::config::Config;
use crate::record::{RecordedAgent, Recorder};
use crate::store::{Limits, Store, TaskKey};
use crate::tap::Taps;
use crate::theme::Theme;
use crate::watch::{AgentSpec, Engine, WatchOptions};

/// How the watched tasks are shown; shared by the dashboard and `demo`.
#[derive(Args, Debug, Clone, Default)]
pub struct ScreenArgs {
    /// No screen: one NDJSON line per change on stdout.
    #[arg(long)]
    pub json: bool,
    /// No screen and nothing on stdout, for a service (systemd, a container): the engine with
    /// --metrics-listen and --record; logs go to the log file. SIGTERM or SIGINT stops it (exit 0).
    #[arg(long, conflicts_with = "json")]
    pub headless: bool,
    /// With --json: stop once this is true.
    #[arg(long, value_enum, requires = "json")]
    pub until: Option<Until>,
    /// A built-in theme (dark, light, ansi16) or a theme file.
    #[arg(long)]
    pub theme: Option<String>,
    /// Where logs go (default: the state directory).
    #[arg(long)]
    pub log_file: Option<PathBuf>,
    /// Record every change, with its arrival time, to this file (NDJSON: the --json lines plus
    /// what `a2a-watch replay` needs; no credential is ever recorded).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// With --record: replace a recording already at FILE (never a file of another kind).
    #[arg(long, requires = "record")]
    pub force: bool,
    #[command(flatten)]
    pub metrics: super::args::MetricsArgs,
    #[command(flatten)]
    pub otlp: super::args::OtlpArgs,
}

/// Logs go to a file, never to the screen. Without a writable place, there are no logs.
/// Logs go to a file of the user's alone (0600), appended to, never through a link already at the
/// path (README "Security": the same rule as recordings): a link planted there is refused with
/// the path named; any other failure leaves logging off, as a log is never worth stopping for.
fn init_logging(path: Option<PathBuf>) -> Result<(), Error> {
    let Some(path) = path.or_else(crate::config::default_log_path) else {
        return Ok(());
    };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    let file = match open_log(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(Error::Io {
                what: format!("log file {}", path.display()),
                source: e,
            });
        }
        Err(_) => return Ok(()),
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("a2a_watch=info"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init();
    Ok(())
}

/// The log file opened to append: created 0600, never through a link (`record::open_without_link`).
fn open_log(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    crate::record::open_without_link(&mut options, path, "the log")
}

pub fn theme(screen: &ScreenArgs, config: &Config) -> Result<Theme, Error> {
    let name = screen.theme.as_deref().or(config.theme.as_deref()).unwrap_or("dark");
    let theme = Theme::load(name)?;
    // https://no-color.org: any non-empty value.
    let no_color = std::env::var("NO_COLOR").is_ok_and(|v| !v.is_empty());
    Ok(if no_color { Theme::blank() } else { theme })
}

fn prefs(config: &Config) -> Prefs {
    let d = Prefs::default();
    Prefs {
        auto_popup: config.auto_popup.unwrap_or(d.auto_popup),
        bell: config.bell.unwrap_or(d.bell),
        desktop: config.desktop_notifications.unwrap_or(d.desktop),
        answer_timeout: config
            .answer_timeout
            .map_or(d.answer_timeout, jiff::SignedDuration::from_secs_f64),
    }
}

/// Watches `specs` until the user quits (or `--until` is met), then stops the engine. Their
/// taps listen from the start: a taken port is an error before anything else runs.
pub async fn run(specs: Vec<AgentSpec>, opts: WatchOptions, config: &Config, screen: &ScreenArgs) -> Result<(), Error> {
    let taps = bind_taps(&specs).await?;
    for line in taps.describe() {
        super::out::error(&format!("a2a-watch: {line}"));
    }
    watch(specs, taps, opts, config, screen).await
}

/// Binds the taps of `specs` (`AgentSpec::tap`), so that a caller can tell a planner where they are.
pub async fn bind_taps(specs: &[AgentSpec]) -> Result<Taps, Error> {
    Taps::bind(specs).await.map_err(|(at, source)| Error::Io {
        what: format!("the tap on {at}"),
        source,
    })
}

/// `run`, with the taps already bound.
pub async fn watch(
    specs: Vec<AgentSpec>,
    taps: Taps,
    opts: WatchOptions,
    config: &Config,
    screen: &ScreenArgs,
) -> Result<(), Error> {
    let theme = theme(screen, config)?;
    let keys = KeyMap::with_overrides(config.key_overrides())?;
    init_logging(screen.log_file.clone().or(config.log_file.clone()))?;
    let mut store = Store::new(specs.iter().map(|s| (s.name.clone(), s.url.clone())));
    for (entry, spec) in store.agents.iter_mut().zip(&specs) {
        entry.group.clone_from(&spec.group);
    }
    store.limits = Limits {
        timeline: config.timeline_limit.unwrap_or(Limits::default().timeline),
        history: config.history_limit.unwrap_or(Limits::default().history),
        ..Limits::default()
    };
    let traces = super::otlp::start(&screen.otlp, config, &mut store)?;
    let export_queue = traces.as_ref().map(super::otlp::Running::queue);
    // Held to the end: dropping it stops the metrics server.
    let _metrics = super::metrics::start(&screen.metrics, config, &mut store, export_queue.clone()).await?;
    let given: Vec<TaskKey> = (specs.iter().enumerate())
        .flat_map(|(agent, s)| {
            s.tasks.iter().map(move |id| TaskKey {
                agent,
                id: id.as_str().into(),
            })
        })
        .collect();
    let recorder = match &screen.record {
        Some(path) => Some(
            Recorder::create(
                path,
                specs.iter().map(|s| RecordedAgent {
                    group: s.group.clone(),
                    ..RecordedAgent::from((s.name.clone(), s.url.clone()))
                }),
                screen.force,
            )
            .map_err(|source| Error::Io {
                what: path.display().to_string(),
                source,
            })?,
        ),
        None => None,
    };
    let (tx, rx) = crate::event::channel(1024);
    // Held to the end: dropping it stops the taps with the engine.
    let _taps = taps.start(tx.clone());
    let engine = Engine::start(specs, opts, tx);
    let front = if screen.json {
        Some(Front::Json {
            until: screen.until,
            given,
        })
    } else {
        screen.headless.then_some(Front::Headless)
    };
    let result = if let Some(front) = front {
        headless::run(store, rx, front, recorder).await
    } else {
        let (commands, mut outbox) = mpsc::channel(64);
        let engine = &engine;
        let forward = async move {
            while let Some((agent, command)) = outbox.recv().await {
                engine.command(agent, command).await;
            }
        };
        let mut app = App::new(store, keys, theme);
        app.set_prefs(prefs(config));
        // The forwarder ends when the dashboard drops its sender.
        let (result, ()) = tokio::join!(
            crate::run::live::dashboard(app, rx, commands, recorder, export_queue),
            forward
        );
        result.map_err(Error::from)
    };
    // Streams are dropped with the engine; give it a moment, not forever: a service sent SIGTERM
    // is out within 2 s (issue 22), and push cleanup's own 1.5 s fits in this.
    // Spans are flushed meanwhile, within the same 2 s.
    let flush = async {
        if let Some(traces) = traces {
            traces.finish().await;
        }
    };
    let _ = tokio::join!(
        tokio::time::timeout(Duration::from_millis(1800), engine.shutdown()),
        flush
    );
    result
}
