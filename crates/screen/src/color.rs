//! Colour values: what a cell asks for ([`Color`]: default, a palette entry or truecolour) and an sRGB
//! triple ([`Rgb`]). A leaf below the cell model, which stores them, and the palette, which resolves one
//! into the other.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A colour as the application asked for it; the theme resolves `Default` and `Indexed` to RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Color {
    /// The terminal's default foreground (as fg) or background (as bg).
    Default,
    /// A palette entry: 0-7 normal, 8-15 bright, 16-255 the xterm 256-colour cube and greys.
    Indexed(u8),
    /// A truecolour value.
    Rgb(Rgb),
}

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Rgb {
    pub r: u8,
    pub g: u8,
    pub b: u8,
}

impl Rgb {
    pub const fn new(r: u8, g: u8, b: u8) -> Self {
        Self { r, g, b }
    }

    /// `#rrggbb`, as SVG and CSS want it.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.r, self.g, self.b)
    }

    /// Mix with another colour; `t` = 0 keeps self, 1 gives `other`.
    pub fn blend(self, other: Rgb, t: f32) -> Rgb {
        let mix = |a: u8, b: u8| {
            (a as f32 + (b as f32 - a as f32) * t)
                .round()
                .clamp(0.0, 255.0) as u8
        };
        Rgb::new(
            mix(self.r, other.r),
            mix(self.g, other.g),
            mix(self.b, other.b),
        )
    }
}
