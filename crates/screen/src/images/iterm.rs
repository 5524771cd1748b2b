//! iTerm2 inline images: `OSC 1337 ; File=[args] : base64 BEL`. The arguments say whether the file
//! is shown (`inline=1`), how large (`width`/`height` as cells, `Npx`, `N%` or `auto`) and whether
//! the aspect ratio is kept (`preserveAspectRatio`, default 1).

use super::bitmap::{CELL_PX, MAX_PAYLOAD_BYTES};
use super::decode::Refusal;

/// One dimension as asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extent {
    Auto,
    Cells(u32),
    Pixels(u32),
    Percent(u32),
}

impl Extent {
    fn parse(value: &str) -> Extent {
        let number = |s: &str| s.trim().parse::<u32>().ok();
        if let Some(px) = value.strip_suffix("px").and_then(number) {
            Extent::Pixels(px)
        } else if let Some(pc) = value.strip_suffix('%').and_then(number) {
            Extent::Percent(pc.min(100))
        } else if let Some(cells) = number(value) {
            Extent::Cells(cells)
        } else {
            Extent::Auto
        }
    }

    /// In nominal pixels, given the screen's extent in pixels; `None` for auto.
    fn pixels(self, cell: u32, screen: u32) -> Option<u32> {
        match self {
            Extent::Auto => None,
            Extent::Cells(n) => Some(n.saturating_mul(cell)),
            Extent::Pixels(n) => Some(n),
            Extent::Percent(p) => Some(screen * p / 100),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Args {
    pub inline: bool,
    pub width: Extent,
    pub height: Extent,
    pub preserve: bool,
    /// The declared file size, if any.
    pub size: Option<u64>,
}

impl Args {
    pub(crate) fn parse(args: &[u8]) -> Args {
        let mut out = Args {
            inline: false,
            width: Extent::Auto,
            height: Extent::Auto,
            preserve: true,
            size: None,
        };
        for pair in String::from_utf8_lossy(args).split(';') {
            let Some((key, value)) = pair.split_once('=') else {
                continue;
            };
            match key {
                "inline" => out.inline = value == "1",
                "width" => out.width = Extent::parse(value),
                "height" => out.height = Extent::parse(value),
                "preserveAspectRatio" => out.preserve = value != "0",
                "size" => out.size = value.parse().ok(),
                _ => {}
            }
        }
        out
    }

    /// Refuse a declared file size past the transmission limit.
    pub(crate) fn check(&self) -> Result<(), Refusal> {
        match self.size {
            Some(size) if size > MAX_PAYLOAD_BYTES as u64 => Err(format!(
                "declared {size} bytes over the {} MB limit",
                MAX_PAYLOAD_BYTES >> 20
            )),
            _ => Ok(()),
        }
    }

    /// The area the picture is drawn in, in nominal pixels, for a picture of `image` pixels on a
    /// screen of `screen_cells` (cols, rows).
    pub(crate) fn area(&self, image: (u32, u32), screen_cells: (u16, u16)) -> (u32, u32) {
        let screen = (
            u32::from(screen_cells.0) * CELL_PX.0,
            u32::from(screen_cells.1) * CELL_PX.1,
        );
        let (iw, ih) = (image.0.max(1), image.1.max(1));
        let w = self.width.pixels(CELL_PX.0, screen.0);
        let h = self.height.pixels(CELL_PX.1, screen.1);
        let (w, h) = match (w, h) {
            (None, None) => (iw, ih),
            (Some(w), None) => (w, (u64::from(w) * u64::from(ih) / u64::from(iw)) as u32),
            (None, Some(h)) => ((u64::from(h) * u64::from(iw) / u64::from(ih)) as u32, h),
            (Some(w), Some(h)) if self.preserve => {
                // Fit inside the box, keeping the picture's shape.
                let by_width = (u64::from(w) * u64::from(ih) / u64::from(iw)) as u32;
                if by_width <= h {
                    (w, by_width)
                } else {
                    ((u64::from(h) * u64::from(iw) / u64::from(ih)) as u32, h)
                }
            }
            (Some(w), Some(h)) => (w, h),
        };
        (w.max(1), h.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_cells_pixels_percent_and_auto() {
        let a = Args::parse(b"inline=1;width=8;height=4;preserveAspectRatio=0");
        assert!(a.inline && !a.preserve);
        assert_eq!(a.area((64, 64), (80, 24)), (80, 80));
        let a = Args::parse(b"inline=1;width=100px");
        assert_eq!(a.area((200, 100), (80, 24)), (100, 50));
        let a = Args::parse(b"inline=1;width=50%");
        assert_eq!(a.area((10, 10), (80, 24)), (400, 400));
        let a = Args::parse(b"inline=1;width=auto;height=auto");
        assert_eq!(a.area((33, 21), (80, 24)), (33, 21));
        // Kept in shape inside the box asked for.
        let a = Args::parse(b"inline=1;width=8;height=8");
        assert_eq!(a.area((64, 32), (80, 24)), (80, 40));
        assert!(Args::parse(b"size=999999999999").check().is_err());
    }
}
