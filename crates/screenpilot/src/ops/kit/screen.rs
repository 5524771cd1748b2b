//! The screen a result carries, and how it reads: for a model, one header line of facts above the
//! screen text; for a person, the screen text alone.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_screen::Highlight;
use screenpilot_session::{ReadOptions, ScreenState, Session};

use super::view::View;

/// A session's screen as results carry it: the sid and the screen state, flattened.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SessionScreen {
    pub sid: String,
    #[serde(flatten)]
    pub state: ScreenState,
}

impl SessionScreen {
    /// `session`'s screen now.
    pub fn read(session: &Session, options: ReadOptions) -> SessionScreen {
        let mut state = session.read(options);
        state.input = state.alive.then(|| session.input_state());
        SessionScreen {
            sid: session.sid.to_string(),
            state,
        }
    }

    /// The view of this screen, with `flags` (a wait's outcome, ...) after the process facts.
    pub fn view(&self, flags: &[(&'static str, String)]) -> View {
        let state = &self.state;
        let mut view = View::default();
        view.fact("sid", &self.sid);
        view.fact("alive", state.alive);
        if let Some(code) = state.exit_code {
            view.fact("exit_code", code);
        }
        if let Some(signal) = state.signal {
            view.fact("signal", signal);
        }
        view.header.extend(flags.iter().cloned());
        view.fact("alt_screen", state.alt_screen);
        view.fact(
            "cursor",
            format!("{},{}", state.cursor.row, state.cursor.col),
        );
        if let Some(title) = state.title.as_deref().filter(|t| !t.is_empty()) {
            view.fact("title", format!("{title:?}"));
        }
        view.fact("hash", &state.hash);
        view.fact("size", format!("{}x{}", state.cols, state.rows));
        view.scrollback = state.scrollback.clone().filter(|s| !s.is_empty());
        if let Some(left) = state.scrollback_left.filter(|n| *n > 0) {
            // The budget's remainder, and how to read it.
            view.fact(
                "scrollback_left",
                format!("{left} (ask a larger scrollback)"),
            );
        }
        view.screen = Some(state.styled.clone().unwrap_or_else(|| state.text.clone()));
        if let Some(found) = state.highlights.as_ref().filter(|h| !h.is_empty()) {
            view.extras.push(("highlights", highlights_brief(found)));
        }
        if !state.image_notes.is_empty() {
            view.extras
                .push(("image_notes", serde_json::json!(state.image_notes)));
        }
        view
    }

    /// The screen a person reads: the styled text when it was asked for, else the plain text.
    pub fn shown_text(&self) -> &str {
        self.state.styled.as_deref().unwrap_or(&self.state.text)
    }

    /// What a result reads: the plain screen, plus the styled text and highlights when `styled`.
    pub fn options(styled: bool) -> ReadOptions {
        ReadOptions {
            styled,
            highlights: styled,
            ..ReadOptions::default()
        }
    }
}

/// Highlights as a model reads them after the screen: `[{"row", "col", "text", "why"}, ...]` (the
/// style words are in the JSON result).
fn highlights_brief(found: &[Highlight]) -> serde_json::Value {
    found
        .iter()
        .map(|h| serde_json::json!({"row": h.row, "col": h.col, "text": h.text, "why": h.why}))
        .collect()
}

/// A flag for a view: `exited` only when true (a wait says exited=false on every ordinary return).
pub fn exited_flag(exited: bool) -> Option<(&'static str, String)> {
    exited.then(|| ("exited", "true".to_owned()))
}
