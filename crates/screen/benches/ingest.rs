//! Emulator ingest: screenpilot's `Screen::feed` against raw alacritty_terminal on the same streams,
//! both keeping 10,000 lines of history (alacritty's default, the daemon's default). screenpilot
//! copies every row that scrolls into the history out as text (see `crates/screen/src/history.rs`);
//! the `seq` stream, short lines, is where that costs the most per byte.
//!
//! Run: cargo bench -p screenpilot-screen --bench ingest (first prints an interleaved comparison,
//! fresh and with the history already full, then criterion's runs)

use std::time::Instant;

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};

#[path = "support/ingest_input.rs"]
mod ingest_input;
use ingest_input::{raw_alacritty, screenpilot, seq_stream, COLS, ROWS};

/// About 1 MiB of ordinary text lines, like a build log.
fn plain_stream() -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < 1 << 20 {
        out.extend_from_slice(
            format!(
                "line {i:6}: compiling crate number {} with some ordinary words in it\r\n",
                i * 7 % 1000
            )
            .as_bytes(),
        );
        i += 1;
    }
    out
}

/// About 1 MiB of full-screen redraws with colours and cursor moves, like htop.
fn escape_heavy_stream() -> Vec<u8> {
    let mut out = Vec::new();
    let mut frame = 0u32;
    while out.len() < 1 << 20 {
        out.extend_from_slice(b"\x1b[?2026h\x1b[H");
        for row in 1..=ROWS as u32 {
            out.extend_from_slice(format!("\x1b[{row};1H\x1b[2K").as_bytes());
            for col in 0..12u32 {
                let color = (row * 7 + col * 13 + frame) % 256;
                out.extend_from_slice(
                    format!(
                        "\x1b[38;5;{color};48;2;{};{};{}m{:>8}\x1b[0m ",
                        row * 3,
                        col * 9,
                        frame % 256,
                        row * col + frame
                    )
                    .as_bytes(),
                );
            }
        }
        out.extend_from_slice(b"\x1b[?2026l");
        frame += 1;
    }
    out
}

fn ingest(c: &mut Criterion) {
    let mut group = c.benchmark_group("ingest");
    for (name, stream) in [
        ("plain", plain_stream()),
        ("seq", seq_stream()),
        ("escape_heavy", escape_heavy_stream()),
    ] {
        group.throughput(Throughput::Bytes(stream.len() as u64));
        // Programs' output arrives in pty-sized reads.
        let chunks: Vec<&[u8]> = stream.chunks(4096).collect();
        group.bench_with_input(
            BenchmarkId::new("alacritty_terminal", name),
            &chunks,
            |b, chunks| {
                b.iter(|| {
                    let (mut term, mut parser) = raw_alacritty();
                    for chunk in chunks {
                        parser.advance(&mut term, chunk);
                    }
                    term
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("screenpilot", name),
            &chunks,
            |b, chunks| {
                b.iter(|| {
                    let mut screen = screenpilot();
                    for chunk in chunks {
                        screen.feed(chunk);
                    }
                    screen
                })
            },
        );
    }
    group.finish();
}

/// Feed `chunks` to raw alacritty and to screenpilot in turns, `rounds` times each, starting either
/// fresh or with the history already full (the steady state of a long-running program); the medians
/// and the median of each round's ratio. Taking turns (which one goes first alternates) and pairing
/// the two of a round keep the ratio honest on a machine whose load changes.
fn interleaved(chunks: &[&[u8]], full: bool, rounds: usize) -> (f64, f64, f64) {
    let mut raw_ms = Vec::new();
    let mut ours_ms = Vec::new();
    let mut ratios = Vec::new();
    for round in 0..rounds {
        let (mut term, mut parser) = raw_alacritty();
        let mut screen = screenpilot();
        if full {
            for chunk in chunks {
                parser.advance(&mut term, chunk);
                screen.feed(chunk);
            }
        }
        let mut raw = || {
            let start = Instant::now();
            for chunk in chunks {
                parser.advance(&mut term, chunk);
            }
            start.elapsed().as_secs_f64() * 1e3
        };
        let mut ours = || {
            let start = Instant::now();
            for chunk in chunks {
                screen.feed(chunk);
            }
            start.elapsed().as_secs_f64() * 1e3
        };
        let (r, o) = if round % 2 == 0 {
            let r = raw();
            (r, ours())
        } else {
            let o = ours();
            (raw(), o)
        };
        raw_ms.push(r);
        ours_ms.push(o);
        ratios.push(r / o);
        drop((term, screen));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(raw_ms), median(ours_ms), median(ratios))
}

/// Printed before criterion's own runs: screenpilot's speed as a share of raw alacritty's.
fn print_interleaved() {
    println!("interleaved medians of 31 rounds, 4 KiB reads into {COLS}x{ROWS}, 10,000 lines of history:");
    for (name, stream) in [
        ("plain", plain_stream()),
        ("seq", seq_stream()),
        ("escape_heavy", escape_heavy_stream()),
    ] {
        let chunks: Vec<&[u8]> = stream.chunks(4096).collect();
        for full in [false, true] {
            let (raw, ours, ratio) = interleaved(&chunks, full, 31);
            println!(
                "  {name:<12} {:<6} raw alacritty {raw:7.2} ms  screenpilot {ours:7.2} ms  speed {:5.1}% of raw (median of the rounds' ratios)",
                if full { "full" } else { "fresh" },
                ratio * 100.0
            );
        }
    }
}

criterion_group!(benches, ingest);

fn main() {
    print_interleaved();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
