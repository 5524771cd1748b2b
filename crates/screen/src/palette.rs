//! The 256-colour palette, light and dark themes, and resolving a cell's [`Color`] to [`Rgb`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::color::{Color, Rgb};

/// Which built-in colour scheme to draw with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ThemeName {
    #[default]
    Dark,
    Light,
}

/// The colours a terminal draws with when the application does not say otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    pub foreground: Rgb,
    pub background: Rgb,
    pub cursor: Rgb,
    /// The 16 ANSI colours: 0-7 normal, 8-15 bright.
    pub ansi: [Rgb; 16],
}

impl Theme {
    pub fn named(name: ThemeName) -> Theme {
        match name {
            ThemeName::Dark => Theme::dark(),
            ThemeName::Light => Theme::light(),
        }
    }

    /// A dark theme close to xterm's defaults, slightly softened.
    pub fn dark() -> Theme {
        Theme {
            foreground: Rgb::new(0xd8, 0xd8, 0xd8),
            background: Rgb::new(0x16, 0x16, 0x1c),
            cursor: Rgb::new(0xe8, 0xe8, 0xe8),
            ansi: [
                Rgb::new(0x00, 0x00, 0x00),
                Rgb::new(0xcd, 0x31, 0x31),
                Rgb::new(0x0d, 0xbc, 0x79),
                Rgb::new(0xe5, 0xe5, 0x10),
                Rgb::new(0x24, 0x72, 0xc8),
                Rgb::new(0xbc, 0x3f, 0xbc),
                Rgb::new(0x11, 0xa8, 0xcd),
                Rgb::new(0xe5, 0xe5, 0xe5),
                Rgb::new(0x66, 0x66, 0x66),
                Rgb::new(0xf1, 0x4c, 0x4c),
                Rgb::new(0x23, 0xd1, 0x8b),
                Rgb::new(0xf5, 0xf5, 0x43),
                Rgb::new(0x3b, 0x8e, 0xea),
                Rgb::new(0xd6, 0x70, 0xd6),
                Rgb::new(0x29, 0xb8, 0xdb),
                Rgb::new(0xff, 0xff, 0xff),
            ],
        }
    }

    /// A light theme for documents and bright rooms.
    pub fn light() -> Theme {
        Theme {
            foreground: Rgb::new(0x1e, 0x1e, 0x1e),
            background: Rgb::new(0xfb, 0xfb, 0xf8),
            cursor: Rgb::new(0x20, 0x20, 0x20),
            ansi: [
                Rgb::new(0x00, 0x00, 0x00),
                Rgb::new(0xc4, 0x1a, 0x16),
                Rgb::new(0x00, 0x7f, 0x1f),
                Rgb::new(0x8a, 0x6d, 0x00),
                Rgb::new(0x0a, 0x4e, 0xc9),
                Rgb::new(0xa0, 0x2b, 0xa0),
                Rgb::new(0x0b, 0x7d, 0x96),
                Rgb::new(0xb0, 0xb0, 0xb0),
                Rgb::new(0x5c, 0x5c, 0x5c),
                Rgb::new(0xe0, 0x30, 0x30),
                Rgb::new(0x10, 0xa0, 0x30),
                Rgb::new(0xb0, 0x90, 0x00),
                Rgb::new(0x2c, 0x6c, 0xf0),
                Rgb::new(0xc0, 0x40, 0xc0),
                Rgb::new(0x10, 0xa0, 0xc0),
                Rgb::new(0x80, 0x80, 0x80),
            ],
        }
    }

    /// Palette entry `index` (0-255) under this theme, ignoring application overrides.
    pub fn indexed(&self, index: u8) -> Rgb {
        match index {
            0..=15 => self.ansi[index as usize],
            16..=231 => {
                let i = index - 16;
                let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
                Rgb::new(level(i / 36), level((i / 6) % 6), level(i % 6))
            }
            232..=255 => {
                let v = 8 + (index - 232) * 10;
                Rgb::new(v, v, v)
            }
        }
    }

    /// Resolve a cell colour to RGB, honouring palette entries the application changed.
    ///
    /// `overrides` uses the same indices as [`crate::grid::CellGrid::palette_overrides`].
    pub fn resolve(&self, color: Color, is_foreground: bool, overrides: &[(u16, Rgb)]) -> Rgb {
        let overridden = |index: u16| {
            overrides
                .iter()
                .find(|(i, _)| *i == index)
                .map(|(_, rgb)| *rgb)
        };
        match color {
            Color::Rgb(rgb) => rgb,
            Color::Indexed(i) => overridden(i as u16).unwrap_or_else(|| self.indexed(i)),
            Color::Default if is_foreground => {
                overridden(FOREGROUND_INDEX).unwrap_or(self.foreground)
            }
            Color::Default => overridden(BACKGROUND_INDEX).unwrap_or(self.background),
        }
    }
}

/// Palette index used for the default foreground in overrides.
pub const FOREGROUND_INDEX: u16 = 256;
/// Palette index used for the default background in overrides.
pub const BACKGROUND_INDEX: u16 = 257;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_and_greys_follow_xterm() {
        let t = Theme::dark();
        assert_eq!(t.indexed(16), Rgb::new(0, 0, 0));
        assert_eq!(t.indexed(196), Rgb::new(255, 0, 0));
        assert_eq!(t.indexed(231), Rgb::new(255, 255, 255));
        assert_eq!(t.indexed(232), Rgb::new(8, 8, 8));
        assert_eq!(t.indexed(255), Rgb::new(238, 238, 238));
    }

    #[test]
    fn overrides_win_over_theme() {
        let t = Theme::dark();
        let over = [
            (1u16, Rgb::new(1, 2, 3)),
            (BACKGROUND_INDEX, Rgb::new(9, 9, 9)),
        ];
        assert_eq!(t.resolve(Color::Indexed(1), true, &over), Rgb::new(1, 2, 3));
        assert_eq!(t.resolve(Color::Default, false, &over), Rgb::new(9, 9, 9));
        assert_eq!(t.resolve(Color::Default, true, &over), t.foreground);
    }
}
