//! Latency from the moment a program writes its output to the moment an in-process `wait_for` on that
//! output returns. The program stamps each line with CLOCK_MONOTONIC at write time; the waiter reads
//! the same clock when the wait returns.
//!
//! Run: cargo bench -p screenpilot-session --bench wait_latency
//! With SESSIONS=200 the fixture runs in 200 live sessions of one registry and the waits go round
//! them, to check latency with many sessions (target: < 5 ms).

use std::path::PathBuf;
use std::time::Duration;

use screenpilot_session::wait::{compile, wait, Condition, WaitOptions};
use screenpilot_session::{Limits, Reason, Registry, SpawnSpec};

fn monotonic_ns() -> u128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u128 * 1_000_000_000 + ts.tv_nsec as u128
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let iterations: usize = std::env::var("ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../benches/emit_token.py");
    let sessions: usize = std::env::var("SESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let limits = Limits {
        max_sessions: sessions.max(8),
        ..Limits::default()
    };
    let registry = Registry::new(limits.clone());
    let fixture = fixture.to_string_lossy();
    let spec = SpawnSpec {
        detect_child_exit: true,
        ..SpawnSpec::new(&["python3", "-u", &fixture, "0.005"])
    };
    let ready = compile("READY", "pattern", &limits).expect("regex");
    let options = WaitOptions {
        timeout: Duration::from_secs(30),
        scrollback: None,
    };
    let mut live = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        live.push(registry.spawn(spec.clone()).expect("spawn the fixture"));
    }
    for session in &live {
        assert_eq!(
            wait(session, &Condition::Regex(ready.clone()), options)
                .await
                .reason,
            Reason::Matched
        );
    }

    let mut latencies_us = Vec::with_capacity(iterations);
    for i in 0..iterations {
        let session = &live[i % sessions];
        let n = i / sessions + 1;
        let pattern = compile(&format!(r"TOKEN {n} (\d+)"), "pattern", &limits).expect("regex");
        session.write(&[b"go\r".to_vec()]).await.expect("write");
        let outcome = wait(session, &Condition::Regex(pattern), options).await;
        let seen = monotonic_ns();
        let text = outcome.matched_text.expect("the token appeared");
        let written: u128 = text
            .rsplit(' ')
            .next()
            .and_then(|t| t.parse().ok())
            .expect("timestamp");
        latencies_us.push((seen.saturating_sub(written)) as f64 / 1000.0);
    }
    registry.close_all(false).await;
    latencies_us.sort_by(|a, b| a.total_cmp(b));
    println!(
        "in-process wait_for latency over {iterations} runs, {sessions} live session(s): median {:.0} us, p95 {:.0} us, p99 {:.0} us, max {:.0} us",
        percentile(&latencies_us, 0.5),
        percentile(&latencies_us, 0.95),
        percentile(&latencies_us, 0.99),
        latencies_us[latencies_us.len() - 1]
    );
}
