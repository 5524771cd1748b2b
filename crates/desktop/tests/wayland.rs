//! The Wayland client against a real compositor: a private headless sway (software rendering, no
//! input devices), run as an unprivileged user because sway refuses root. Results are checked with
//! programs outside screenpilot: grim's screenshot, a file foot's shell writes, a GTK window's own
//! report of its events, wl-paste and wl-copy.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use screenpilot_desktop::keysym;
use screenpilot_desktop::wayland::{ClipboardServer, DamageWatch, Wayland};
use screenpilot_desktop::{ClipContent, ClipKind, Gestures as _, Point, Seat as _, Selection};

use crate::common::TempDir;

/// Generous: a loaded 2-core machine starting a compositor and a client.
const READY: Duration = Duration::from_secs(60);
/// The uid and gid sway runs as (nobody).
const UNPRIVILEGED: u32 = 65534;
/// The configured background, #336699.
const BACKGROUND: [u8; 3] = [0x33, 0x66, 0x99];

/// A headless sway of our own, stopped when this goes.
struct HeadlessSway {
    child: Child,
    socket: PathBuf,
    runtime: PathBuf,
    dir: TempDir,
    log: mpsc::Receiver<String>,
}

impl HeadlessSway {
    /// Start sway with one 1280x800 output and a solid background; `None` (with the reason printed)
    /// only when sway is not installed. Returns once sway says it runs on its socket.
    fn start(name: &str) -> Option<HeadlessSway> {
        if !installed("sway") {
            println!("skipped: sway is not installed (scripts/test.sh installs it)");
            return None;
        }
        let dir = TempDir::new(name);
        let runtime = dir.file("runtime");
        std::fs::create_dir(&runtime).expect("runtime dir");
        std::os::unix::fs::chown(&runtime, Some(UNPRIVILEGED), Some(UNPRIVILEGED)).expect("chown");
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let config = dir.file("config");
        std::fs::write(
            &config,
            "output HEADLESS-1 resolution 1280x800\noutput * bg #336699 solid_color\n",
        )
        .expect("config");
        let mut child = Command::new("setpriv")
            .args([
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "sway",
                "-V",
                "-c",
            ])
            .arg(&config)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("XDG_RUNTIME_DIR", &runtime)
            .env("WLR_BACKENDS", "headless")
            .env("WLR_RENDERER", "pixman")
            .env("WLR_LIBINPUT_NO_DEVICES", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sway");
        let stderr = child.stderr.take().expect("sway's stderr");
        let (lines, log) = mpsc::channel();
        // Reads sway's log to its end, so sway never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + READY;
        let marker = "Running compositor on wayland display '";
        let mut seen = Vec::new();
        let display = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match log.recv_timeout(left) {
                Ok(line) => {
                    if let Some(at) = line.find(marker) {
                        let rest = &line[at + marker.len()..];
                        break rest.trim_end_matches('\'').to_owned();
                    }
                    seen.push(line);
                }
                Err(e) => panic!("sway did not start ({e:?}):\n{}", seen.join("\n")),
            }
        };
        Some(HeadlessSway {
            child,
            socket: runtime.join(display),
            runtime,
            dir,
            log,
        })
    }

    /// A command for a client of this sway (run as root, which may use nobody's socket).
    fn client(&self, program: &str) -> Command {
        let mut command = Command::new(program);
        command
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env("WAYLAND_DISPLAY", &self.socket)
            .env_remove("DISPLAY")
            .stdin(Stdio::null());
        command
    }

    fn connect(&self) -> Wayland {
        let mut wayland = Wayland::connect(&self.socket).expect("connect to sway");
        wayland.begin(Instant::now() + READY).expect("begin");
        wayland
    }

    /// Wait (woken by drawing) until the toplevel with this app id or title has the focus.
    async fn focused(&self, wayland: &mut Wayland, damage: &DamageWatch, app_id: &str) {
        let mut drawn = damage.damage_updates();
        let deadline = tokio::time::Instant::now() + READY;
        loop {
            drawn.borrow_and_update();
            let toplevels = wayland.toplevels().expect("toplevels");
            if toplevels
                .iter()
                .any(|t| (t.app_id == app_id || t.title == app_id) && t.activated)
            {
                return;
            }
            if tokio::time::timeout_at(deadline, drawn.changed())
                .await
                .is_err()
            {
                panic!("{app_id} never got the focus: {toplevels:?}");
            }
        }
    }
}

impl Drop for HeadlessSway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        while self.log.try_recv().is_ok() {}
        let _ = &self.dir;
    }
}

fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// Wait (woken by inotify) until `path` holds `want`; what it held last otherwise.
fn wait_for_file(path: &Path, want: &str, limit: Duration) -> String {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let deadline = Instant::now() + limit;
    // SAFETY: plain syscall; the result is a new descriptor we own, or -1.
    let raw = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    assert!(raw >= 0, "inotify_init1");
    // SAFETY: a fresh descriptor nobody else owns.
    let inotify = unsafe { OwnedFd::from_raw_fd(raw) };
    let dir = std::ffi::CString::new(
        path.parent()
            .expect("a parent")
            .as_os_str()
            .as_encoded_bytes(),
    )
    .expect("a path");
    // SAFETY: a valid descriptor and NUL-terminated path.
    let watch = unsafe {
        libc::inotify_add_watch(
            inotify.as_raw_fd(),
            dir.as_ptr(),
            libc::IN_MODIFY | libc::IN_CLOSE_WRITE | libc::IN_CREATE,
        )
    };
    assert!(watch >= 0, "inotify_add_watch");
    loop {
        let now = std::fs::read_to_string(path).unwrap_or_default();
        let left = deadline.saturating_duration_since(Instant::now());
        if now == want || left.is_zero() {
            return now;
        }
        let mut poll = libc::pollfd {
            fd: inotify.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let mut buf = [0u8; 4096];
        // SAFETY: one valid pollfd; then reading into a local buffer (the events only wake us).
        unsafe {
            libc::poll(&mut poll, 1, left.as_millis() as i32 + 1);
            libc::read(inotify.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len());
        }
    }
}

/// The lines a program prints, as they come.
fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn next_line(lines: &mpsc::Receiver<String>, what: &str) -> String {
    lines
        .recv_timeout(READY)
        .unwrap_or_else(|e| panic!("no line from the program while waiting for {what}: {e:?}"))
}

/// Kills a child when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_missing_socket_is_named_and_sway_offers_every_protocol() {
    let Err(err) = Wayland::connect(Path::new("/run/screenpilot-none/wayland-7")) else {
        panic!("connected to a socket that does not exist");
    };
    assert!(
        err.to_string()
            .contains("no Wayland socket at /run/screenpilot-none/wayland-7"),
        "{err}"
    );
    let Some(sway) = HeadlessSway::start("wl-protocols") else {
        return;
    };
    let wayland = sway.connect();
    assert_eq!(
        wayland.protocols(),
        [
            "wl_output",
            "wl_seat",
            "wl_shm",
            "zwlr_screencopy_manager_v1",
            "zwlr_virtual_pointer_manager_v1",
            "zwp_virtual_keyboard_manager_v1",
            "zwlr_data_control_manager_v1",
            "zwlr_foreign_toplevel_manager_v1",
        ]
    );
    assert_eq!(wayland.size(), (1280, 800));
    assert_eq!(wayland.logical_size(), (1280, 800));
    let off = wayland
        .check_point(Point { x: 1280, y: 5 }, "x/y")
        .unwrap_err();
    assert_eq!(off.field(), Some("x/y"));
}

#[tokio::test]
async fn capture_matches_grim_pixel_for_pixel_and_shows_the_configured_background() {
    let Some(sway) = HeadlessSway::start("wl-capture") else {
        return;
    };
    let mut wayland = sway.connect();
    let damage = DamageWatch::start(&sway.socket, Instant::now() + READY).expect("damage watch");
    // swaybg draws the background a moment after sway starts: wait for it, woken by drawing.
    let mut drawn = damage.damage_updates();
    let deadline = tokio::time::Instant::now() + READY;
    let frame = loop {
        drawn.borrow_and_update();
        let frame = wayland.capture(false).expect("capture");
        if frame.pixel(640, 400) == Some(BACKGROUND) {
            break frame;
        }
        tokio::time::timeout_at(deadline, drawn.changed())
            .await
            .expect("the background never showed")
            .expect("the damage watch ended");
    };
    assert_eq!((frame.width, frame.height), (1280, 800));
    // All but the pointer's image, which sway draws into the output itself (a software cursor).
    let background = frame
        .rgb
        .chunks_exact(3)
        .filter(|px| *px == BACKGROUND)
        .count();
    assert!(
        background > 1280 * 800 - 2000,
        "{background} pixels of background"
    );

    let shot = sway.dir.file("grim.png");
    let grim_started = Instant::now();
    let status = sway.client("grim").arg(&shot).status().expect("run grim");
    let grim_took = grim_started.elapsed();
    assert!(status.success());
    let grim = screenpilot_desktop::decode_png(&std::fs::read(&shot).expect("grim's PNG"))
        .expect("decode");
    assert_eq!(grim, frame, "grim's screenshot and ours differ");

    let rounds = 10;
    let started = Instant::now();
    for _ in 0..rounds {
        wayland.capture(false).expect("capture");
    }
    let ours = started.elapsed() / rounds;
    let pixels = wayland.capture(false).expect("capture");
    let started = Instant::now();
    for _ in 0..rounds {
        let _ = screenpilot_desktop::encode_png(&pixels);
    }
    println!(
        "PNG encoding: {:.1} ms",
        (started.elapsed() / rounds).as_secs_f64() * 1e3
    );
    let hash = wayland.screen_hash().expect("hash");
    assert_eq!(hash, frame.hash());
    println!(
        "capture of 1280x800: {:.1} ms each (to RGB, over {rounds}); grim to a PNG file: {:.1} ms",
        ours.as_secs_f64() * 1e3,
        grim_took.as_secs_f64() * 1e3
    );
}

#[tokio::test]
async fn the_damage_watch_counts_drawing_and_stays_still_on_a_still_screen() {
    let Some(sway) = HeadlessSway::start("wl-damage") else {
        return;
    };
    let mut wayland = sway.connect();
    let damage = DamageWatch::start(&sway.socket, Instant::now() + READY).expect("damage watch");
    let mut drawn = damage.damage_updates();
    let deadline = tokio::time::Instant::now() + READY;
    while wayland.capture(false).expect("capture").pixel(0, 0) != Some(BACKGROUND) {
        tokio::time::timeout_at(deadline, drawn.changed())
            .await
            .expect("the background never showed")
            .expect("the damage watch ended");
    }
    // Nothing draws now: the generation must not move. The wait is the observation, not a sync.
    drawn.borrow_and_update();
    let still = tokio::time::timeout(Duration::from_millis(700), drawn.changed()).await;
    assert!(
        still.is_err(),
        "damage on a still screen: {:?}",
        damage.drawn()
    );

    let before = *drawn.borrow_and_update();
    let _foot = Killed(
        sway.client("foot")
            .env("LANG", "C.UTF-8")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start foot"),
    );
    tokio::time::timeout(READY, drawn.changed())
        .await
        .expect("foot's window raised no damage")
        .expect("the damage watch ended");
    let last = damage.drawn();
    assert!(last.generation > before);
    let (x, y, w, h) = last.area.expect("a damaged box");
    assert!(x >= 0 && y >= 0 && w > 0 && h > 0, "{:?}", last.area);
    assert!(
        x as u32 + w as u32 <= 1280 && y as u32 + h as u32 <= 800,
        "{:?}",
        last.area
    );

    let started = Instant::now();
    let thread = damage.stop_and_take().expect("the thread");
    thread.join().expect("the damage thread ended cleanly");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "stopping took {:?}",
        started.elapsed()
    );
    assert!(
        drawn.changed().await.is_err(),
        "the sender went with the thread"
    );
}

#[tokio::test]
async fn the_first_key_of_a_fresh_client_reaches_foot_and_any_unicode_types() {
    let Some(sway) = HeadlessSway::start("wl-type") else {
        return;
    };
    let typed = sway.dir.file("typed.txt");
    let foot = Killed(
        sway.client("foot")
            .env("LANG", "C.UTF-8")
            .arg("--")
            .arg("sh")
            .arg("-c")
            .arg(format!("stty -echo; cat > '{}'", typed.display()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start foot"),
    );
    let mut watcher = sway.connect();
    let damage = DamageWatch::start(&sway.socket, Instant::now() + READY).expect("damage watch");
    sway.focused(&mut watcher, &damage, "foot").await;

    // A client connected just now types at once: its very first key must arrive.
    let mut typist = sway.connect();
    typist.type_text("héllo wörld ✓\n").expect("type");
    let got = wait_for_file(&typed, "héllo wörld ✓\n", READY);
    assert_eq!(got, "héllo wörld ✓\n");

    // Characters outside the first keymap and a chord after them (Ctrl+D ends cat's input).
    typist.type_text("日本 ÅÄ\n").expect("type");
    let got = wait_for_file(&typed, "héllo wörld ✓\n日本 ÅÄ\n", READY);
    assert_eq!(got, "héllo wörld ✓\n日本 ÅÄ\n");
    typist
        .key_chord(&[keysym::CONTROL_L, u32::from('d')], Duration::ZERO)
        .expect("ctrl+d");
    let mut foot = foot;
    let (ended, exited) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = foot.0.wait();
        let _ = ended.send(status.map(|s| s.success()));
        foot
    });
    let status = exited.recv_timeout(READY);
    assert!(
        matches!(status, Ok(Ok(true))),
        "Ctrl+D did not end cat, so foot did not exit: {status:?}"
    );
    drop(waiter.join());
    typist.leave_as_found().expect("leave as found");
}

#[tokio::test]
async fn clicks_drags_and_wheel_steps_reach_a_gtk_window_at_the_pixels_asked() {
    let Some(sway) = HeadlessSway::start("wl-pointer") else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pointer_events.py");
    let mut app = sway
        .client("/usr/bin/python3")
        .arg(&script)
        .env("GDK_BACKEND", "wayland")
        .env("NO_AT_BRIDGE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the GTK window");
    let lines = lines_of(&mut app);
    let _app = Killed(app);
    assert_eq!(next_line(&lines, "ready"), "ready");
    let mut wayland = sway.connect();
    let damage = DamageWatch::start(&sway.socket, Instant::now() + READY).expect("damage watch");
    sway.focused(&mut wayland, &damage, "pointer events").await;
    // GTK maps its window at 400x300, then takes the tile's size (and moves its contents when its
    // shadows go): wait, woken by drawing, until it covers a point far outside its first size.
    let mut drawn = damage.damage_updates();
    let deadline = tokio::time::Instant::now() + READY;
    loop {
        drawn.borrow_and_update();
        let frame = wayland.capture(false).expect("capture");
        if frame.pixel(1000, 600) != Some(BACKGROUND) {
            break;
        }
        tokio::time::timeout_at(deadline, drawn.changed())
            .await
            .expect("the window never took its tile's size")
            .expect("the damage watch ended");
    }

    let parse = |line: &str| -> (String, i64, i64) {
        let parts: Vec<&str> = line.split(' ').collect();
        let n = |i: usize| parts.get(i).and_then(|p| p.parse().ok()).unwrap_or(-1);
        (
            parts[..parts.len().min(2)].join(" "),
            n(parts.len() - 2),
            n(parts.len() - 1),
        )
    };
    wayland
        .click(Point { x: 100, y: 100 }, 1, 1, &[])
        .expect("click");
    let (press, x0, y0) = parse(&next_line(&lines, "a press"));
    assert_eq!(press, "press 1");
    let (release, x1, y1) = parse(&next_line(&lines, "a release"));
    assert_eq!((release.as_str(), x1, y1), ("release 1", x0, y0));
    wayland
        .click(Point { x: 200, y: 150 }, 3, 1, &[])
        .expect("right click");
    let (press, x, y) = parse(&next_line(&lines, "a right press"));
    assert_eq!(press, "press 3");
    assert_eq!((x - x0, y - y0), (100, 50), "the pointer went elsewhere");
    assert_eq!(parse(&next_line(&lines, "a right release")).0, "release 3");
    assert_eq!(
        wayland.pointer().expect("pointer"),
        (Point { x: 200, y: 150 }, 0)
    );

    let path = [
        Point { x: 60, y: 120 },
        Point { x: 110, y: 140 },
        Point { x: 160, y: 160 },
    ];
    wayland.drag(&path, 1, &[]).expect("drag");
    let mut seen = Vec::new();
    loop {
        let line = next_line(&lines, "the drag");
        let done = line.starts_with("release");
        seen.push(line);
        if done {
            break;
        }
    }
    let (dx, dy) = (x0 - 100, y0 - 100);
    let at = |p: &Point| (p.x as i64 + dx, p.y as i64 + dy);
    // GTK merges the motion of one frame into its last event: the end of the path shows.
    assert_eq!(
        seen.first().map(|l| parse(l)),
        Some(("press 1".into(), at(&path[0]).0, at(&path[0]).1))
    );
    assert!(
        seen.contains(&format!("motion {} {}", at(&path[2]).0, at(&path[2]).1)),
        "{seen:?}"
    );
    assert_eq!(
        seen.last().map(|l| parse(l)),
        Some(("release 1".into(), at(&path[2]).0, at(&path[2]).1))
    );

    wayland
        .scroll(Point { x: 150, y: 150 }, 1, 2, &[])
        .expect("scroll");
    for want in ["scroll 1 0", "scroll 0 1", "scroll 0 1"] {
        assert_eq!(next_line(&lines, want), want);
    }
    wayland
        .scroll(Point { x: 150, y: 150 }, 0, -1, &[])
        .expect("scroll up");
    assert_eq!(next_line(&lines, "scroll up"), "scroll 0 -1");

    // A button left down shows in pointer(), and leave_as_found lets it go.
    wayland
        .button(Some(Point { x: 120, y: 200 }), 1, true)
        .expect("press");
    assert_eq!(parse(&next_line(&lines, "the held press")).0, "press 1");
    assert_eq!(wayland.pointer().expect("pointer").1, 1 << 8);
    wayland.leave_as_found().expect("leave as found");
    assert_eq!(parse(&next_line(&lines, "the release")).0, "release 1");
    assert_eq!(wayland.pointer().expect("pointer").1, 0);
    let off = wayland
        .click(Point { x: 1280, y: 0 }, 1, 1, &[])
        .unwrap_err();
    assert_eq!(off.field(), Some("x/y"));
}

#[tokio::test]
async fn clipboard_set_here_is_pasted_by_wl_paste_and_wl_copy_is_read_here() {
    let Some(sway) = HeadlessSway::start("wl-clipboard") else {
        return;
    };
    let mut wayland = sway.connect();
    let server = ClipboardServer::start(&sway.socket).expect("clipboard server");
    let long = Duration::from_secs(30);
    let text = "héllo ✓ from screenpilot";
    server
        .set(Selection::Clipboard, ClipContent::Text(text.into()), long)
        .expect("set");
    let pasted = sway
        .client("wl-paste")
        .arg("--no-newline")
        .output()
        .expect("wl-paste");
    assert_eq!(String::from_utf8_lossy(&pasted.stdout), text);
    server
        .set(
            Selection::Primary,
            ClipContent::Text("primary".into()),
            long,
        )
        .expect("set primary");
    let pasted = sway
        .client("wl-paste")
        .args(["--primary", "--no-newline"])
        .output()
        .expect("wl-paste --primary");
    assert_eq!(String::from_utf8_lossy(&pasted.stdout), "primary");
    assert_eq!(
        wayland
            .clipboard_get(Selection::Clipboard, ClipKind::Text)
            .expect("get"),
        ClipContent::Text(text.into())
    );

    // Another program copies: we see the change (no polling), then read it.
    let mut changes = server.selection_updates();
    changes.borrow_and_update();
    let _copier = Killed(
        sway.client("wl-copy")
            .args(["--foreground", "copied by wl-copy ✓"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("wl-copy"),
    );
    tokio::time::timeout(READY, changes.changed())
        .await
        .expect("wl-copy's selection never arrived")
        .expect("the clipboard server ended");
    assert_eq!(
        wayland
            .clipboard_get(Selection::Clipboard, ClipKind::Text)
            .expect("get"),
        ClipContent::Text("copied by wl-copy ✓".into())
    );
    let types = wayland
        .clipboard_types(Selection::Clipboard)
        .expect("types");
    assert!(
        types.iter().any(|t| t == "text/plain;charset=utf-8"),
        "{types:?}"
    );
    let err = wayland
        .clipboard_get(Selection::Clipboard, ClipKind::Png)
        .unwrap_err();
    assert_eq!(err.code(), "type_not_offered", "{err}");
    // The primary selection is still ours.
    assert_eq!(
        wayland
            .clipboard_get(Selection::Primary, ClipKind::Text)
            .expect("get primary"),
        ClipContent::Text("primary".into())
    );
    let thread = server.stop_and_take().expect("the server thread");
    thread.join().expect("the server ended cleanly");
}
