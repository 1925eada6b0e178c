//! Sending finished spans to an OpenTelemetry collector without ever slowing the store (issue 22,
//! "OpenTelemetry traces"): the store's observer pushes into a bounded queue that drops the oldest
//! span when full (and counts it); a task on the runtime takes batches from it and hands them to
//! the maintained OTLP exporter (`opentelemetry-otlp`: HTTP/protobuf, or gRPC when
//! `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`). docs/otlp-notes.md says why not the SDK's batch processor.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use opentelemetry_otlp::{Protocol, RetryPolicy, WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SpanData, SpanExporter as _};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Spans held while the collector is slow or away; past it the oldest are dropped. The batch being
/// sent (and retried) is held beside them.
pub const QUEUE_CAPACITY: usize = 2048;
/// Spans per export request.
const BATCH: usize = 512;
/// How long a span may wait for a batch to fill.
const LINGER: Duration = Duration::from_millis(500);
/// Tries a batch gets before its spans are dropped (issue 22: retried with backoff, not dropped
/// at once). The exporter makes them (`RetryPolicy`): only what OTLP calls retryable (no answer,
/// 429, 502, 503, 504, their gRPC kin), and it honours a collector's `Retry-After`.
const ATTEMPTS: usize = 3;
/// The wait before the second try; doubled before each further one, up to `BACKOFF_MAX`. While
/// the collector stays down, the next batch waits as long after a batch given up on.
const BACKOFF_FIRST: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(4);
/// Randomness added to each retry's wait, so that many a2a-watch do not retry in step.
const JITTER: Duration = Duration::from_millis(100);
/// What a flush on exit may take (issue 22: flush on exit within 2 s).
pub const FLUSH_WITHIN: Duration = Duration::from_secs(2);

/// Where and how spans go, as `--otlp` and the `OTEL_*` variables say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// A base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`'s form), or one ending in `/v1/traces`.
    pub endpoint: String,
    /// `endpoint` came from `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, which the OTLP exporter spec
    /// ("Endpoint URLs for OTLP/HTTP") says is used as is.
    pub traces_url: bool,
    pub grpc: bool,
}

impl Settings {
    /// The settings `--otlp` or the environment asks for, `flag` (`--otlp`, else config `otlp`)
    /// first; `None` when neither names an endpoint. `env` reads a variable (the process's, or a
    /// test's own).
    pub fn from(flag: Option<&str>, env: impl Fn(&str) -> Option<String>) -> Option<Settings> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let (endpoint, traces_url) = match flag {
            Some(endpoint) => (endpoint.to_string(), false),
            None => match env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
                Some(endpoint) => (endpoint, true),
                None => (env("OTEL_EXPORTER_OTLP_ENDPOINT")?, false),
            },
        };
        let protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"));
        Some(Settings {
            endpoint,
            traces_url,
            grpc: protocol.is_some_and(|p| p.trim() == "grpc"),
        })
    }

    /// The URL the exporter is given: OTLP/HTTP wants the traces path (OTLP spec, "OTLP/HTTP
    /// Request"), which a base URL gets appended, and gRPC the base URL.
    pub fn export_url(&self) -> String {
        let base = self.endpoint.trim_end_matches('/');
        if self.grpc || self.traces_url || base.ends_with("/v1/traces") {
            base.to_string()
        } else {
            format!("{base}/v1/traces")
        }
    }
}

/// The resource every span carries: `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` as the
/// SDK reads them, with `service.name` `a2a-watch` when neither names the service (issue 22).
fn resource() -> Resource {
    let detected = Resource::builder().build();
    let named = detected
        .get(&opentelemetry::Key::new("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        detected
    } else {
        Resource::builder().with_service_name("a2a-watch").build()
    }
}

/// The spans waiting, shared by the observer that pushes and the task that sends.
#[derive(Debug, Default)]
pub struct Queue {
    spans: Mutex<VecDeque<SpanData>>,
    ready: Notify,
    closing: AtomicBool,
    /// Wakes the sender from a backoff on exit.
    closed: Notify,
    dropped: AtomicU64,
    failed: AtomicU64,
}

impl Queue {
    /// Adds a finished span, dropping the oldest when full; never waits.
    pub fn push(&self, span: SpanData) {
        let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
        if spans.len() >= QUEUE_CAPACITY {
            spans.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        spans.push_back(span);
        let full = spans.len() >= BATCH;
        drop(spans);
        if full {
            self.ready.notify_one();
        }
    }

    /// Spans dropped so far: the oldest when the queue was full, and the batches the collector
    /// did not take in `ATTEMPTS` tries (`a2a_watch_otlp_dropped_total`).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// How the export goes, for the dashboard's title and footer.
    pub fn status(&self) -> ExportStatus {
        ExportStatus {
            failing: self.failing() > 0,
            dropped: self.dropped(),
        }
    }

    /// A batch of `spans` given up on.
    fn lost(&self, spans: usize) {
        self.dropped.fetch_add(spans as u64, Ordering::Relaxed);
    }

    /// Batches that failed in a row; 0 once one gets through (the title's warning).
    pub fn failing(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    pub(super) fn take_batch(&self) -> Vec<SpanData> {
        let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
        let n = spans.len().min(BATCH);
        spans.drain(..n).collect()
    }
}

/// How the export goes, as the dashboard shows it (issue 22): a warning on the title while the
/// collector fails, the spans dropped on the footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExportStatus {
    /// The last batch was not taken, after its retries.
    pub failing: bool,
    /// `Queue::dropped`.
    pub dropped: u64,
}

/// Why no exporter could be made: a malformed endpoint, mostly.
#[derive(Debug, thiserror::Error)]
#[error("OTLP exporter: {0}")]
pub struct BuildError(String);

/// The running sender; `flush` on exit.
#[derive(Debug)]
pub struct Exporting {
    queue: Arc<Queue>,
    task: JoinHandle<()>,
}

impl Exporting {
    /// Builds the exporter for `settings` (it reads `OTEL_EXPORTER_OTLP_HEADERS` itself) and
    /// starts sending what `queue` gets.
    pub fn start(settings: &Settings, queue: Arc<Queue>) -> Result<Exporting, BuildError> {
        let builder = opentelemetry_otlp::SpanExporter::builder();
        let retries = RetryPolicy::recommended()
            .with_max_retries(ATTEMPTS - 1)
            .with_initial_delay(BACKOFF_FIRST)
            .with_max_delay(BACKOFF_MAX)
            .with_max_jitter(JITTER);
        let mut exporter = if settings.grpc {
            builder
                .with_tonic()
                .with_protocol(Protocol::Grpc)
                .with_endpoint(settings.export_url())
                .with_retry_policy(retries)
                .build()
        } else {
            builder
                .with_http()
                .with_protocol(Protocol::HttpBinary)
                .with_endpoint(settings.export_url())
                .with_retry_policy(retries)
                .build()
        }
        .map_err(|e| BuildError(e.to_string()))?;
        exporter.set_resource(&resource());
        let collector = Collector::at(&settings.export_url());
        let task = tokio::spawn(send_batches(exporter, queue.clone(), collector));
        Ok(Exporting { queue, task })
    }

    /// Sends what is queued, giving up after `FLUSH_WITHIN`.
    pub async fn flush(self) {
        self.queue.closing.store(true, Ordering::Relaxed);
        self.queue.ready.notify_one();
        self.queue.closed.notify_one();
        let mut task = self.task;
        if tokio::time::timeout(FLUSH_WITHIN, &mut task).await.is_err() {
            task.abort();
            tracing::warn!("OTLP: spans still queued after {FLUSH_WITHIN:?} on exit were not sent");
        }
    }
}

/// The wait before the next batch after `failed` batches failed in a row: 0.5 s, 1 s, 2 s, then 4 s.
fn backoff(failed: u64) -> Duration {
    let doublings = u32::try_from(failed.saturating_sub(1)).unwrap_or(u32::MAX).min(3);
    (BACKOFF_FIRST * 2u32.pow(doublings)).min(BACKOFF_MAX)
}

/// What the log says of the collector (issue 22: one warning, not a stream): two lines while it
/// stays down, its first failure and the next with the spans dropped so far, and one when it
/// takes spans again.
struct Collector {
    /// Where it is, as the log names it: scheme, host and port, never a credential or query.
    origin: String,
    /// Spans dropped before the outage began, while it lasts.
    outage: Option<u64>,
    /// A second failure in this outage was logged.
    told_again: bool,
}

impl Collector {
    fn at(url: &str) -> Collector {
        let origin = url::Url::parse(url).map_or_else(|_| "the collector".into(), |u| u.origin().ascii_serialization());
        Collector {
            origin,
            outage: None,
            told_again: false,
        }
    }

    /// A batch of `spans` given up on, after `queue` counted it.
    fn failed(&mut self, queue: &Queue, spans: usize, error: &str) {
        // A gRPC collector's status message is its own text (README "Security").
        let error = crate::text::one_line(error);
        let origin = &self.origin;
        match self.outage {
            None => {
                self.outage = Some(queue.dropped() - spans as u64);
                tracing::warn!(
                    "OTLP: {origin} does not take spans ({error}); {spans} dropped after {ATTEMPTS} tries, \
                     the next batches wait with backoff"
                );
            }
            Some(before) if !self.told_again => {
                self.told_again = true;
                let dropped = queue.dropped() - before;
                tracing::warn!("OTLP: {origin} still fails ({error}); spans dropped so far: {dropped}");
            }
            Some(_) => {}
        }
    }

    fn succeeded(&mut self, queue: &Queue) {
        if let Some(before) = self.outage.take() {
            self.told_again = false;
            let dropped = queue.dropped() - before;
            tracing::info!("OTLP: {} takes spans again ({dropped} dropped meanwhile)", self.origin);
        }
    }
}

/// Batches from `queue` to `exporter` until closed and empty. A batch the exporter could not send
/// in `ATTEMPTS` tries is dropped and counted, and the next waits `backoff`, while the queue keeps
/// taking spans (and dropping the oldest when full). On exit a failure ends the flush.
async fn send_batches(exporter: opentelemetry_otlp::SpanExporter, queue: Arc<Queue>, mut collector: Collector) {
    loop {
        let closing = queue.closing.load(Ordering::Relaxed);
        let batch = queue.take_batch();
        if batch.is_empty() {
            if closing {
                return;
            }
            let _ = tokio::time::timeout(LINGER, queue.ready.notified()).await;
            continue;
        }
        let spans = batch.len();
        match exporter.export(batch).await {
            Ok(()) => {
                queue.failed.store(0, Ordering::Relaxed);
                collector.succeeded(&queue);
            }
            Err(e) => {
                let failed = queue.failed.fetch_add(1, Ordering::Relaxed) + 1;
                queue.lost(spans);
                collector.failed(&queue, spans, &e.to_string());
                if closing {
                    return;
                }
                let _ = tokio::time::timeout(backoff(failed), queue.closed.notified()).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_from_half_a_second_to_four() {
        let waits: Vec<u128> = (1..=6).map(|failed| backoff(failed).as_millis()).collect();
        assert_eq!(waits, [500, 1000, 2000, 4000, 4000, 4000]);
    }

    #[test]
    fn the_log_names_the_collector_by_its_origin_without_credentials_or_query() {
        let collector = Collector::at("https://user:s3cret@collector.example:4318/v1/traces?key=k3y");
        assert_eq!(collector.origin, "https://collector.example:4318");
    }

    #[test]
    fn a_base_url_gets_the_traces_path_once() {
        let http = |endpoint: &str| Settings {
            endpoint: endpoint.into(),
            traces_url: false,
            grpc: false,
        };
        assert_eq!(http("http://c:4318").export_url(), "http://c:4318/v1/traces");
        assert_eq!(http("http://c:4318/").export_url(), "http://c:4318/v1/traces");
        assert_eq!(http("http://c:4318/v1/traces").export_url(), "http://c:4318/v1/traces");
        let grpc = Settings {
            endpoint: "http://c:4317".into(),
            traces_url: false,
            grpc: true,
        };
        assert_eq!(grpc.export_url(), "http://c:4317");
    }

    #[test]
    fn the_flag_comes_before_the_traces_variable_before_the_general_one() {
        fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
            move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| v.to_string())
        }
        let all = &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://general:4318"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:4318/custom"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ];
        let flagged = Settings::from(Some("http://flag:4317"), env(all)).unwrap();
        assert_eq!((flagged.endpoint.as_str(), flagged.grpc), ("http://flag:4317", true));
        let traces = Settings::from(None, env(all)).unwrap();
        assert_eq!(traces.export_url(), "http://traces:4318/custom");
        let general = Settings::from(None, env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://general:4318")])).unwrap();
        assert_eq!(
            (general.export_url().as_str(), general.grpc),
            ("http://general:4318/v1/traces", false)
        );
        assert_eq!(Settings::from(None, |_| None), None);
    }
}
