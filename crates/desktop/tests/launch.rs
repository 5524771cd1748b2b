//! Starting programs on a running desktop: by desktop-entry name (mousepad, found as
//! org.xfce.mousepad.desktop) and by command line; each returns its first window shown with the
//! keyboard, and is ended with the desktop. Failures name the field and what happened. Real Xvfb,
//! openbox, mousepad and xterm; waits on window events and pidfds only.

use crate::common;

use common::*;
use screenpilot_desktop::Program;

/// Is process `pid` still there (not even a zombie)?
fn exists(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test]
async fn mousepad_by_its_desktop_entry_name_is_shown_focused_and_ended_with_the_desktop() {
    require(&["Xvfb", "openbox", "mousepad"]);
    // A home of its own: mousepad keeps unsaved text and offers to restore it next time (a dialog
    // instead of the editor), and its settings would go to the caller's home.
    let home = TempDir::new("mousepad-home");
    let mut spec = spec(None, openbox());
    spec.program_env = Some(home_of_its_own(&home));
    let desktop = start(spec).await;
    let launched = desktop
        .launch(Program::DesktopEntry("mousepad".into()))
        .await
        .unwrap_or_else(|e| panic!("launch mousepad: {e}"));
    assert_eq!(launched.argv, ["mousepad"], "Exec=mousepad %U without %U");
    let window = &launched.window;
    assert!(window.mapped && window.focused, "{window:?}");
    assert_eq!(window.class, "Mousepad", "{window:?}");
    assert_eq!(window.pid.map(|p| p as i32), Some(launched.pid));
    let listed = desktop.windows().await.expect("windows");
    assert!(listed.iter().any(|w| w.id == window.id), "{listed:?}");
    assert_eq!(desktop.launched(), [(launched.pid, true)]);
    // Typed at once, the text lands in the editor (its title gains the modified mark).
    desktop
        .run("typing", LONG, |x| x.type_text("hello"))
        .await
        .expect("type");
    let modified = windows_until(&desktop, |ws| {
        ws.iter()
            .any(|w| w.id == launched.window.id && w.title.starts_with('*'))
    })
    .await;
    assert!(
        modified.is_ok(),
        "the typed text did not reach mousepad: {modified:?}"
    );
    desktop.close().await;
    assert!(!exists(launched.pid), "mousepad outlived its desktop");
}

#[tokio::test]
async fn a_command_line_gets_its_window_and_a_second_program_starts_beside_the_first() {
    require(&["Xvfb", "openbox", "xterm"]);
    let desktop = start(spec(Some(&["xterm", "-T", "one", "-e", "cat"]), openbox())).await;
    let argv: Vec<String> = ["xterm", "-T", "two", "-e", "cat"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let two = desktop
        .launch(Program::Command(argv))
        .await
        .expect("launch");
    assert_eq!(two.window.title, "two");
    assert!(two.window.focused);
    let windows = desktop.windows().await.expect("windows");
    assert_eq!(windows.len(), 2, "{windows:?}");
    // The program sees the desktop's display and nothing of another.
    let env = desktop.program_environment();
    assert!(env
        .iter()
        .any(|(k, v)| k == "DISPLAY" && *v == *desktop.display));
    desktop.close().await;
    assert!(!exists(two.pid), "the launched xterm outlived its desktop");
}

#[tokio::test]
async fn failures_name_the_field_and_leave_nothing_running() {
    require(&["Xvfb", "openbox"]);
    let desktop = start(spec(None, openbox())).await;
    let missing = desktop
        .launch(Program::DesktopEntry("no-such-app-here".into()))
        .await
        .expect_err("no such entry");
    assert_eq!(missing.field(), Some("app"));
    assert!(
        missing
            .to_string()
            .starts_with("app: no desktop entry named \"no-such-app-here\" in "),
        "{missing}"
    );
    let not_found = desktop
        .launch(Program::Command(vec!["no-such-program-here".into()]))
        .await
        .expect_err("no such program");
    assert_eq!(not_found.field(), Some("cmd"));
    assert!(not_found.to_string().contains("was not found on PATH"));
    let exits = desktop
        .launch(Program::Command(vec![
            "sh".into(),
            "-c".into(),
            "echo no display for me >&2; exit 4".into(),
        ]))
        .await
        .expect_err("it exits");
    assert_eq!(exits.code(), "window_not_ready");
    let message = exits.to_string();
    assert!(
        message.contains("exited with status 4 before it mapped a window")
            && message.contains("no display for me"),
        "{message}"
    );
    assert!(desktop.launched().is_empty(), "a failed launch is not kept");
    desktop.close().await;
}
