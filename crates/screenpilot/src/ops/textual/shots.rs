//! Screenshots of a Textual app: an SVG and a PNG of our emulator's screen, written beside the app file
//! as `<stem>_screenshot_<n>.svg` / `.png` with the first free `n`, so earlier pictures are never
//! overwritten.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use screenpilot_screen::render::{render_png, render_svg, RenderOptions};
use screenpilot_session::Session;

use crate::ops::kit::error::{ErrorCode, OpError};

/// The files of one screenshot.
#[derive(Debug, Clone, Serialize)]
pub struct Shot {
    pub svg: PathBuf,
    pub png: PathBuf,
}

/// Render the screen now and write both files beside `app`.
pub fn write_beside(app: &Path, session: &Session) -> Result<Shot, OpError> {
    let grid = session.with_screen(|s| s.cells());
    let options = RenderOptions::default();
    let svg = render_svg(&grid, &options);
    let png = render_png(&grid, &options)
        .map_err(|e| OpError::new(ErrorCode::RenderFailed, format!("screenshot: {e}")))?;
    let dir = app.parent().unwrap_or(Path::new("/"));
    let stem = app
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "app".into());
    let failed = |path: &Path, e: std::io::Error| {
        OpError::new(
            ErrorCode::ScreenshotFailed,
            format!("screenshot: cannot write {}: {e}", path.display()),
        )
    };
    for n in 1..10_000 {
        let svg_path = dir.join(format!("{stem}_screenshot_{n}.svg"));
        let png_path = svg_path.with_extension("png");
        // create_new claims the number even against a concurrent run.
        let mut file = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&svg_path)
        {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(failed(&svg_path, e)),
        };
        if png_path.exists() {
            let _ = std::fs::remove_file(&svg_path);
            continue;
        }
        file.write_all(svg.as_bytes())
            .map_err(|e| failed(&svg_path, e))?;
        std::fs::write(&png_path, &png).map_err(|e| failed(&png_path, e))?;
        return Ok(Shot {
            svg: svg_path,
            png: png_path,
        });
    }
    Err(OpError::new(
        ErrorCode::ScreenshotFailed,
        format!(
            "screenshot: {} already holds 9999 screenshots of {stem}",
            dir.display()
        ),
    ))
}
