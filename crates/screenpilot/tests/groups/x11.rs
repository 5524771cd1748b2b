//! Also a private Xvfb desktop (Xvfb, openbox, xterm, GTK and Qt apps, AT-SPI).

#[path = "../attach_e2e.rs"]
mod attach;
#[path = "../computer_e2e.rs"]
mod computer;
#[path = "../desktop_computer_e2e.rs"]
mod desktop_computer;
#[path = "../desktop_tasks_e2e.rs"]
mod desktop_tasks;
#[path = "../desktop_waits_e2e.rs"]
mod desktop_waits;
#[path = "../docs_e2e.rs"]
mod docs;
#[path = "../environment_e2e.rs"]
mod environment;
#[path = "../fuzz_requests.rs"]
mod fuzz_requests;
#[path = "../orphans_e2e.rs"]
mod orphans;
#[path = "../steps_e2e.rs"]
mod steps;
#[path = "../watch_e2e.rs"]
mod watch;
