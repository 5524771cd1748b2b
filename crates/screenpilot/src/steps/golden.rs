//! Golden screens: a terminal's screen compared with one stored in a file, as text, styled text, SVG or
//! PNG (with a share of pixels allowed to differ), with masks over the cells that may vary (a clock,
//! a pid). Retried at each screen update until equal or the step's limit; `--update` writes the file
//! instead. What differs is shown as rows (`-` the golden, `+` the screen), and for pictures written as
//! the screen's PNG with the differing pixels painted red.

use std::path::{Path, PathBuf};
use std::time::Duration;

use screenpilot_screen::render::{render_png, render_svg, RenderOptions};
use screenpilot_screen::{styled_text, Cell, CellGrid, CellWidth, Regions};
use screenpilot_session::Session;

use super::file::{Golden, GoldenKind};
use super::options::{eventually, RunOptions};

/// How a golden compared.
pub enum Compared {
    Equal,
    /// Written (`--update`): it was missing or differed.
    Updated,
    /// Different at the limit: what differs, and the files written to look at.
    Differs {
        message: String,
        files: Vec<PathBuf>,
    },
}

/// What a masked cell shows in every kind of golden.
const MASKED: &str = "░";

/// The screen of `session` with `masks` blanked; a mask off the screen is refused.
fn masked(session: &Session, masks: &[[u16; 4]]) -> Result<CellGrid, String> {
    let mut grid = session.with_screen(|s| s.cells());
    let (cols, rows) = (grid.size.cols, grid.size.rows);
    for &[row, col, height, width] in masks {
        if height == 0 || width == 0 || row + height > rows || col + width > cols {
            return Err(format!(
                "golden.mask: [{row}, {col}, {height}, {width}] is not inside the {cols}x{rows} screen (rows 0-{}, cols 0-{})",
                rows - 1,
                cols - 1
            ));
        }
        for r in row..row + height {
            for c in col..col + width {
                grid.rows[usize::from(r)][usize::from(c)] = Cell {
                    text: MASKED.to_owned(),
                    ..Cell::default()
                };
            }
        }
    }
    Ok(grid)
}

/// The grid as text: one line per row, no trailing blanks, no blank rows at the end.
fn grid_text(grid: &CellGrid) -> String {
    let mut lines: Vec<String> = grid
        .rows
        .iter()
        .map(|row| {
            let line: String = row
                .iter()
                .filter(|c| c.width != CellWidth::Spacer)
                .map(|c| c.text.as_str())
                .collect();
            line.trim_end_matches(' ').to_owned()
        })
        .collect();
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines.join("\n") + "\n"
}

/// A PNG of the screen of `session`, masks blanked.
pub fn picture(session: &Session, masks: &[[u16; 4]]) -> Result<Vec<u8>, String> {
    let grid = masked(session, masks)?;
    render_png(&grid, &RenderOptions::default()).map_err(|e| e.to_string())
}

/// What the golden holds for the screen now.
fn actual(session: &Session, golden: &Golden) -> Result<Vec<u8>, String> {
    let grid = masked(session, &golden.masks)?;
    Ok(match golden.kind {
        GoldenKind::Text => grid_text(&grid).into_bytes(),
        GoldenKind::Styled => (styled_text(&grid, &Regions::of(&grid)) + "\n").into_bytes(),
        GoldenKind::Svg => render_svg(&grid, &RenderOptions::default()).into_bytes(),
        GoldenKind::Png => {
            render_png(&grid, &RenderOptions::default()).map_err(|e| e.to_string())?
        }
    })
}

/// RGBA pixels and size of a PNG.
fn pixels(png: &[u8]) -> Result<(u32, u32, Vec<u8>), String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(png));
    decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::ALPHA);
    let mut reader = decoder.read_info().map_err(|e| format!("not a PNG: {e}"))?;
    let mut buf = vec![0; reader.output_buffer_size().unwrap_or(0)];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("not a PNG: {e}"))?;
    buf.truncate(info.buffer_size());
    // Gray and RGB expand to 4 channels with ALPHA only for the ones that have fewer: normalise.
    let channels = info.color_type.samples();
    let rgba = match channels {
        4 => buf,
        3 => buf
            .chunks(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        2 => buf
            .chunks(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        _ => buf.iter().flat_map(|&g| [g, g, g, 255]).collect(),
    };
    Ok((info.width, info.height, rgba))
}

/// Whether two PNGs are the same within `tolerance` (the share of pixels that may differ), and the
/// pixels that differ.
fn same_picture(
    expected: &[u8],
    actual: &[u8],
    tolerance: f64,
) -> Result<(bool, Vec<usize>, String), String> {
    let (ew, eh, e) = pixels(expected)?;
    let (aw, ah, a) = pixels(actual)?;
    if (ew, eh) != (aw, ah) {
        return Ok((
            false,
            Vec::new(),
            format!("the golden is {ew}x{eh} pixels, the screen {aw}x{ah}"),
        ));
    }
    // A pixel differs when a channel is off by more than a rounding.
    let differing: Vec<usize> = e
        .chunks(4)
        .zip(a.chunks(4))
        .enumerate()
        .filter(|(_, (x, y))| x.iter().zip(y.iter()).any(|(p, q)| p.abs_diff(*q) > 8))
        .map(|(i, _)| i)
        .collect();
    let share = differing.len() as f64 / f64::from(ew * eh).max(1.0);
    let equal = share <= tolerance;
    Ok((
        equal,
        differing,
        format!(
            "{:.4}% of the pixels differ (tolerance {:.4}%)",
            share * 100.0,
            tolerance * 100.0
        ),
    ))
}

/// Rows of two texts that differ: `-ROW| golden` then `+ROW| screen`.
fn text_diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = Vec::new();
    for i in 0..e.len().max(a.len()) {
        let (x, y) = (e.get(i).copied(), a.get(i).copied());
        if x != y {
            out.push(format!("-{i:>3}| {}", x.unwrap_or("")));
            out.push(format!("+{i:>3}| {}", y.unwrap_or("")));
        }
    }
    out.join("\n")
}

/// The screen's PNG with the pixels `differing` painted red.
fn marked(actual: &[u8], differing: &[usize]) -> Result<Vec<u8>, String> {
    let (w, h, mut rgba) = pixels(actual)?;
    for &i in differing {
        rgba[i * 4..i * 4 + 4].copy_from_slice(&[255, 0, 64, 255]);
    }
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgba);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
        writer.write_image_data(&rgba).map_err(|e| e.to_string())?;
    }
    Ok(out)
}

fn equal(expected: &[u8], actual: &[u8], golden: &Golden) -> bool {
    match golden.kind {
        GoldenKind::Png => {
            same_picture(expected, actual, golden.tolerance).is_ok_and(|(same, _, _)| same)
        }
        _ => expected == actual,
    }
}

/// Where a look at what differs is written: beside the golden (`NAME.actual.EXT`), or in the report
/// directory.
fn beside(path: &Path, tag: &str, options: &RunOptions) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "golden".into(), |n| n.to_string_lossy().into_owned());
    let (stem, ext) = name.rsplit_once('.').unwrap_or((&name, "txt"));
    let file = format!("{stem}.{tag}.{ext}");
    match &options.report_dir {
        Some(dir) => dir.join(file),
        None => path.with_file_name(file),
    }
}

/// Compare the screen of `session` with the golden at `path`, until equal or `limit`. What is
/// written (the golden on `--update`, the screen beside it) stays under `root`, the step file's
/// folder, unless `--goldens-anywhere`, and never goes through a symlink.
pub async fn check(
    session: &Session,
    golden: &Golden,
    path: &Path,
    root: &Path,
    limit: Duration,
    options: &RunOptions,
) -> Result<Compared, String> {
    let root = (!options.goldens_anywhere).then_some(root);
    let write = |path: &Path, bytes: &[u8]| write(path, bytes, root);
    let expected = match std::fs::read(path) {
        Ok(bytes) => Some(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("golden: cannot read {}: {e}", path.display())),
    };
    let Some(expected) = expected else {
        if !options.update {
            return Err(format!(
                "golden: {} is missing; run `screenpilot test --update` to write it from the screen",
                path.display()
            ));
        }
        write(path, &actual(session, golden)?)?;
        return Ok(Compared::Updated);
    };
    let mut last = Vec::new();
    let mut bad_mask = None;
    let waited = eventually(session, limit, |s| match actual(s, golden) {
        Ok(now) if equal(&expected, &now, golden) => Ok(()),
        Ok(now) => {
            last = now;
            Err(String::new())
        }
        Err(e) => {
            bad_mask = Some(e.clone());
            Ok(())
        }
    })
    .await;
    if let Some(e) = bad_mask {
        return Err(e);
    }
    if waited.is_ok() {
        return Ok(Compared::Equal);
    }
    if options.update {
        write(path, &last)?;
        return Ok(Compared::Updated);
    }
    let actual_path = beside(path, "actual", options);
    write(&actual_path, &last)?;
    let mut files = vec![actual_path.clone()];
    let message = match golden.kind {
        GoldenKind::Png => {
            let (_, differing, how) = same_picture(&expected, &last, golden.tolerance)?;
            if !differing.is_empty() {
                let diff_path = beside(path, "diff", options);
                write(&diff_path, &marked(&last, &differing)?)?;
                files.push(diff_path);
            }
            format!(
                "the screen differs from the golden {}: {how}",
                path.display()
            )
        }
        _ => {
            let expected = String::from_utf8_lossy(&expected);
            let actual = String::from_utf8_lossy(&last);
            format!(
                "the screen differs from the golden {} (- golden, + screen):\n{}",
                path.display(),
                text_diff(&expected, &actual)
            )
        }
    };
    Ok(Compared::Differs {
        message: format!(
            "{message}\nthe screen is in {}; `--update` takes it as the golden",
            actual_path.display()
        ),
        files,
    })
}

/// Write `bytes` to `path` through a partial file renamed into place. Refuses a `path` that is a
/// symlink, and (with a `root`) one whose folder resolves outside `root`.
fn write(path: &Path, bytes: &[u8], root: Option<&Path>) -> Result<(), String> {
    let refused = |why: String| format!("golden: will not write {}: {why}", path.display());
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(refused(
            "it is a symlink, and goldens are never written through one".into(),
        ));
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if let Some(root) = root {
        let real = std::fs::canonicalize(dir)
            .map_err(|e| format!("cannot resolve {}: {e}", dir.display()))?;
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_owned());
        if !real.starts_with(&root) {
            return Err(refused(format!(
                "its folder is {}, outside the step file's folder {} (give --goldens-anywhere to allow it)",
                real.display(),
                root.display()
            )));
        }
    }
    crate::whole_file::write_whole(path, bytes, None, true)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_diff_shows_the_rows_that_differ() {
        assert_eq!(
            text_diff("a\nb\nc\n", "a\nB\nc\nd\n"),
            "-  1| b\n+  1| B\n-  3| \n+  3| d"
        );
    }
}
