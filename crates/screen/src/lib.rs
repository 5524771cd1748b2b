//! The screen model of screenpilot.
//!
//! A pure library: it parses what a program writes to its terminal ([`Screen`]), tells what a person
//! would see (text, hashes, cells, cursor, title, input modes; styled text, highlights and cells as
//! runs from [`styled`], [`highlights`] and [`runs`]), encodes keys and mouse events for the
//! application's current modes, and renders the screen to PNG and SVG. It reads asciicast
//! recordings ([`cast`]) and draws them as animated GIFs ([`animation`]). It performs no I/O.

pub mod animation;
pub mod ansi;
pub mod cast;
pub mod color;
pub mod delta;
pub mod emulator;
pub mod geometry;
pub mod grid;
pub mod highlights;
mod history;
pub mod images;
pub mod keys;
pub mod modes;
pub mod mouse;
mod occupied;
pub mod osc_limit;
pub mod palette;
pub mod regions;
pub mod render;
pub mod runs;
mod scroll_scan;
mod sequence_state;
pub mod settling;
pub mod shell_marks;
pub mod style;
pub mod styled;
#[cfg(test)]
mod test_screens;
mod unseen_lines;
pub mod width;
mod width_handler;
mod width_table;

pub use ansi::{Painter, Viewport, PAINT_INTERVAL};
pub use color::{Color, Rgb};
pub use delta::Delta;
pub use emulator::Screen;
pub use geometry::{CellPos, Col, PixelSize, Row, Size};
pub use grid::{Attrs, Cell, CellGrid, CellWidth, Cursor, CursorShape};
pub use highlights::{highlights, Highlight, HighlightKind};
pub use images::{label_text, PictureInfo, ShownImage};
pub use keys::{KeyToken, Modifiers, NamedKey};
pub use modes::{InputModes, MouseEncoding, MouseTracking};
pub use mouse::{MouseAction, MouseButton, MouseError, MouseEvent, TextMatch};
pub use palette::{Theme, ThemeName};
pub use regions::Regions;
pub use render::{render_png, render_svg, Layout, RenderError, RenderOptions};
pub use runs::{CellRuns, NamedStyle, Run};
pub use shell_marks::{Mark, MarkScanner};
pub use style::Style;
pub use styled::{strip_markup, styled_text};
pub use width::char_width;
