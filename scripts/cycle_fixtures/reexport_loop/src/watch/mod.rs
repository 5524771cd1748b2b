mod running;

pub use running::WatchServer;

use crate::ops::Context;

pub fn start(ctx: &Context) -> &WatchServer {
    &ctx.watch
}
