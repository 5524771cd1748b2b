mod ops;
mod state;
mod watch;
