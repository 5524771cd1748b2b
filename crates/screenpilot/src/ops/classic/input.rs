//! Sending keys and text to a session's program.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_screen::keys;
use screenpilot_session::Session;

use crate::ops::kit::common::{Context, OpError, Progress};
use crate::ops::kit::operation::Operation;
use crate::ops::kit::step_table::{Journaled, StepTable};
use crate::ops::kit::write::{write_input, After, InputDone};

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

    fn journal(p: &SendKeysParams, _: bool) -> Vec<Journaled> {
        vec![Journaled::acting(StepTable {
            keys: Some(p.keys.clone()),
            ..StepTable::default()
        })]
    }

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

    fn journal(p: &TextParams, _: bool) -> Vec<Journaled> {
        vec![Journaled::acting(StepTable {
            line: Some(p.text.clone()),
            ..StepTable::default()
        })]
    }

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

    fn journal(p: &TextParams, _: bool) -> Vec<Journaled> {
        vec![Journaled::acting(StepTable {
            text: Some(p.text.clone()),
            ..StepTable::default()
        })]
    }

    async fn run(ctx: &Context, p: TextParams, _: &Progress) -> Result<InputDone, OpError> {
        let session = ctx.registry.get(&p.sid)?;
        let after = After::from_params(p.settle_ms, p.settle_timeout_ms)?.styled(p.styled)?;
        write_input(&session, &[text_bytes(&session, &p.text)], after).await
    }
}
