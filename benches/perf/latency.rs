//! Benchmark 6, Latency: from the load agent emitting an event (the status timestamp it stamps, the time
//! the event was due) to the store holding it, under a set background rate.

use std::time::{Duration, Instant};

use jiff::Timestamp;

use a2a_watch::a2a::StreamResponse;
use a2a_watch::app::App;
use a2a_watch::app::keys::KeyMap;
use a2a_watch::event::Event;
use a2a_watch::store::{Change, Store};
use a2a_watch::ui::theme::Theme;
use a2a_watch::watch::{AgentSpec, Engine, WatchOptions};

use crate::render;
use crate::util::{
    LoadServer, Section, Verdict, cpu_seconds, quantile, quick, say, self_cpu_seconds, table, thousands,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Consumer {
    /// Apply each event as it arrives (the `--json` loop).
    Store,
    /// The dashboard's loop: apply what is waiting (up to 4096), redraw at most every 33 ms.
    Dashboard,
}

struct Result {
    latencies_ms: Vec<f64>,
    rate: f64,
    client_cpu: f64,
}

fn measure(streams: usize, per_stream: f64, warmup: Duration, window: Duration, consumer: Consumer) -> Result {
    let events = (per_stream * (warmup + window).as_secs_f64() * 1.5 + 100.0) as usize;
    let s = LoadServer::start(&[
        "--tasks".into(),
        streams.to_string(),
        "--events".into(),
        events.to_string(),
        "--rate".into(),
        per_stream.to_string(),
    ]);
    let url = s.url().to_string();
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let _ = cpu_seconds(s.pid());
    let (latencies_ms, count, secs, cpu) = rt.block_on(async move {
        let (tx, mut rx) = a2a_watch::event::channel(1024);
        let opts = WatchOptions {
            max_streams: streams.max(1),
            ..WatchOptions::default()
        };
        let engine = Engine::start(vec![AgentSpec::new(url.clone())], opts, tx);
        let mut app = App::new(Store::new([(None, url)]), KeyMap::default(), Theme::default());
        let mut term = render::terminal();
        let start = Instant::now();
        let mut measuring_since = None;
        let mut cpu0 = 0.0;
        let mut lat = Vec::new();
        let mut count = 0u64;
        let mut last_draw = Instant::now();
        let frame = Duration::from_millis(33);
        let mut dirty = false;
        loop {
            let Some(ev) = rx.recv().await else { break };
            let mut batch = vec![ev];
            if consumer == Consumer::Dashboard {
                while batch.len() < 4096 {
                    match rx.try_recv() {
                        Ok(ev) => batch.push(ev),
                        Err(_) => break,
                    }
                }
            }
            let measuring = measuring_since.is_some();
            for ev in batch {
                let emitted = match &ev {
                    Event::Update {
                        event: StreamResponse::StatusUpdate(u),
                        ..
                    } => u.status.timestamp,
                    _ => None,
                };
                let changed = app.store.apply(ev) != Change::Nothing;
                dirty |= changed;
                if let (Some(at), true) = (emitted, measuring) {
                    count += 1;
                    let held = Timestamp::now();
                    lat.push(held.duration_since(at).as_secs_f64() * 1e3);
                }
            }
            if consumer == Consumer::Dashboard && dirty && last_draw.elapsed() >= frame {
                app.now = Timestamp::now();
                render::frame(&mut term, &mut app);
                last_draw = Instant::now();
                dirty = false;
            }
            if measuring_since.is_none() && start.elapsed() >= warmup {
                measuring_since = Some(Instant::now());
                cpu0 = self_cpu_seconds();
            }
            if let Some(since) = measuring_since
                && since.elapsed() >= window
            {
                break;
            }
        }
        let secs = measuring_since.map_or(0.0, |s| s.elapsed().as_secs_f64());
        let cpu = self_cpu_seconds() - cpu0;
        drop(rx);
        let _ = tokio::time::timeout(Duration::from_secs(2), engine.shutdown()).await;
        (lat, count, secs, cpu)
    });
    let mut latencies_ms = latencies_ms;
    latencies_ms.sort_by(|a, b| a.total_cmp(b));
    Result {
        rate: count as f64 / secs.max(1e-9),
        client_cpu: cpu / secs.max(1e-9),
        latencies_ms,
    }
}

pub fn run() -> Section {
    let warmup = Duration::from_secs(2);
    let window = Duration::from_secs(if quick() { 5 } else { 15 });
    let cases = [
        (
            "10,000 events/s (100 streams × 100/s), store",
            100,
            100.0,
            Consumer::Store,
        ),
        (
            "10,000 events/s (100 streams × 100/s), dashboard loop",
            100,
            100.0,
            Consumer::Dashboard,
        ),
        (
            "20 events/s (1 stream), store — no background load",
            1,
            20.0,
            Consumer::Store,
        ),
    ];
    let mut rows = Vec::new();
    let mut headline = (f64::NAN, f64::NAN);
    let mut worst_p99: f64 = 0.0;
    for (i, (name, streams, per, consumer)) in cases.iter().enumerate() {
        say(format!("latency: {name}"));
        let r = measure(*streams, *per, warmup, window, *consumer);
        let q = |p: f64| quantile(&r.latencies_ms, p);
        if i == 0 {
            headline = (q(0.5), q(0.99));
        }
        if *streams > 1 {
            worst_p99 = worst_p99.max(q(0.99));
        }
        rows.push(vec![
            name.to_string(),
            thousands(r.latencies_ms.len() as f64),
            thousands(r.rate),
            format!("{:.2} ms", q(0.5)),
            format!("{:.2} ms", q(0.9)),
            format!("**{:.2} ms**", q(0.99)),
            format!("{:.2} ms", q(1.0)),
            format!("{:.0}%", r.client_cpu * 100.0),
        ]);
    }
    let body = format!(
        "`serve-load --tasks N --events … --rate R`: each stream sends R status updates a second on a tokio interval \
(missed ticks burst), and stamps each with the time it was *due*, so a server held back by a slow reader counts as \
latency. In process: `Engine::start` → channel → consumer; latency = `Timestamp::now()` right after `Store::apply` \
minus the event's status timestamp (same machine, same clock). *Dashboard loop* replays the TUI loop with a \
`TestBackend` 200x50: apply everything waiting (up to 4096), redraw when dirty and ≥ 33 ms since the last frame, so \
events that arrive during a draw wait for it. {warmup:?} warm-up, then {window:?} measured.\n\n{}\n\
Target: p99 < 33 ms under 10,000 events/s.\n",
        table(
            &[
                "load",
                "events measured",
                "events/s seen",
                "p50",
                "p90",
                "p99",
                "max",
                "client CPU"
            ],
            &rows
        ),
    );
    Section {
        number: 6,
        title: "Latency",
        target: "p99 < 33 ms at 10,000 events/s".into(),
        result: format!(
            "p50 {:.2} ms, p99 {:.2} ms (store); worst p99 {worst_p99:.2} ms",
            headline.0, headline.1
        ),
        verdict: Verdict::of(worst_p99 < 33.0),
        body,
    }
}
