//! The command line: the dashboard (no subcommand), its headless twins (`--json`, `--headless`), a
//! scriptable A2A client, and the demo. Exit codes: 0 success, 1 protocol or transport error,
//! 2 bad usage.
//!
//! Here: start-up and the dispatcher. The schema is in `args`, the agents to watch (flags and
//! config merged) in `specs`, the client commands in `commands`, the demo wiring in `demo`, the
//! front ends in `dashboard` and `headless`, and the app's errors with their exit codes in `error`.

mod args;
mod artifacts;
mod commands;
mod conventions;
mod dashboard;
mod demo;
mod error;
mod follow;
mod headless;
mod metrics;
mod otlp;
mod out;
mod parts;
mod print;
mod replay;
mod specs;
mod status;

use std::process::ExitCode;

use clap::Parser;

use crate::config::Config;
pub use args::{BindingArg, Cli, Command, ConnArgs, ReplyArgs, WatchArgs};
pub use error::Error;
use specs::{agent_specs, push_receiver, watch_options};

/// Every watched stream holds a socket: lift the soft limit on open files to the hard one, so a
/// dashboard on thousands of tasks does not run out (the engine also caps streams per agent).
/// Public for the benchmarks' load agent, which holds as many streams from the other end.
pub fn raise_open_file_limit() {
    #[cfg(unix)]
    // SAFETY: getrlimit/setrlimit only read and write the struct passed in.
    unsafe {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                tracing::warn!("could not raise the open-file limit");
            }
        }
    }
}

/// Parses the arguments, runs the command, and maps the outcome to an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    raise_open_file_limit();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            out::error(&format!("a2a-watch: cannot start the async runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            out::error(&format!("a2a-watch: {}", crate::text::one_line(&e.to_string())));
            ExitCode::from(e.exit_code())
        }
    }
}

/// Runs one parsed command line: the dashboard, or the command it names.
pub async fn run(cli: Cli) -> Result<(), Error> {
    let conn = &cli.conn;
    let Some(command) = cli.command else {
        return watch(conn, &cli.watch).await;
    };
    match command {
        Command::Card { url, json, extended } => commands::card(conn, &url, json, extended).await,
        Command::List {
            url,
            context,
            state,
            json,
        } => commands::list(conn, &url, context, state, json).await,
        Command::Send {
            url,
            text,
            parts,
            context,
            follow,
            no_wait,
        } => commands::send(conn, &url, text, &parts, context, follow, no_wait).await,
        Command::Reply(args) => commands::reply(conn, args).await,
        Command::Get {
            url,
            task_id,
            history,
            json,
            save_artifacts,
            force,
        } => {
            let save_to = save_artifacts.as_deref().map(|dir| (dir, force));
            commands::get(conn, &url, &task_id, history, json, save_to).await
        }
        Command::Cancel { url, task_id } => commands::cancel(conn, &url, &task_id).await,
        Command::ServeDemo { base_port, delay } => {
            let token = conn.token.as_ref().map_or("demo-token", |t| t.expose()).to_string();
            demo::serve(base_port, token, delay).await
        }
        Command::Demo {
            base_port,
            delay,
            screen,
        } => demo::run(base_port, delay, &screen).await,
        Command::Replay(args) => replay::run(args, cli.watch.config.as_deref()).await,
        Command::Status(args) => status::status(conn, args, cli.watch).await,
        Command::Completions { shell } => {
            conventions::completions(shell);
            Ok(())
        }
        Command::Man => conventions::man(),
    }
}

/// The dashboard on the configured agents.
async fn watch(conn: &ConnArgs, args: &WatchArgs) -> Result<(), Error> {
    let config = Config::load(args.config.as_deref())?;
    let specs = agent_specs(conn, args, &config)?;
    if specs.is_empty() {
        return Err(Error::Usage(
            "no agents to watch: pass --agent URL, add [[agent]] to the config file, or try `a2a-watch demo`".into(),
        ));
    }
    let mut opts = watch_options(args, &config);
    opts.push = push_receiver(args, &config).await?;
    dashboard::run(specs, opts, &config, &args.screen).await
}
