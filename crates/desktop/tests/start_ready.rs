//! `Desktop::start` returns a usable desktop: the window manager has taken over, the program's
//! window is shown with the keyboard, and a line typed at once reaches the program. Real Xvfb,
//! openbox, twm and xterm; every wait is on an event (window counters, the program's exit).

use crate::common;

use std::time::Duration;

use common::*;
use screenpilot_desktop::{Desktop, WindowManager};

/// An xterm whose shell reads one line and writes it to `file`, then exits.
fn xterm_reading_a_line(file: &std::path::Path, extra: &[&str]) -> Vec<String> {
    let mut argv: Vec<String> = vec!["xterm".into()];
    argv.extend(extra.iter().map(|a| a.to_string()));
    argv.extend([
        "-e".into(),
        "sh".into(),
        "-c".into(),
        format!("read x; echo \"got:$x\" > '{}'", file.display()),
    ]);
    argv
}

/// Type `line` and Enter the moment the desktop is up, then wait for the program to end and return
/// what it wrote.
async fn type_at_once_and_read(desktop: &Desktop, line: &str, file: &std::path::Path) -> String {
    let text = format!("{line}\n");
    desktop
        .run("typing", LONG, move |x| x.type_text(&text))
        .await
        .expect("typing");
    let status = desktop.wait_program_exit(LONG).await;
    assert!(
        status.is_some(),
        "the program did not end after the line was typed (the keys were lost?)"
    );
    std::fs::read_to_string(file).unwrap_or_default()
}

#[tokio::test]
async fn xterm_under_openbox_is_shown_focused_and_takes_keys_typed_at_once_ten_starts_in_a_row() {
    require(&["Xvfb", "openbox", "xterm"]);
    let dir = TempDir::new("ten-starts");
    for run in 0..10 {
        let file = dir.file(&format!("line-{run}"));
        let argv = xterm_reading_a_line(&file, &["-T", "ten-starts"]);
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let desktop = start(spec(Some(&argv), openbox())).await;
        let info = desktop.info();
        let window = info
            .window
            .clone()
            .unwrap_or_else(|| panic!("run {run}: start returned without the program's window"));
        assert!(window.mapped && window.focused, "run {run}: {window:?}");
        assert_eq!(window.title, "ten-starts", "run {run}");
        assert_eq!(window.class, "XTerm", "run {run}");
        assert_eq!(
            window.pid.map(|p| p as i32),
            info.program_pid,
            "run {run}: the window is found by its _NET_WM_PID"
        );
        assert_eq!(info.window_manager.as_deref(), Some("openbox"));
        let got = type_at_once_and_read(&desktop, &format!("hello {run}"), &file).await;
        assert_eq!(got.trim(), format!("got:hello {run}"), "run {run}");
        desktop.close().await;
    }
}

#[tokio::test]
async fn without_a_window_manager_the_program_window_is_given_the_keyboard() {
    require(&["Xvfb", "xterm"]);
    let dir = TempDir::new("no-wm");
    let file = dir.file("line");
    let argv = xterm_reading_a_line(&file, &[]);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let desktop = start(spec(Some(&argv), WindowManager::None)).await;
    let window = desktop.window().cloned().expect("the program's window");
    assert!(window.mapped && window.focused, "{window:?}");
    let windows = desktop.windows().await.expect("windows");
    assert_eq!(windows.len(), 1, "{windows:?}");
    assert_eq!(windows[0].id, window.id);
    // With no window manager the client is the root's child itself (inside its 1-pixel border).
    assert_eq!((windows[0].x, windows[0].y), (1, 1), "{windows:?}");
    let got = type_at_once_and_read(&desktop, "no window manager", &file).await;
    assert_eq!(got.trim(), "got:no window manager");
    desktop.close().await;
}

#[tokio::test]
async fn twm_which_never_announces_itself_is_waited_for_and_its_framed_client_found() {
    require(&["Xvfb", "twm", "xterm"]);
    let dir = TempDir::new("twm");
    let file = dir.file("line");
    // A user-given position: twm places the window without asking for a click.
    let argv = xterm_reading_a_line(&file, &["-geometry", "80x24+40+50", "-T", "under-twm"]);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    let desktop = start(spec(Some(&argv), WindowManager::Program("twm".into()))).await;
    let state = desktop
        .run("window manager", LONG, |x| {
            x.x11("reading the window manager")?.window_manager()
        })
        .await
        .expect("window manager state");
    assert!(
        state.redirect_taken && state.announced.is_none(),
        "{state:?}"
    );
    let window = desktop.window().cloned().expect("the program's window");
    assert!(window.mapped && window.focused, "{window:?}");
    assert_eq!(window.title, "under-twm");
    let windows = desktop.windows().await.expect("windows");
    assert_eq!(
        windows.len(),
        1,
        "twm's own windows are not clients: {windows:?}"
    );
    // Found inside twm's frame (through WM_STATE): the client area sits below the title bar.
    assert_eq!(windows[0].id, window.id);
    assert!(windows[0].y > 50, "{windows:?}");
    let got = type_at_once_and_read(&desktop, "under twm", &file).await;
    assert_eq!(got.trim(), "got:under twm");
    desktop.close().await;
}

/// The pid in "NAME (pid N) ..." messages.
fn pid_in(message: &str) -> i32 {
    let start = message.find("(pid ").expect("a pid in the message") + 5;
    let end = start + message[start..].find(')').expect("closing parenthesis");
    message[start..end].parse().expect("a number")
}

/// Is process `pid` still there (not even a zombie)?
fn exists(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test]
async fn a_program_that_never_maps_a_window_is_window_not_ready_and_nothing_is_left_running() {
    require(&["Xvfb", "openbox"]);
    let mut spec = spec(Some(&["sleep", "600"]), openbox());
    spec.ready_timeout = Duration::from_secs(2);
    let error = match Desktop::start("never-maps".into(), spec).await {
        Ok(desktop) => {
            desktop.close().await;
            panic!("a program with no window made a ready desktop");
        }
        Err(e) => e,
    };
    assert_eq!(error.code(), "window_not_ready");
    assert_eq!(error.field(), Some("cmd"));
    let message = error.to_string();
    assert!(
        message.starts_with("sleep (pid ") && message.ends_with("mapped no window within 2 s"),
        "{message}"
    );
    assert!(
        !exists(pid_in(&message)),
        "the program outlived the failed start: {message}"
    );
}

#[tokio::test]
async fn a_program_that_exits_at_once_is_reported_with_its_status_and_output() {
    require(&["Xvfb", "openbox"]);
    let spec = spec(
        Some(&[
            "sh",
            "-c",
            "echo 'cannot open display: nonsense' >&2; exit 3",
        ]),
        openbox(),
    );
    let error = match Desktop::start("exits".into(), spec).await {
        Ok(desktop) => {
            desktop.close().await;
            panic!("a program that exited made a ready desktop");
        }
        Err(e) => e,
    };
    assert_eq!(error.code(), "window_not_ready");
    let message = error.to_string();
    assert!(
        message.contains("exited with status 3 before it mapped a window")
            && message.contains("cannot open display: nonsense"),
        "{message}"
    );
}

#[tokio::test]
async fn a_desktop_without_a_program_is_ready_once_openbox_announced_itself() {
    require(&["Xvfb", "openbox"]);
    let desktop = start(spec(None, openbox())).await;
    let state = desktop
        .run("window manager", LONG, |x| {
            x.x11("reading the window manager")?.window_manager()
        })
        .await
        .expect("window manager state");
    assert_eq!(state.name.as_deref(), Some("Openbox"), "{state:?}");
    assert!(state.announced.is_some() && state.redirect_taken);
    assert!(desktop.info().window.is_none());
    assert!(desktop.windows().await.expect("windows").is_empty());
    desktop.close().await;
}

#[tokio::test]
async fn a_gtk_dialog_is_ready_for_unicode_typed_at_once() {
    require(&["Xvfb", "openbox", "zenity"]);
    let desktop = start(spec(
        Some(&["zenity", "--entry", "--text", "Name?"]),
        openbox(),
    ))
    .await;
    let window = desktop.window().cloned().expect("the dialog's window");
    assert_eq!(window.class, "Zenity");
    assert!(window.mapped && window.focused, "{window:?}");
    desktop
        .run("typing", LONG, |x| x.type_text("Grüße ✓ 日本\n"))
        .await
        .expect("typing");
    // zenity prints the entry when Enter closes it.
    assert!(
        desktop.wait_program_exit(LONG).await.is_some(),
        "Enter did not close the dialog"
    );
    let printed = desktop
        .info()
        .log
        .and_then(|log| std::fs::read_to_string(log).ok())
        .unwrap_or_default();
    assert!(printed.contains("Grüße ✓ 日本"), "{printed:?}");
    desktop.close().await;
}
