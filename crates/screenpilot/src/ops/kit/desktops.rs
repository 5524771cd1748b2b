//! Desktop sessions as the other operations see them: what one is now, how it ends, and the sid space
//! and session limit they share with terminals.

use std::sync::Arc;

use screenpilot_desktop::process::ExitStatus;
use screenpilot_desktop::DesktopInfo;

use super::common::Context;

/// `alive` for a desktop: what it is now; `None` when `sid` is not one.
pub(crate) fn info(ctx: &Context, sid: &str) -> Option<DesktopInfo> {
    Some(ctx.desktops.get(sid)?.info())
}

/// `close` for a desktop: how its program ended; `None` when `sid` is not one.
pub(crate) async fn close(ctx: &Context, sid: &str) -> Option<Option<ExitStatus>> {
    ctx.accessibility.forget(sid);
    let (_, status) = ctx.desktops.close(sid).await?;
    Some(status)
}

/// Desktops as the terminal registry sees them: they share its sid space and session limit.
pub(crate) struct DesktopPeers(pub(crate) Arc<screenpilot_desktop::DesktopRegistry>);

impl screenpilot_session::PeerSessions for DesktopPeers {
    fn running(&self) -> Vec<String> {
        self.0.running()
    }

    fn has(&self, sid: &str) -> bool {
        self.0.contains(sid)
    }
}
