//! The machinery operations share, below every operation: what an operation is ([`operation`]), the
//! context it runs in ([`common`]), errors, how results read ([`view`]), and the engines the
//! operations are built from (waiting `until` a condition, the steps of a call, writing input,
//! reading screens and desktops). Nothing here names an operation; no operation imports another.

pub(crate) mod accessibility;
pub(crate) mod answers;
pub(crate) mod blocking;
pub(crate) mod button;
pub(crate) mod common;
pub(crate) mod desktop_waits;
pub(crate) mod desktops;
pub(crate) mod display;
pub(crate) mod error;
pub(crate) mod journal;
pub(crate) mod look;
pub(crate) mod marks;
pub(crate) mod model_size;
pub(crate) mod operation;
pub(crate) mod picture;
pub(crate) mod program;
pub(crate) mod screen;
pub(crate) mod secrets;
pub(crate) mod step_table;
pub(crate) mod timing;
pub(crate) mod trees;
pub(crate) mod until;
pub(crate) mod view;
pub(crate) mod walk;
pub(crate) mod write;
