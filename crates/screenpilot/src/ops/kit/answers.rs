//! Parts that many answers carry: how a wait for `until` ended ([`UntilDone`]), and how a picture
//! maps to the screen it shows ([`Framing`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The most bytes of a regex's match shown to a model.
const MATCH_SHOWN: usize = 200;

/// A point on a screenshot, in its pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Pixel {
    pub x: u32,
    pub y: u32,
}

/// How a picture maps to the screen it shows, as every answer with a picture carries it
/// (`screenshot`, `computer`): the screen's own size, its pixels per picture pixel, and the pointer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Framing {
    /// Where the pointer is, in the picture's pixels (desktops).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer: Option<Pixel>,
    /// Screen pixels per picture pixel (1 at full size; about 1.89 for a 2560x1600 screen sent as
    /// 1356x848).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// The screen's own size in pixels (the picture's are `width` and `height`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_width: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_height: Option<u32>,
}

impl Framing {
    /// A picture of a `screen`-sized screen at `scale`, the pointer where given. The scale has four
    /// decimals: more says nothing a model can use.
    pub fn of(screen: (u32, u32), scale: f64, pointer: Option<Pixel>) -> Framing {
        Framing {
            pointer,
            scale: Some((scale * 1e4).round() / 1e4),
            screen_width: Some(screen.0),
            screen_height: Some(screen.1),
        }
    }
}

/// How a wait for `until` ended.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct UntilDone {
    /// The part that held; none when the timeout came first or the program ended.
    pub held: Option<Held>,
    /// `any`: which regex matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The text a regex matched.
    #[serde(rename = "match", default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    /// The timeout came first.
    #[serde(default)]
    pub timed_out: bool,
    pub elapsed_ms: f64,
    /// How long the answer then waited for the output to pause (a whole frame).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub settle_ms: f64,
}

fn is_zero(ms: &f64) -> bool {
    *ms == 0.0
}

impl UntilDone {
    /// The header words for a model: `held=regex match="42"`, `held=any:1 match=...`,
    /// `timeout(10000 ms)`. A long match is cut (the JSON answer has all of it).
    pub fn brief(&self) -> String {
        let mut words = match (self.held, self.index) {
            (Some(Held::Any), Some(i)) => format!("held=any:{i}"),
            (Some(held), _) => format!("held={}", held.name()),
            (None, _) if self.timed_out => format!("timeout({} ms)", self.elapsed_ms.round()),
            (None, _) => "held=none".to_owned(),
        };
        if let Some(found) = self.matched.as_deref().filter(|m| !m.is_empty()) {
            let mut end = found.len().min(MATCH_SHOWN);
            while !found.is_char_boundary(end) {
                end -= 1;
            }
            let cut = if end < found.len() { "..." } else { "" };
            words.push_str(&format!(" match={:?}{cut}", &found[..end]));
        }
        words
    }
}

/// Which part of `until` held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Held {
    Regex,
    Any,
    Exit,
    Change,
    Visual,
    Quiet,
    Input,
}

impl Held {
    pub fn name(self) -> &'static str {
        match self {
            Held::Regex => "regex",
            Held::Any => "any",
            Held::Exit => "exit",
            Held::Change => "change",
            Held::Visual => "visual",
            Held::Quiet => "quiet",
            Held::Input => "input",
        }
    }
}
