//! Running the steps of a call against a live app: keys and mouse events go through the pty exactly as
//! a terminal would send them; the probe only checks where a click would land and says when the app has
//! settled.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::time::Instant;

use screenpilot_screen::keys::{self, KeyToken, Modifiers};
use screenpilot_screen::mouse::{self, MouseButton};
use screenpilot_screen::{CellPos, Size};
use screenpilot_session::SessionError;

use super::app::TextualApp;
use super::link::{Link, LinkError};
use super::params::{Pointer, Step};
use super::shots::{self, Shot};
use crate::ops::kit::error::{ErrorCode, OpError};

/// The longest one settle may take; an app busy for longer is reported, and the run goes on.
const SETTLE_LIMIT: Duration = Duration::from_secs(10);
/// Slack over the probe's own limit before the daemon stops waiting for its answer.
const ANSWER_SLACK: Duration = Duration::from_secs(2);

/// Why a step stopped the run.
pub enum StepError {
    /// The app ended (perhaps as the step intended).
    Exited,
    Failed(OpError),
}

impl From<OpError> for StepError {
    fn from(e: OpError) -> Self {
        StepError::Failed(e)
    }
}

/// Drives one app for the length of a call.
pub struct Driver<'a> {
    pub app: &'a TextualApp,
    pub link: &'a mut Link,
    deadline: Instant,
    /// Things the caller should know that did not stop the run (an app that never went idle).
    pub warnings: Vec<String>,
    pub shots: Vec<Shot>,
    /// When the last step's input reached the app: a pause counts from there, so the time the app
    /// spent settling after that step (a Button's pressed look, an animation) counts toward it.
    input_at: Option<Instant>,
}

impl<'a> Driver<'a> {
    pub fn new(app: &'a TextualApp, link: &'a mut Link, deadline: Instant) -> Driver<'a> {
        Driver {
            app,
            link,
            deadline,
            warnings: Vec::new(),
            shots: Vec::new(),
            input_at: None,
        }
    }

    fn limit(&self) -> Duration {
        SETTLE_LIMIT.min(self.deadline.saturating_duration_since(Instant::now()))
    }

    /// A request to the probe; a refusal becomes an error for `field`.
    pub async fn ask(&mut self, op: &str, fields: Value, field: &str) -> Result<Value, StepError> {
        let limit = self.limit() + ANSWER_SLACK;
        match self.link.request(op, fields, limit).await {
            Ok(answer) => Ok(answer),
            Err(LinkError::Exited(_)) => Err(StepError::Exited),
            Err(LinkError::Probe { code, .. }) if code == "app_exited" => Err(StepError::Exited),
            Err(LinkError::Timeout) => Err(OpError::new(
                ErrorCode::ProbeTimeout,
                format!(
                    "{field}: the app did not answer {op} within {} s",
                    limit.as_secs()
                ),
            )
            .into()),
            Err(LinkError::Probe { code, message }) => Err(OpError {
                code: if code == "invalid_selector" || code == "probe_failed" {
                    ErrorCode::parse(&code)
                } else {
                    ErrorCode::parse(&format!("widget_{code}"))
                },
                message: format!("{field}: {message}"),
                field: Some(field.to_owned()),
            }
            .into()),
            Err(LinkError::Io(message)) => {
                Err(OpError::new(ErrorCode::ProbeFailed, format!("{field}: {message}")).into())
            }
        }
    }

    /// Wait until the app is idle and its screen drawn (bounded): everything sent so far handled,
    /// short timers fired, animations and scrolls finished, and with `size` the layout at that size.
    pub async fn settle(&mut self, size: Option<Size>, what: &str) -> Result<(), StepError> {
        self.settle_with(size, true, what).await
    }

    /// With `paint` false: only until the app has handled the input (its queues are empty).
    async fn settle_with(
        &mut self,
        size: Option<Size>,
        paint: bool,
        what: &str,
    ) -> Result<(), StepError> {
        let limit = self.limit();
        let fields = json!({
            "limit_ms": limit.as_millis() as u64,
            "size": size.map(|s| [s.cols, s.rows]),
            "paint": paint,
        });
        let answer = self.ask("settle", fields, what).await;
        match answer {
            Ok(answer) if answer["settled"] == Value::Bool(true) => Ok(()),
            Ok(answer) => {
                let reason = answer["reason"].as_str().unwrap_or("it did not settle");
                self.warnings.push(format!("{what}: {reason}"));
                Ok(())
            }
            Err(StepError::Failed(e)) => {
                self.warnings.push(e.message);
                Ok(())
            }
            Err(exited) => Err(exited),
        }
    }

    /// Send input bytes to the app.
    async fn send(&mut self, writes: &[Vec<u8>]) -> Result<(), StepError> {
        match self.app.session.write(writes).await {
            Ok(()) => Ok(()),
            Err(SessionError::Exited(_)) => Err(StepError::Exited),
            Err(e) => Err(OpError::from(e).into()),
        }
    }

    /// Run one step, then settle. `field` names it in errors (`actions[2]`).
    pub async fn run(&mut self, step: &Step, field: &str) -> Result<(), StepError> {
        let input_at = self.input_at.take();
        match step {
            Step::Press(keys) => {
                // One key at a time, each handled before the next: Textual resolves bindings where a
                // key ends up after bubbling, so keys sent at once could be handled out of order.
                for (i, key) in keys.iter().enumerate() {
                    let token = self.key_token(key, field).await?;
                    let writes = [keys::encode(&token, &self.app.session.modes())];
                    self.send(&writes).await?;
                    if i + 1 == keys.len() {
                        self.input_at = Some(Instant::now());
                    }
                    self.settle_with(None, i + 1 == keys.len(), field).await?;
                }
                Ok(())
            }
            Step::Pointer(pointer) => self.pointer(pointer, field).await,
            Step::Pause(duration) => {
                // A pause the caller asked for, not synchronisation, counted from the last input
                // as Textual's Pilot counts it: click, then pause(0.6).
                let from = input_at.unwrap_or_else(Instant::now);
                tokio::time::sleep_until(from + *duration).await;
                self.settle(None, field).await
            }
            Step::Resize(size) => {
                self.app
                    .session
                    .resize(*size)
                    .await
                    .map_err(|e| OpError::invalid(field, e.to_string()))?;
                self.input_at = Some(Instant::now());
                self.settle(Some(*size), field).await
            }
            Step::Screenshot => {
                // Takes no time the app would notice: a pause after it still counts from the input.
                self.input_at = input_at;
                let shot = shots::write_beside(&self.app.app, &self.app.session)?;
                self.shots.push(shot);
                Ok(())
            }
        }
    }

    /// A key as Textual names it, as a token the encoder knows. Textual's character names that our
    /// grammar lacks ("full_stop", "exclamation_mark", "pound_sign") are looked up in the app's own
    /// Textual; a name still unknown is refused, never typed as the text of its name.
    async fn key_token(&mut self, key: &str, field: &str) -> Result<KeyToken, StepError> {
        let not_a_key =
            |token: &KeyToken| matches!(token, KeyToken::Text(t) if t.chars().count() > 1);
        let token = keys::parse_token(key);
        if !not_a_key(&token) {
            return Ok(token);
        }
        let (held, name) = match key.rsplit_once('+') {
            Some((held, name)) if !held.is_empty() && !name.is_empty() => (Some(held), name),
            _ => (None, key),
        };
        let answer = self.ask("key", json!({ "name": name }), field).await?;
        if let Some(ch) = answer["character"].as_str() {
            let token = keys::parse_token(&match held {
                Some(held) => format!("{held}+{ch}"),
                None => ch.to_owned(),
            });
            if !not_a_key(&token) {
                return Ok(token);
            }
        }
        Err(OpError::invalid(
            field,
            format!(
                "press: {key:?} is not a key. Keys are Textual's names (tab, enter, escape, up, home, f1, \
                 space, ctrl+c, shift+tab, full_stop, question_mark, ...) or single characters (\"a\", \
                 \"!\"); to type a word, list its characters: [\"h\", \"i\"]"
            ),
        )
        .into())
    }

    /// A click or hover: only where the probe confirms the widget itself would receive it.
    async fn pointer(&mut self, p: &Pointer, field: &str) -> Result<(), StepError> {
        let fields = json!({ "selector": p.selector, "offset": p.offset });
        let place = self.ask("region", fields, field).await?;
        let (Some(x), Some(y)) = (place["x"].as_u64(), place["y"].as_u64()) else {
            return Err(OpError::new(
                ErrorCode::ProbeFailed,
                format!("{field}: the probe gave no position for {}", p.selector),
            )
            .into());
        };
        let pos = CellPos::new(x as u16, y as u16);
        let modes = self.app.session.modes();
        let writes = if p.hover {
            mouse::move_to(pos, MouseButton::None, Modifiers::NONE, &modes)
        } else {
            mouse::click(pos, p.button, p.count, Modifiers::NONE, &modes)
        }
        .map_err(|e| OpError::new(ErrorCode::MouseUnavailable, format!("{field}: {e}")))?;
        if writes.is_empty() {
            return Err(OpError::new(
                ErrorCode::MouseUnavailable,
                format!(
                    "{field}: the app does not follow pointer motion, so a hover cannot reach it"
                ),
            )
            .into());
        }
        self.send(&writes).await?;
        self.input_at = Some(Instant::now());
        self.settle(None, field).await
    }
}
