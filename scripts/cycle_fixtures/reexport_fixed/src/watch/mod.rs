mod server;

pub use server::start;
