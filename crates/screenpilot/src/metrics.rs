//! The daemon's metrics for fleets (opt-in: `SCREENPILOT_METRICS=ADDR:PORT`): a Prometheus text page
//! at `http://ADDR:PORT/metrics`. Labels are bounded (operation names, outcomes, kinds; never a sid
//! or a command), so a host with a thousand sessions makes as many series as one with two.
//!
//! - `screenpilot_sessions{kind, state}` sessions now (terminal, textual, desktop; running, exited)
//! - `screenpilot_operations_total{op, outcome}` and `screenpilot_operation_duration_seconds{op}`
//!   (outcome: ok, or the error code)
//! - `screenpilot_waits_total{outcome}`: requests that waited (held, not_held, error)
//! - `screenpilot_terminal_bytes_total{direction}`: output read from programs, input written to them
//! - `screenpilot_desktop_capture_seconds`: reading a desktop's screen

use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

use crate::ops::{self, Context, ErrorCode, OpError};

/// Names the address the daemon serves its metrics on.
pub const METRICS_VAR: &str = "SCREENPILOT_METRICS";

const DURATION_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0, 300.0,
];
const CAPTURE_BUCKETS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0];

/// Every metric of this process.
pub struct Metrics {
    registry: Registry,
    operations: IntCounterVec,
    durations: HistogramVec,
    waits: IntCounterVec,
    sessions: IntGaugeVec,
    bytes: IntCounterVec,
    capture: Histogram,
}

static METRICS: OnceLock<Metrics> = OnceLock::new();

/// The metrics, once [`enable`] was called (a daemon started with `SCREENPILOT_METRICS`).
pub fn enabled() -> Option<&'static Metrics> {
    METRICS.get()
}

/// Start counting (once per process).
pub fn enable() -> &'static Metrics {
    METRICS.get_or_init(|| {
        let metrics = Metrics::new();
        screenpilot_desktop::stats::observe_captures(|took| {
            if let Some(m) = enabled() {
                m.capture.observe(took.as_secs_f64());
            }
        });
        metrics
    })
}

impl Metrics {
    fn new() -> Metrics {
        let registry = Registry::new();
        let operations = IntCounterVec::new(
            Opts::new(
                "screenpilot_operations_total",
                "Operations answered, by name and outcome (ok, or the error code).",
            ),
            &["op", "outcome"],
        )
        .expect("a valid metric");
        let durations = HistogramVec::new(
            HistogramOpts::new(
                "screenpilot_operation_duration_seconds",
                "How long operations took, from request to answer.",
            )
            .buckets(DURATION_BUCKETS.to_vec()),
            &["op"],
        )
        .expect("a valid metric");
        let waits = IntCounterVec::new(
            Opts::new(
                "screenpilot_waits_total",
                "Requests that waited for a condition, by how the wait ended (held, not_held, error).",
            ),
            &["outcome"],
        )
        .expect("a valid metric");
        let sessions = IntGaugeVec::new(
            Opts::new(
                "screenpilot_sessions",
                "Sessions now, by kind (terminal, textual, desktop) and state (running, exited).",
            ),
            &["kind", "state"],
        )
        .expect("a valid metric");
        let bytes = IntCounterVec::new(
            Opts::new(
                "screenpilot_terminal_bytes_total",
                "Bytes through terminal sessions: out (read from programs) and in (written to them).",
            ),
            &["direction"],
        )
        .expect("a valid metric");
        let capture = Histogram::with_opts(
            HistogramOpts::new(
                "screenpilot_desktop_capture_seconds",
                "How long reading a desktop's screen took.",
            )
            .buckets(CAPTURE_BUCKETS.to_vec()),
        )
        .expect("a valid metric");
        for collector in [
            Box::new(operations.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(durations.clone()),
            Box::new(waits.clone()),
            Box::new(sessions.clone()),
            Box::new(bytes.clone()),
            Box::new(capture.clone()),
        ] {
            registry.register(collector).expect("names are unique");
        }
        Metrics {
            registry,
            operations,
            durations,
            waits,
            sessions,
            bytes,
            capture,
        }
    }

    /// An operation answered: `outcome` is "ok" or its error code.
    pub fn operation(&self, op: &str, outcome: &str, took: Duration) {
        // Only names the daemon knows become labels: a client sending nonsense adds no series.
        let op = if ops::find(op).is_ok() || matches!(op, "status" | "cancel" | "resume") {
            op
        } else {
            "unknown"
        };
        self.operations.with_label_values(&[op, outcome]).inc();
        self.durations
            .with_label_values(&[op])
            .observe(took.as_secs_f64());
    }

    /// A request that waited ended: held, not_held or error.
    pub fn wait(&self, outcome: &str) {
        self.waits.with_label_values(&[outcome]).inc();
    }

    /// The page: what is counted, and the sessions and bytes as they are now.
    pub fn page(&self, ctx: &Context) -> String {
        self.sessions.reset();
        let state = |alive: bool| if alive { "running" } else { "exited" };
        for s in ctx.registry.list() {
            self.sessions
                .with_label_values(&[s.kind.as_str(), state(s.alive)])
                .inc();
        }
        for d in ctx.desktops.list() {
            self.sessions
                .with_label_values(&["desktop", state(d.alive)])
                .inc();
        }
        let (out, into) = screenpilot_session::stats::bytes();
        for (direction, now) in [("out", out), ("in", into)] {
            let counter = self.bytes.with_label_values(&[direction]);
            counter.inc_by(now.saturating_sub(counter.get()));
        }
        let mut page = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut page);
        String::from_utf8(page).unwrap_or_default()
    }
}

/// The outcome label of an answer: "ok" or its error code.
pub fn outcome_of(outcome: &Result<serde_json::Value, OpError>) -> &'static str {
    match outcome {
        Ok(_) => "ok",
        Err(e) => e.code.as_str(),
    }
}

/// Serve `GET /metrics` on `addr` for the daemon of `ctx`; returns the address bound.
pub async fn serve(addr: &str, ctx: Context) -> Result<SocketAddr, OpError> {
    let addr: SocketAddr = addr.parse().map_err(|_| {
        OpError::new(
            ErrorCode::DaemonConfig,
            format!("{METRICS_VAR}={addr:?} is not IP:PORT, e.g. 0.0.0.0:9464 or 127.0.0.1:9464"),
        )
    })?;
    let metrics = enable();
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        OpError::new(
            ErrorCode::DaemonConfig,
            format!("{METRICS_VAR}: cannot listen on {addr}: {e}"),
        )
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || {
            let ctx = ctx.clone();
            async move {
                (
                    [(
                        axum::http::header::CONTENT_TYPE,
                        "text/plain; version=0.0.4; charset=utf-8",
                    )],
                    metrics.page(&ctx),
                )
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok(bound)
}
