//! Attaching to a display that is not ours (here, another desktop's Xvfb standing in for a person's
//! own display): its windows are listed, its drawing is watched, a program started on it is ready
//! when its window is, and closing the attached desktop stops our watcher but leaves the display
//! and everything on it running.
//!
//! One test in this file: it sets XAUTHORITY for the whole process, as a person's session has it.

use crate::common;

use std::time::Duration;

use common::*;
use screenpilot_desktop::{Desktop, DesktopSpec, Target, WindowManager};

fn attach_spec(display: &str, program: Option<&[&str]>) -> DesktopSpec {
    DesktopSpec {
        label: "attach".into(),
        target: Target::Attach {
            display: display.to_owned(),
        },
        program: program.map(|argv| argv.iter().map(|a| a.to_string()).collect()),
        program_env: None,
        cwd: None,
        window_manager: WindowManager::Auto,
        step_timeout: LONG,
        ready_timeout: READY,
    }
}

#[tokio::test]
async fn an_attached_display_is_watched_and_left_running() {
    require(&["Xvfb", "openbox", "xterm"]);
    let own = start(spec(
        Some(&["xterm", "-T", "already there", "-e", "cat"]),
        openbox(),
    ))
    .await;
    let info = own.info();
    let xauthority = info.xauthority.clone().expect("our Xvfb has a cookie file");
    std::env::set_var("XAUTHORITY", &xauthority);

    let attached = Desktop::start("attached".into(), attach_spec(&info.display, None))
        .await
        .expect("attach");
    assert!(attached.info().attached);
    let windows = attached.windows().await.expect("windows");
    assert!(
        windows
            .iter()
            .any(|w| w.title == "already there" && w.mapped && w.focused),
        "{windows:?}"
    );
    assert!(attached.watches_damage());
    let mut damage = attached.damage_updates();
    damage.borrow_and_update();
    attached
        .run("typing", LONG, |x| x.type_text("seen from outside"))
        .await
        .expect("typing");
    tokio::time::timeout(LONG, damage.changed())
        .await
        .expect("no damage seen on the attached display")
        .expect("counter closed");

    // A program started on the attached display: ready once its window is shown and focused
    // (openbox is asked to activate it if it does not focus it itself).
    let with_program = Desktop::start(
        "attached-program".into(),
        attach_spec(
            &info.display,
            Some(&["xterm", "-T", "started here", "-e", "cat"]),
        ),
    )
    .await
    .expect("attach with a program");
    let window = with_program
        .window()
        .cloned()
        .expect("the program's window");
    assert_eq!(window.title, "started here");
    assert!(window.mapped && window.focused, "{window:?}");
    with_program.close().await;

    attached.close().await;
    let ended = tokio::time::timeout(LONG, async { while damage.changed().await.is_ok() {} }).await;
    assert!(ended.is_ok(), "the attached desktop's watcher outlived it");
    // The display and its first program are untouched.
    assert!(own.alive());
    let still = own.windows().await.expect("windows of the display");
    assert!(
        still.iter().any(|w| w.title == "already there"),
        "{still:?}"
    );
    let hash = own.screen_hash().await;
    assert!(hash.is_ok(), "{hash:?}");
    let _ = tokio::time::timeout(Duration::from_secs(5), own.close()).await;
}
