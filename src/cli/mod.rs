//! The command line: the dashboard (no subcommand), its headless twin (`--json`), a
//! scriptable A2A client, and the demo. Exit codes: 0 success, 1 protocol or transport error,
//! 2 bad usage.

mod args;
mod dashboard;
mod demo;
mod follow;
mod headless;
mod out;
mod print;
mod specs;

use std::process::ExitCode;

use clap::Parser;

use crate::a2a::client::{Listing, MAX_PAGES};
use crate::a2a::interactions::{self, Answer, Interaction};
use crate::a2a::{Client, Error, ListTasksRequest, Message, Part, SendMessageRequest, StreamResponse, Task, TaskState};
use crate::config::Config;
use crate::ndjson::{self, EventLine, TaskLine};
pub use args::{BindingArg, Cli, Command, ConnArgs, WatchArgs};
use specs::{agent_specs, watch_options};

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
            ExitCode::from(if matches!(e, Error::Usage(_)) { 2 } else { 1 })
        }
    }
}

pub async fn run(cli: Cli) -> Result<(), Error> {
    let conn = &cli.conn;
    let Some(command) = cli.command else {
        return watch(conn, &cli.watch).await;
    };
    match command {
        Command::Card { url, json } => {
            let client = conn.connect(&url).await?;
            if json {
                out::line(&ndjson::to_json_pretty(&client.card));
            } else {
                out::print(&print::card_summary(&client));
            }
        }
        Command::List {
            url,
            context,
            state,
            json,
        } => {
            let client = conn.connect(&url).await?;
            let req = ListTasksRequest {
                context_id: context,
                status: state.as_deref().map(parse_state).transpose()?,
                ..ListTasksRequest::default()
            };
            let Listing { tasks, cut } = client.list_pages(&req, MAX_PAGES).await?;
            if cut {
                let agent = crate::text::one_line(&client.name);
                out::error(&format!(
                    "a2a-watch: {agent}: the listing stopped at {MAX_PAGES} pages; the agent offered more"
                ));
            }
            if json {
                for t in &tasks {
                    out::line(&EventLine::new(&client.name, "task", &TaskLine::from_task(t)).to_json());
                }
            } else {
                out::print(&print::task_table(&tasks));
            }
        }
        Command::Send {
            url,
            text,
            context,
            follow,
            no_wait,
        } => {
            let client = conn.connect(&url).await?;
            let mut message = Message::user(vec![Part::text(text)]);
            message.context_id = context;
            let req = if no_wait {
                SendMessageRequest::without_waiting(message)
            } else {
                SendMessageRequest::new(message)
            };
            deliver(&client, &req, follow, false).await?;
        }
        Command::Reply {
            url,
            task_id,
            text,
            approve,
            deny,
            connected,
            value,
            message_id,
            follow,
            force,
        } => {
            let client = conn.connect(&url).await?;
            let task = client.get_task(&task_id, Some(0)).await?;
            let answer = match (approve, deny, connected, value) {
                (true, _, _, _) => Some(Answer::Approved(true)),
                (_, true, _, _) => Some(Answer::Approved(false)),
                (_, _, Some(c), _) => Some(Answer::Connected(c)),
                (_, _, _, Some(v)) => Some(Answer::Value(v)),
                _ => None,
            };
            let message = reply_message(&task, text, answer, message_id, force)?;
            deliver(
                &client,
                &SendMessageRequest {
                    message,
                    ..Default::default()
                },
                follow,
                true,
            )
            .await?;
        }
        Command::Get {
            url,
            task_id,
            history,
            json,
        } => {
            let client = conn.connect(&url).await?;
            let task = client.get_task(&task_id, history).await?;
            if json {
                out::line(&ndjson::to_json_pretty(&task));
            } else {
                out::print(&print::task_detail(&task));
            }
        }
        Command::Cancel { url, task_id } => {
            let client = conn.connect(&url).await?;
            let task = client.cancel_task(&task_id).await?;
            out::line(&EventLine::new(&client.name, "task", &TaskLine::from_task(&task)).to_json());
        }
        Command::ServeDemo {
            base_port,
            token,
            delay,
        } => demo::serve(base_port, token, delay).await?,
        Command::Demo {
            base_port,
            delay,
            screen,
        } => demo::run(base_port, delay, &screen).await?,
    }
    Ok(())
}

fn parse_state(s: &str) -> Result<TaskState, Error> {
    match TaskState::from_name(s) {
        TaskState::Unknown(name) => Err(Error::Usage(format!(
            "--state {name:?} is not a task state (submitted, working, input-required, auth-required, completed, failed, canceled, rejected)"
        ))),
        state => Ok(state),
    }
}

/// The answer to an interrupted task: text on the same task and context (spec section 3.4.3),
/// or an interactions/v1 answer. A task that is no longer waiting is not answered. The
/// messageId follows the rule the dashboard uses too (`interactions::message_id`), so the same
/// answer sent from both is answered once; `--message-id` overrides it.
fn reply_message(
    task: &Task,
    text: Option<String>,
    answer: Option<Answer>,
    message_id: Option<String>,
    force: bool,
) -> Result<Message, Error> {
    let state = &task.status.state;
    let Some(answer) = answer else {
        if !force && *state != TaskState::InputRequired {
            return Err(Error::Usage(format!(
                "task {} is {state}, not waiting for input; nothing sent (--force sends anyway)",
                task.id
            )));
        }
        let text = text.unwrap_or_default();
        let message_id = message_id
            .unwrap_or_else(|| interactions::message_id(&task.id, &task.status, &Answer::Value(text.clone())));
        let mut message = Message::on_task(vec![Part::text(text)], &task.id, &task.context_id);
        message.message_id = message_id;
        return Ok(message);
    };
    let interaction = task.status.message.as_ref().and_then(Interaction::of).ok_or_else(|| {
        Error::Usage(format!(
            "task {} ({state}) has no open interactions/v1 interaction; nothing sent",
            task.id
        ))
    })?;
    if !force && !state.is_interrupted() {
        return Err(Error::Usage(format!(
            "task {} is {state}, no longer waiting; nothing sent",
            task.id
        )));
    }
    let message_id = message_id.unwrap_or_else(|| interactions::message_id(&task.id, &task.status, &answer));
    Ok(interactions::answer(
        &task.id,
        &task.context_id,
        &interaction,
        &answer,
        &message_id,
    ))
}

/// Sends a message and prints what comes back: one line, or every event with `follow`.
async fn deliver(client: &Client, req: &SendMessageRequest, follow: bool, continues_task: bool) -> Result<(), Error> {
    if follow {
        return follow::send_and_follow(client, req, continues_task).await;
    }
    let result = client.send_message(req).await?;
    let mut line = TaskLine::default();
    line.apply(&result);
    let kind = if matches!(result, StreamResponse::Message(_)) {
        "message"
    } else {
        "task"
    };
    out::line(&EventLine::new(&client.name, kind, &line).to_json());
    Ok(())
}

/// The dashboard on the configured agents.
async fn watch(conn: &ConnArgs, args: &WatchArgs) -> Result<(), Error> {
    let config = Config::load(args.config.as_deref()).map_err(|e| Error::Usage(e.to_string()))?;
    let specs = agent_specs(conn, args, &config)?;
    if specs.is_empty() {
        return Err(Error::Usage(
            "no agents to watch: pass --agent URL, add [[agent]] to the config file, or try `a2a-watch demo`".into(),
        ));
    }
    dashboard::run(specs, watch_options(args, &config), &config, &args.screen).await
}
