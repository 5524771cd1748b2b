//! What reading a program's readiness from the kernel costs (`Session::input_state`: the pty's line
//! settings, its foreground group, and each task's blocked system call), per reading, on a Python
//! REPL waiting at its prompt and on a shell running a pipeline. Every answer that shows a screen
//! pays one reading.
//!
//! Run: cargo bench -p screenpilot-session --bench readiness

use std::time::{Duration, Instant};

use screenpilot_session::wait::{wait_until, Until, WaitOptions};
use screenpilot_session::{Limits, Registry, SpawnSpec};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let iterations: usize = std::env::var("ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let registry = Registry::new(Limits::default());
    for (name, argv) in [
        ("python3 at its prompt", &["python3", "-q"][..]),
        (
            "sh running sleep | cat",
            &["sh", "-c", "sleep 600 | cat"][..],
        ),
    ] {
        let spec = SpawnSpec {
            detect_child_exit: true,
            ..SpawnSpec::new(argv)
        };
        let session = registry.spawn(spec).expect("spawn");
        let until = Until {
            input: true,
            end_on_exit: true,
            ..Until::default()
        };
        if argv[0] == "python3" {
            let options = WaitOptions {
                timeout: Duration::from_secs(20),
                scrollback: None,
            };
            wait_until(&session, &until, options).await;
        }
        let mut times: Vec<f64> = Vec::with_capacity(iterations);
        let mut kind = session.input_state();
        for _ in 0..iterations {
            let start = Instant::now();
            kind = session.input_state();
            times.push(start.elapsed().as_secs_f64() * 1e6);
        }
        times.sort_by(|a, b| a.total_cmp(b));
        let at = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
        println!(
            "{name}: input={} median {:.1} us, p90 {:.1} us, max {:.1} us ({iterations} readings)",
            kind.name(),
            at(0.5),
            at(0.9),
            at(1.0)
        );
        session.close().await;
    }
}
