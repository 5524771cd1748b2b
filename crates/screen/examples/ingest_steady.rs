//! Steady-state ingest of a `seq`-like flood: raw alacritty_terminal and `Screen::feed`, both with a
//! full 10,000-line history, fed 1 MiB in 4 KiB reads in turns; prints the medians and minimums.
//! With `ours N` or `raw N` it only feeds one of them N times, for a profiler or cachegrind:
//!
//! ```text
//! cargo build --release -p screenpilot-screen --example ingest_steady
//! target/release/examples/ingest_steady
//! valgrind --tool=cachegrind target/release/examples/ingest_steady ours 5   # and `ours 0`: the difference / 5
//! ```

use std::time::Instant;

#[path = "../benches/support/ingest_input.rs"]
mod ingest_input;
use ingest_input::{raw_alacritty, screenpilot, seq_stream};

fn main() {
    let mut args = std::env::args().skip(1);
    let only = args.next();
    let times: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(5);
    let flood = seq_stream();
    let chunks: Vec<&[u8]> = flood.chunks(4096).collect();
    let (mut term, mut parser) = raw_alacritty();
    let mut screen = screenpilot();
    // Both histories full before anything is measured.
    for chunk in &chunks {
        parser.advance(&mut term, chunk);
        screen.feed(chunk);
    }
    let mut raw = |times: usize| {
        let start = Instant::now();
        for _ in 0..times {
            chunks
                .iter()
                .for_each(|chunk| parser.advance(&mut term, chunk));
        }
        start.elapsed().as_secs_f64() * 1e3 / times.max(1) as f64
    };
    let mut ours = |times: usize| {
        let start = Instant::now();
        for _ in 0..times {
            chunks.iter().for_each(|chunk| drop(screen.feed(chunk)));
        }
        start.elapsed().as_secs_f64() * 1e3 / times.max(1) as f64
    };
    match only.as_deref() {
        Some("raw") => drop(raw(times)),
        Some("ours") => drop(ours(times)),
        _ => {
            let (mut raw_ms, mut ours_ms) = (Vec::new(), Vec::new());
            for _ in 0..80 {
                raw_ms.push(raw(times));
                ours_ms.push(ours(times));
            }
            raw_ms.sort_by(f64::total_cmp);
            ours_ms.sort_by(f64::total_cmp);
            let (r, o) = (raw_ms[40], ours_ms[40]);
            println!(
                "ms per MiB, median: raw alacritty {r:.2}, screenpilot {o:.2} ({:.1}% of raw); minimum: {:.2}, {:.2} ({:.1}%)",
                r / o * 100.0,
                raw_ms[0],
                ours_ms[0],
                raw_ms[0] / ours_ms[0] * 100.0
            );
        }
    }
}
