//! `--otlp` (config `otlp`, or `OTEL_EXPORTER_OTLP_ENDPOINT`): the engine's traces, a span per task
//! sent to an OpenTelemetry collector, started beside the dashboard, `--json` or `--headless` on
//! the store they apply events to (README "Monitoring stack", issue 22 "OpenTelemetry traces").

use std::sync::Arc;

use super::Error;
use super::args::OtlpArgs;
use crate::config::Config;
use crate::store::Store;
use crate::traces::{Exporting, Queue, Settings, Traces};

/// The spans of a run and the task sending them.
#[derive(Debug)]
pub struct Running {
    traces: Traces,
    exporting: Exporting,
    queue: Arc<Queue>,
}

impl Running {
    /// The spans waiting: their dropped count and whether the collector fails, for the metrics
    /// and the dashboard.
    pub fn queue(&self) -> Arc<Queue> {
        self.queue.clone()
    }

    /// At the run's end: the tasks still going are sent unfinished, then everything queued is
    /// flushed (within `traces::FLUSH_WITHIN`).
    pub async fn finish(self) {
        self.traces.finish_unfinished();
        self.exporting.flush().await;
    }
}

/// Starts the traces of `store`, if an endpoint is named; a malformed one is a usage error (exit 2).
pub fn start(args: &OtlpArgs, config: &Config, store: &mut Store) -> Result<Option<Running>, Error> {
    let flag = args.otlp.as_deref().or(config.otlp.as_deref());
    let Some(settings) = Settings::from(flag, |name| std::env::var(name).ok()) else {
        return Ok(None);
    };
    let queue = Arc::new(Queue::default());
    let exporting = Exporting::start(&settings, queue.clone()).map_err(|e| Error::Usage(e.to_string()))?;
    let include_text = args.otlp_include_text || config.otlp_include_text;
    let traces = Traces::observe(store, include_text, queue.clone());
    Ok(Some(Running {
        traces,
        exporting,
        queue,
    }))
}
