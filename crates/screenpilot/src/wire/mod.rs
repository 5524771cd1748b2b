//! What both sides of the daemon's socket share, below everything else: the request and answer
//! lines ([`protocol`]), the errors they carry ([`error`]), where the daemon's socket is
//! ([`paths`]) and how a host is named ([`host`]). The client side (`client/`) builds on this alone;
//! nothing here knows an operation.

pub mod build;
pub mod error;
pub mod host;
pub mod paths;
pub mod protocol;
