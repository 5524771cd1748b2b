//! What every part of the picture support shares: the limits, the cell size programs are told, and
//! decoded pixels.

/// The most pixels of one picture, declared or decoded.
pub const MAX_IMAGE_PIXELS: u64 = 16 << 20;

/// The most bytes one transmission may carry (after base64), across its chunks.
pub const MAX_PAYLOAD_BYTES: usize = 64 << 20;

/// The most decoded bytes (RGBA) of all the pictures one screen keeps.
pub const MAX_SCREEN_BYTES: usize = 64 << 20;

/// The most placements one screen keeps.
pub const MAX_PLACEMENTS: usize = 256;

/// The size of a cell in pixels as programs are told it (CSI 16 t and the like).
pub(crate) const CELL_PX: (u32, u32) = (
    crate::geometry::NOMINAL_CELL_PIXELS.0 as u32,
    crate::geometry::NOMINAL_CELL_PIXELS.1 as u32,
);

/// Decoded pixels: 8-bit RGBA, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bitmap {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Bitmap {
    /// Bytes it takes.
    pub fn bytes(&self) -> usize {
        self.rgba.len()
    }
}
