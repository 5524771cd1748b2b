pub fn bottom() -> u32 {
    1
}
