//! Sending keys and text to a session's program.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_screen::keys;
use screenpilot_session::{hash_hex, Session};

use super::common::{Context, OpError, Progress};
use super::operation::{Operation, Report, View};
use super::screen::SessionScreen;
use screenpilot_desktop::settle::{settle, Settle};

/// Parameters of `send_keys`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysParams {
    pub sid: String,
    /// Key tokens, sent in order, e.g. ["Down", "Down", "Enter"], ["C-c"], ["ctrl+s"], ["M-x"].
    pub keys: Vec<String>,
    /// Return the screen once the app reacted, then stayed quiet this many ms.
    pub settle_ms: Option<u64>,
    /// Limit for settle_ms (default 5000).
    pub settle_timeout_ms: Option<u64>,
    // With settle_ms: also return `styled` and `highlights`, as snapshot does (described there).
    #[serde(default)]
    pub styled: bool,
}

/// Parameters of `send_line` and `type`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextParams {
    pub sid: String,
    pub text: String,
    /// Return the screen once the app reacted, then stayed quiet this many ms.
    pub settle_ms: Option<u64>,
    /// Limit for settle_ms (default 5000).
    pub settle_timeout_ms: Option<u64>,
    // With settle_ms: also return `styled` and `highlights`, as snapshot does (described there).
    #[serde(default)]
    pub styled: bool,
}

/// What an input operation answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InputDone {
    /// With `settle_ms`: the screen once the app reacted and went quiet.
    Settled {
        #[serde(flatten)]
        screen: Box<SessionScreen>,
        /// The app reacted and went quiet within the limit.
        settled: bool,
        /// `mouse`: the cell the event went to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        col: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        row: Option<u16>,
    },
    /// Without: the screen hashes from just before the input, the baseline for wait_change.
    Sent {
        sid: String,
        hash: String,
        visual_hash: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        col: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        row: Option<u16>,
    },
}

impl InputDone {
    /// The same answer, naming the cell a mouse event went to.
    pub(super) fn at_cell(mut self, cell: Option<(u16, u16)>) -> InputDone {
        let (InputDone::Settled { col, row, .. } | InputDone::Sent { col, row, .. }) = &mut self;
        *col = cell.map(|c| c.0);
        *row = cell.map(|c| c.1);
        self
    }
}

impl Report for InputDone {
    fn view(&self) -> View {
        match self {
            InputDone::Settled {
                screen, settled, ..
            } => screen.view(&[("settled", settled.to_string())]),
            InputDone::Sent { .. } => View::default(),
        }
    }
}

/// What an input operation does once its input is written.
#[derive(Debug, Clone, Copy)]
pub(super) enum After {
    /// Answer at once, with the screen hashes from just before the input.
    Return,
    /// Wait for the screen to change and then stay quiet (within a limit), and answer with it
    /// (styled when asked).
    Settle { limits: Settle, styled: bool },
}

impl After {
    pub(super) fn from_params(
        settle_ms: Option<u64>,
        settle_timeout_ms: Option<u64>,
    ) -> Result<After, OpError> {
        let Some(quiet) = settle_ms else {
            return Ok(After::Return);
        };
        let limit = settle_timeout_ms.unwrap_or(5_000);
        if limit > 600_000 {
            return Err(OpError::invalid(
                "settle_timeout_ms",
                format!("{limit} ms is over the limit of 600000 ms"),
            ));
        }
        let limit = Duration::from_millis(limit);
        Ok(After::Settle {
            limits: Settle {
                reaction: limit,
                quiet: Duration::from_millis(quiet),
                limit,
            },
            styled: false,
        })
    }

    /// The same, answering with the styled screen and its highlights when `styled`; `styled`
    /// without a settled screen to carry it is refused.
    pub(super) fn styled(self, styled: bool) -> Result<After, OpError> {
        match self {
            After::Settle { limits, .. } => Ok(After::Settle { limits, styled }),
            After::Return if styled => Err(OpError::invalid(
                "styled",
                "needs settle_ms: input returns a screen only then",
            )),
            After::Return => Ok(After::Return),
        }
    }
}

/// Write input; answer with the screen hashes from just before it, or with the settled screen.
pub(super) async fn write_input(
    session: &Session,
    chunks: &[Vec<u8>],
    after: After,
) -> Result<InputDone, OpError> {
    let (hash, visual_hash) = session.with_screen(|s| (s.hash(), s.visual_hash()));
    let updates = session.subscribe();
    session.write(chunks).await?;
    let After::Settle { limits, styled } = after else {
        return Ok(InputDone::Sent {
            sid: session.sid.to_string(),
            hash: hash_hex(hash),
            visual_hash: hash_hex(visual_hash),
            col: None,
            row: None,
        });
    };
    // The visual hash sees a cursor move or a highlight as a reaction too.
    let outcome = settle(
        updates,
        || session.with_screen(|s| s.visual_hash()),
        visual_hash,
        limits,
    )
    .await;
    Ok(InputDone::Settled {
        screen: Box::new(SessionScreen::read(session, SessionScreen::options(styled))),
        // The documented meaning: the app reacted and then went quiet within the limit.
        settled: outcome.reacted && outcome.settled,
        col: None,
        row: None,
    })
}

/// `send_keys`: press keys.
pub struct SendKeys;

impl Operation for SendKeys {
    const NAME: &'static str = "send_keys";
    const DESCRIPTION: &'static str = "Press keys in a session, in order. Tokens: Enter Return Tab BackTab Space Backspace Delete Escape Esc Up Down Left Right Home End PageUp PageDown Insert F1-F12 KP0-KP9 KPEnter; \
C-x or ^x (Ctrl), M-x (Alt), S- (Shift), combinable and usable on named keys (C-Up, S-Tab, C-M-Delete); Textual style (ctrl+c, shift+tab) too. \
Any other token is typed as literal text (not an error). Keys are encoded for the app's current modes (application cursor keys, kitty keyboard). \
Returns {ok, sid, hash, visual_hash}: the screen hashes from just before the keys, ready as the baseline for wait_change/wait_visual_change. \
With settle_ms (e.g. 100) it instead waits for the app to react and go quiet and returns that screen (as snapshot, plus settled). \
Example: {\"sid\": \"vim\", \"keys\": [\"Escape\", \":wq\", \"Enter\"]}.";
    type Params = SendKeysParams;
    type Output = InputDone;

    async fn run(ctx: &Context, p: SendKeysParams, _: &Progress) -> Result<InputDone, OpError> {
        if p.keys.is_empty() {
            return Err(OpError::invalid(
                "keys",
                "no keys given; e.g. [\"Enter\"] or [\"C-c\"]",
            ));
        }
        let session = ctx.registry.get(&p.sid)?;
        let after = After::from_params(p.settle_ms, p.settle_timeout_ms)?.styled(p.styled)?;
        let chunks = keys::encode_tokens(&p.keys, &session.modes());
        write_input(&session, &chunks, after).await
    }
}

/// The bytes that type `text`: a bracketed paste when it spans lines and the app enabled pastes.
fn text_bytes(session: &Session, text: &str) -> Vec<u8> {
    keys::encode_entered(text, &session.modes())
}

/// `send_line`: type text, then press Enter.
pub struct SendLine;

impl Operation for SendLine {
    const NAME: &'static str = "send_line";
    const DESCRIPTION: &'static str = "Type text, then press Enter as a separate write (apps can drop an Enter glued to text): the usual way to run a command. \
Returns {ok, sid, hash, visual_hash} (hashes from before the input). Follow with wait_for on the expected output or prompt, or pass settle_ms to get the screen once it goes quiet. \
Example: {\"sid\": \"sh\", \"text\": \"ls -l\"}.";
    type Params = TextParams;
    type Output = InputDone;

    async fn run(ctx: &Context, p: TextParams, _: &Progress) -> Result<InputDone, OpError> {
        let session = ctx.registry.get(&p.sid)?;
        let after = After::from_params(p.settle_ms, p.settle_timeout_ms)?.styled(p.styled)?;
        let mut chunks = vec![text_bytes(&session, &p.text)];
        chunks.extend(keys::encode_tokens(&["Enter"], &session.modes()));
        write_input(&session, &chunks, after).await
    }
}

/// `type`: type text without Enter.
pub struct Type;

impl Operation for Type {
    const NAME: &'static str = "type";
    const DESCRIPTION: &'static str = "Type text without pressing Enter, e.g. to fill a field. Multi-line text is sent as a bracketed paste when the app enabled it (else newlines are Enter). \
Returns {ok, sid, hash, visual_hash} (hashes from before the input). Example: {\"sid\": \"form\", \"text\": \"alice@example.com\"}.";
    type Params = TextParams;
    type Output = InputDone;

    async fn run(ctx: &Context, p: TextParams, _: &Progress) -> Result<InputDone, OpError> {
        let session = ctx.registry.get(&p.sid)?;
        let after = After::from_params(p.settle_ms, p.settle_timeout_ms)?.styled(p.styled)?;
        write_input(&session, &[text_bytes(&session, &p.text)], after).await
    }
}
