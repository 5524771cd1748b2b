//! What a desktop reports about change, without polling: the damage counter moves when an app
//! draws, the window counter when a window appears or its title changes, `settle` returns soon
//! after the screen went still, the screen hash follows the pixels, and closing ends it all.

use crate::common;

use std::time::Duration;

use common::*;
use screenpilot_desktop::WindowManager;

#[tokio::test]
async fn the_damage_counter_moves_when_xterm_draws_what_is_typed() {
    require(&["Xvfb", "openbox", "xterm"]);
    let desktop = start(spec(Some(&["xterm", "-e", "cat"]), openbox())).await;
    assert!(desktop.watches_damage(), "Xvfb has DAMAGE");
    let mut damage = desktop.damage_updates();
    let before = *damage.borrow_and_update();
    desktop
        .run("typing", LONG, |x| x.type_text("drawn"))
        .await
        .expect("typing");
    tokio::time::timeout(LONG, damage.changed())
        .await
        .expect("no damage after typing into xterm")
        .expect("the counter closed");
    assert!(*damage.borrow() > before);
    desktop.close().await;
}

#[tokio::test]
async fn windows_lists_xterm_and_a_title_change_moves_the_window_counter() {
    require(&["Xvfb", "openbox", "xterm"]);
    let script = r#"read t; printf '\033]2;%s\007' "$t"; read never"#;
    let desktop = start(spec(
        Some(&["xterm", "-T", "first title", "-e", "sh", "-c", script]),
        openbox(),
    ))
    .await;
    let program_pid = desktop.info().program_pid.expect("program pid");
    let windows = desktop.windows().await.expect("windows");
    assert_eq!(windows.len(), 1, "{windows:?}");
    let xterm = &windows[0];
    assert_eq!(xterm.title, "first title");
    assert_eq!(
        (xterm.class.as_str(), xterm.instance.as_str()),
        ("XTerm", "xterm")
    );
    assert_eq!(xterm.pid, Some(program_pid as u32));
    assert!(xterm.mapped && xterm.focused, "{xterm:?}");
    let (w, h) = desktop.size();
    assert!(xterm.width > 100 && xterm.height > 100, "{xterm:?}");
    assert!(
        xterm.x >= 0 && xterm.y > 0 && (xterm.x as u32) < w && (xterm.y as u32) < h,
        "the client area sits below openbox's title bar: {xterm:?}"
    );

    desktop
        .run("typing", LONG, |x| x.type_text("second title ✓\n"))
        .await
        .expect("typing");
    let renamed = windows_until(&desktop, |ws| {
        ws.iter().any(|w| w.title == "second title ✓")
    })
    .await;
    assert!(renamed.is_ok(), "the new title never showed: {renamed:?}");
    desktop.close().await;
}

#[tokio::test]
async fn a_window_opened_later_is_seen_through_the_window_counter() {
    require(&["Xvfb", "openbox", "xterm"]);
    let desktop = start(spec(None, openbox())).await;
    assert!(desktop.windows().await.expect("windows").is_empty());
    let info = desktop.info();
    let mut late = std::process::Command::new("xterm");
    late.args(["-T", "opened later", "-e", "cat"])
        .env("DISPLAY", &info.display)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    if let Some(path) = &info.xauthority {
        late.env("XAUTHORITY", path);
    }
    let mut late = late.spawn().expect("start xterm");
    let seen = windows_until(&desktop, |ws| {
        ws.iter().any(|w| w.title == "opened later" && w.mapped)
    })
    .await;
    let _ = late.kill();
    let _ = late.wait();
    assert!(seen.is_ok(), "the new window never showed: {seen:?}");
    // And its end too.
    let gone = windows_until(&desktop, |ws| ws.is_empty()).await;
    assert!(gone.is_ok(), "the closed window stayed listed: {gone:?}");
    desktop.close().await;
}

#[tokio::test]
async fn settle_returns_soon_after_a_change_and_says_when_nothing_reacted() {
    require(&["Xvfb", "xterm"]);
    let desktop = start(spec(
        Some(&["xterm", "-geometry", "40x10+0+0", "-e", "cat"]),
        WindowManager::None,
    ))
    .await;
    let quiet = Duration::from_millis(50);
    let limit = Duration::from_secs(10);
    // Let the start-up drawing end first.
    let still = desktop.settle_with(0, quiet, Duration::ZERO, limit).await;
    assert!(still.settled, "{still:?}");

    let since = *desktop.damage_updates().borrow();
    desktop
        .run("typing", LONG, |x| x.type_text("x"))
        .await
        .expect("typing");
    let typed = desktop.settle(since, quiet, limit).await;
    assert!(typed.reacted && typed.settled, "{typed:?}");
    assert!(typed.waited < limit, "{typed:?}");

    // A pointer move over the empty root draws nothing: no reaction, and it costs the reaction
    // window, not the limit.
    let since = *desktop.damage_updates().borrow();
    desktop
        .run("moving", LONG, |x| {
            x.move_to(screenpilot_desktop::Point { x: 900, y: 700 }, &[])
        })
        .await
        .expect("moving");
    let nothing = desktop.settle(since, quiet, limit).await;
    assert!(!nothing.reacted && nothing.settled, "{nothing:?}");
    assert!(
        nothing.waited >= screenpilot_desktop::DEFAULT_REACTION && nothing.waited < limit,
        "{nothing:?}"
    );
    desktop.close().await;
}

#[tokio::test]
async fn the_screen_hash_follows_the_pixels_not_the_pointer() {
    require(&["Xvfb", "xterm"]);
    let desktop = start(spec(
        Some(&["xterm", "-geometry", "40x10+0+0", "-e", "cat"]),
        WindowManager::None,
    ))
    .await;
    let quiet = Duration::from_millis(100);
    desktop.settle_with(0, quiet, Duration::ZERO, LONG).await;
    let first = desktop.screen_hash().await.expect("hash");
    desktop
        .run("moving", LONG, |x| {
            x.move_to(screenpilot_desktop::Point { x: 700, y: 500 }, &[])
        })
        .await
        .expect("moving");
    assert_eq!(desktop.screen_hash().await.expect("hash"), first);
    let since = *desktop.damage_updates().borrow();
    desktop
        .run("typing", LONG, |x| x.type_text("changed"))
        .await
        .expect("typing");
    let settled = desktop.settle(since, quiet, LONG).await;
    assert!(settled.reacted, "{settled:?}");
    assert_ne!(desktop.screen_hash().await.expect("hash"), first);
    desktop.close().await;
}

#[tokio::test]
async fn closing_the_desktop_ends_its_watcher_and_every_wait_on_it() {
    require(&["Xvfb", "openbox"]);
    let desktop = start(spec(None, openbox())).await;
    let mut damage = desktop.damage_updates();
    let mut windows = desktop.window_updates();
    let since = *damage.borrow();
    let waiting = tokio::spawn({
        let damage = desktop.damage_updates();
        let probe = damage.clone();
        async move {
            screenpilot_desktop::settle::settle(
                damage,
                move || *probe.borrow(),
                since,
                screenpilot_desktop::Settle {
                    reaction: Duration::from_secs(60),
                    quiet: Duration::from_secs(60),
                    limit: Duration::from_secs(120),
                },
            )
            .await
        }
    });
    desktop.close().await;
    // Every receiver sees its sender gone: the watcher thread has ended.
    let closed = tokio::time::timeout(LONG, async {
        while damage.changed().await.is_ok() {}
        while windows.changed().await.is_ok() {}
    })
    .await;
    assert!(closed.is_ok(), "the watcher outlived the desktop");
    let settled = tokio::time::timeout(LONG, waiting)
        .await
        .expect("a settle on the closed desktop kept waiting")
        .expect("settle task");
    assert!(!settled.settled, "{settled:?}");
}
