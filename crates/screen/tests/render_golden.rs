//! Golden tests for the renderer: recorded byte streams fed to a real [`Screen`], rendered to PNG and SVG,
//! and compared with references committed in tests/fixtures.
//!
//! After an intended change to the rendering, regenerate the references with
//! `SCREENPILOT_BLESS=1 cargo test -p screenpilot-screen --test integration render_golden::`, look at the new images,
//! and commit them.

use std::path::{Path, PathBuf};

use screenpilot_screen::{
    render_png, render_svg, CellGrid, CellPos, CellWidth, Layout, RenderOptions, Rgb, Screen, Size,
    Theme, ThemeName,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Where a failing test leaves the image it produced, for a person to look at.
fn actual_output(name: &str) -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join(name)
}

fn bless() -> bool {
    std::env::var_os("SCREENPILOT_BLESS").is_some_and(|v| v == "1")
}

fn screen_from(name: &str, size: Size) -> Screen {
    let bytes = std::fs::read(fixture(name)).expect("fixture exists");
    let mut screen = Screen::new(size, 100);
    screen.feed(&bytes);
    screen
}

struct Decoded {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

fn decode(png: &[u8]) -> Decoded {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().expect("a valid PNG");
    let mut rgb = vec![0; reader.output_buffer_size().expect("fits in memory")];
    let info = reader.next_frame(&mut rgb).expect("one frame");
    assert_eq!(info.color_type, png::ColorType::Rgb);
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    rgb.truncate(info.buffer_size());
    Decoded {
        width: info.width,
        height: info.height,
        rgb,
    }
}

impl Decoded {
    fn pixel(&self, x: u32, y: u32) -> Rgb {
        let at = (y * self.width + x) as usize * 3;
        Rgb::new(self.rgb[at], self.rgb[at + 1], self.rgb[at + 2])
    }
}

/// Compare a rendered PNG with a committed reference, pixel by pixel.
fn check_png(actual: &[u8], reference_name: &str) {
    let reference = fixture(reference_name);
    if bless() {
        std::fs::write(&reference, actual).expect("write reference");
        return;
    }
    let expected = std::fs::read(&reference).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with SCREENPILOT_BLESS=1",
            reference.display()
        )
    });
    let (a, e) = (decode(actual), decode(&expected));
    let out = actual_output(reference_name);
    if (a.width, a.height) != (e.width, e.height) {
        let _ = std::fs::write(&out, actual);
        panic!(
            "{reference_name}: image is {}x{}, reference {}x{}; actual written to {}",
            a.width,
            a.height,
            e.width,
            e.height,
            out.display()
        );
    }
    let differing: Vec<(u32, u32)> = (0..a.height)
        .flat_map(|y| (0..a.width).map(move |x| (x, y)))
        .filter(|&(x, y)| a.pixel(x, y) != e.pixel(x, y))
        .collect();
    if let Some(&(x, y)) = differing.first() {
        let _ = std::fs::write(&out, actual);
        panic!(
            "{reference_name}: {} of {} pixels differ (first at {x},{y}: {:?}, expected {:?}); actual written to {}",
            differing.len(),
            a.width * a.height,
            a.pixel(x, y),
            e.pixel(x, y),
            out.display()
        );
    }
}

/// Compare a rendered SVG with a committed reference, as text.
fn check_svg(actual: &str, reference_name: &str) {
    let reference = fixture(reference_name);
    if bless() {
        std::fs::write(&reference, actual).expect("write reference");
        return;
    }
    let expected = std::fs::read_to_string(&reference).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with SCREENPILOT_BLESS=1",
            reference.display()
        )
    });
    if actual != expected {
        let out = actual_output(reference_name);
        let _ = std::fs::write(&out, actual);
        let line = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
        panic!(
            "{reference_name}: differs from line {}:\n  actual:   {}\n  expected: {}\nactual written to {}",
            line + 1,
            actual.lines().nth(line).unwrap_or("<end>"),
            expected.lines().nth(line).unwrap_or("<end>"),
            out.display()
        );
    }
}

fn golden_grid() -> CellGrid {
    let mut screen = screen_from("golden.ansi", Size::new(40, 12));
    // The fixture is laid out to fit 40 columns: if a line wrapped, the references test something else.
    let text = screen.text().to_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 12, "{text}");
    assert_eq!(lines[0], "bold dim italic bolditalic strike");
    assert_eq!(lines[6], "┌─┬─┐ ╔═╦═╗ ╭─╮ ┏━┳━┓ ░▒▓█ ▀▄▌▐ ╒═╕");
    assert!(lines[11].starts_with("user@host:~/src$ ls -la"), "{text}");
    let grid = screen.cells();
    assert!(grid.cursor.visible);
    assert_eq!(grid.title.as_deref(), Some("golden screen"));
    grid
}

#[test]
fn golden_png_matches_the_reference() {
    let grid = golden_grid();
    let png = render_png(&grid, &RenderOptions::default()).expect("renders");
    let image = decode(&png);
    assert_eq!((image.width, image.height), (400, 240));
    check_png(&png, "golden.png");
}

#[test]
fn golden_png_with_frame_and_light_theme_matches_the_reference() {
    let grid = golden_grid();
    let opts = RenderOptions {
        theme: ThemeName::Light,
        frame: true,
        ..RenderOptions::default()
    };
    let png = render_png(&grid, &opts).expect("renders");
    check_png(&png, "golden-frame-light.png");
}

#[test]
fn golden_svg_matches_the_reference() {
    let grid = golden_grid();
    let svg = render_svg(&grid, &RenderOptions::default());
    for words in [
        "bold dim italic bolditalic strike",
        "user@host",
        "~/src",
        "$ ls -la",
    ] {
        let wanted = words.split(' ').next().unwrap_or(words);
        assert!(svg.contains(wanted), "{wanted} is searchable");
    }
    check_svg(&svg, "golden.svg");
    let framed = render_svg(
        &grid,
        &RenderOptions {
            frame: true,
            ..RenderOptions::default()
        },
    );
    check_svg(&framed, "golden-frame.svg");
}

#[test]
fn png_and_svg_share_one_layout() {
    let grid = golden_grid();
    for frame in [false, true] {
        let opts = RenderOptions {
            frame,
            ..RenderOptions::default()
        };
        let layout = Layout::new(grid.size, &opts);
        let image = decode(&render_png(&grid, &opts).expect("renders"));
        assert_eq!(
            (image.width, image.height),
            (layout.image.width, layout.image.height)
        );
        let svg = render_svg(&grid, &opts);
        let header = format!(
            r#"width="{}" height="{}""#,
            layout.image.width, layout.image.height
        );
        assert!(svg.lines().next().is_some_and(|l| l.contains(&header)));
    }
}

/// Wide characters depend on the fonts installed, so this checks what must hold with any of them (or
/// none, when the placeholder box is drawn): the glyph spans both of its cells and is not blank.
#[test]
fn wide_characters_cover_two_cells() {
    let mut screen = screen_from("cjk.ansi", Size::new(20, 4));
    assert!(screen.text().starts_with("中文 ok 日本語"));
    let grid = screen.cells();
    assert_eq!(
        grid.cell(CellPos::new(0, 0)).map(|c| c.width),
        Some(CellWidth::Wide)
    );
    assert_eq!(
        grid.cell(CellPos::new(1, 0)).map(|c| c.width),
        Some(CellWidth::Spacer)
    );
    let opts = RenderOptions::default();
    let layout = Layout::new(grid.size, &opts);
    let png = render_png(&grid, &opts).expect("renders");
    let image = decode(&png);
    let background = Theme::dark().background;
    let ink_in = |col: u16, row: u16| -> usize {
        let (x0, y0) = layout.cell_origin(CellPos::new(col, row));
        (y0..y0 + layout.cell.height)
            .flat_map(|y| (x0..x0 + layout.cell.width).map(move |x| (x, y)))
            .filter(|&(x, y)| image.pixel(x, y) != background)
            .count()
    };
    for (col, row) in [
        (0, 0),
        (2, 0),
        (8, 0),
        (10, 0),
        (12, 0),
        (0, 1),
        (2, 1),
        (4, 1),
    ] {
        let (left, right) = (ink_in(col, row), ink_in(col + 1, row));
        assert!(
            left >= 5 && right >= 5,
            "the wide character at ({col},{row}) covers both cells: {left} and {right} inked pixels"
        );
    }
    // The blank cell between the wide characters stays blank.
    assert_eq!(ink_in(4, 0), 0);
    let svg = render_svg(&grid, &opts);
    assert!(
        svg.contains(">中文</text>"),
        "consecutive wide characters stay searchable"
    );
    let _ = std::fs::write(actual_output("cjk.png"), png);
}
