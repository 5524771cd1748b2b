mod common;

pub use common::Context;
