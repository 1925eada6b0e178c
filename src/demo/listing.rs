//! ListTasks over a snapshot of the store: filters, newest status first, cursor paging
//! (spec §3.1.4), and the history/artifact trimming GetTask shares (§3.2.4).

use super::error::{ApiError, ApiResult};
use crate::a2a::{ListTasksRequest, ListTasksResponse, Task, TaskState};

const DEFAULT_PAGE_SIZE: u32 = 50;
const MAX_PAGE_SIZE: u32 = 100;

/// The task as a reader asked for it: at most `history_length` recent messages (0 = none,
/// unset = all), artifacts only when wanted.
pub fn view(task: &Task, history_length: Option<u32>, include_artifacts: bool) -> Task {
    let mut task = task.clone();
    if let Some(keep) = history_length {
        let keep = usize::try_from(keep).unwrap_or(usize::MAX);
        let drop = task.history.len().saturating_sub(keep);
        task.history.drain(..drop);
    }
    if !include_artifacts {
        task.artifacts.clear();
    }
    task
}

/// Sort key: newest status timestamp first, then id, so the order is total and a cursor exact.
/// A task without a timestamp sorts last.
fn key(task: &Task) -> (i128, &str) {
    let nanos = task.status.timestamp.map_or(i128::MIN, |t| t.as_nanosecond());
    (nanos, task.id.as_str())
}

/// The cursor is the key of the last task served, written as `<nanos>.<id>`; clients treat it
/// as opaque.
fn token(task: &Task) -> String {
    let (nanos, id) = key(task);
    format!("{nanos}.{id}")
}

fn parse_token(token: &str) -> ApiResult<(i128, &str)> {
    token
        .split_once('.')
        .and_then(|(nanos, id)| Some((nanos.parse().ok()?, id)))
        .ok_or_else(|| ApiError::invalid_params(format!("pageToken {token:?} is not one we issued")))
}

pub fn page(mut tasks: Vec<Task>, request: &ListTasksRequest) -> ApiResult<ListTasksResponse> {
    let page_size = request.page_size.unwrap_or(DEFAULT_PAGE_SIZE);
    if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(ApiError::invalid_params(format!(
            "pageSize must be between 1 and {MAX_PAGE_SIZE}, not {page_size}"
        )));
    }
    if let Some(state @ (TaskState::Unspecified | TaskState::Unknown(_))) = &request.status {
        return Err(ApiError::invalid_params(format!(
            "status {} is not a task state",
            state.proto_name()
        )));
    }
    let after = request.status_timestamp_after;
    tasks.retain(|t| {
        request.context_id.as_ref().is_none_or(|c| *c == t.context_id)
            && request.status.as_ref().is_none_or(|s| *s == t.status.state)
            && after.is_none_or(|after| t.status.timestamp.is_some_and(|ts| ts >= after))
    });
    tasks.sort_by(|a, b| key(b).cmp(&key(a)));
    let total_size = u32::try_from(tasks.len()).unwrap_or(u32::MAX);
    let start = match request.page_token.as_deref().filter(|t| !t.is_empty()) {
        Some(token) => {
            let cursor = parse_token(token)?;
            tasks.partition_point(|t| key(t) >= cursor)
        }
        None => 0,
    };
    let rest = &tasks[start..];
    let served = &rest[..rest.len().min(page_size as usize)];
    let next_page_token = match served.last() {
        Some(last) if served.len() < rest.len() => token(last),
        _ => String::new(),
    };
    let include_artifacts = request.include_artifacts.unwrap_or(false);
    Ok(ListTasksResponse {
        tasks: served
            .iter()
            .map(|t| view(t, request.history_length, include_artifacts))
            .collect(),
        next_page_token,
        page_size,
        total_size,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a::ErrorKind;
    use crate::a2a::{Artifact, TaskStatus};

    fn task(id: &str, context: &str, state: TaskState, second: i64) -> Task {
        Task {
            id: id.into(),
            context_id: context.into(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: Some(jiff::Timestamp::from_second(1_800_000_000 + second).unwrap()),
            },
            artifacts: vec![Artifact::default()],
            ..Task::default()
        }
    }

    fn tasks() -> Vec<Task> {
        vec![
            task("a", "c1", TaskState::Completed, 1),
            task("b", "c1", TaskState::Working, 3),
            task("c", "c2", TaskState::Working, 2),
            task("d", "c2", TaskState::Working, 3),
        ]
    }

    fn ids(response: &ListTasksResponse) -> Vec<&str> {
        response.tasks.iter().map(|t| t.id.as_str()).collect()
    }

    #[test]
    fn newest_first_in_pages_that_end_with_an_empty_token() {
        let mut request = ListTasksRequest {
            page_size: Some(3),
            ..ListTasksRequest::default()
        };
        let first = page(tasks(), &request).unwrap();
        assert_eq!(ids(&first), ["d", "b", "c"]);
        assert_eq!((first.total_size, first.page_size), (4, 3));
        assert!(first.tasks.iter().all(|t| t.artifacts.is_empty()));
        request.page_token = Some(first.next_page_token);
        request.include_artifacts = Some(true);
        let second = page(tasks(), &request).unwrap();
        assert_eq!(ids(&second), ["a"]);
        assert_eq!(second.next_page_token, "");
        assert_eq!(second.tasks[0].artifacts.len(), 1);
    }

    #[test]
    fn filters_combine() {
        let request = ListTasksRequest {
            context_id: Some("c2".into()),
            status: Some(TaskState::Working),
            status_timestamp_after: Some(jiff::Timestamp::from_second(1_800_000_003).unwrap()),
            ..ListTasksRequest::default()
        };
        assert_eq!(ids(&page(tasks(), &request).unwrap()), ["d"]);
    }

    #[test]
    fn bad_sizes_tokens_and_states_are_invalid_params() {
        for request in [
            ListTasksRequest {
                page_size: Some(0),
                ..ListTasksRequest::default()
            },
            ListTasksRequest {
                page_size: Some(101),
                ..ListTasksRequest::default()
            },
            ListTasksRequest {
                page_token: Some("garbage".into()),
                ..ListTasksRequest::default()
            },
            ListTasksRequest {
                status: Some(TaskState::Unknown("TASK_STATE_NAPPING".into())),
                ..ListTasksRequest::default()
            },
        ] {
            assert_eq!(page(tasks(), &request).unwrap_err().kind, ErrorKind::InvalidParams);
        }
    }
}
