//! `screenpilot render` end to end: a real vim session recorded by screenpilot itself, drawn as a
//! GIF, an MP4 and a WebM, and read back by other programs: ffprobe (frames, length, size),
//! ImageMagick (a GIF frame as PNG, compared with a screenshot screenpilot took of the same screen)
//! and asciinema 3 (which converts the recording to v2, which renders the same). ffmpeg and
//! ImageMagick are Debian packages that scripts/test.sh installs; missing is a failure, not a skip.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Daemon;
use serde_json::Value;

const LONG: &str = "20000";
/// Colour differences taken for none when a frame is compared with a screenshot: a GIF draws an
/// anti-aliased edge's rare shades in a near colour (16 levels a channel, weighted, at most: up to
/// 34 levels of red alone, 13%).
const GIF_FUZZ: &str = "14%";
const VIDEO_FUZZ: &str = "12%";

/// Run a tool the tests read the output with; it must succeed. Its stdout.
fn tool(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run {program} ({e}): run scripts/test.sh, which installs ffmpeg and imagemagick")
        });
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// ffprobe's view of a file's first video stream: (codec, width, height, frames, duration in s).
fn probe(path: &Path) -> (String, u64, u64, u64, f64) {
    let text = tool(
        "ffprobe",
        &[
            "-v",
            "error",
            "-count_frames",
            "-select_streams",
            "v:0",
            "-show_entries",
            "stream=codec_name,width,height,nb_read_frames:format=duration",
            "-of",
            "json",
            path.to_str().unwrap(),
        ],
    );
    let info: Value = serde_json::from_str(&text).unwrap();
    let stream = &info["streams"][0];
    let number = |v: &Value| -> f64 {
        v.as_str()
            .and_then(|s| s.parse().ok())
            .or_else(|| v.as_f64())
            .unwrap_or_else(|| panic!("not a number in {info}"))
    };
    (
        stream["codec_name"].as_str().unwrap().to_owned(),
        stream["width"].as_u64().unwrap(),
        stream["height"].as_u64().unwrap(),
        number(&stream["nb_read_frames"]) as u64,
        number(&info["format"]["duration"]),
    )
}

/// ImageMagick's size of an image: (width, height).
fn image_size(path: &Path) -> (u64, u64) {
    let text = tool("identify", &["-format", "%w %h", path.to_str().unwrap()]);
    let (w, h) = text.trim().split_once(' ').unwrap();
    (w.parse().unwrap(), h.parse().unwrap())
}

/// How many pixels differ between two images of one size (ImageMagick `compare -metric AE`), a
/// difference under `fuzz` counting as none (GIF colours are chosen per frame, video is lossy).
fn differing_pixels(a: &Path, b: &Path, fuzz: &str) -> u64 {
    let out = Command::new("compare")
        .args(["-metric", "AE", "-fuzz", fuzz])
        .arg(a)
        .arg(b)
        .arg("null:")
        .output()
        .expect("ImageMagick's compare runs");
    // compare exits 1 when the images differ, 2 on an error; the count is on stderr.
    assert!(
        out.status.code().unwrap_or(2) < 2,
        "compare failed: {out:?}"
    );
    let text = String::from_utf8_lossy(&out.stderr);
    text.split_whitespace()
        .next()
        .and_then(|n| n.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("compare printed no count: {text}")) as u64
}

/// The distinct colours in a rectangle of an image (ImageMagick's `%k`).
fn colours_in(path: &Path, (x, y, w, h): (u32, u32, u32, u32)) -> u64 {
    let crop = format!("{w}x{h}+{x}+{y}");
    tool(
        "convert",
        &[
            path.to_str().unwrap(),
            "-crop",
            &crop,
            "+repage",
            "-format",
            "%k",
            "info:",
        ],
    )
    .trim()
    .parse()
    .unwrap()
}

/// `screenpilot --json render ARGS...` with no daemon involved; it must succeed. Its answer.
fn render(d: &Daemon, args: &[&str]) -> Value {
    let mut full = vec!["render"];
    full.extend_from_slice(args);
    d.sp_json(&full)
}

/// The recording's length with pauses cut to `idle` s, and when its last output came.
fn capped_times(cast: &Path, idle: f64) -> (f64, f64) {
    let text = std::fs::read_to_string(cast).unwrap();
    let (mut clock, mut last_output) = (0.0f64, 0.0f64);
    for line in text.lines().skip(1) {
        let event: Value = serde_json::from_str(line).unwrap();
        clock += event[0].as_f64().unwrap().min(idle);
        if event[1] == "o" {
            last_output = clock;
        }
    }
    (clock, last_output)
}

/// Record vim editing a file (with a pause and a resize in it) as screenpilot does; the cast and
/// a screenshot of the screen just before vim was told to quit, at 16 px and at 12 px light.
fn record_vim(d: &Daemon) -> (PathBuf, PathBuf, PathBuf) {
    let cast = d.path().join("vim.cast");
    d.sp_json(&[
        "spawn",
        "--sid",
        "vim",
        "--record",
        "vim.cast",
        "--",
        "vim",
        "-u",
        "NONE",
        "-N",
        "-c",
        "syntax on",
        "-c",
        "set number",
        "greet.py",
    ]);
    d.wait_regex("vim", "greet.py");
    d.sp_json(&["keys", "vim", "i"]);
    for (line, shown) in [
        ("def greet(name):\n", r"^ +1 def greet\(name\):$"),
        (
            "    return 'hello ' + name\n",
            r"^ +2 +return 'hello ' \+ name$",
        ),
        (
            "\nprint(greet('world'))",
            r"^ +4 print\(greet\('world'\)\)$",
        ),
    ] {
        d.sp_json(&["type", "vim", line]);
        d.wait_regex("vim", shown);
    }
    d.sp_json(&["keys", "vim", "Escape"]);
    // A pause longer than the idle limit the test renders with: the screen quiet for 600 ms.
    d.sp_json(&[
        "wait",
        "vim",
        "--ready",
        "--stable-ms",
        "600",
        "--timeout-ms",
        LONG,
    ]);
    d.sp_json(&["resize", "vim", "90x26"]);
    d.sp_json(&[
        "wait",
        "vim",
        "--ready",
        "--stable-ms",
        "300",
        "--timeout-ms",
        LONG,
    ]);
    let shot = d.path().join("before-quit.png");
    let small = d.path().join("before-quit-12.png");
    d.sp_json(&["screenshot", "vim", "-o", shot.to_str().unwrap()]);
    d.sp_json(&[
        "screenshot",
        "vim",
        "-o",
        small.to_str().unwrap(),
        "--scale",
        "12",
        "--theme",
        "light",
    ]);
    d.sp_json(&["type", "vim", ":wq"]);
    d.sp_json(&["keys", "vim", "Enter"]);
    let exit = d.sp_json(&["wait", "vim", "--exit", "--timeout-ms", LONG]);
    assert_eq!(exit["exited"], true, "vim did not quit: {exit}");
    (cast, shot, small)
}

#[test]
fn a_recorded_vim_session_renders_to_a_gif_and_videos_that_other_tools_read_as_recorded() {
    let d = Daemon::new();
    let (cast, shot, small) = record_vim(&d);
    let idle = 0.25;
    let (capped, last_output) = capped_times(&cast, idle);
    let (uncapped, _) = capped_times(&cast, f64::INFINITY);
    assert!(uncapped > capped + 0.3, "the 600 ms pause was cut");
    // The length: the recording's, pauses cut, and the last frame held for the idle limit at least.
    let expected = (capped - 0.02)..=(capped.max(last_output + idle + 1.0 / 30.0) + 0.02);

    // GIF: the size of the screen drawn (the largest the session took, 90x26), the length, frames.
    let gif = d.path().join("vim.gif");
    let rendered = render(&d, &["vim.cast", "-o", "vim.gif", "--idle-limit", "0.25"]);
    assert_eq!(
        (&rendered["cols"], &rendered["rows"]),
        (&Value::from(90), &Value::from(26)),
        "{rendered}"
    );
    let (codec, width, height, frames, duration) = probe(&gif);
    assert_eq!(codec, "gif");
    assert_eq!((width, height), image_size(&shot), "the screenshot's size");
    assert!(frames > 3, "{frames} frames");
    assert!(
        expected.contains(&duration),
        "{duration} s, not {expected:?}"
    );
    assert!((rendered["duration_s"].as_f64().unwrap() - duration).abs() < 0.011);
    assert_eq!(
        rendered["bytes"].as_u64(),
        Some(std::fs::metadata(&gif).unwrap().len())
    );

    // ImageMagick: every frame as a PNG. The first is the blank screen before vim drew anything;
    // one of them is the screenshot taken before quitting, pixel for pixel but for GIF colours.
    let pattern = d.path().join("frame-%03d.png");
    tool(
        "convert",
        &[
            gif.to_str().unwrap(),
            "-coalesce",
            pattern.to_str().unwrap(),
        ],
    );
    let frame = |i: u64| d.path().join(format!("frame-{i:03}.png"));
    let pngs = (0..).take_while(|i| frame(*i).exists()).count() as u64;
    assert_eq!(pngs, frames, "ImageMagick reads as many frames as ffprobe");
    // Row 0, columns 4 to 6 ("def"): blank at first, text later.
    let def = (40, 0, 30, 20);
    assert_eq!(colours_in(&frame(0), def), 1, "the first frame is blank");
    let closest = (0..frames)
        .map(|i| differing_pixels(&frame(i), &shot, GIF_FUZZ))
        .min()
        .unwrap();
    let pixels = width * height;
    let blank = differing_pixels(&frame(0), &shot, GIF_FUZZ);
    assert!(
        closest <= pixels / 2000 && blank > pixels / 200,
        "no frame is the screenshot: {closest} of {pixels} pixels differ, {blank} for the blank one"
    );
    let shown = (0..frames)
        .find(|i| differing_pixels(&frame(*i), &shot, GIF_FUZZ) == closest)
        .unwrap();
    assert!(colours_in(&frame(shown), def) > 2, "text is drawn there");

    // The v2 file asciinema 3 converts it to renders alike.
    let asciinema = common::repo().join(".venv/asciinema/bin/asciinema");
    assert!(
        asciinema.exists(),
        "asciinema 3 is not installed at {}: run scripts/test.sh",
        asciinema.display()
    );
    let v2 = d.path().join("vim-v2.cast");
    let converted = Command::new(&asciinema)
        .args(["convert", "-f", "asciicast-v2"])
        .arg(&cast)
        .arg(&v2)
        .env("ASCIINEMA_CONFIG_HOME", d.path().join("asciinema-config"))
        .output()
        .unwrap();
    assert!(converted.status.success(), "{converted:?}");
    let from_v2 = render(
        &d,
        &["vim-v2.cast", "-o", "vim-v2.gif", "--idle-limit", "0.25"],
    );
    assert_eq!(from_v2["frames"], rendered["frames"], "{from_v2}");
    assert!(
        (from_v2["duration_s"].as_f64().unwrap() - duration).abs() < 0.02,
        "{from_v2}"
    );

    // MP4 (H.264) and WebM (VP9), through ffmpeg: the same size and length, a frame every 1/fps,
    // and among them the screenshot's screen (as closely as 4:2:0 video draws coloured text).
    for (name, codec) in [("vim.mp4", "h264"), ("vim.webm", "vp9")] {
        let video = d.path().join(name);
        let rendered = render(&d, &["vim.cast", "-o", name, "--idle-limit", "0.25"]);
        let (got, w, h, frames, length) = probe(&video);
        assert_eq!(got, codec, "{name}");
        assert_eq!((w, h), (width, height), "{name}");
        assert!(
            (length - duration).abs() < 0.05,
            "{name}: {length} s, the GIF {duration} s"
        );
        assert!(
            (frames as f64 - length * 30.0).abs() <= 2.0,
            "{name}: {frames} frames in {length} s at 30 fps"
        );
        assert_eq!(
            rendered["bytes"].as_u64(),
            Some(std::fs::metadata(&video).unwrap().len())
        );
        let stills = d.path().join(format!("{name}-%03d.png"));
        tool(
            "ffmpeg",
            &[
                "-v",
                "error",
                "-i",
                video.to_str().unwrap(),
                stills.to_str().unwrap(),
            ],
        );
        let still = |i: u64| d.path().join(format!("{name}-{:03}.png", i + 1));
        let closest = (0..frames)
            .map(|i| differing_pixels(&still(i), &shot, VIDEO_FUZZ))
            .min()
            .unwrap();
        let blank = differing_pixels(&still(0), &shot, VIDEO_FUZZ);
        assert!(
            closest < blank / 2 && blank > pixels / 200,
            "{name}: no frame is the screenshot: {closest} of {pixels} pixels differ, {blank} for the blank one"
        );
    }

    // A font size and a theme: the size of the screenshot taken with them, on light colours.
    let light = render(
        &d,
        &[
            "vim.cast",
            "-o",
            "vim-light.gif",
            "--font-px",
            "12",
            "--theme",
            "light",
            "--fps",
            "10",
        ],
    );
    let (_, w, h, light_frames, _) = probe(&d.path().join("vim-light.gif"));
    assert_eq!((w, h), image_size(&small), "{light}");
    assert!(light_frames > 1 && light_frames <= frames, "{light}");
    let corner = tool(
        "convert",
        &[
            &format!("{}[0]", d.path().join("vim-light.gif").display()),
            "-format",
            "%[hex:p{100,100}]",
            "info:",
        ],
    );
    assert_eq!(corner.trim(), "FBFBF8", "the light theme's background");
}

#[test]
fn bad_input_is_refused_naming_what_is_wrong_and_leaves_no_output() {
    let d = Daemon::new();
    // A small real recording to point the option errors at.
    d.sp_json(&[
        "spawn", "--sid", "hi", "--record", "hi.cast", "--", "printf", "hi",
    ]);
    d.sp_json(&["wait", "hi", "--exit", "--timeout-ms", LONG]);
    std::fs::write(d.path().join("notes.txt"), "shopping: milk\n").unwrap();
    let mut damaged = std::fs::read_to_string(d.path().join("hi.cast")).unwrap();
    damaged.push_str("[0.5, \"o\"]\n");
    let damaged_line = damaged.lines().count();
    std::fs::write(d.path().join("damaged.cast"), damaged).unwrap();

    let damaged_at =
        format!("file: damaged.cast:{damaged_line}: an event is [time, \"code\", \"data\"]");
    let cases: [(&[&str], &str, &str); 8] = [
        (&["missing.cast", "-o", "out.gif"], "file", "file: cannot open missing.cast: "),
        (
            &["notes.txt", "-o", "out.gif"],
            "file",
            "file: notes.txt:1: not an asciicast v2 or v3 recording: the first line is not a JSON header",
        ),
        (&["damaged.cast", "-o", "out.gif"], "file", &damaged_at),
        (
            &["hi.cast", "-o", "out.png"],
            "output",
            "output: out.png: unknown output format .png; render writes .gif, .mp4 (H.264) or .webm (VP9)",
        ),
        (
            &["hi.cast", "-o", "out.gif", "--font-px", "200"],
            "font_px",
            "font_px: --font-px 200.0 is outside the font sizes drawn, 6-96 px (default 16)",
        ),
        (
            &["hi.cast", "-o", "out.gif", "--font-px", "5"],
            "font_px",
            "font_px: --font-px 5.0 is outside",
        ),
        (
            &["hi.cast", "-o", "out.gif", "--fps", "60"],
            "fps",
            "fps: --fps 60 is outside 1 to 50",
        ),
        (
            &["hi.cast", "-o", "out.gif", "--idle-limit", "0"],
            "idle_limit",
            "idle_limit: --idle-limit 0 is not a positive number of seconds",
        ),
    ];
    for (args, field, message) in cases {
        let mut full = vec!["render"];
        full.extend_from_slice(args);
        let error = d.sp_error(&full);
        assert_eq!(error["field"], field, "{args:?}: {error}");
        let got = error["message"].as_str().unwrap();
        assert!(got.starts_with(message), "{args:?}: {got}");
    }
    assert!(!d.path().join("out.gif").exists());

    // Without ffmpeg on the PATH a video is refused saying how to get it; a GIF needs none.
    let out = d
        .command(&["render", "hi.cast", "-o", "hi.mp4"])
        .env("PATH", d.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("ffmpeg is not installed") && stderr.contains("apt install ffmpeg"),
        "{stderr}"
    );
    assert!(!d.path().join("hi.mp4").exists());
    let out = d
        .command(&["render", "hi.cast", "-o", "hi.gif"])
        .env("PATH", d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with("hi.gif: 800x480 px (80x24 cells), "),
        "{said}"
    );
}

/// `screenpilot --json render ARGS...` in `d`'s folder under the memory limit: status and JSON.
fn limited_render(d: &Daemon, args: &[&str]) -> (i32, Value) {
    let mut full = vec!["--json", "render"];
    full.extend_from_slice(args);
    let out = common::limit_memory(&mut d.command(&full))
        .output()
        .expect("run screenpilot render");
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("render {args:?} printed no JSON ({e}): {out:?}"));
    (out.status.code().unwrap_or(-1), value)
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn render_never_destroys_a_recording_or_an_earlier_output_and_bounds_the_animation() {
    let d = Daemon::new();
    let cast = "{\"version\": 2, \"width\": 20, \"height\": 5}\n[0.1, \"o\", \"hi\"]\n[10.0, \"o\", \" there\"]\n";
    std::fs::write(d.path().join("rec.cast"), cast).unwrap();
    // A recording named .gif, rendered onto itself; a symlink to it as the output.
    std::fs::write(d.path().join("rec.gif"), cast).unwrap();
    std::os::unix::fs::symlink("rec.cast", d.path().join("link.gif")).unwrap();
    for (input, output) in [("rec.gif", "rec.gif"), ("rec.cast", "link.gif")] {
        let (status, answer) = limited_render(&d, &[input, "-o", output]);
        assert_eq!(status, 2, "{answer}");
        assert_eq!(answer["error"]["field"], "output", "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("itself; render would destroy it")),
            "{answer}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(d.path().join("rec.gif")).unwrap(),
        cast
    );
    assert_eq!(
        std::fs::read_to_string(d.path().join("rec.cast")).unwrap(),
        cast
    );
    // Endless animations are refused before anything is written; an earlier output stays whole.
    std::fs::write(d.path().join("out.gif"), "an earlier render").unwrap();
    std::fs::write(d.path().join("out.mp4"), "an earlier video").unwrap();
    let endless = cast
        .replace(
            "\"height\": 5}",
            "\"height\": 5, \"idle_time_limit\": 1e308}",
        )
        .replace("[10.0,", "[1e300,");
    std::fs::write(d.path().join("endless.cast"), endless).unwrap();
    let before = names_in(d.path());
    for args in [
        &["endless.cast", "-o", "out.gif"][..],
        &["endless.cast", "-o", "out.mp4"],
        &["rec.cast", "-o", "out.gif", "--idle-limit", "1e308"],
        &["rec.cast", "-o", "out.gif", "--speed", "1e-300"],
        &["rec.cast", "-o", "out.mp4", "--speed", "1e-300"],
    ] {
        let (status, answer) = limited_render(&d, args);
        assert_eq!(status, 2, "{args:?}: {answer}");
        assert_eq!(
            answer["error"]["code"], "limit_exceeded",
            "{args:?}: {answer}"
        );
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("more than render's limit of 3600 s")),
            "{args:?}: {answer}"
        );
    }
    assert_eq!(names_in(d.path()), before, "a refused render left a file");
    assert_eq!(
        std::fs::read_to_string(d.path().join("out.gif")).unwrap(),
        "an earlier render"
    );
    // A render that succeeds replaces the earlier output whole, leaving nothing beside it.
    let (status, answer) = limited_render(&d, &["rec.cast", "-o", "out.gif"]);
    assert_eq!(status, 0, "{answer}");
    assert!(std::fs::read(d.path().join("out.gif"))
        .unwrap()
        .starts_with(b"GIF89a"));
    assert_eq!(names_in(d.path()), before);
}
