//! Pictures programs draw in a terminal, end to end: chafa draws a known picture (four coloured
//! quadrants) with the kitty graphics protocol, sixel and iTerm2 inline images into a session spawned
//! with `--images`; kittytgp and a Textual app with textual-image draw it through kitty's Unicode
//! placeholders; the screenshot shows the quadrants where the snapshot says the picture sits, and
//! an MCP snapshot attaches it as image content. A session without `--images` gets chafa's own
//! choice, text symbols, and no picture. chafa is a Debian package, kittytgp and textual-image are
//! in the test venv; scripts/test.sh installs them.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use common::Daemon;
use serde_json::{json, Value};

/// Red, green / blue, yellow: the quadrants, top left first.
const QUADRANTS: [[u8; 3]; 4] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 0]];

/// A 64x64 PNG of the four quadrants.
fn write_quadrants(path: &Path) {
    let (w, h) = (64u32, 64u32);
    let mut data = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let quadrant = usize::from(y >= h / 2) * 2 + usize::from(x >= w / 2);
            data.extend_from_slice(&QUADRANTS[quadrant]);
        }
    }
    let file = std::fs::File::create(path).expect("create the picture");
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), w, h);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().expect("PNG header");
    writer.write_image_data(&data).expect("PNG data");
    writer.finish().expect("PNG end");
}

/// Decode a PNG into (width, height, RGB(A) bytes, bytes per pixel).
fn decode(png_bytes: &[u8]) -> (u32, u32, Vec<u8>, usize) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("a size")];
    let frame = reader.next_frame(&mut buf).expect("a frame");
    let channels = match frame.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected colour type {other:?}"),
    };
    (frame.width, frame.height, buf, channels)
}

fn near(found: &[u8], want: [u8; 3]) -> bool {
    found
        .iter()
        .zip(want)
        .all(|(&f, w)| (i32::from(f) - i32::from(w)).abs() <= 48)
}

/// A bash session in `dir` (which holds q.png), with `flags`.
fn bash(d: &Daemon, sid: &str, flags: &[&str]) {
    let mut all = vec!["--size", "80x24"];
    all.extend_from_slice(flags);
    d.spawn_bash_with(sid, &all);
    write_quadrants(&d.path().join("q.png"));
}

/// Run chafa with `args` on q.png in `sid` and wait for it to finish; the snapshot after.
fn chafa(d: &Daemon, sid: &str, args: &str) -> Value {
    let png = d.path().join("q.png");
    d.line(
        sid,
        &format!("chafa {args} -s 16x8 {}; echo DRAWN", png.display()),
    );
    d.wait_regex(sid, "^DRAWN");
    d.sp_json(&["call", "snapshot", &json!({"sid": sid}).to_string()])
}

/// The screenshot shows the quadrants' colours where the snapshot places the picture.
fn assert_drawn(d: &Daemon, sid: &str, snapshot: &Value, sized_in_cells: bool) {
    let images = snapshot["images"]
        .as_array()
        .expect("the snapshot lists pictures");
    assert_eq!(images.len(), 1, "one picture: {snapshot}");
    let image = &images[0];
    let text = snapshot["text"].as_str().unwrap_or_default();
    let label = format!("[image {}", image["number"]);
    assert!(text.contains(&label), "the text labels it {label}:\n{text}");
    let shot = d.sp_json(&["call", "screenshot", &json!({"sid": sid}).to_string()]);
    let (width, height, pixels, channels) = decode(&common::png_of(&shot));
    let (cw, ch) = (f64::from(width) / 80.0, f64::from(height) / 24.0);
    let field = |k: &str| {
        image[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k} in {image}"))
    };
    let (x0, y0) = (field("col") * cw, field("row") * ch);
    // kitty and iTerm2 pictures fill the cells asked for; a sixel keeps its pixel size, a cell
    // being 10x20 of them.
    let (w, h) = if sized_in_cells {
        (field("cols") * cw, field("rows") * ch)
    } else {
        (field("width") * cw / 10.0, field("height") * ch / 20.0)
    };
    for (quadrant, want) in QUADRANTS.iter().enumerate() {
        let fx = if quadrant % 2 == 0 { 0.25 } else { 0.75 };
        let fy = if quadrant < 2 { 0.25 } else { 0.75 };
        let (x, y) = ((x0 + w * fx) as usize, (y0 + h * fy) as usize);
        let at = (y * width as usize + x) * channels;
        let found = &pixels[at..at + 3];
        assert!(
            near(found, *want),
            "quadrant {quadrant} at ({x}, {y}) is {found:?}, not {want:?}; picture {image}"
        );
    }
}

#[test]
fn chafa_kitty_graphics_show_in_the_screenshot() {
    let d = Daemon::new();
    bash(&d, "kitty", &["--images"]);
    let snapshot = chafa(&d, "kitty", "-f kitty");
    assert_eq!(snapshot["images"][0]["protocol"], "kitty", "{snapshot}");
    assert_drawn(&d, "kitty", &snapshot, true);
}

#[test]
fn chafa_sixel_shows_in_the_screenshot() {
    let d = Daemon::new();
    bash(&d, "sixel", &["--images"]);
    let snapshot = chafa(&d, "sixel", "-f sixel");
    assert_eq!(snapshot["images"][0]["protocol"], "sixel", "{snapshot}");
    assert_drawn(&d, "sixel", &snapshot, false);
}

#[test]
fn chafa_iterm_inline_images_show_in_the_screenshot() {
    let d = Daemon::new();
    bash(&d, "iterm", &["--images"]);
    let snapshot = chafa(&d, "iterm", "-f iterm");
    assert_eq!(snapshot["images"][0]["protocol"], "iterm", "{snapshot}");
    assert_drawn(&d, "iterm", &snapshot, true);
}

/// The screen's text shows the label, never a placeholder character.
fn assert_no_placeholder_left(snapshot: &Value) {
    let text = snapshot["text"].as_str().unwrap_or_default();
    assert!(
        !text.contains('\u{10EEEE}'),
        "placeholders are blanked:\n{text}"
    );
}

#[test]
fn kittytgp_unicode_placeholders_show_in_the_screenshot() {
    let d = Daemon::new();
    bash(&d, "tgp", &["--images"]);
    // kittytgp sizes the picture from the pixels the kernel reports (TIOCGWINSZ), then writes a
    // row mark on each row's first placeholder cell and leaves the columns to be inferred.
    let python = common::venv_python();
    let png = d.path().join("q.png");
    d.line(
        "tgp",
        &format!(
            "{} -m kittytgp --cols 16 {}; echo DRAWN",
            python.display(),
            png.display()
        ),
    );
    d.wait_regex("tgp", "^DRAWN");
    let snapshot = d.sp_json(&["call", "snapshot", &json!({"sid": "tgp"}).to_string()]);
    assert_eq!(snapshot["images"][0]["protocol"], "kitty", "{snapshot}");
    assert_eq!(snapshot["images"][0]["cols"], 16, "{snapshot}");
    assert_no_placeholder_left(&snapshot);
    assert_drawn(&d, "tgp", &snapshot, true);
}

#[test]
fn a_textual_app_with_textual_image_shows_its_picture() {
    let d = Daemon::new();
    write_quadrants(&d.path().join("q.png"));
    let python = common::venv_python();
    let (python, app, png) = (
        python.to_string_lossy().into_owned(),
        common::fixture("textual/picture.py"),
        d.path().join("q.png").to_string_lossy().into_owned(),
    );
    d.sp_json(&[
        "spawn", "--sid", "app", "--images", "--size", "80x24", "--", &python, &app, &png,
    ]);
    // The placeholder cells come after the picture's transmission and its virtual placement.
    d.wait_regex("app", r"\x{10EEEE}");
    let snapshot = d.sp_json(&["call", "snapshot", &json!({"sid": "app"}).to_string()]);
    assert_eq!(snapshot["images"][0]["protocol"], "kitty", "{snapshot}");
    assert_no_placeholder_left(&snapshot);
    assert_drawn(&d, "app", &snapshot, true);
}

#[test]
fn iterm_jpeg_and_gif_pictures_show_in_the_screenshot() {
    let d = Daemon::new();
    bash(&d, "imgcat", &["--images"]);
    let (python, imgcat) = (common::venv_python(), common::fixture("imgcat.py"));
    let png = d.path().join("q.png");
    for (kind, number) in [("JPEG", 1), ("GIF", 2)] {
        d.line("imgcat", "clear");
        d.wait_regex("imgcat", common::PROMPT);
        d.line(
            "imgcat",
            &format!(
                "{} {imgcat} {} {kind}; echo DRAWN",
                python.display(),
                png.display()
            ),
        );
        d.wait_regex("imgcat", "^DRAWN");
        let snapshot = d.sp_json(&["call", "snapshot", &json!({"sid": "imgcat"}).to_string()]);
        assert_eq!(
            snapshot["images"][0]["protocol"], "iterm",
            "{kind}: {snapshot}"
        );
        assert_eq!(
            snapshot["images"][0]["number"], number,
            "{kind}: {snapshot}"
        );
        assert_drawn(&d, "imgcat", &snapshot, true);
    }
}

#[test]
fn without_images_chafa_draws_symbols_and_no_picture_is_kept() {
    let d = Daemon::new();
    bash(&d, "plain", &[]);
    // chafa chooses its format itself, as it does for any user.
    let snapshot = chafa(&d, "plain", "");
    assert!(snapshot.get("images").is_none(), "{snapshot}");
    let text = snapshot["text"].as_str().unwrap_or_default();
    let drawn: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.contains("chafa"))
        .skip(1)
        .take_while(|l| !l.starts_with("DRAWN"))
        .collect();
    assert!(
        drawn.iter().any(|l| !l.trim().is_empty()),
        "chafa's symbols fill the rows:\n{text}"
    );
    assert!(!text.contains("[image"), "{text}");
}

#[test]
fn an_mcp_snapshot_attaches_the_picture_as_image_content() {
    let d = Daemon::new();
    bash(&d, "mcp", &["--images"]);
    chafa(&d, "mcp", "-f kitty");
    let mut server = d
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start screenpilot mcp");
    let (Some(mut stdin), Some(stdout)) = (server.stdin.take(), server.stdout.take()) else {
        panic!("no pipes to the MCP server");
    };
    let (lines_tx, lines) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    let next_with = |needle: &str| -> Value {
        loop {
            match lines.recv_timeout(Duration::from_secs(30)) {
                Ok(line) if line.contains(needle) => return serde_json::from_str(&line).unwrap(),
                Ok(_) => continue,
                Err(e) => panic!("no line with {needle:?} from the MCP server: {e}"),
            }
        }
    };
    let mut send = |message: Value| writeln!(stdin, "{message}").expect("write to the MCP server");
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "images-test", "version": "0"}}}),
    );
    next_with(r#""id":1"#);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "snapshot", "arguments": {"sid": "mcp"}}}),
    );
    let answer = next_with(r#""id":2"#);
    let content = answer["result"]["content"].as_array().expect("content");
    let text = content[0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("[image 1"), "{text}");
    let pictures: Vec<&Value> = content.iter().filter(|c| c["type"] == "image").collect();
    assert_eq!(pictures.len(), 1, "{answer}");
    assert_eq!(pictures[0]["mimeType"], "image/png");
    let png = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        pictures[0]["data"].as_str().unwrap(),
    )
    .unwrap();
    let (w, h, pixels, channels) = decode(&png);
    assert!(w <= 512 && h <= 512);
    let at = |x: u32, y: u32| &pixels[(y * w + x) as usize * channels..][..3];
    assert!(
        near(at(w / 4, h / 4), QUADRANTS[0]),
        "{:?}",
        at(w / 4, h / 4)
    );
    assert!(near(at(3 * w / 4, 3 * h / 4), QUADRANTS[3]));
    drop(stdin);
    let _ = server.wait();
}
