//! A recording drawn as moving pictures: which screens become frames and when ([`FrameSampler`]),
//! each drawn by the screenshot renderer onto a canvas of one size ([`draw_frame`]), and frames
//! written as an animated GIF ([`GifWriter`]). Video goes through ffmpeg, which is I/O and so lives
//! in the binary (`screenpilot render`); it takes the same frames.

mod frames;
mod gif;
mod quantize;

pub use self::frames::{Frame, FrameSampler};
pub use self::gif::{GifError, GifSummary, GifWriter};

use crate::geometry::{PixelSize, Size};
use crate::grid::CellGrid;
use crate::palette::Theme;
use crate::render::{render_pixels, Layout, RenderError, RenderOptions};

/// The pixel size of a canvas of `cells` drawn with `opts`, refused when too large to draw.
pub fn canvas_pixels(cells: Size, opts: &RenderOptions) -> Result<PixelSize, RenderError> {
    opts.validate()?;
    let layout = Layout::new(cells, opts);
    layout.check_drawable()?;
    Ok(layout.image)
}

/// Draw `grid` as 8-bit RGB on a canvas of `canvas` cells: a screen smaller than the canvas (the
/// recording was resized) sits at its top left on the theme's background, a larger one is cut.
pub fn draw_frame(
    grid: &CellGrid,
    canvas: Size,
    opts: &RenderOptions,
) -> Result<Vec<u8>, RenderError> {
    let target = canvas_pixels(canvas, opts)?;
    let (width, height, pixels) = render_pixels(grid, opts)?;
    if (width, height) == (target.width, target.height) {
        return Ok(pixels);
    }
    let bg = Theme::named(opts.theme).background;
    let mut out = [bg.r, bg.g, bg.b].repeat(target.width as usize * target.height as usize);
    let copy_w = width.min(target.width) as usize * 3;
    for y in 0..height.min(target.height) as usize {
        let from = y * width as usize * 3;
        let to = y * target.width as usize * 3;
        out[to..to + copy_w].copy_from_slice(&pixels[from..from + copy_w]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::Screen;

    #[test]
    fn a_smaller_screen_sits_top_left_on_the_background_and_a_larger_one_is_cut() {
        let opts = RenderOptions::default();
        let canvas = Size::new(6, 3);
        let target = canvas_pixels(canvas, &opts).unwrap();
        let mut small = Screen::new(Size::new(3, 2), 0);
        small.feed(b"\x1b[41m   ");
        let pixels = draw_frame(&small.cells(), canvas, &opts).unwrap();
        assert_eq!(
            pixels.len(),
            (target.width * target.height * 3) as usize,
            "the canvas's size"
        );
        let at = |x: u32, y: u32| {
            let i = ((y * target.width + x) * 3) as usize;
            [pixels[i], pixels[i + 1], pixels[i + 2]]
        };
        let bg = Theme::dark().background;
        assert_eq!(at(1, 1), [0xcd, 0x31, 0x31], "the red cells");
        assert_eq!(at(target.width - 1, 1), [bg.r, bg.g, bg.b], "right of them");
        assert_eq!(at(1, target.height - 1), [bg.r, bg.g, bg.b], "below them");
        let large = Screen::new(Size::new(9, 5), 0);
        let cut = draw_frame(&large.cells(), canvas, &opts).unwrap();
        assert_eq!(cut.len(), pixels.len());
    }
}
