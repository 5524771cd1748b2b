//! Also hosts of their own: network namespaces with a private sshd and exec bridges.

#[path = "../remote_e2e/main.rs"]
mod remote;
