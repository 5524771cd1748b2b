//! Managing top-level windows: focus the one behind and type into it, raise, move and resize,
//! minimise and bring back, close (its program ends), and refuse ids that are gone, under openbox
//! (through EWMH requests) and with no window manager at all (what we do ourselves instead). Real
//! Xvfb and xterm; every wait is on an event (window counters, a program's exit).

use crate::common;

use std::path::Path;

use common::*;
use screenpilot_desktop::{CloseOutcome, Desktop, MoveResize, Program, WindowInfo, WindowManager};

/// An xterm titled `title` whose shell reads one line into `file`, then ends.
fn reader(title: &str, file: &Path) -> Vec<String> {
    [
        "xterm",
        "-T",
        title,
        "-geometry",
        "60x10+0+0",
        "-e",
        "sh",
        "-c",
        &format!("read x; echo \"{title}:$x\" > '{}'", file.display()),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// A desktop with two readers, "first" (started with the desktop) and "second" (launched after
/// it, so on top of the first and focused).
async fn two_readers(wm: WindowManager, dir: &TempDir) -> (Desktop, WindowInfo, WindowInfo) {
    require(&["Xvfb", "xterm"]);
    let first = reader("first", &dir.file("first"));
    let first: Vec<&str> = first.iter().map(String::as_str).collect();
    let desktop = start(spec(Some(&first), wm)).await;
    let first = desktop.window().cloned().expect("the first window");
    let second = desktop
        .launch(Program::Command(reader("second", &dir.file("second"))))
        .await
        .expect("launch the second xterm");
    assert!(second.window.focused && second.window.mapped);
    (desktop, first, second.window)
}

async fn focus_the_one_behind_and_type_into_it(wm: WindowManager) {
    let dir = TempDir::new("focus");
    let (desktop, first, second) = two_readers(wm, &dir).await;
    let focused = desktop.focus_window(first.id).await.expect("focus");
    assert!(focused.focused && focused.mapped, "{focused:?}");
    assert_eq!(focused.id, first.id);
    let raised = desktop
        .run("stacking", LONG, move |x| {
            Ok((x.on_top(first.id)?, x.on_top(second.id)?))
        })
        .await
        .expect("stacking");
    assert_eq!(raised, (true, false), "focusing also raises it");
    desktop
        .run("typing", LONG, |x| x.type_text("to the first\n"))
        .await
        .expect("type");
    assert!(
        desktop.wait_program_exit(LONG).await.is_some(),
        "the first xterm did not get the line"
    );
    let got = std::fs::read_to_string(dir.file("first")).unwrap_or_default();
    assert_eq!(got.trim(), "first:to the first");
    assert!(
        !dir.file("second").exists(),
        "the second xterm got text too"
    );
    desktop.close().await;
}

#[tokio::test]
async fn under_openbox_the_window_behind_is_focused_raised_and_gets_the_keys() {
    require(&["openbox"]);
    focus_the_one_behind_and_type_into_it(openbox()).await;
}

#[tokio::test]
async fn without_a_window_manager_the_window_behind_is_focused_raised_and_gets_the_keys() {
    focus_the_one_behind_and_type_into_it(WindowManager::None).await;
}

async fn raise_move_resize_minimise_restore_close(wm: WindowManager) {
    let dir = TempDir::new("manage");
    let (desktop, first, second) = two_readers(wm, &dir).await;

    let raised = desktop.raise_window(first.id).await.expect("raise");
    assert_eq!(raised.id, first.id);
    let on_top = desktop
        .run("stacking", LONG, move |x| x.on_top(first.id))
        .await
        .expect("stacking");
    assert!(on_top);

    let to = MoveResize {
        x: Some(200),
        y: Some(150),
        width: Some(500),
        height: Some(300),
    };
    let moved = desktop
        .move_resize_window(first.id, to)
        .await
        .expect("move");
    assert_eq!((moved.x, moved.y), (200, 150), "{moved:?}");
    // xterm keeps whole character cells: within one cell of what was asked.
    assert!(
        moved.width.abs_diff(500) < 20 && moved.height.abs_diff(300) < 30,
        "{moved:?}"
    );
    let listed = desktop.windows().await.expect("windows");
    let listed = listed.iter().find(|w| w.id == first.id).expect("listed");
    assert_eq!(
        (listed.x, listed.y, listed.width, listed.height),
        (moved.x, moved.y, moved.width, moved.height)
    );
    // Moving only: the size stays.
    let only_x = MoveResize {
        x: Some(10),
        ..MoveResize::default()
    };
    let nudged = desktop
        .move_resize_window(first.id, only_x)
        .await
        .expect("move x");
    assert_eq!(
        (nudged.x, nudged.y, nudged.width, nudged.height),
        (10, 150, moved.width, moved.height)
    );

    let minimized = desktop.minimize_window(first.id).await.expect("minimise");
    assert!(minimized.minimized && !minimized.mapped, "{minimized:?}");
    let listed = desktop.windows().await.expect("windows");
    assert!(
        listed.iter().any(|w| w.id == first.id && w.minimized),
        "a minimised window stays in the list: {listed:?}"
    );
    let restored = desktop.focus_window(first.id).await.expect("restore");
    assert!(
        restored.mapped && restored.focused && !restored.minimized,
        "{restored:?}"
    );

    let closed = desktop.close_window(first.id, false).await.expect("close");
    assert_eq!(closed, CloseOutcome::Closed);
    assert!(
        desktop.wait_program_exit(LONG).await.is_some(),
        "closing the window did not end the first xterm"
    );
    let gone = desktop
        .focus_window(first.id)
        .await
        .expect_err("the window is gone");
    assert_eq!(gone.code(), "window_gone");
    assert_eq!(
        gone.to_string(),
        format!("window: {:#x} is gone (it was closed)", first.id)
    );
    // The other window is untouched.
    let others = desktop.windows().await.expect("windows");
    assert!(
        others.iter().any(|w| w.id == second.id && w.mapped),
        "{others:?}"
    );
    desktop.close().await;
}

#[tokio::test]
async fn under_openbox_a_window_is_raised_moved_resized_minimised_restored_and_closed() {
    require(&["openbox"]);
    raise_move_resize_minimise_restore_close(openbox()).await;
}

#[tokio::test]
async fn without_a_window_manager_a_window_is_raised_moved_resized_minimised_restored_and_closed() {
    raise_move_resize_minimise_restore_close(WindowManager::None).await;
}

#[tokio::test]
async fn ids_that_are_not_top_level_windows_are_refused_and_nothing_is_sent() {
    require(&["Xvfb", "openbox"]);
    let desktop = start(spec(None, openbox())).await;
    let root = desktop
        .run("root", LONG, |x| {
            use screenpilot_desktop::x11rb::connection::Connection;
            Ok(x.x11("reading the root")?.connection().setup().roots[0].root)
        })
        .await
        .expect("root");
    let not_top = desktop
        .close_window(root, false)
        .await
        .expect_err("the root is no top-level window");
    assert_eq!(not_top.code(), "window_gone");
    assert_eq!(not_top.field(), Some("window"));
    assert!(
        not_top.to_string().contains("is not a top-level window"),
        "{not_top}"
    );
    let invalid = MoveResize::default();
    let e = desktop
        .move_resize_window(root, invalid)
        .await
        .expect_err("nothing to do");
    assert_eq!(e.field(), Some("geometry"));
    let never = desktop
        .minimize_window(0x3fff_fff0)
        .await
        .expect_err("no such window");
    assert!(
        never.to_string().ends_with("is gone (it was closed)"),
        "{never}"
    );
    desktop.close().await;
}

#[tokio::test]
async fn under_twm_which_speaks_no_ewmh_the_window_behind_is_focused_and_gets_the_keys() {
    require(&["twm"]);
    focus_the_one_behind_and_type_into_it(WindowManager::Program("twm".into())).await;
}

#[tokio::test]
async fn under_twm_a_window_is_raised_moved_resized_minimised_restored_and_closed() {
    require(&["twm"]);
    raise_move_resize_minimise_restore_close(WindowManager::Program("twm".into())).await;
}

#[tokio::test]
async fn a_program_that_asks_before_closing_shows_its_dialog_and_kill_ends_it() {
    require(&["Xvfb", "openbox", "mousepad"]);
    let home = TempDir::new("ask-home");
    let mut spec = spec(None, openbox());
    spec.program_env = Some(home_of_its_own(&home));
    let desktop = start(spec).await;
    let editor = desktop
        .launch(Program::DesktopEntry("mousepad".into()))
        .await
        .expect("launch mousepad");
    let id = editor.window.id;
    desktop
        .run("typing", LONG, |x| x.type_text("unsaved"))
        .await
        .expect("type");
    let modified = windows_until(&desktop, |ws| {
        ws.iter().any(|w| w.id == id && w.title.starts_with('*'))
    })
    .await;
    assert!(modified.is_ok(), "{modified:?}");
    let asked = desktop.close_window(id, false).await.expect("close");
    let CloseOutcome::Asking { dialog } = asked else {
        panic!("mousepad closed with unsaved text: {asked:?}");
    };
    assert_eq!(dialog.pid, editor.window.pid, "{dialog:?}");
    assert_ne!(dialog.id, id);
    let killed = desktop.close_window(id, true).await.expect("kill");
    assert_eq!(killed, CloseOutcome::Closed);
    desktop.close().await;
}
