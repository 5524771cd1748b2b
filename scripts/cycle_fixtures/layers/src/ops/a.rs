pub fn middle() -> u32 {
    super::b::bottom() + 1
}
