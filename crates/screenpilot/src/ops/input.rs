//! Sending keys, text and mouse events to a session's program.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use std::time::{Duration, Instant};

use screenpilot_screen::keys;
use screenpilot_session::wait::{wait, Condition, Reason, WaitOptions};
use screenpilot_session::{hash_hex, ReadOptions, Session};

use super::{base, schema_of, with_state, Context, OpError, OpResult, OperationDef};

/// Parameters of `send_keys`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysParams {
    pub sid: String,
    /// Key tokens, sent in order, e.g. ["Down", "Down", "Enter"], ["C-c"], ["ctrl+s"], ["M-x"].
    pub keys: Vec<String>,
    /// Answer with the screen once the app reacted and stayed quiet this many ms.
    pub settle_ms: Option<u64>,
    /// Limit for settle_ms (default 5000).
    pub settle_timeout_ms: Option<u64>,
}

/// Parameters of `send_line` and `type`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextParams {
    pub sid: String,
    pub text: String,
    /// Answer with the screen once the app reacted and stayed quiet this many ms.
    pub settle_ms: Option<u64>,
    /// Limit for settle_ms (default 5000).
    pub settle_timeout_ms: Option<u64>,
}

pub const SEND_KEYS: OperationDef = OperationDef {
    name: "send_keys",
    description: "Press keys in a session, in order. Tokens: Enter Return Tab BackTab Space Backspace Delete Escape Esc Up Down Left Right Home End PageUp PageDown Insert F1-F12 KP0-KP9 KPEnter; \
C-x or ^x (Ctrl), M-x (Alt), S- (Shift), combinable and usable on named keys (C-Up, S-Tab, C-M-Delete); Textual style (ctrl+c, shift+tab) too. \
Any other token is typed as literal text (not an error). Keys are encoded for the app's current modes (application cursor keys, kitty keyboard). \
Returns {ok, sid, hash, visual_hash}: the screen hashes from just before the keys, ready as the baseline for wait_change/wait_visual_change. \
With settle_ms (e.g. 100) it instead waits for the app to react and go quiet and returns that screen (as snapshot, plus settled). \
Example: {\"sid\": \"vim\", \"keys\": [\"Escape\", \":wq\", \"Enter\"]}.",
    schema: schema_of::<SendKeysParams>,
};

pub const SEND_LINE: OperationDef = OperationDef {
    name: "send_line",
    description: "Type text, then press Enter as a separate write (apps can drop an Enter glued to text): the usual way to run a command. \
Returns {ok, sid, hash, visual_hash} (hashes from before the input). Follow with wait_for on the expected output or prompt, or pass settle_ms to get the screen once it goes quiet. \
Example: {\"sid\": \"sh\", \"text\": \"ls -l\"}.",
    schema: schema_of::<TextParams>,
};

pub const TYPE: OperationDef = OperationDef {
    name: "type",
    description: "Type text without pressing Enter, e.g. to fill a field. Multi-line text is sent as a bracketed paste when the app enabled it (else newlines are Enter). \
Returns {ok, sid, hash, visual_hash} (hashes from before the input). Example: {\"sid\": \"form\", \"text\": \"alice@example.com\"}.",
    schema: schema_of::<TextParams>,
};

/// What an input operation does once its input is written.
#[derive(Debug, Clone, Copy)]
pub(super) enum After {
    /// Answer at once, with the screen hashes from just before the input.
    Return,
    /// Wait for the screen to change and then stay quiet this long (within a limit), and answer with it.
    Settle { quiet: Duration, limit: Duration },
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
        Ok(After::Settle {
            quiet: Duration::from_millis(quiet),
            limit: Duration::from_millis(limit),
        })
    }
}

/// Write input; answer with the screen hashes from just before it, or with the settled screen.
pub(super) async fn write_input(session: &Session, chunks: &[Vec<u8>], after: After) -> OpResult {
    let (hash, visual_hash) = session.with_screen(|s| (s.hash(), s.visual_hash()));
    session.write(chunks).await?;
    let After::Settle { quiet, limit } = after else {
        let mut out = base(session.sid.as_str());
        out.insert("hash".into(), hash_hex(hash).into());
        out.insert("visual_hash".into(), hash_hex(visual_hash).into());
        return Ok(Value::Object(out));
    };
    let deadline = Instant::now() + limit;
    let options = |limit: Duration| WaitOptions {
        timeout: limit,
        scrollback: None,
    };
    // The visual hash sees a cursor move or a highlight as a reaction too.
    let reacted = wait(
        session,
        &Condition::VisualChange(visual_hash),
        options(limit),
    )
    .await;
    let settled = reacted.reason == Reason::Changed && {
        let left = deadline.saturating_duration_since(Instant::now());
        let calm = wait(
            session,
            &Condition::Ready {
                marker: None,
                stable: quiet,
            },
            options(left),
        )
        .await;
        calm.reason == Reason::Stable
    };
    let mut out = with_state(session.sid.as_str(), &session.read(ReadOptions::default()));
    out.insert("settled".into(), settled.into());
    Ok(Value::Object(out))
}

pub async fn send_keys(ctx: &Context, p: SendKeysParams) -> OpResult {
    if p.keys.is_empty() {
        return Err(OpError::invalid(
            "keys",
            "no keys given; e.g. [\"Enter\"] or [\"C-c\"]",
        ));
    }
    let session = ctx.registry.get(&p.sid)?;
    let after = After::from_params(p.settle_ms, p.settle_timeout_ms)?;
    let chunks = keys::encode_tokens(&p.keys, &session.modes());
    write_input(&session, &chunks, after).await
}

pub async fn send_line(ctx: &Context, p: TextParams) -> OpResult {
    let session = ctx.registry.get(&p.sid)?;
    let modes = session.modes();
    let text = if p.text.contains('\n') {
        keys::encode_paste(&p.text, &modes)
    } else {
        keys::encode_text(&p.text, &modes)
    };
    let enter = keys::encode_tokens(&["Enter"], &modes);
    let mut chunks = vec![text];
    chunks.extend(enter);
    write_input(
        &session,
        &chunks,
        After::from_params(p.settle_ms, p.settle_timeout_ms)?,
    )
    .await
}

pub async fn type_text(ctx: &Context, p: TextParams) -> OpResult {
    let session = ctx.registry.get(&p.sid)?;
    let modes = session.modes();
    let bytes = if p.text.contains('\n') {
        keys::encode_paste(&p.text, &modes)
    } else {
        keys::encode_text(&p.text, &modes)
    };
    write_input(
        &session,
        &[bytes],
        After::from_params(p.settle_ms, p.settle_timeout_ms)?,
    )
    .await
}
