//! Three files in a row: mod.rs names a, a names b.
mod a;
mod b;

pub fn top() -> u32 {
    a::middle()
}
