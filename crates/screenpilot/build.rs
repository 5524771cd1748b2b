//! Link the `screenpilot` binary as a position-dependent executable: the dynamic loader then has no
//! relative relocations to apply at start (about 22,000 in a PIE build, touching ~110 pages), which is a
//! measurable share of a one-shot CLI call (see BENCHMARKS.md, CLI round trip).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
