mod ops;
mod watch;
