//! Every desktop's accessibility state, kept in the context: the bus (reached once, on first use),
//! the refs handed out, and the latest snapshot. What is done with them is in [`super::accessibility`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use screenpilot_a11y::{Bus, Refs, Snapshot};
use screenpilot_desktop::Desktop;

/// Every desktop's tree state, by sid.
#[derive(Default)]
pub struct Accessibility {
    pub(crate) desktops: Mutex<HashMap<String, Arc<DesktopTree>>>,
}

/// One desktop's.
pub struct DesktopTree {
    /// The desktop it belongs to (display, start, server): a sid used again by a new desktop gets a
    /// new tree.
    pub(crate) display: String,
    pub(crate) bus: tokio::sync::OnceCell<Result<Arc<Bus>, String>>,
    pub(crate) refs: Mutex<Refs>,
    pub(crate) last: Mutex<Option<Arc<Snapshot>>>,
    /// Text read from windows' pixels, by a hash of the pixels read (most recent last): a window
    /// that looks as it did is not read again.
    pub(crate) read_pixels: Mutex<Vec<(u64, Arc<Vec<screenpilot_desktop::ocr::Phrase>>)>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Accessibility {
    /// The tree state of `desktop`.
    pub fn of(&self, desktop: &Desktop) -> Arc<DesktopTree> {
        let mut desktops = lock(&self.desktops);
        let this = identity(desktop);
        let tree = desktops
            .entry(desktop.sid.clone())
            .or_insert_with(|| Arc::new(DesktopTree::new(this.clone())));
        if tree.display != this {
            *tree = Arc::new(DesktopTree::new(this));
        }
        tree.clone()
    }

    /// Forget a closed desktop.
    pub fn forget(&self, sid: &str) {
        lock(&self.desktops).remove(sid);
    }

    /// Which other desktop handed out ref `id`, for the error of a ref given to the wrong one.
    pub(crate) fn owner_of(&self, id: u64, except: &str) -> Option<String> {
        lock(&self.desktops)
            .iter()
            .filter(|(sid, _)| sid.as_str() != except)
            .find(|(_, tree)| lock(&tree.refs).knows(id))
            .map(|(sid, _)| sid.clone())
    }
}

/// What tells one desktop from a later one of the same sid (and maybe display number).
fn identity(desktop: &Desktop) -> String {
    let info = desktop.info();
    format!("{} {} {:?}", desktop.display, info.started, info.pid)
}

impl DesktopTree {
    pub(crate) fn new(display: String) -> DesktopTree {
        DesktopTree {
            display,
            bus: tokio::sync::OnceCell::new(),
            refs: Mutex::new(Refs::default()),
            last: Mutex::new(None),
            read_pixels: Mutex::new(Vec::new()),
        }
    }

    /// The latest snapshot, if one was taken.
    pub fn last(&self) -> Option<Arc<Snapshot>> {
        lock(&self.last).clone()
    }
}
