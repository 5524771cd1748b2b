/// What every operation gets; it names the watch server's state through `watch`'s re-export.
pub struct Context {
    pub watch: crate::watch::WatchServer,
}
