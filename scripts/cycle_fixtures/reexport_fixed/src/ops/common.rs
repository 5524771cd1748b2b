/// What every operation gets; the watch server's state lives below both `ops` and `watch`.
pub struct Context {
    pub watch: crate::state::WatchServer,
}
