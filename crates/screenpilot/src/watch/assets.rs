//! The page's files, embedded in the binary: nothing is fetched from the internet, and the page works
//! on a machine without network. xterm.js is vendored unchanged from npm (`assets/xterm/VERSION`).

/// A file the server answers with.
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
}

macro_rules! asset {
    ($path:literal, $file:literal, $type:literal) => {
        Asset {
            path: $path,
            content_type: $type,
            body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/", $file)),
        }
    };
}

/// Every file of the page, by the path it is served at.
pub const ASSETS: &[Asset] = &[
    asset!("/", "watch/index.html", "text/html; charset=utf-8"),
    asset!(
        "/assets/watch.js",
        "watch/watch.js",
        "text/javascript; charset=utf-8"
    ),
    asset!(
        "/assets/watch.css",
        "watch/watch.css",
        "text/css; charset=utf-8"
    ),
    asset!(
        "/assets/xterm.js",
        "xterm/xterm.js",
        "text/javascript; charset=utf-8"
    ),
    asset!(
        "/assets/xterm.css",
        "xterm/xterm.css",
        "text/css; charset=utf-8"
    ),
    asset!(
        "/assets/xterm-LICENSE.txt",
        "xterm/LICENSE",
        "text/plain; charset=utf-8"
    ),
];

/// The file served at `path`.
pub fn find(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.path == path)
}
