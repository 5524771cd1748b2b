/// Plain data: the state of a running server.
pub struct WatchServer {
    pub port: u16,
}
