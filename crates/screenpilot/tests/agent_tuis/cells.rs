//! One screen model for both sides of the comparison: every visible character with its look, in
//! screenpilot's own words for looks (`snapshot --cells`: `red`, `bright_red`, `color(N)`,
//! `#rrggbb`, `bold`, `undercurl`, ...), read either from screenpilot's compact cells or from tmux's
//! `capture-pane -p -e -N` (text with SGR sequences). Two screens are equal when every row holds
//! the same characters in the same looks, the cursor is in the same place and shown alike, and both
//! are on the same (main or alternate) screen.
//!
//! What is the same to a person and so not a difference: a blank cell in the default look at the
//! end of a row and no cell at all (tmux keeps a row only as long as it was written; screenpilot's
//! rows are always full), and the text colour of a space that draws no line and is not inverse.

use std::collections::BTreeSet;
use std::fmt;

use regex::Regex;
use serde_json::Value;

/// How a character looks: colours and attributes as `snapshot --cells` names them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Look {
    pub fg: String,
    pub bg: String,
    pub attrs: BTreeSet<String>,
}

impl Look {
    fn plain() -> Look {
        Look {
            fg: "default".into(),
            bg: "default".into(),
            attrs: BTreeSet::new(),
        }
    }
}

impl fmt::Display for Look {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for attr in &self.attrs {
            write!(f, "{attr} ")?;
        }
        write!(f, "{} on {}", self.fg, self.bg)
    }
}

/// One character as drawn: a wide character once, a combining mark as a character of its own in
/// its base's look (both sides split a cell's text the same way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glyph {
    pub ch: char,
    pub look: Look,
}

/// A whole screen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    pub rows: Vec<Vec<Glyph>>,
    /// Row, column, visible.
    pub cursor: (u64, u64, bool),
    pub alt_screen: bool,
}

impl Screen {
    /// From `screenpilot --json snapshot SID --cells`.
    pub fn from_snapshot(snapshot: &Value) -> Screen {
        let cells = &snapshot["cells"];
        let styles: Vec<Look> = cells["styles"]
            .as_array()
            .expect("cells have styles")
            .iter()
            .map(|style| Look {
                fg: style["fg"].as_str().expect("fg").to_owned(),
                bg: style["bg"].as_str().expect("bg").to_owned(),
                attrs: style["attrs"]
                    .as_array()
                    .map(|attrs| {
                        attrs
                            .iter()
                            .map(|a| a.as_str().expect("attr").to_owned())
                            .collect()
                    })
                    .unwrap_or_default(),
            })
            .collect();
        let rows = cells["rows"]
            .as_array()
            .expect("cells have rows")
            .iter()
            .map(|runs| {
                let mut row = Vec::new();
                for run in runs.as_array().expect("a row is a list of runs") {
                    let look = &styles[run[2].as_u64().expect("style index") as usize];
                    for ch in run[1].as_str().expect("run text").chars() {
                        row.push(Glyph {
                            ch,
                            look: look.clone(),
                        });
                    }
                }
                trim_blank_end(row)
            })
            .collect();
        let cursor = &snapshot["cursor"];
        Screen {
            rows,
            cursor: (
                cursor["row"].as_u64().expect("cursor row"),
                cursor["col"].as_u64().expect("cursor col"),
                cursor["visible"].as_bool().expect("cursor visible"),
            ),
            alt_screen: snapshot["alt_screen"].as_bool().expect("alt_screen"),
        }
    }

    /// From tmux: `capture-pane -p -e -N` (one line per row; the SGR state runs on from one line
    /// to the next, as tmux writes only what changes) and the pane's cursor and screen.
    pub fn from_tmux(capture: &str, cursor: (u64, u64, bool), alt_screen: bool) -> Screen {
        let mut look = Look::plain();
        let capture = capture.strip_suffix('\n').unwrap_or(capture);
        let rows = capture
            .split('\n')
            .map(|line| {
                let mut row = Vec::new();
                let mut chars = line.chars().peekable();
                while let Some(ch) = chars.next() {
                    if ch != '\x1b' {
                        row.push(Glyph {
                            ch,
                            look: look.clone(),
                        });
                        continue;
                    }
                    // An escape sequence: CSI params final; only SGR (`m`) changes the look.
                    if chars.peek() != Some(&'[') {
                        chars.next();
                        continue;
                    }
                    chars.next();
                    let mut params = String::new();
                    let mut last = None;
                    for c in chars.by_ref() {
                        if ('\x40'..='\x7e').contains(&c) {
                            last = Some(c);
                            break;
                        }
                        params.push(c);
                    }
                    if last == Some('m') {
                        apply_sgr(&mut look, &params);
                    }
                }
                trim_blank_end(row)
            })
            .collect::<Vec<_>>();
        Screen {
            rows,
            cursor,
            alt_screen,
        }
    }

    /// The text, one line per row, without trailing blanks.
    pub fn text(&self) -> String {
        self.rows
            .iter()
            .map(|row| {
                let line: String = row.iter().map(|g| g.ch).collect();
                line.trim_end().to_owned()
            })
            .collect::<Vec<_>>()
            .join("\n")
            .trim_end()
            .to_owned()
    }

    /// This screen with what `pattern` matches on each row (its first group, if it has one)
    /// replaced by `·` in the default look,
    /// for what legitimately differs between two runs of one program (a random tip, a clock).
    pub fn masked(&self, pattern: &Regex) -> Screen {
        let mut screen = self.clone();
        for row in &mut screen.rows {
            let line: String = row.iter().map(|g| g.ch).collect();
            // Byte offsets of the match, as glyph indexes.
            let starts: Vec<usize> = line.char_indices().map(|(i, _)| i).collect();
            for captures in pattern.captures_iter(&line) {
                // The first group when the pattern has one (the part to mask, found by what is
                // around it), else the whole match.
                let found = captures
                    .get(1)
                    .unwrap_or_else(|| captures.get(0).expect("a match"));
                let from = starts.partition_point(|&i| i < found.start());
                let to = starts.partition_point(|&i| i < found.end());
                for glyph in &mut row[from..to] {
                    *glyph = Glyph {
                        ch: '·',
                        look: Look::plain(),
                    };
                }
            }
        }
        screen
    }

    /// This screen with the background `colour` read as the terminal's default.
    pub fn background_as_default(&self, colour: &str) -> Screen {
        let mut screen = self.clone();
        for glyph in screen.rows.iter_mut().flatten() {
            if glyph.look.bg == colour {
                glyph.look.bg = "default".into();
            }
        }
        screen.rows = screen.rows.into_iter().map(trim_blank_end).collect();
        screen
    }

    /// Every difference between the two screens, one line each, cell by cell: empty when they are
    /// the same.
    pub fn differences(&self, tmux: &Screen) -> Vec<String> {
        let mut found = Vec::new();
        if self.rows.len() != tmux.rows.len() {
            found.push(format!(
                "{} rows here, {} in tmux",
                self.rows.len(),
                tmux.rows.len()
            ));
        }
        for (n, (ours, theirs)) in self.rows.iter().zip(&tmux.rows).enumerate() {
            let blank = Glyph {
                ch: ' ',
                look: Look::plain(),
            };
            for i in 0..ours.len().max(theirs.len()) {
                let a = ours.get(i).unwrap_or(&blank);
                let b = theirs.get(i).unwrap_or(&blank);
                if a != b {
                    found.push(format!(
                        "row {n}, character {i}: {:?} in {} here, {:?} in {} in tmux\n  here: {}\n  tmux: {}",
                        a.ch,
                        a.look,
                        b.ch,
                        b.look,
                        ours.iter().map(|g| g.ch).collect::<String>().trim_end(),
                        theirs.iter().map(|g| g.ch).collect::<String>().trim_end(),
                    ));
                    break; // one per row: the rest of a shifted row says nothing new
                }
            }
        }
        if self.cursor != tmux.cursor {
            found.push(format!(
                "cursor (row, col, visible) {:?} here, {:?} in tmux",
                self.cursor, tmux.cursor
            ));
        }
        if self.alt_screen != tmux.alt_screen {
            found.push(format!(
                "alternate screen {} here, {} in tmux",
                self.alt_screen, tmux.alt_screen
            ));
        }
        found
    }
}

/// A row with the invisible left out: the text colour of a space that shows no line
/// (underline, strike) and no inverse is drawn nowhere, and without the blank default cells at
/// its end (unwritten, to tmux).
fn trim_blank_end(mut row: Vec<Glyph>) -> Vec<Glyph> {
    const SHOWS_FG: [&str; 7] = [
        "underline",
        "double_underline",
        "undercurl",
        "dotted_underline",
        "dashed_underline",
        "strike",
        "reverse",
    ];
    for glyph in &mut row {
        if glyph.ch == ' ' && !SHOWS_FG.iter().any(|a| glyph.look.attrs.contains(*a)) {
            glyph.look.fg = "default".into();
        }
    }
    let plain = Look::plain();
    while row.last().is_some_and(|g| g.ch == ' ' && g.look == plain) {
        row.pop();
    }
    row
}

const BASIC: [&str; 8] = [
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
];

/// A palette entry's name, as screenpilot's `color_name` gives it.
fn indexed(n: u64) -> String {
    match n {
        0..=7 => BASIC[n as usize].to_owned(),
        8..=15 => format!("bright_{}", BASIC[n as usize - 8]),
        _ => format!("color({n})"),
    }
}

/// An extended colour after 38, 48 or 58: in the colon form in the parameter's own `sub` values
/// (`38:5:N`, `38:2::R:G:B`), else in the parameters that follow (`38;5;N`, `38;2;R;G;B`). The
/// colour's name, and how many of the following parameters it took.
fn extended(sub: &[u64], following: &[Vec<u64>]) -> (Option<String>, usize) {
    let hex = |rgb: &[u64]| format!("#{:02x}{:02x}{:02x}", rgb[0], rgb[1], rgb[2]);
    if !sub.is_empty() {
        let colour = match sub[0] {
            5 => sub.get(1).map(|&n| indexed(n)),
            2 if sub.len() >= 4 => Some(hex(&sub[sub.len() - 3..])),
            _ => None,
        };
        return (colour, 0);
    }
    let first = |k: usize| following.get(k).map(|p| p[0]);
    match first(0) {
        Some(5) => (first(1).map(indexed), 2),
        Some(2) if following.len() >= 4 => {
            let rgb: Vec<u64> = following[1..4].iter().map(|p| p[0]).collect();
            (Some(hex(&rgb)), 4)
        }
        _ => (None, 1),
    }
}

/// Apply one SGR sequence's parameters to `look`.
fn apply_sgr(look: &mut Look, params: &str) {
    let params: Vec<Vec<u64>> = params
        .split(';')
        .map(|p| p.split(':').map(|n| n.parse().unwrap_or(0)).collect())
        .collect();
    let mut i = 0;
    while i < params.len() {
        let p = &params[i];
        let code = p[0];
        let attr = |look: &mut Look, name: &str, on: bool| {
            if on {
                look.attrs.insert(name.to_owned());
            } else {
                look.attrs.remove(name);
            }
        };
        const UNDERLINES: [&str; 5] = [
            "underline",
            "double_underline",
            "undercurl",
            "dotted_underline",
            "dashed_underline",
        ];
        match code {
            0 => *look = Look::plain(),
            1 => attr(look, "bold", true),
            2 => attr(look, "dim", true),
            3 => attr(look, "italic", true),
            4 => {
                for name in UNDERLINES {
                    attr(look, name, false);
                }
                let style = p.get(1).copied().unwrap_or(1);
                if (1..=5).contains(&style) {
                    attr(look, UNDERLINES[style as usize - 1], true);
                }
            }
            // Blink and overline have no word in screenpilot's looks: kept, so they show as a
            // difference if a program ever uses them.
            5 | 6 => attr(look, "blink", true),
            7 => attr(look, "reverse", true),
            8 => attr(look, "hidden", true),
            9 => attr(look, "strike", true),
            21 => {
                for name in UNDERLINES {
                    attr(look, name, false);
                }
                attr(look, "double_underline", true);
            }
            22 => {
                attr(look, "bold", false);
                attr(look, "dim", false);
            }
            23 => attr(look, "italic", false),
            24 => {
                for name in UNDERLINES {
                    attr(look, name, false);
                }
            }
            25 => attr(look, "blink", false),
            27 => attr(look, "reverse", false),
            28 => attr(look, "hidden", false),
            29 => attr(look, "strike", false),
            30..=37 => look.fg = indexed(code - 30),
            39 => look.fg = "default".into(),
            40..=47 => look.bg = indexed(code - 40),
            49 => look.bg = "default".into(),
            53 => attr(look, "overline", true),
            55 => attr(look, "overline", false),
            90..=97 => look.fg = indexed(code - 90 + 8),
            100..=107 => look.bg = indexed(code - 100 + 8),
            38 | 48 | 58 => {
                let (colour, used) = extended(&p[1..], &params[i + 1..]);
                i += used;
                // The underline's colour (58) has no word in screenpilot's looks either; tmux
                // keeps it, screenpilot's cells do not name it: not compared.
                match (code, colour) {
                    (38, Some(c)) => look.fg = c,
                    (48, Some(c)) => look.bg = c,
                    _ => {}
                }
            }
            _ => {}
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmux_sgr_reads_as_screenpilot_names_it() {
        let capture =
            "a\x1b[1m\x1b[38;5;6mb\x1b[0;2m\x1b[38;2;1;120;212mc\n\x1b[48;5;9;4:3md\x1b[0m  ";
        let screen = Screen::from_tmux(capture, (0, 0, true), false);
        let looks: Vec<String> = screen
            .rows
            .concat()
            .iter()
            .map(|g| g.look.to_string())
            .collect();
        assert_eq!(
            looks,
            [
                "default on default",
                "bold cyan on default",
                "dim #0178d4 on default",
                "dim undercurl #0178d4 on bright_red",
            ]
        );
        assert_eq!(screen.text(), "abc\nd");
    }
}
