//! `--metrics-listen` (config `metrics_listen`): the engine's metrics server, started beside the
//! dashboard, `--json` or `--headless` on the store they apply events to (README "Monitoring stack").

use std::sync::Arc;

use super::Error;
use super::args::MetricsArgs;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::metrics::serve::{BindError, Running, Server, Settings};
use crate::store::Store;
use crate::traces::Queue;

/// Starts serving the metrics of `store`, if asked to; its address goes to stderr, as a tap's
/// does. A non-loopback address without `--metrics-allow-remote` is a usage error (exit 2).
/// `otlp`, the queue of spans being exported, adds `a2a_watch_otlp_dropped_total`.
pub async fn start(
    args: &MetricsArgs,
    config: &Config,
    store: &mut Store,
    otlp: Option<Arc<Queue>>,
) -> Result<Option<Running>, Error> {
    let Some(listen) = args.metrics_listen.or(config.metrics_listen) else {
        return Ok(None);
    };
    let settings = Settings {
        listen,
        allow_remote: args.metrics_allow_remote || config.metrics_allow_remote,
        token: config.metrics_token.as_ref().map(|t| t.expose().to_string()),
    };
    let server = Server::bind(&settings).await.map_err(|e| match e {
        BindError::NotLoopback(reason) => Error::Usage(reason),
        BindError::Io(source) => Error::Io {
            what: format!("serving metrics on {listen}"),
            source,
        },
    })?;
    if let Ok(at) = server.address() {
        let token = if settings.token.is_some() {
            " (bearer token required)"
        } else {
            ""
        };
        super::out::error(&format!("a2a-watch: metrics: http://{at}/metrics{token}"));
    }
    let metrics = Metrics::observe(store);
    if let Some(queue) = otlp {
        metrics.count_otlp_drops(queue);
    }
    Ok(Some(server.start(metrics)))
}
