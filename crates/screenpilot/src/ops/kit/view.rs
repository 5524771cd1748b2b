//! How an output reads: whether it is good news ([`Report`]), and what people and models are shown
//! ([`View`]: one header line of facts, then the screen).

use serde_json::Value;

/// How an output reads: whether it is good news, and what people and models are shown.
pub trait Report {
    /// `false` makes the answer `ok: false` (evidence attached, e.g. `computer` failing after input).
    fn ok(&self) -> bool {
        true
    }

    /// Whether the operation got what was asked (a wait's condition held; the program is alive): the
    /// CLI's exit status is 0 when it did, 1 when not.
    fn satisfied(&self) -> bool {
        self.ok()
    }

    /// What a model reads first in a tool result.
    fn view(&self) -> View {
        View::default()
    }

    /// What the CLI prints for a person (without --json).
    fn human(&self) -> String {
        self.view().screen.unwrap_or_default()
    }

    /// A line for stderr when not satisfied ("wait timed out").
    fn complaint(&self) -> Option<String> {
        None
    }
}

/// A screen-bearing result as a model reads it: one header line of facts, then the screen.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct View {
    /// Facts for the header line, in reading order (`sid=sh matched=true ...`).
    pub header: Vec<(&'static str, String)>,
    /// History above the screen, when asked for.
    pub scrollback: Option<String>,
    /// The screen text; `None` for results that carry no screen (they read as compact JSON).
    pub screen: Option<String>,
    /// Other findings, shown as JSON after the screen for models that read only text.
    pub extras: Vec<(&'static str, Value)>,
}

impl View {
    /// Add a header fact.
    pub fn fact(&mut self, name: &'static str, value: impl ToString) {
        self.header.push((name, value.to_string()));
    }

    /// The view as text: one header line (`sid=sh matched=true ...`; a fact without a name is a
    /// phrase of its own), then the scrollback if asked for, then the screen (its blank rows at the
    /// bottom left out: they cost tokens and say nothing), then other findings.
    pub fn render(&self) -> String {
        let header: Vec<String> = self
            .header
            .iter()
            .map(|(name, value)| match name {
                &"" => value.clone(),
                name => format!("{name}={value}"),
            })
            .collect();
        // Facts join with spaces; one that ends a line (a list of step outcomes) starts the next.
        let mut text = String::new();
        for fact in &header {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push(' ');
            }
            text.push_str(fact);
        }
        if let Some(history) = &self.scrollback {
            text.push_str("\n[scrollback]\n");
            text.push_str(history);
            text.push_str("\n[screen]");
        }
        if let Some(screen) = self.screen.as_deref() {
            let screen = screen.trim_end_matches('\n');
            if !screen.is_empty() {
                if !text.is_empty() && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(screen);
            }
        }
        for (name, value) in &self.extras {
            text.push_str(&format!("\n[{name}] {value}"));
        }
        text
    }
}
