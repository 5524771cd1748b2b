//! A private headless sway: started as `nobody` when we are root, ready when it answers; real
//! Wayland programs (foot, a GTK 3 and a Qt 5 window) show up in its window list, woken by its
//! events; focus, move/resize, minimise and close change what it reports (and `swaymsg` agrees);
//! a scaled output reports logical and physical sizes; stopping it leaves no process. Every wait
//! is on an event (sway's window events, a program's exit).

use crate::common;

use std::time::{Duration, Instant};

use common::*;
use screenpilot_desktop::sway::{self, Compositor, SwayEvents, SwaySpec, View};
use screenpilot_desktop::MoveResize;

async fn launch(dir: &TempDir) -> Compositor {
    require(&["sway", "foot", "swaymsg"]);
    let started = Instant::now();
    let compositor = sway::launch_sway(&dir.0, 1024, 768, READY)
        .await
        .unwrap_or_else(|e| panic!("sway did not start: {} ({e})", e.code()));
    eprintln!("sway ready in {:?}", started.elapsed());
    compositor
}

/// Start `argv` on the compositor (its environment only, as the program would get it).
fn start_on(
    compositor: &Compositor,
    argv: &[&str],
    log: &std::path::Path,
) -> tokio::process::Child {
    let log = std::fs::File::create(log).expect("program log");
    tokio::process::Command::new(argv[0])
        .args(&argv[1..])
        .env_clear()
        .envs(compositor.program_env(None))
        .env("NO_AT_BRIDGE", "1")
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {argv:?}: {e}"))
}

/// The views, read on a blocking thread through a fresh IPC connection.
async fn read_views(compositor: &Compositor) -> Vec<View> {
    let ipc = compositor.ipc.clone();
    tokio::task::spawn_blocking(move || sway::SwayIpc::connect(&ipc, LONG)?.views())
        .await
        .expect("join")
        .expect("views")
}

/// Run one IPC action on a blocking thread.
async fn act<T: Send + 'static>(
    compositor: &Compositor,
    action: impl FnOnce(&mut sway::SwayIpc) -> screenpilot_desktop::Result<T> + Send + 'static,
) -> screenpilot_desktop::Result<T> {
    let ipc = compositor.ipc.clone();
    tokio::task::spawn_blocking(move || action(&mut sway::SwayIpc::connect(&ipc, LONG)?))
        .await
        .expect("join")
}

/// Wait (woken by sway's events) until the views satisfy `want`; the last list when they never
/// do within [`LONG`].
async fn views_until(
    compositor: &Compositor,
    events: &SwayEvents,
    want: impl Fn(&[View]) -> bool,
) -> Result<Vec<View>, Vec<View>> {
    let mut updates = events.updates();
    let deadline = Instant::now() + LONG;
    loop {
        updates.borrow_and_update();
        let views = read_views(compositor).await;
        if want(&views) {
            return Ok(views);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, updates.changed()).await {
            Ok(Ok(())) => {}
            _ => return Err(views),
        }
    }
}

fn titled<'a>(views: &'a [View], title: &str) -> Option<&'a View> {
    views.iter().find(|view| view.info.title == title)
}

/// What `swaymsg -t get_tree` says about container `id`: its client area and states.
async fn swaymsg_view(compositor: &Compositor, id: u32) -> Option<serde_json::Value> {
    let output = tokio::process::Command::new("swaymsg")
        .args(["-r", "-t", "get_tree", "-s"])
        .arg(&compositor.ipc)
        .output()
        .await
        .expect("swaymsg");
    assert!(output.status.success(), "swaymsg failed: {output:?}");
    let tree: serde_json::Value = serde_json::from_slice(&output.stdout).expect("tree JSON");
    fn find(node: &serde_json::Value, id: u32) -> Option<serde_json::Value> {
        if node["id"] == id {
            return Some(node.clone());
        }
        ["nodes", "floating_nodes"]
            .iter()
            .filter_map(|key| node[key].as_array())
            .flatten()
            .find_map(|child| find(child, id))
    }
    find(&tree, id)
}

/// (x, y, width, height) of the client area in a `swaymsg` node.
fn client_area(node: &serde_json::Value) -> (i64, i64, i64, i64) {
    let n = |v: &serde_json::Value| v.as_i64().expect("number");
    (
        n(&node["rect"]["x"]) + n(&node["window_rect"]["x"]),
        n(&node["rect"]["y"]) + n(&node["window_rect"]["y"]),
        n(&node["window_rect"]["width"]),
        n(&node["window_rect"]["height"]),
    )
}

fn uid_of(pid: i32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Is `pid` a live process (not gone, not a zombie)?
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat[stat.rfind(')')? + 1..].trim_start().chars().next()?;
            Some(state != 'Z')
        })
        .unwrap_or(false)
}

/// The other processes of the process group `pid` leads (sway double-forks swaybg into it).
fn group_members(pid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|stat| {
                    stat[stat.rfind(')')? + 1..]
                        .split_whitespace()
                        .nth(2)?
                        .parse::<i32>()
                        .ok()
                })
                == Some(pid)
                && *child != pid
        })
        .collect()
}

#[tokio::test]
async fn sway_starts_unprivileged_and_a_foot_window_shows_with_its_pid_title_and_app_id() {
    let dir = TempDir::new("sway-foot");
    let compositor = launch(&dir).await;
    // SAFETY: geteuid cannot fail.
    let expected_uid = if unsafe { libc::geteuid() } == 0 {
        sway::UNPRIVILEGED
    } else {
        unsafe { libc::geteuid() }
    };
    assert_eq!(compositor.uid, expected_uid);
    assert_eq!(uid_of(compositor.child.pid), Some(expected_uid));
    assert!(compositor.wayland_socket.is_absolute());
    std::os::unix::net::UnixStream::connect(&compositor.wayland_socket)
        .expect("the Wayland socket accepts connections");
    // Programs reach it through their own runtime directory, under the same name.
    std::os::unix::net::UnixStream::connect(
        compositor
            .program_runtime_dir
            .join(&compositor.wayland_display),
    )
    .expect("the programs' link to the socket");
    let found = sway::find_ipc_with(
        &compositor.program_runtime_dir,
        &compositor.wayland_display,
        Some(&compositor.ipc),
    )
    .expect("the display exists");
    assert_eq!(found.as_deref(), Some(compositor.ipc.as_path()));

    let events = compositor.events(LONG).expect("events");
    let mut foot = start_on(
        &compositor,
        &["foot", "--title", "sp-foot"],
        &dir.file("foot.log"),
    );
    let foot_pid = foot.id().expect("foot runs");
    let views = views_until(&compositor, &events, |views| {
        titled(views, "sp-foot").is_some()
    })
    .await
    .unwrap_or_else(|views| panic!("no foot window; views: {views:?}"));
    let view = titled(&views, "sp-foot").expect("foot");
    let info = &view.info;
    assert_eq!(info.pid, Some(foot_pid));
    assert_eq!(
        (info.class.as_str(), view.shell.as_str()),
        ("foot", "xdg_shell")
    );
    assert!(view.floating, "our sway floats new windows: {view:?}");
    assert!(info.focused && info.mapped && !info.minimized, "{info:?}");
    // Floating at the size foot asked for, centred on the 1024x768 output.
    assert!(info.width >= 100 && info.height >= 50, "{info:?}");
    assert!(info.width <= 1024 && info.height <= 768, "{info:?}");
    assert_eq!(info.x, (1024 - info.width as i32) / 2, "{info:?}");
    let theirs = swaymsg_view(&compositor, info.id)
        .await
        .expect("swaymsg sees it");
    assert_eq!(theirs["app_id"], "foot");
    assert_eq!(
        client_area(&theirs),
        (
            info.x as i64,
            info.y as i64,
            info.width as i64,
            info.height as i64
        )
    );
    let outputs = act(&compositor, |ipc| ipc.outputs())
        .await
        .expect("outputs");
    assert_eq!(outputs.len(), 1);
    let output = &outputs[0];
    assert_eq!(output.name, sway::OUTPUT);
    assert_eq!((output.physical_width, output.physical_height), (1024, 768));
    assert_eq!((output.logical_width, output.logical_height), (1024, 768));

    let _ = foot.start_kill();
    let _ = foot.wait().await;
    compositor.stop(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn focus_move_resize_minimize_and_close_change_what_sway_reports() {
    let dir = TempDir::new("sway-manage");
    let compositor = launch(&dir).await;
    let events = compositor.events(LONG).expect("events");
    let _one = start_on(
        &compositor,
        &["foot", "--title", "sp-one"],
        &dir.file("one.log"),
    );
    views_until(&compositor, &events, |views| {
        titled(views, "sp-one").is_some()
    })
    .await
    .unwrap_or_else(|views| panic!("no first window: {views:?}"));
    let mut two = start_on(
        &compositor,
        &["foot", "--title", "sp-two"],
        &dir.file("two.log"),
    );
    let views = views_until(&compositor, &events, |views| {
        titled(views, "sp-two").is_some_and(|two| two.info.focused)
    })
    .await
    .unwrap_or_else(|views| panic!("the second window is not focused: {views:?}"));
    let one = titled(&views, "sp-one").expect("one").info.id;
    let second = titled(&views, "sp-two").expect("two").info.id;

    act(&compositor, move |ipc| ipc.focus(one))
        .await
        .expect("focus");
    let views = read_views(&compositor).await;
    assert!(titled(&views, "sp-one").expect("one").info.focused);
    assert!(!titled(&views, "sp-two").expect("two").info.focused);
    assert_eq!(
        swaymsg_view(&compositor, one).await.expect("one")["focused"],
        true
    );

    let to = MoveResize {
        x: Some(10),
        y: Some(20),
        width: Some(400),
        height: Some(300),
    };
    act(&compositor, move |ipc| ipc.move_resize(one, to))
        .await
        .expect("move_resize");
    let info = titled(&read_views(&compositor).await, "sp-one")
        .expect("one")
        .info
        .clone();
    assert_eq!(
        (info.x, info.y, info.width, info.height),
        (10, 20, 400, 300)
    );
    let theirs = swaymsg_view(&compositor, one).await.expect("one");
    assert_eq!(client_area(&theirs), (10, 20, 400, 300));
    // Only a size: the place stays.
    let wider = MoveResize {
        width: Some(500),
        ..MoveResize::default()
    };
    act(&compositor, move |ipc| ipc.move_resize(one, wider))
        .await
        .expect("resize");
    let info = titled(&read_views(&compositor).await, "sp-one")
        .expect("one")
        .info
        .clone();
    assert_eq!(
        (info.x, info.y, info.width, info.height),
        (10, 20, 500, 300)
    );

    let generation = *events.updates().borrow();
    act(&compositor, move |ipc| ipc.minimize(second))
        .await
        .expect("minimize");
    let views = views_until(&compositor, &events, |views| {
        titled(views, "sp-two").is_some_and(|two| two.info.minimized)
    })
    .await
    .unwrap_or_else(|views| panic!("not minimised: {views:?}"));
    // sway answers the command and sends the event on one socket each: the tree can show the
    // window minimised before the event thread has read the event.
    let mut updates = events.updates();
    let counted = tokio::time::timeout(LONG, updates.wait_for(|counted| *counted > generation))
        .await
        .is_ok_and(|ended| ended.is_ok());
    assert!(counted, "no event for it");
    let two_view = titled(&views, "sp-two").expect("two");
    assert!(!two_view.info.mapped);
    assert_eq!(two_view.workspace, sway::SCRATCHPAD);
    assert_eq!(
        swaymsg_view(&compositor, second).await.expect("two")["visible"],
        false
    );
    act(&compositor, move |ipc| ipc.focus(second))
        .await
        .expect("focus brings it back");
    let info = titled(&read_views(&compositor).await, "sp-two")
        .expect("two")
        .info
        .clone();
    assert!(info.mapped && info.focused && !info.minimized, "{info:?}");

    act(&compositor, move |ipc| ipc.close(second))
        .await
        .expect("close");
    views_until(&compositor, &events, |views| {
        titled(views, "sp-two").is_none()
    })
    .await
    .unwrap_or_else(|views| panic!("still there: {views:?}"));
    tokio::time::timeout(LONG, two.wait())
        .await
        .expect("foot ends once its window is closed")
        .expect("wait");
    assert!(swaymsg_view(&compositor, second).await.is_none());

    let err = act(&compositor, move |ipc| ipc.focus(second))
        .await
        .expect_err("a closed window");
    assert_eq!(err.code(), "window_gone");
    let outcomes = act(&compositor, |ipc| ipc.run_command("frobnicate"))
        .await
        .expect("an answer");
    assert!(
        !outcomes[0].success && outcomes[0].error.is_some(),
        "{outcomes:?}"
    );
    compositor.stop(Duration::from_secs(5)).await;
}

const GTK_APP: &str = r#"
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
w = Gtk.Window(title="sp-gtk")
w.set_default_size(320, 200)
w.add(Gtk.Label(label="hello from GTK"))
w.connect("destroy", Gtk.main_quit)
w.show_all()
Gtk.main()
"#;

const QT_APP: &str = r#"
import sys
from PyQt5 import QtWidgets
app = QtWidgets.QApplication(sys.argv)
w = QtWidgets.QLabel("hello from Qt")
w.setWindowTitle("sp-qt")
w.resize(320, 200)
w.show()
app.exec_()
"#;

#[tokio::test]
async fn gtk_and_qt_programs_run_natively_on_wayland() {
    require(&["/usr/bin/python3"]);
    let dir = TempDir::new("sway-toolkits");
    let compositor = launch(&dir).await;
    let events = compositor.events(LONG).expect("events");
    let _gtk = start_on(
        &compositor,
        &["/usr/bin/python3", "-c", GTK_APP],
        &dir.file("gtk.log"),
    );
    let _qt = start_on(
        &compositor,
        &["/usr/bin/python3", "-c", QT_APP],
        &dir.file("qt.log"),
    );
    let views = views_until(&compositor, &events, |views| {
        titled(views, "sp-gtk").is_some() && titled(views, "sp-qt").is_some()
    })
    .await
    .unwrap_or_else(|views| {
        panic!(
            "not both windows: {views:?}\nGTK: {}\nQt: {}",
            std::fs::read_to_string(dir.file("gtk.log")).unwrap_or_default(),
            std::fs::read_to_string(dir.file("qt.log")).unwrap_or_default()
        )
    });
    for title in ["sp-gtk", "sp-qt"] {
        let view = titled(&views, title).expect("window");
        assert_eq!(view.shell, "xdg_shell", "{title} is not native: {view:?}");
        assert!(!view.info.class.is_empty(), "{title} has no app_id");
        assert!(view.info.width >= 100 && view.info.height >= 50, "{view:?}");
    }
    // Programs run as root on a compositor run by nobody: no complaint about the runtime dir.
    let qt_log = std::fs::read_to_string(dir.file("qt.log")).unwrap_or_default();
    assert!(!qt_log.contains("QStandardPaths"), "{qt_log}");
    compositor.stop(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_scaled_output_reports_logical_and_physical_sizes() {
    require(&["sway"]);
    let dir = TempDir::new("sway-scale");
    let spec = SwaySpec {
        width: 1024,
        height: 768,
        scale: 2.0,
    };
    let compositor = sway::launch_sway_with(&dir.0, &spec, READY)
        .await
        .unwrap_or_else(|e| panic!("sway did not start: {e}"));
    let outputs = act(&compositor, |ipc| ipc.outputs())
        .await
        .expect("outputs");
    let output = &outputs[0];
    assert_eq!(output.scale, 2.0);
    assert_eq!((output.physical_width, output.physical_height), (1024, 768));
    assert_eq!((output.logical_width, output.logical_height), (512, 384));
    // And at run time.
    act(&compositor, |ipc| ipc.command("output HEADLESS-1 scale 1"))
        .await
        .expect("rescale");
    let output = act(&compositor, |ipc| ipc.outputs())
        .await
        .expect("outputs")[0]
        .clone();
    assert_eq!((output.logical_width, output.logical_height), (1024, 768));
    compositor.stop(Duration::from_secs(5)).await;
}

#[tokio::test]
async fn a_wayland_display_that_does_not_exist_is_named() {
    let dir = TempDir::new("sway-nodisplay");
    let err = sway::find_ipc(&dir.0, "wayland-77").expect_err("no such display");
    assert!(err.to_string().contains("wayland-77"), "{err}");
}

#[tokio::test]
async fn stopping_the_compositor_leaves_no_process() {
    let dir = TempDir::new("sway-stop");
    let compositor = launch(&dir).await;
    let pid = compositor.child.pid;
    let events = compositor.events(LONG).expect("events");
    let mut updates = events.updates();
    let members = group_members(pid);
    assert!(
        !members.is_empty(),
        "sway runs swaybg for the background; none found in its group"
    );
    compositor.stop(Duration::from_secs(5)).await;
    // The event thread saw sway go and dropped its sender: a wait on the compositor ends.
    let ended =
        tokio::time::timeout(LONG, async { while updates.changed().await.is_ok() {} }).await;
    assert!(ended.is_ok(), "the event counter outlived sway");
    let thread = events.stop_and_take().expect("the thread handle");
    tokio::task::spawn_blocking(move || thread.join())
        .await
        .expect("join")
        .expect("the event thread did not panic");
    assert!(!alive(pid), "sway is still there");
    for member in members {
        assert!(!alive(member), "{member} of sway's group is still there");
    }
}
