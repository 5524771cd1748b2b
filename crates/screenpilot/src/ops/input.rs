//! Sending keys, text and mouse events to a session's program.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use screenpilot_screen::keys;
use screenpilot_session::{hash_hex, Session};

use super::{base, schema_of, Context, OpError, OpResult, OperationDef};

/// Parameters of `send_keys`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendKeysParams {
    pub sid: String,
    /// Key tokens, sent in order, e.g. ["Down", "Down", "Enter"], ["C-c"], ["ctrl+s"], ["M-x"].
    pub keys: Vec<String>,
}

/// Parameters of `send_line` and `type`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextParams {
    pub sid: String,
    pub text: String,
}

pub const SEND_KEYS: OperationDef = OperationDef {
    name: "send_keys",
    description: "Press keys in a session, in order. Tokens: Enter Return Tab BackTab Space Backspace Delete Escape Esc Up Down Left Right Home End PageUp PageDown Insert F1-F12 KP0-KP9 KPEnter; \
C-x or ^x (Ctrl), M-x (Alt), S- (Shift), combinable and usable on named keys (C-Up, S-Tab, C-M-Delete); Textual style (ctrl+c, shift+tab) too. \
Any other token is typed as literal text (not an error). Keys are encoded for the app's current modes (application cursor keys, kitty keyboard). \
Returns {ok, sid, hash, visual_hash}: the screen hashes from just before the keys, ready as the baseline for wait_change/wait_visual_change. \
Example: {\"sid\": \"vim\", \"keys\": [\"Escape\", \":wq\", \"Enter\"]}.",
    schema: schema_of::<SendKeysParams>,
};

pub const SEND_LINE: OperationDef = OperationDef {
    name: "send_line",
    description: "Type text, then press Enter as a separate write (apps can drop an Enter glued to text): the usual way to run a command. \
Returns {ok, sid, hash, visual_hash} (hashes from before the input). Follow with wait_for on the expected output or prompt. \
Example: {\"sid\": \"sh\", \"text\": \"ls -l\"}.",
    schema: schema_of::<TextParams>,
};

pub const TYPE: OperationDef = OperationDef {
    name: "type",
    description: "Type text without pressing Enter, e.g. to fill a field. Multi-line text is sent as a bracketed paste when the app enabled it (else newlines are Enter). \
Returns {ok, sid, hash, visual_hash} (hashes from before the input). Example: {\"sid\": \"form\", \"text\": \"alice@example.com\"}.",
    schema: schema_of::<TextParams>,
};

/// Write input and answer with the screen hashes from just before it.
pub(super) async fn write_input(session: &Session, chunks: &[Vec<u8>]) -> OpResult {
    let (hash, visual_hash) = session.with_screen(|s| (s.hash(), s.visual_hash()));
    session.write(chunks).await?;
    let mut out = base(session.sid.as_str());
    out.insert("hash".into(), hash_hex(hash).into());
    out.insert("visual_hash".into(), hash_hex(visual_hash).into());
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
    let chunks = keys::encode_tokens(&p.keys, &session.modes());
    write_input(&session, &chunks).await
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
    write_input(&session, &chunks).await
}

pub async fn type_text(ctx: &Context, p: TextParams) -> OpResult {
    let session = ctx.registry.get(&p.sid)?;
    let modes = session.modes();
    let bytes = if p.text.contains('\n') {
        keys::encode_paste(&p.text, &modes)
    } else {
        keys::encode_text(&p.text, &modes)
    };
    write_input(&session, &[bytes]).await
}
