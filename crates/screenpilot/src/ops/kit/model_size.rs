//! How large a desktop screenshot a model is sent, per session (see `display.rs` for why).

use std::collections::HashMap;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_desktop::scale::{DEFAULT_MAX_LONG_EDGE, DEFAULT_MAX_PIXELS};

/// The largest screenshot a model is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelSize {
    /// Longest side in pixels.
    pub max_long_edge: u32,
    /// Most pixels in all.
    pub max_pixels: u64,
}

impl Default for ModelSize {
    /// Anthropic's limits (1568 px, about 1.15 MP); OpenAI's computer-use models take up to
    /// 1920x1080 but are trained on 1024x768-class screens, so these serve both.
    fn default() -> ModelSize {
        ModelSize {
            max_long_edge: DEFAULT_MAX_LONG_EDGE,
            max_pixels: DEFAULT_MAX_PIXELS,
        }
    }
}

/// Each desktop's screenshot size, as set at `desktop_start`.
#[derive(Default)]
pub struct ModelSizes(Mutex<HashMap<String, ModelSize>>);

impl ModelSizes {
    pub fn set(&self, sid: &str, size: ModelSize) {
        self.lock().insert(sid.to_owned(), size);
    }

    /// The size for `sid`: its own, else the default.
    pub fn get(&self, sid: &str) -> ModelSize {
        self.lock().get(sid).copied().unwrap_or_default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, ModelSize>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
