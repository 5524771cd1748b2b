//! Desktop screenshot latency: capture to PNG bytes through screenpilot (MIT-SHM, pointer drawn in,
//! fast PNG) next to ImageMagick's `import -window root png:-`, on the same Xvfb screens in one run.
//! Then the downscale to a model-sized screenshot (`Frame::resize` to `fit`'s size: long edge at
//! most 1568 px, at most 1.15 megapixels), from 1920x1080 and 2560x1600.
//!
//!     cargo bench -p screenpilot-desktop --bench desktop_capture
//!
//! Each screen is filled with the same synthetic desktop (a gradient, windows with text-like glyph
//! rows), so both tools compress the same pixels. Figures are medians and 90th percentiles.

use std::process::Command;
use std::time::{Duration, Instant};

use screenpilot_desktop::x11rb::connection::Connection;
use screenpilot_desktop::x11rb::protocol::xproto::{ConnectionExt as _, CreateGCAux, ImageFormat};
use screenpilot_desktop::{
    encode_png, fit, Desktop, DesktopSpec, Frame, Target, WindowManager, DEFAULT_MAX_LONG_EDGE,
    DEFAULT_MAX_PIXELS,
};

const SIZES: [(u32, u32); 2] = [(1280, 800), (1920, 1080)];
const OURS_RUNS: usize = 40;
const IMPORT_RUNS: usize = 10;

/// A desktop-like picture, BGRX: a vertical gradient and a few windows full of "text".
fn scene(width: u32, height: u32) -> Vec<u8> {
    let mut seed: u32 = 0x1234_5678;
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let mut bgrx = vec![0u8; (width * height * 4) as usize];
    for y in 0..height {
        for x in 0..width {
            let i = ((y * width + x) * 4) as usize;
            bgrx[i] = (90 + y * 100 / height) as u8;
            bgrx[i + 1] = (40 + y * 60 / height) as u8;
            bgrx[i + 2] = (30 + x * 40 / width) as u8;
        }
    }
    let windows = [
        (40, 40, 620, 420),
        (300, 200, 700, 500),
        (width / 2, 80, 560, 640),
    ];
    for (wx, wy, ww, wh) in windows {
        for y in wy..(wy + wh).min(height) {
            for x in wx..(wx + ww).min(width) {
                let i = ((y * width + x) * 4) as usize;
                let title = y < wy + 24;
                let (b, g, r) = if title {
                    (200, 120, 60)
                } else {
                    (250, 250, 250)
                };
                bgrx[i] = b;
                bgrx[i + 1] = g;
                bgrx[i + 2] = r;
            }
        }
        // Rows of 7x13 glyph cells, words of 2-9 glyphs, about a third of each glyph inked.
        let mut y = wy + 32;
        while y + 13 < (wy + wh).min(height) {
            let mut x = wx + 8;
            while x + 70 < (wx + ww).min(width) {
                let word = 2 + random() % 8;
                for _ in 0..word {
                    for gy in 2..11 {
                        for gx in 1..6 {
                            if random() % 3 == 0 {
                                let i = (((y + gy) * width + x + gx) * 4) as usize;
                                bgrx[i] = 30;
                                bgrx[i + 1] = 30;
                                bgrx[i + 2] = 30;
                            }
                        }
                    }
                    x += 7;
                }
                x += 7;
            }
            y += 16;
        }
    }
    bgrx
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn summary(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.9))
}

async fn bench_size(width: u32, height: u32) {
    let spec = DesktopSpec {
        label: "bench".into(),
        target: Target::Launch { width, height },
        program: None,
        program_env: None,
        cwd: None,
        window_manager: WindowManager::None,
        step_timeout: Duration::from_secs(30),
        ready_timeout: Duration::from_secs(30),
    };
    let desktop = match Desktop::start("bench".into(), spec).await {
        Ok(desktop) => desktop,
        Err(e) => {
            println!("{width}x{height}: cannot start Xvfb: {e}");
            return;
        }
    };
    let pixels = scene(width, height);
    let painted = desktop
        .run("paint", Duration::from_secs(30), move |x| {
            let conn = x.x11("painting")?.connection();
            let root = conn.setup().roots[0].root;
            let gc = conn.generate_id()?;
            conn.create_gc(gc, root, &CreateGCAux::new())?;
            let rows_per_request = 64;
            for y0 in (0..height).step_by(rows_per_request) {
                let rows = rows_per_request.min((height - y0) as usize) as u32;
                let start = (y0 * width * 4) as usize;
                let end = start + (rows * width * 4) as usize;
                conn.put_image(
                    ImageFormat::Z_PIXMAP,
                    root,
                    gc,
                    width as u16,
                    rows as u16,
                    0,
                    y0 as i16,
                    0,
                    24,
                    &pixels[start..end],
                )?;
            }
            x.sync()?;
            Ok(x.capture_method())
        })
        .await;
    let method = match painted {
        Ok(method) => method,
        Err(e) => {
            println!("{width}x{height}: cannot paint the screen: {e}");
            desktop.close().await;
            return;
        }
    };

    let mut totals = Vec::new();
    let mut captures = Vec::new();
    let mut encodes = Vec::new();
    let mut png_size = 0;
    for _ in 0..OURS_RUNS {
        let started = Instant::now();
        let result = desktop
            .run("screenshot", Duration::from_secs(30), |x| {
                let t0 = Instant::now();
                let frame = x.capture(true)?;
                let t1 = Instant::now();
                let png = encode_png(&frame)?;
                Ok((t1 - t0, t1.elapsed(), png.len()))
            })
            .await;
        match result {
            Ok((capture, encode, size)) => {
                totals.push(started.elapsed());
                captures.push(capture);
                encodes.push(encode);
                png_size = size;
            }
            Err(e) => {
                println!("{width}x{height}: screenshot failed: {e}");
                desktop.close().await;
                return;
            }
        }
    }
    let (total_median, total_p90) = summary(totals);
    let (capture_median, _) = summary(captures);
    let (encode_median, _) = summary(encodes);
    println!(
        "{width}x{height}  screenpilot ({method}): median {total_median:.1} ms, p90 {total_p90:.1} ms \
(capture+RGB+pointer {capture_median:.1} ms, PNG {encode_median:.1} ms), {} KiB",
        png_size / 1024
    );

    let info = desktop.info();
    let mut import_times = Vec::new();
    let mut import_size = 0;
    for _ in 0..IMPORT_RUNS {
        let started = Instant::now();
        let mut command = Command::new("import");
        command
            .args(["-window", "root", "png:-"])
            .env("DISPLAY", &info.display);
        if let Some(path) = &info.xauthority {
            command.env("XAUTHORITY", path);
        }
        match command.output() {
            Ok(out) if out.status.success() => {
                import_times.push(started.elapsed());
                import_size = out.stdout.len();
            }
            Ok(out) => {
                println!(
                    "{width}x{height}  import failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                break;
            }
            Err(e) => {
                println!(
                    "{width}x{height}  import: not available ({e}); apt-get install imagemagick"
                );
                break;
            }
        }
    }
    if !import_times.is_empty() {
        let (median, p90) = summary(import_times);
        println!(
            "{width}x{height}  import -window root png:-: median {median:.1} ms, p90 {p90:.1} ms, {} KiB  \
-> screenpilot is {:.1}x faster",
            import_size / 1024,
            median / total_median
        );
    }
    desktop.close().await;
}

/// Downscale the synthetic desktop to the model size, and encode both sizes as PNG.
fn bench_resize(width: u32, height: u32) {
    let bgrx = scene(width, height);
    let rgb: Vec<u8> = bgrx
        .chunks_exact(4)
        .flat_map(|px| [px[2], px[1], px[0]])
        .collect();
    let frame = Frame { width, height, rgb };
    let (w, h) = fit(width, height, DEFAULT_MAX_LONG_EDGE, DEFAULT_MAX_PIXELS);
    let mut times = Vec::new();
    let mut small = frame.clone();
    for _ in 0..OURS_RUNS {
        let started = Instant::now();
        small = frame.resize(w, h);
        times.push(started.elapsed());
    }
    let (median, p90) = summary(times);
    let png_full = encode_png(&frame).map(|p| p.len()).unwrap_or(0);
    let png_small = encode_png(&small).map(|p| p.len()).unwrap_or(0);
    println!(
        "{width}x{height} -> {w}x{h} resize (area average): median {median:.2} ms, p90 {p90:.2} ms; PNG {} KiB -> {} KiB",
        png_full / 1024,
        png_small / 1024
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` runs this too, and then one quick pass is enough.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start a runtime: {e}");
            return;
        }
    };
    println!("desktop screenshot latency, capture to PNG bytes (target < 40 ms)");
    runtime.block_on(async {
        for (width, height) in SIZES {
            bench_size(width, height).await;
        }
    });
    println!("model-sized screenshots: downscale (target: a few ms)");
    for (width, height) in [(1920, 1080), (2560, 1600)] {
        bench_resize(width, height);
    }
}
