use crate::ops::Context;
use crate::state::WatchServer;

pub fn start(ctx: &Context) -> &WatchServer {
    &ctx.watch
}
