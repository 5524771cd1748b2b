//! The desktop's clipboard against independent X clients: what we set is read by `xclip` and pasted
//! into a GTK dialog with Ctrl+V after the call returned; what `xclip` copies is read by us; text
//! and PNG images, CLIPBOARD and PRIMARY, transfers larger than one request (INCR) both ways, and
//! the errors for an empty selection and a type the owner does not offer. Real Xvfb, openbox, xclip
//! and zenity; every wait is on an event (an owner change seen through XFIXES, a program's exit,
//! drawing), each under a generous bound.

use crate::common;

use std::time::Duration;

use common::*;
use screenpilot_desktop::keysym;
use screenpilot_desktop::{ClipContent, ClipKind, Desktop, Selection};

async fn desktop() -> Desktop {
    require(&["Xvfb", "openbox", "xclip"]);
    start(spec(None, openbox())).await
}

/// Copy `data` with `xclip -i` into `selection` (as `type_` when given) and wait until xclip owns it.
async fn xclip_copies(desktop: &Desktop, selection: &str, type_: Option<&str>, data: &[u8]) {
    let x_name = if selection == "clipboard" {
        "CLIPBOARD"
    } else {
        "PRIMARY"
    };
    let watch = OwnerWatch::new(desktop, x_name);
    let mut argv = vec!["xclip", "-i", "-selection", selection];
    if let Some(t) = type_ {
        argv.extend(["-t", t]);
    }
    // xclip forks; the parent ends at once, the child owns the selection until someone else takes
    // it or the display goes away.
    let status = run_detaching(desktop, &argv, data).await;
    assert!(status.success(), "xclip -i failed: {status:?}");
    watch.changed().await;
}

/// What `xclip -o` reads from `selection` (as `type_` when given).
async fn xclip_reads(desktop: &Desktop, selection: &str, type_: Option<&str>) -> Vec<u8> {
    let mut argv = vec!["xclip", "-o", "-selection", selection];
    if let Some(t) = type_ {
        argv.extend(["-t", t]);
    }
    let out = run_on(desktop, &argv, b"").await;
    assert!(
        out.status.success(),
        "xclip -o failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// A PNG of a few colours, not trivially compressible.
fn sample_png(width: u32, height: u32) -> Vec<u8> {
    let mut rgb = Vec::with_capacity((width * height * 3) as usize);
    for y in 0..height {
        for x in 0..width {
            rgb.extend([(x * 7) as u8, (y * 13) as u8, ((x ^ y) * 3) as u8]);
        }
    }
    screenpilot_desktop::encode_png(&screenpilot_desktop::Frame { width, height, rgb })
        .expect("encode a PNG")
}

/// Large text of many distinct lines (so a lost or repeated piece shows).
fn large_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 64);
    let mut n = 0;
    while text.len() < bytes {
        text.push_str(&format!("line {n:07} — ünïcödé\n"));
        n += 1;
    }
    text
}

#[tokio::test]
async fn text_we_set_is_read_by_xclip_and_pasted_into_a_gtk_entry_after_the_call_returned() {
    require(&["Xvfb", "openbox", "xclip", "zenity"]);
    // No blinking cursor: the only drawing after Ctrl+V is the pasted text.
    let config = TempDir::new("gtk-config");
    std::fs::create_dir_all(config.file("gtk-3.0")).expect("gtk dir");
    std::fs::write(
        config.file("gtk-3.0/settings.ini"),
        "[Settings]\ngtk-cursor-blink = false\n",
    )
    .expect("settings.ini");
    let mut env: Vec<_> = std::env::vars_os().collect();
    env.push(("XDG_CONFIG_HOME".into(), config.0.clone().into()));
    let mut spec = spec(
        Some(&["zenity", "--entry", "--text", "Paste here"]),
        openbox(),
    );
    spec.program_env = Some(env);
    let desktop = start(spec).await;
    let text = "pasted: Grüße ✓ 日本";
    desktop
        .clipboard_set(Selection::Clipboard, ClipContent::Text(text.into()))
        .await
        .expect("set the clipboard");
    assert_eq!(
        String::from_utf8(xclip_reads(&desktop, "clipboard", None).await).expect("UTF-8"),
        text
    );
    let types = desktop
        .clipboard_types(Selection::Clipboard)
        .await
        .expect("types");
    assert!(
        types.iter().any(|t| t == "UTF8_STRING") && types.iter().any(|t| t == "STRING"),
        "{types:?}"
    );

    let press = |names: &'static [&'static str]| {
        let keys: Vec<_> = names
            .iter()
            .map(|n| keysym::by_name(n).expect("a key name"))
            .collect();
        move |x: &mut dyn screenpilot_desktop::Backend| x.key_chord(&keys, Duration::ZERO)
    };
    let drawn = *desktop.damage_updates().borrow();
    desktop
        .run("pasting", LONG, press(&["Control_L", "v"]))
        .await
        .expect("Ctrl+V");
    let settled = desktop
        .settle_with(drawn, Duration::from_millis(200), LONG, LONG)
        .await;
    assert!(
        settled.reacted && settled.settled,
        "the entry did not redraw after Ctrl+V: {settled:?}"
    );
    desktop
        .run("confirming", LONG, press(&["Return"]))
        .await
        .expect("Return");
    assert!(
        desktop.wait_program_exit(LONG).await.is_some(),
        "Return did not close the dialog"
    );
    let printed = desktop
        .info()
        .log
        .and_then(|log| std::fs::read_to_string(log).ok())
        .unwrap_or_default();
    assert!(printed.lines().any(|l| l == text), "{printed:?}");
    desktop.close().await;
}

#[tokio::test]
async fn text_copied_by_xclip_is_read_and_a_later_copy_replaces_ours() {
    let desktop = desktop().await;
    desktop
        .clipboard_set(Selection::Clipboard, ClipContent::Text("ours".into()))
        .await
        .expect("set");
    xclip_copies(&desktop, "clipboard", None, "théirs\nline two".as_bytes()).await;
    let read = desktop
        .clipboard_get(Selection::Clipboard, ClipKind::Text)
        .await
        .expect("read");
    assert_eq!(read, ClipContent::Text("théirs\nline two".into()));
    desktop.close().await;
}

#[tokio::test]
async fn a_png_goes_both_ways_byte_for_byte() {
    let desktop = desktop().await;
    let ours = sample_png(64, 48);
    desktop
        .clipboard_set(Selection::Clipboard, ClipContent::Png(ours.clone()))
        .await
        .expect("set a PNG");
    assert_eq!(
        desktop
            .clipboard_types(Selection::Clipboard)
            .await
            .expect("types"),
        ["image/png"]
    );
    assert!(xclip_reads(&desktop, "clipboard", Some("image/png")).await == ours);

    let theirs = sample_png(200, 150);
    xclip_copies(&desktop, "clipboard", Some("image/png"), &theirs).await;
    let read = desktop
        .clipboard_get(Selection::Clipboard, ClipKind::Png)
        .await
        .expect("read a PNG");
    assert!(read == ClipContent::Png(theirs), "the PNG read differs");
    desktop.close().await;
}

#[tokio::test]
async fn text_of_several_mebibytes_goes_both_ways_in_pieces() {
    let desktop = desktop().await;
    let ours = large_text(3 << 20);
    desktop
        .clipboard_set(Selection::Clipboard, ClipContent::Text(ours.clone()))
        .await
        .expect("set large text");
    let read = xclip_reads(&desktop, "clipboard", None).await;
    assert_eq!(read.len(), ours.len());
    assert!(read == ours.as_bytes(), "xclip read other text");
    // Our own reader, against our own owner (another connection), in pieces too.
    let back = desktop
        .clipboard_get(Selection::Clipboard, ClipKind::Text)
        .await
        .expect("read back");
    assert!(back == ClipContent::Text(ours), "we read other text back");

    let theirs = large_text(2 << 20).replace("line", "LINE");
    xclip_copies(&desktop, "clipboard", None, theirs.as_bytes()).await;
    let read = desktop
        .clipboard_get(Selection::Clipboard, ClipKind::Text)
        .await
        .expect("read large text");
    assert!(read == ClipContent::Text(theirs), "we read other text");
    desktop.close().await;
}

#[tokio::test]
async fn primary_is_its_own_selection() {
    let desktop = desktop().await;
    desktop
        .clipboard_set(Selection::Primary, ClipContent::Text("selected".into()))
        .await
        .expect("set primary");
    assert_eq!(xclip_reads(&desktop, "primary", None).await, b"selected");
    let clipboard = desktop
        .clipboard_get(Selection::Clipboard, ClipKind::Text)
        .await
        .expect_err("the clipboard is still empty");
    assert_eq!(clipboard.code(), "selection_empty");

    xclip_copies(&desktop, "primary", None, b"their selection").await;
    assert_eq!(
        desktop
            .clipboard_get(Selection::Primary, ClipKind::Text)
            .await
            .expect("read primary"),
        ClipContent::Text("their selection".into())
    );
    desktop.close().await;
}

#[tokio::test]
async fn an_empty_selection_and_a_type_not_offered_are_clear_errors() {
    let desktop = desktop().await;
    let empty = desktop
        .clipboard_get(Selection::Clipboard, ClipKind::Text)
        .await
        .expect_err("nobody owns it");
    assert_eq!(empty.code(), "selection_empty");
    assert_eq!(empty.field(), Some("selection"));
    assert_eq!(
        empty.to_string(),
        "selection: nobody owns the clipboard (nothing was copied)"
    );
    assert!(desktop
        .clipboard_types(Selection::Clipboard)
        .await
        .expect("types")
        .is_empty());

    xclip_copies(&desktop, "clipboard", Some("text/plain"), b"plain").await;
    let wrong = desktop
        .clipboard_get(Selection::Clipboard, ClipKind::Png)
        .await
        .expect_err("no image there");
    assert_eq!(wrong.code(), "type_not_offered");
    assert_eq!(wrong.field(), Some("type"));
    let message = wrong.to_string();
    assert!(
        message.starts_with("type: the clipboard holds ")
            && message.contains("text/plain")
            && message.ends_with(", not image/png"),
        "{message}"
    );
    // Text is offered as text/plain only: still read.
    assert_eq!(
        desktop
            .clipboard_get(Selection::Clipboard, ClipKind::Text)
            .await
            .expect("text/plain is text"),
        ClipContent::Text("plain".into())
    );
    // Bad contents are refused before anything is sent.
    let bad = desktop
        .clipboard_set(
            Selection::Clipboard,
            ClipContent::Png(b"not a png".to_vec()),
        )
        .await
        .expect_err("not a PNG");
    assert_eq!(bad.field(), Some("content"));
    desktop.close().await;
}

#[tokio::test]
async fn our_owner_answers_multiple_and_timestamp_as_icccm_asks() {
    use screenpilot_desktop::x11rb::connection::Connection;
    use screenpilot_desktop::x11rb::protocol::xproto::{
        AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, PropMode, WindowClass,
    };
    use screenpilot_desktop::x11rb::protocol::Event;
    use screenpilot_desktop::x11rb::wrapper::ConnectionExt as _;
    let desktop = desktop().await;
    desktop
        .clipboard_set(Selection::Clipboard, ClipContent::Text("many ways".into()))
        .await
        .expect("set");
    let (conn, screen) =
        screenpilot_desktop::connect(&desktop.display, desktop.info().xauthority.as_deref())
            .expect("connect");
    let answers = tokio::task::spawn_blocking(move || {
        let atom = |name: &str| {
            conn.intern_atom(false, name.as_bytes())
                .expect("intern")
                .reply()
                .expect("atom")
                .atom
        };
        let (clipboard, multiple, pair) = (atom("CLIPBOARD"), atom("MULTIPLE"), atom("ATOM_PAIR"));
        let (utf8, png, stamp) = (atom("UTF8_STRING"), atom("image/png"), atom("TIMESTAMP"));
        let (p_list, p_text, p_png, p_stamp) = (atom("LIST"), atom("P1"), atom("P2"), atom("P3"));
        let window = conn.generate_id().expect("id");
        let root = conn.setup().roots[screen].root;
        conn.create_window(
            0,
            window,
            root,
            0,
            0,
            1,
            1,
            0,
            WindowClass::INPUT_ONLY,
            0,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )
        .expect("window");
        conn.change_property32(
            PropMode::REPLACE,
            window,
            p_list,
            pair,
            &[utf8, p_text, png, p_png, stamp, p_stamp],
        )
        .expect("pairs");
        conn.convert_selection(window, clipboard, multiple, p_list, 0u32)
            .expect("convert");
        conn.flush().expect("flush");
        loop {
            match conn.wait_for_event().expect("event") {
                Event::SelectionNotify(n) => {
                    assert_eq!(n.property, p_list, "MULTIPLE was refused");
                    break;
                }
                _ => continue,
            }
        }
        let get = |property| {
            conn.get_property(false, window, property, AtomEnum::ANY, 0, 1024)
                .expect("get")
                .reply()
                .expect("property")
        };
        let pairs: Vec<u32> = get(p_list).value32().expect("pairs").collect();
        (
            pairs,
            get(p_text).value,
            get(p_stamp).value32().and_then(|mut v| v.next()),
            [p_text, p_png, p_stamp],
        )
    });
    let (pairs, text, stamp, [p_text, _, p_stamp]) = tokio::time::timeout(LONG, answers)
        .await
        .expect("answered")
        .expect("thread");
    // The PNG cannot be given: its property is None in the answer; the others are filled.
    assert_eq!(pairs[1], p_text);
    assert_eq!(pairs[3], 0, "image/png is not offered for text");
    assert_eq!(pairs[5], p_stamp);
    assert_eq!(text, b"many ways");
    assert!(
        stamp.is_some_and(|t| t > 0),
        "TIMESTAMP is the time we took it"
    );
    desktop.close().await;
}
