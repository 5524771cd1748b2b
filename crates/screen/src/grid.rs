//! The cell model: what every cell of the screen holds, independent of the emulator behind it.
//!
//! The renderer (PNG/SVG) and the `--cells` JSON output both read this model, so neither needs to know
//! anything about alacritty_terminal.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::color::{Color, Rgb};
use crate::geometry::{CellPos, Size};

/// Text attributes of a cell, as bit flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Attrs(pub u16);

impl Attrs {
    pub const BOLD: u16 = 1;
    pub const DIM: u16 = 1 << 1;
    pub const ITALIC: u16 = 1 << 2;
    pub const UNDERLINE: u16 = 1 << 3;
    pub const DOUBLE_UNDERLINE: u16 = 1 << 4;
    pub const UNDERCURL: u16 = 1 << 5;
    pub const DOTTED_UNDERLINE: u16 = 1 << 6;
    pub const DASHED_UNDERLINE: u16 = 1 << 7;
    pub const STRIKEOUT: u16 = 1 << 8;
    pub const INVERSE: u16 = 1 << 9;
    pub const HIDDEN: u16 = 1 << 10;

    /// Every kind of underline.
    pub const ANY_UNDERLINE: u16 = Self::UNDERLINE
        | Self::DOUBLE_UNDERLINE
        | Self::UNDERCURL
        | Self::DOTTED_UNDERLINE
        | Self::DASHED_UNDERLINE;

    pub fn has(self, flag: u16) -> bool {
        self.0 & flag != 0
    }

    /// Names of the set attributes, for people and models reading JSON.
    pub fn names(self) -> Vec<&'static str> {
        const NAMES: [(u16, &str); 11] = [
            (Attrs::BOLD, "bold"),
            (Attrs::DIM, "dim"),
            (Attrs::ITALIC, "italic"),
            (Attrs::UNDERLINE, "underline"),
            (Attrs::DOUBLE_UNDERLINE, "double_underline"),
            (Attrs::UNDERCURL, "undercurl"),
            (Attrs::DOTTED_UNDERLINE, "dotted_underline"),
            (Attrs::DASHED_UNDERLINE, "dashed_underline"),
            (Attrs::STRIKEOUT, "strikeout"),
            (Attrs::INVERSE, "inverse"),
            (Attrs::HIDDEN, "hidden"),
        ];
        NAMES
            .iter()
            .filter(|(bit, _)| self.has(*bit))
            .map(|(_, name)| *name)
            .collect()
    }
}

/// How wide a cell's glyph is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CellWidth {
    /// An ordinary one-cell character.
    Single,
    /// The first cell of a two-cell (wide, e.g. CJK) character.
    Wide,
    /// The second cell of a wide character; it holds no text of its own.
    Spacer,
}

/// One cell of the screen.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Cell {
    /// The text of the cell: one character plus any combining marks; a space when empty.
    pub text: String,
    pub fg: Color,
    pub bg: Color,
    pub attrs: Attrs,
    pub width: CellWidth,
}

impl Default for Cell {
    fn default() -> Self {
        Self {
            text: " ".to_owned(),
            fg: Color::Default,
            bg: Color::Default,
            attrs: Attrs::default(),
            width: CellWidth::Single,
        }
    }
}

/// The shape the application asked the cursor to take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CursorShape {
    Block,
    Underline,
    Beam,
    HollowBlock,
}

/// Where the cursor is and how it looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Cursor {
    /// 0-based row on the visible screen.
    pub row: u16,
    /// 0-based column.
    pub col: u16,
    pub visible: bool,
    pub shape: CursorShape,
}

impl Cursor {
    pub fn pos(&self) -> CellPos {
        CellPos::new(self.col, self.row)
    }
}

/// The whole visible screen as cells, row-major, plus what is needed to draw it faithfully.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CellGrid {
    pub size: Size,
    /// `size.rows` rows of `size.cols` cells.
    pub rows: Vec<Vec<Cell>>,
    pub cursor: Cursor,
    /// Palette entries the application changed (OSC 4/10/11), as (index, colour); index 256 is the
    /// default foreground and 257 the default background.
    pub palette_overrides: Vec<(u16, Rgb)>,
    /// The window title the application set, if any.
    pub title: Option<String>,
    /// Pictures on the screen (see [`crate::images`]), drawn over the cells.
    #[serde(skip)]
    #[schemars(skip)]
    pub images: Vec<crate::images::ShownImage>,
}

impl CellGrid {
    /// The cell at a position, if it is on the screen.
    pub fn cell(&self, pos: CellPos) -> Option<&Cell> {
        self.rows.get(pos.row.0 as usize)?.get(pos.col.0 as usize)
    }
}
