//! How text looks, in words: colours and attributes named as a person (or a model) says them — `bold
//! red on blue` — never as bit masks or bare palette numbers. The styled markup, highlights and the
//! compact cells all speak this one vocabulary.

use crate::color::Color;
use crate::grid::{Attrs, Cell};

/// What a cell's text looks like: its colours as the application set them, and its attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Style {
    pub fg: Color,
    pub bg: Color,
    pub attrs: Attrs,
}

impl Default for Style {
    /// The terminal's own colours, no attributes.
    fn default() -> Self {
        Style {
            fg: Color::Default,
            bg: Color::Default,
            attrs: Attrs::default(),
        }
    }
}

impl Style {
    pub fn of(cell: &Cell) -> Style {
        Style {
            fg: cell.fg,
            bg: cell.bg,
            attrs: cell.attrs,
        }
    }

    /// The words that turn `base` into this style, e.g. `bold red on blue`; empty when they look the
    /// same. Attributes come first (`not bold` for one the base has and this lacks), then the
    /// foreground, then `on` and the background.
    pub fn words_against(&self, base: &Style) -> String {
        let mut words: Vec<String> = Vec::new();
        for (bit, name) in ATTRIBUTES {
            match (self.attrs.has(bit), base.attrs.has(bit)) {
                (true, false) => words.push(name.to_owned()),
                (false, true) => words.push(format!("not {name}")),
                _ => {}
            }
        }
        if self.fg != base.fg {
            words.push(color_name(self.fg));
        }
        if self.bg != base.bg {
            words.push(format!("on {}", color_name(self.bg)));
        }
        words.join(" ")
    }

    /// The style in words on its own: attributes, foreground, `on` background (`default on blue`).
    pub fn words(&self) -> String {
        let mut words = attribute_names(self.attrs);
        let fg = color_name(self.fg);
        let bg = color_name(self.bg);
        words.push(&fg);
        words.push("on");
        words.push(&bg);
        words.join(" ")
    }
}

/// Attributes in the order they are named.
const ATTRIBUTES: [(u16, &str); 11] = [
    (Attrs::BOLD, "bold"),
    (Attrs::DIM, "dim"),
    (Attrs::ITALIC, "italic"),
    (Attrs::UNDERLINE, "underline"),
    (Attrs::DOUBLE_UNDERLINE, "double_underline"),
    (Attrs::UNDERCURL, "undercurl"),
    (Attrs::DOTTED_UNDERLINE, "dotted_underline"),
    (Attrs::DASHED_UNDERLINE, "dashed_underline"),
    (Attrs::STRIKEOUT, "strike"),
    (Attrs::INVERSE, "reverse"),
    (Attrs::HIDDEN, "hidden"),
];

/// The names of the attributes set, in a fixed order: bold, dim, italic, the underlines, strike,
/// reverse, hidden.
pub fn attribute_names(attrs: Attrs) -> Vec<&'static str> {
    ATTRIBUTES
        .iter()
        .filter(|(bit, _)| attrs.has(*bit))
        .map(|(_, name)| *name)
        .collect()
}

const BASIC: [&str; 8] = [
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
];

/// A colour's name: `default` (the terminal's own), the eight basic names and their `bright_` forms
/// for palette entries 0-15, `color(N)` for the rest of the 256-colour palette, `#rrggbb` for
/// truecolour.
pub fn color_name(color: Color) -> String {
    match color {
        Color::Default => "default".to_owned(),
        Color::Indexed(i) if i < 8 => BASIC[i as usize].to_owned(),
        Color::Indexed(i) if i < 16 => format!("bright_{}", BASIC[i as usize - 8]),
        Color::Indexed(i) => format!("color({i})"),
        Color::Rgb(rgb) => rgb.hex(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::color::Rgb;

    #[test]
    fn colours_have_names_a_reader_knows() {
        assert_eq!(color_name(Color::Default), "default");
        assert_eq!(color_name(Color::Indexed(4)), "blue");
        assert_eq!(color_name(Color::Indexed(9)), "bright_red");
        assert_eq!(color_name(Color::Indexed(242)), "color(242)");
        assert_eq!(color_name(Color::Rgb(Rgb::new(1, 120, 212))), "#0178d4");
    }

    #[test]
    fn words_name_only_what_differs_from_the_base() {
        let base = Style {
            fg: Color::Indexed(0),
            bg: Color::Indexed(7),
            attrs: Attrs::default(),
        };
        let banana = Style {
            fg: Color::Indexed(7),
            bg: Color::Indexed(4),
            attrs: Attrs(Attrs::BOLD),
        };
        assert_eq!(banana.words_against(&base), "bold white on blue");
        assert_eq!(base.words_against(&banana), "not bold black on white");
        assert_eq!(base.words_against(&base), "");
        let hit = Style {
            attrs: Attrs(Attrs::INVERSE),
            ..Style::default()
        };
        assert_eq!(hit.words_against(&Style::default()), "reverse");
        assert_eq!(banana.words(), "bold white on blue");
    }
}
