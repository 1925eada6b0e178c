//! Benchmark 13, monitoring on (issue 22): benchmark 9's `--json` end-to-end run and benchmark
//! 5's idle dashboard, each again with Prometheus metrics served (`--metrics-listen`) and scraped
//! every second, and OpenTelemetry spans exported (`--otlp`) to a loopback receiver that answers
//! 200 to every `POST /v1/traces`: within 1.2x of the same without.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::e2e;
use crate::idle;
use crate::util::{Section, Verdict, median, quick, say, table, thousands};

/// What the monitoring stack did in a run: scrapes answered, export requests received.
#[derive(Default)]
struct Counts {
    scrapes: AtomicU64,
    exports: AtomicU64,
    export_bytes: AtomicU64,
}

/// A loopback OTLP/HTTP receiver and a Prometheus scraper, for as long as it lives.
struct Monitoring {
    otlp: SocketAddr,
    metrics: SocketAddr,
    counts: Arc<Counts>,
    stop: Arc<AtomicBool>,
}

impl Monitoring {
    fn start() -> Option<Monitoring> {
        let receiver = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).ok()?;
        // A port nothing listens on yet, for the binary's --metrics-listen.
        let metrics = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).ok()?.local_addr().ok()?;
        let m = Monitoring {
            otlp: receiver.local_addr().ok()?,
            metrics,
            counts: Arc::default(),
            stop: Arc::default(),
        };
        let counts = m.counts.clone();
        std::thread::spawn(move || {
            for conn in receiver.incoming().flatten() {
                let counts = counts.clone();
                std::thread::spawn(move || answer_exports(conn, &counts));
            }
        });
        let (counts, stop) = (m.counts.clone(), m.stop.clone());
        std::thread::spawn(move || {
            // The first scrape as soon as the binary listens, then one a second, as Prometheus
            // scrapes a target it has found.
            while !stop.load(Ordering::Relaxed) {
                let pause = if scrape(metrics) {
                    counts.scrapes.fetch_add(1, Ordering::Relaxed);
                    Duration::from_secs(1)
                } else {
                    Duration::from_millis(50)
                };
                std::thread::sleep(pause);
            }
        });
        Some(m)
    }

    /// The binary's arguments that turn both on.
    fn args(&self) -> Vec<String> {
        vec![
            "--metrics-listen".into(),
            self.metrics.to_string(),
            "--otlp".into(),
            format!("http://{}", self.otlp),
        ]
    }

    fn counts(&self) -> (u64, u64, u64) {
        let c = &self.counts;
        let get = |n: &AtomicU64| n.load(Ordering::Relaxed);
        (get(&c.scrapes), get(&c.exports), get(&c.export_bytes))
    }
}

impl Drop for Monitoring {
    fn drop(&mut self) {
        // The receiver's thread stays blocked in accept until the bench exits; it costs nothing.
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Answers an exporter's HTTP/1.1 requests on one connection: 200 with an empty body (an
/// ExportTraceServiceResponse with nothing rejected) to `POST /v1/traces`, 404 to anything else.
fn answer_exports(conn: TcpStream, counts: &Counts) {
    let Ok(mut writer) = conn.try_clone() else { return };
    let mut reader = BufReader::new(conn);
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let status = if request.starts_with("POST /v1/traces ") {
            counts.exports.fetch_add(1, Ordering::Relaxed);
            counts.export_bytes.fetch_add(length as u64, Ordering::Relaxed);
            "200 OK"
        } else {
            "404 Not Found"
        };
        let reply = format!("HTTP/1.1 {status}\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n");
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

/// One `GET /metrics`, as Prometheus scrapes; true when it was answered with metrics.
fn scrape(addr: SocketAddr) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if write!(s, "GET /metrics HTTP/1.0\r\nHost: {addr}\r\n\r\n").is_err() {
        return false;
    }
    let mut text = String::new();
    let _ = s.read_to_string(&mut text);
    text.starts_with("HTTP/1.") && text.contains(" 200 ") && text.contains("# TYPE")
}

/// `--json` end to end without and with monitoring, trial by trial.
struct EndToEnd {
    plain: Vec<e2e::Run>,
    monitored: Vec<e2e::Run>,
    counts: (u64, u64, u64),
}

fn end_to_end(events: usize, trials: usize) -> Option<EndToEnd> {
    let timeout = Duration::from_secs(if quick() { 60 } else { 180 });
    let monitoring = Monitoring::start()?;
    let (mut plain, mut monitored) = (Vec::new(), Vec::new());
    for t in 1..=trials {
        say(format!("monitoring: trial {t}/{trials}: --json"));
        plain.extend(e2e::binary(events, timeout, &[]));
        say(format!(
            "monitoring: trial {t}/{trials}: --json with metrics scraped and --otlp"
        ));
        monitored.extend(e2e::binary(events, timeout, &monitoring.args()));
    }
    Some(EndToEnd {
        plain,
        monitored,
        counts: monitoring.counts(),
    })
}

/// The idle dashboard's share of a core without and with monitoring, and what the monitoring did.
fn idle_pair() -> Option<(idle::Idle, idle::Idle, (u64, u64, u64))> {
    let window = Duration::from_secs(if quick() { 10 } else { 30 });
    let trace = Duration::from_secs(2);
    say("monitoring: idle dashboard");
    let plain = idle::measure(1_000, window, trace, &[]);
    let monitoring = Monitoring::start()?;
    say("monitoring: idle dashboard with metrics scraped and --otlp");
    let monitored = idle::measure(1_000, window, trace, &monitoring.args());
    Some((plain, monitored, monitoring.counts()))
}

fn per_update(r: &e2e::Run) -> f64 {
    r.cpu / r.updates.max(1) as f64 * 1e6
}

pub fn run() -> Section {
    // Benchmark 9's 2,000 updates a stream are read in well under a second: five times as many
    // give the scraper a few scrapes in each run.
    let events = if quick() { 2_000 } else { 10_000 };
    let trials = if quick() { 1 } else { 3 };
    let e2e = end_to_end(events, trials);
    let idle = idle_pair();
    let mut rows = Vec::new();
    let mut ratios = Vec::new();
    let mut summary = Vec::new();
    if let Some(e) = &e2e {
        // Side by side, trial by trial, then the median: robust to the machine's drift.
        let mut cpu: Vec<f64> = e
            .plain
            .iter()
            .zip(&e.monitored)
            .map(|(p, m)| per_update(m) / per_update(p))
            .collect();
        let mut rate: Vec<f64> = e
            .plain
            .iter()
            .zip(&e.monitored)
            .map(|(p, m)| p.rate() / m.rate())
            .collect();
        let (cpu, rate) = (
            (!cpu.is_empty()).then(|| median(&mut cpu)),
            (!rate.is_empty()).then(|| median(&mut rate)),
        );
        let med = |runs: &[e2e::Run], f: fn(&e2e::Run) -> f64| median(&mut runs.iter().map(f).collect::<Vec<_>>());
        let (scrapes, exports, bytes) = e.counts;
        let figures = |runs: &[e2e::Run]| {
            format!(
                "{} updates/s, {:.2} µs CPU an update",
                thousands(med(runs, e2e::Run::rate)),
                med(runs, per_update)
            )
        };
        rows.push(vec![
            format!(
                "`--json` end to end, 50 streams × {} updates ({trials} trial(s) each)",
                thousands(events as f64)
            ),
            figures(&e.plain),
            format!(
                "{}; {scrapes} scrapes, {exports} OTLP exports ({} bytes)",
                figures(&e.monitored),
                thousands(bytes as f64)
            ),
            format!(
                "CPU an update {}, time {}",
                cpu.map_or("no data".into(), |r| format!("**{r:.2}x**")),
                rate.map_or("no data".into(), |r| format!("**{r:.2}x**"))
            ),
        ]);
        summary.push(format!("`--json` end to end {}", rows[rows.len() - 1][3]));
        ratios.extend([cpu, rate]);
        // Monitoring that did nothing measured nothing.
        if scrapes == 0 || exports == 0 {
            ratios.push(None);
        }
    }
    if let Some((plain, monitored, (scrapes, exports, _))) = &idle {
        let share =
            (plain.subscribed && monitored.subscribed && plain.share > 0.0).then(|| monitored.share / plain.share);
        rows.push(vec![
            "idle dashboard, 1,000 quiet streams (benchmark 5), one run each".into(),
            format!("{:.2}% of a core", plain.share * 100.0),
            format!(
                "{:.2}% of a core; {scrapes} scrapes, {exports} OTLP exports",
                monitored.share * 100.0
            ),
            share.map_or("no data".into(), |r| format!("**{r:.2}x**")),
        ]);
        summary.push(format!("idle {}", rows[rows.len() - 1][3]));
        ratios.push(share);
        if *scrapes == 0 {
            ratios.push(None);
        }
    }
    let verdict = if e2e.is_none() || idle.is_none() || ratios.iter().any(Option::is_none) {
        Verdict::NoData
    } else {
        Verdict::of(ratios.iter().flatten().all(|r| *r <= 1.2))
    };
    let result = summary.join("; ");
    Section {
        number: 13,
        title: "Monitoring on",
        target: "with metrics scraped every second and OTLP on, `--json` end to end and idle within 1.2x of without"
            .into(),
        result: if result.is_empty() { "no data".into() } else { result },
        verdict,
        body: format!(
            "Benchmark 9's `--json --until all-terminal` run (a fresh load agent each, as fast as it reads) and benchmark \
5's idle dashboard (1,000 quiet streams in tmux, CPU over the same window), each once as they are and once with \
`--metrics-listen 127.0.0.1:PORT`, scraped with `GET /metrics` once a second by the harness, and `--otlp \
http://127.0.0.1:PORT` to a receiver in the harness that answers 200 to every `POST /v1/traces` (spans are exported \
as tasks end: the idle run ends none). End to end: the trials interleaved, the ratio the median of per-trial ratios \
(monitored / plain CPU an update, and plain / monitored updates a second).\n\n{}",
            table(&["run", "plain", "metrics scraped + OTLP", "monitored / plain"], &rows)
        ),
    }
}
