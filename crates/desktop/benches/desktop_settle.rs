//! How fast a desktop becomes usable and answers, on real Xvfb + openbox + xterm:
//!
//! - start: `Desktop::start` of Xvfb, openbox and xterm until xterm's window is mapped and focused;
//! - action to settled screenshot: a key typed into xterm, `settle` (reaction, then 50 ms without
//!   drawing), capture and PNG; and the same for an action that changes nothing (a pointer move over
//!   the empty root), which costs the reaction window;
//! - title seen: a line typed that makes the shell set the window title, until `windows()` lists
//!   it, woken by the window counter.
//!
//!     cargo bench -p screenpilot-desktop --bench desktop_settle
//!
//! Figures are medians and 90th percentiles.

use std::time::{Duration, Instant};

use screenpilot_desktop::{encode_png, Desktop, DesktopSpec, Point, Target, WindowManager};

const STARTS: usize = 10;
const ACTIONS: usize = 30;
const QUIET: Duration = Duration::from_millis(50);
const LIMIT: Duration = Duration::from_secs(2);

fn spec(program: &[&str]) -> DesktopSpec {
    DesktopSpec {
        label: "bench".into(),
        target: Target::Launch {
            width: 1280,
            height: 800,
        },
        program: Some(program.iter().map(|a| a.to_string()).collect()),
        program_env: None,
        cwd: None,
        window_manager: WindowManager::Program("openbox".into()),
        step_timeout: Duration::from_secs(30),
        ready_timeout: Duration::from_secs(30),
    }
}

fn summary(mut times: Vec<Duration>) -> String {
    if times.is_empty() {
        return "no samples".into();
    }
    times.sort();
    let at = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3;
    format!("median {:.1} ms, p90 {:.1} ms", at(0.5), at(0.9))
}

async fn bench_start() {
    let mut times = Vec::new();
    for _ in 0..STARTS {
        let started = Instant::now();
        match Desktop::start("bench".into(), spec(&["xterm", "-e", "cat"])).await {
            Ok(desktop) => {
                times.push(started.elapsed());
                desktop.close().await;
            }
            Err(e) => {
                println!("start failed: {e}");
                return;
            }
        }
    }
    println!(
        "start (Xvfb + openbox + xterm mapped and focused): {}",
        summary(times)
    );
}

/// One action, then settle, capture and encode: what a `computer` call costs after dispatch.
async fn act_and_screenshot(
    desktop: &Desktop,
    action: impl FnOnce(&mut dyn screenpilot_desktop::Backend) -> screenpilot_desktop::Result<()>
        + Send
        + 'static,
) -> Option<(Duration, bool)> {
    let since = *desktop.damage_updates().borrow();
    let started = Instant::now();
    desktop
        .run("action", Duration::from_secs(10), action)
        .await
        .ok()?;
    let settled = desktop.settle(since, QUIET, LIMIT).await;
    desktop
        .run("screenshot", Duration::from_secs(10), |x| {
            encode_png(&x.capture(true)?)
        })
        .await
        .ok()?;
    Some((started.elapsed(), settled.reacted))
}

async fn bench_actions() {
    let desktop = match Desktop::start("bench".into(), spec(&["xterm", "-e", "cat"])).await {
        Ok(desktop) => desktop,
        Err(e) => {
            println!("start failed: {e}");
            return;
        }
    };
    desktop
        .settle_with(0, Duration::from_millis(200), Duration::ZERO, LIMIT)
        .await;
    let mut typed = Vec::new();
    let mut reacted = 0;
    for i in 0..ACTIONS {
        let text = if i % 10 == 9 { "\n" } else { "x" };
        if let Some((took, r)) = act_and_screenshot(&desktop, move |x| x.type_text(text)).await {
            typed.push(took);
            reacted += usize::from(r);
        }
    }
    println!(
        "key typed into xterm -> settled screenshot (PNG): {} ({reacted}/{ACTIONS} reacted; a reference tool sleeps 2000 ms)",
        summary(typed)
    );
    let mut still = Vec::new();
    for i in 0..5 {
        let to = Point {
            x: 1200 - i * 7,
            y: 780,
        };
        if let Some((took, _)) = act_and_screenshot(&desktop, move |x| x.move_to(to, &[])).await {
            still.push(took);
        }
    }
    println!(
        "pointer move that draws nothing -> screenshot: {} (the {} ms reaction window)",
        summary(still),
        screenpilot_desktop::DEFAULT_REACTION.as_millis()
    );
    desktop.close().await;
}

async fn bench_title() {
    let script = r#"while read t; do printf '\033]2;%s\007' "$t"; done"#;
    let desktop = match Desktop::start(
        "bench".into(),
        spec(&["xterm", "-T", "start", "-e", "sh", "-c", script]),
    )
    .await
    {
        Ok(desktop) => desktop,
        Err(e) => {
            println!("start failed: {e}");
            return;
        }
    };
    let mut times = Vec::new();
    for i in 0..ACTIONS {
        let title = format!("title-{i}");
        let mut updates = desktop.window_updates();
        updates.borrow_and_update();
        let line = format!("{title}\n");
        let started = Instant::now();
        if desktop
            .run("typing", Duration::from_secs(10), move |x| {
                x.type_text(&line)
            })
            .await
            .is_err()
        {
            break;
        }
        let deadline = started + Duration::from_secs(10);
        loop {
            let seen = desktop
                .windows()
                .await
                .map(|ws| ws.iter().any(|w| w.title == title))
                .unwrap_or(false);
            if seen {
                times.push(started.elapsed());
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if tokio::time::timeout(left, updates.changed()).await.is_err() {
                break;
            }
            updates.borrow_and_update();
        }
    }
    println!(
        "line typed -> shell sets the title -> windows() lists it: {}",
        summary(times)
    );
    desktop.close().await;
}

fn main() {
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
    println!("desktop readiness and settling (Xvfb 1280x800, openbox, xterm)");
    runtime.block_on(async {
        bench_start().await;
        bench_actions().await;
        bench_title().await;
    });
}
