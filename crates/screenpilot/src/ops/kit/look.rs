//! A look at a terminal's screen for one reader: the whole screen the first time, then only what
//! changed since that reader's last look ([`screenpilot_screen::Delta`]: rows moved up by a scroll,
//! then the rows that differ), whichever is smaller, unless the reader asks. Exact: the reader
//! rebuilds the screen from what it was shown. The facts above the screen are the ones a model acts
//! on, and only when they are news (the program ended, a full-screen program took over or left).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_screen::{Cursor, Delta};
use screenpilot_session::{Input, ReadOptions, Seen, Session};

use super::error::OpError;
use super::view::View;

// How a screen is shown (plain comments: the tool listings describe it once, at `send`):
// `auto` the smaller of the whole screen and what changed since the reader's last look, `full`,
// `delta` what changed (an error when the reader never looked), `none` no screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum ScreenMode {
    #[default]
    Auto,
    Full,
    Delta,
    None,
}

/// The rows of a delta as results carry them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
pub struct DeltaRows {
    /// The old rows moved up this many rows first.
    pub scrolled: usize,
    /// Then `[row, text]` replace what is there.
    pub rows: Vec<(usize, String)>,
}

/// How an ended program is said in a header: `exit=N`, `signal=N` or `ended`.
pub(crate) fn how_it_ended(exit_code: Option<i32>, signal: Option<i32>) -> String {
    match (exit_code, signal) {
        (Some(code), _) => format!("exit={code}"),
        (None, Some(signal)) => format!("signal={signal}"),
        _ => "ended".to_owned(),
    }
}

/// Said beside `input=secret`: a password goes from a person (or a reference), never through the
/// model.
pub const SECRET_HINT: &str =
    "(a person types it: attach SID --secret, or the watch page; or send secret:{env:VAR})";

/// What a reader is shown of a terminal screen.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Look {
    pub alive: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    pub alt_screen: bool,
    pub cursor: Cursor,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub cols: u16,
    pub rows: u16,
    pub hash: String,
    /// The whole screen, one line per row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// What changed since the reader's last look, instead of `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<DeltaRows>,
    /// What the header says is new to the reader: `size`, `alt_screen`, `title`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub news: Vec<String>,
    /// What the program in front waits for, read from the kernel: line, secret (a hidden line:
    /// a person types it), keys, none (busy or ended), unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Input>,
}

impl Look {
    /// Look at `session` for `reader` (no reader: the whole screen, nothing remembered).
    pub fn take(
        session: &Session,
        mode: ScreenMode,
        reader: Option<&str>,
    ) -> Result<Look, OpError> {
        let state = session.read(ReadOptions::default());
        let input = state.alive.then(|| session.input_state());
        let rows: Vec<String> = state.text.split('\n').map(str::to_owned).collect();
        let seen = reader.and_then(|r| session.last_seen(r));
        if mode == ScreenMode::Delta && seen.is_none() {
            let why = match reader {
                Some(_) => "this caller has not seen this session's screen yet",
                None => "deltas need a caller that remembers what it saw (the MCP server and `--delta` do)",
            };
            return Err(OpError::invalid(
                "screen",
                format!("delta: {why}; ask without screen: \"delta\" for the whole screen"),
            ));
        }
        let size = screenpilot_screen::Size::new(state.cols, state.rows);
        let comparable = seen.as_ref().filter(|s| s.size == size);
        let delta = match (mode, comparable) {
            (ScreenMode::Auto | ScreenMode::Delta, Some(before)) => {
                let old: Vec<&str> = before.rows.iter().map(String::as_str).collect();
                let new: Vec<&str> = rows.iter().map(String::as_str).collect();
                let delta = Delta::between(&old, &new);
                let whole = state.text.trim_end_matches('\n').len();
                (mode == ScreenMode::Delta || delta.text_len() < whole).then_some(delta)
            }
            _ => None,
        };
        let mut news = Vec::new();
        match &seen {
            None => {
                news.push("size".to_owned());
                if state.alt_screen {
                    news.push("alt_screen".to_owned());
                }
                if state.title.as_deref().is_some_and(|t| !t.is_empty()) {
                    news.push("title".to_owned());
                }
            }
            Some(before) => {
                if before.size != size {
                    news.push("size".to_owned());
                }
                if before.alt_screen != state.alt_screen {
                    news.push("alt_screen".to_owned());
                }
                if before.title != state.title {
                    news.push("title".to_owned());
                }
            }
        }
        let shown = mode != ScreenMode::None;
        if let (Some(reader), true) = (reader, shown) {
            session.saw(
                reader,
                Seen {
                    rows,
                    size,
                    cursor: state.cursor,
                    alt_screen: state.alt_screen,
                    title: state.title.clone(),
                    alive: state.alive,
                },
            );
        }
        Ok(Look {
            alive: state.alive,
            exit_code: state.exit_code,
            signal: state.signal,
            alt_screen: state.alt_screen,
            cursor: state.cursor,
            title: state.title,
            cols: state.cols,
            rows: state.rows,
            hash: state.hash,
            text: (shown && delta.is_none()).then_some(state.text),
            delta: delta.map(|d| DeltaRows {
                scrolled: d.scrolled,
                rows: d.rows,
            }),
            news: if shown { news } else { Vec::new() },
            input,
        })
    }

    /// The look as a model reads it: `facts` (an outcome: `held=regex`) first, then what is news,
    /// then the screen (the whole of it, or `ROW|text` lines after `delta`).
    pub fn view(&self, facts: &[String]) -> View {
        let mut view = View::default();
        let mut words: Vec<String> = facts.to_vec();
        if !self.alive {
            words.push(how_it_ended(self.exit_code, self.signal));
        }
        for news in &self.news {
            match news.as_str() {
                "size" => words.push(format!("size={}x{}", self.cols, self.rows)),
                "alt_screen" => words.push(format!(
                    "alt_screen={}",
                    if self.alt_screen { "on" } else { "off" }
                )),
                "title" => words.push(format!("title={:?}", self.title.as_deref().unwrap_or(""))),
                _ => {}
            }
        }
        let cursor = format!("cursor={},{}", self.cursor.row, self.cursor.col);
        match (&self.text, &self.delta) {
            (Some(text), _) => {
                words.push(cursor);
                view.screen = Some(text.trim_end_matches('\n').to_owned());
            }
            (None, Some(delta)) if delta.rows.is_empty() && delta.scrolled == 0 => {
                words.push("unchanged".to_owned());
                words.push(cursor);
                view.screen = Some(String::new());
            }
            (None, Some(delta)) => {
                words.push("delta".to_owned());
                if delta.scrolled > 0 {
                    words.push(format!("scrolled={}", delta.scrolled));
                }
                words.push(cursor);
                let lines: Vec<String> = delta
                    .rows
                    .iter()
                    .map(|(row, text)| format!("{row}|{text}"))
                    .collect();
                view.screen = Some(lines.join("\n"));
            }
            // No screen asked for: the facts alone.
            (None, None) => view.screen = Some(String::new()),
        }
        // Last on the line: what the program waits for.
        if let Some(input) = self.input {
            words.push(format!("input={}", input.name()));
            if input == Input::Secret {
                words.push(SECRET_HINT.to_owned());
            }
        }
        view.header = words.into_iter().map(|w| ("", w)).collect();
        view
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use screenpilot_screen::CursorShape;

    fn look(text: Option<&str>, delta: Option<DeltaRows>) -> Look {
        Look {
            alive: true,
            exit_code: None,
            signal: None,
            alt_screen: false,
            cursor: Cursor {
                row: 1,
                col: 4,
                visible: true,
                shape: CursorShape::Block,
            },
            title: None,
            cols: 80,
            rows: 24,
            hash: "0123456789abcdef".into(),
            text: text.map(str::to_owned),
            delta,
            news: Vec::new(),
            input: None,
        }
    }

    fn line(view: &View) -> String {
        let header = view
            .header
            .iter()
            .map(|(_, v)| v.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        format!("{header}\n{}", view.screen.as_deref().unwrap_or(""))
    }

    #[test]
    fn a_delta_reads_as_its_rows_after_the_word_delta() {
        let delta = DeltaRows {
            scrolled: 2,
            rows: vec![(22, "42".into()), (23, ">>> ".into())],
        };
        let view = look(None, Some(delta)).view(&["held=regex".into()]);
        assert_eq!(
            line(&view),
            "held=regex delta scrolled=2 cursor=1,4\n22|42\n23|>>> "
        );
    }

    #[test]
    fn the_whole_screen_drops_its_blank_rows_and_an_ended_program_says_how() {
        let mut shown = look(Some(">>> 6*7\n42\n\n\n"), None);
        shown.alive = false;
        shown.exit_code = Some(0);
        shown.news = vec!["size".into()];
        assert_eq!(
            line(&shown.view(&[])),
            "exit=0 size=80x24 cursor=1,4\n>>> 6*7\n42"
        );
        let same = look(
            None,
            Some(DeltaRows {
                scrolled: 0,
                rows: vec![],
            }),
        );
        assert_eq!(line(&same.view(&[])), "unchanged cursor=1,4\n");
    }
}
