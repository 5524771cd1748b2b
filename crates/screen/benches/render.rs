//! Screenshot cost: render + PNG encode, and SVG, for realistic full screens at 80x24 and 200x50.
//!
//! The product target is an 80x24 PNG in under 5 ms. Run with
//! `cargo bench -p screenpilot-screen --bench render`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use screenpilot_screen::{render_png, render_svg, CellGrid, RenderOptions, Screen, Size};

/// A coloured `ls -l` listing that fills the screen.
fn ls_like(size: Size) -> Vec<u8> {
    let kinds = [
        ("drwxr-xr-x", "\x1b[1;34m", "src"),
        ("-rw-r--r--", "", "Cargo.toml"),
        ("-rwxr-xr-x", "\x1b[1;32m", "build.sh"),
        ("lrwxrwxrwx", "\x1b[1;36m", "latest -> target/release"),
        ("-rw-r--r--", "\x1b[31m", "archive.tar.gz"),
    ];
    let mut out = String::from("\x1b[32muser@host\x1b[0m:\x1b[34m~/project\x1b[0m$ ls -la\r\n");
    for i in 0..size.rows.saturating_sub(2) as usize {
        let (mode, colour, name) = kinds[i % kinds.len()];
        let line = format!(
            "{mode} {:>2} user staff {:>8} Mar {:>2} 12:{:02} {colour}{name}_{i}\x1b[0m",
            1 + i % 7,
            4096 * (i + 1) * 37 % 1_000_000,
            1 + i % 28,
            i % 60
        );
        let visible: String = line.chars().take(size.cols as usize + 12).collect();
        out.push_str(&visible);
        out.push_str("\r\n");
    }
    out.push_str("\x1b[32muser@host\x1b[0m:\x1b[34m~/project\x1b[0m$ ");
    out.into_bytes()
}

/// An htop-like full-screen monitor: meters, a boxed header, a table with a highlighted row, and a
/// function-key bar with coloured backgrounds.
fn htop_like(size: Size) -> Vec<u8> {
    let cols = size.cols as usize;
    let mut out = String::from("\x1b[?1049h\x1b[H\x1b[2J");
    for cpu in 0..4 {
        let used = (cols / 2 - 10) * (cpu + 1) / 5;
        let free = cols / 2 - 10 - used;
        out.push_str(&format!(
            "\x1b[{};1H  \x1b[36m{cpu}\x1b[0m[\x1b[32m{}\x1b[31m{}\x1b[0m{}\x1b[37m{:>5.1}%\x1b[0m]",
            cpu + 1,
            "|".repeat(used / 2),
            "|".repeat(used - used / 2),
            " ".repeat(free),
            (cpu as f32 + 1.0) * 17.3
        ));
        out.push_str(&format!(
            "\x1b[{};{}H\x1b[1mTasks: \x1b[0;32m{}\x1b[0m, load average: \x1b[1;35m0.{cpu}7\x1b[0m",
            cpu + 1,
            cols / 2 + 2,
            120 + cpu
        ));
    }
    out.push_str(&format!("\x1b[6;1H┌{}┐", "─".repeat(cols - 2)));
    out.push_str(&format!(
        "\x1b[7;1H│\x1b[30;42m{:<width$}\x1b[0m│",
        "  PID USER      PRI  NI  VIRT   RES   SHR S CPU% MEM%   TIME+  Command",
        width = cols - 2
    ));
    let rows = size.rows as usize;
    for i in 0..rows.saturating_sub(9) {
        let selected = i == 3;
        let line = format!(
            "{:>5} {:<9} {:>3} {:>3} {:>5}M {:>4}M {:>4}M {} {:>4.1} {:>4.1} {:>2}:{:02}.{:02} {}",
            1000 + i * 13,
            ["root", "user", "postgres", "www-data"][i % 4],
            20,
            0,
            100 + i * 7,
            10 + i,
            5 + i / 2,
            ["S", "R", "S", "D"][i % 4],
            (i * 7 % 100) as f32 / 3.0,
            (i * 3 % 100) as f32 / 7.0,
            i / 60,
            i % 60,
            i * 7 % 100,
            [
                "/usr/bin/python3 app.py",
                "nginx: worker process",
                "postgres: writer",
                "cargo build --release"
            ][i % 4]
        );
        let body: String = line.chars().take(cols - 2).collect();
        let style = if selected {
            "\x1b[30;46m"
        } else if i % 4 == 1 {
            "\x1b[1;32m"
        } else {
            ""
        };
        out.push_str(&format!(
            "\x1b[{};1H│{style}{body:<width$}\x1b[0m│",
            8 + i,
            width = cols - 2
        ));
    }
    out.push_str(&format!("\x1b[{};1H└{}┘", rows - 1, "─".repeat(cols - 2)));
    out.push_str(&format!("\x1b[{rows};1H"));
    for (key, label) in [
        ("F1", "Help"),
        ("F2", "Setup"),
        ("F3", "Search"),
        ("F5", "Tree"),
        ("F9", "Kill"),
        ("F10", "Quit"),
    ] {
        out.push_str(&format!("\x1b[0m{key}\x1b[30;46m{label:<6}\x1b[0m"));
    }
    out.into_bytes()
}

fn grid(size: Size, bytes: &[u8]) -> CellGrid {
    let mut screen = Screen::new(size, 0);
    screen.feed(bytes);
    screen.cells()
}

fn bench_render(c: &mut Criterion) {
    let opts = RenderOptions::default();
    let cases = [
        (
            "80x24/ls",
            grid(Size::new(80, 24), &ls_like(Size::new(80, 24))),
        ),
        (
            "80x24/htop",
            grid(Size::new(80, 24), &htop_like(Size::new(80, 24))),
        ),
        (
            "200x50/htop",
            grid(Size::new(200, 50), &htop_like(Size::new(200, 50))),
        ),
    ];
    let mut group = c.benchmark_group("png");
    for (name, grid) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| render_png(black_box(grid), &opts).expect("renders"))
        });
    }
    group.finish();
    let mut group = c.benchmark_group("svg");
    for (name, grid) in &cases {
        group.bench_function(*name, |b| b.iter(|| render_svg(black_box(grid), &opts)));
    }
    group.finish();
}

criterion_group!(benches, bench_render);
criterion_main!(benches);
