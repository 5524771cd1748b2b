//! Newtypes for positions on the screen, so a row can never be passed where a column is meant.
//!
//! Everything here is 0-based: row 0 is the top line of the visible screen, column 0 the leftmost cell.
//! Terminal protocols are 1-based; conversion happens only where bytes are encoded.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A column index (0-based), counted in cells.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct Col(pub u16);

/// A row index (0-based) on the visible screen, counted in cells.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(transparent)]
pub struct Row(pub u16);

/// One cell on the visible screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct CellPos {
    pub col: Col,
    pub row: Row,
}

impl CellPos {
    pub fn new(col: u16, row: u16) -> Self {
        Self {
            col: Col(col),
            row: Row(row),
        }
    }
}

/// The size of a terminal, in cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Size {
    pub cols: u16,
    pub rows: u16,
}

impl Size {
    pub const fn new(cols: u16, rows: u16) -> Self {
        Self { cols, rows }
    }

    pub fn cells(self) -> usize {
        self.cols as usize * self.rows as usize
    }

    pub fn contains(self, pos: CellPos) -> bool {
        pos.col.0 < self.cols && pos.row.0 < self.rows
    }
}

impl Default for Size {
    fn default() -> Self {
        Self::new(80, 24)
    }
}

/// A size in pixels, for rendered images.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PixelSize {
    pub width: u32,
    pub height: u32,
}

/// The nominal size of one cell in pixels, reported to applications that ask (CSI 14 t / 16 t).
/// It matches the default PNG rendering scale.
pub const NOMINAL_CELL_PIXELS: (u16, u16) = (10, 20);
