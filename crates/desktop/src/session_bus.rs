//! A private desktop's own D-Bus session bus, so its applications expose their accessibility trees
//! to us and to nobody else: `dbus-daemon --session` started beside Xvfb, its address read from a
//! pipe the moment it accepts connections (no polling), ended with the desktop.
//!
//! The first `org.a11y.Bus.GetAddress` on it D-Bus-activates `at-spi-bus-launcher` (at-spi2-core),
//! which starts the accessibility bus; its socket lands in the desktop's private directory (the
//! daemon's `XDG_RUNTIME_DIR`), and ends with the session bus. Applications get the address and the
//! switches that make each toolkit expose its tree ([`SessionBus::env`]).

use std::ffi::OsString;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::Duration;

use crate::error::{DesktopError, Result};
use crate::process::{line_pipe, log_tail, Child, Launch};

/// A running session bus.
pub struct SessionBus {
    pub address: String,
    pub(crate) child: Child,
}

/// The switches that make toolkits expose their trees: GTK 3 unless `NO_AT_BRIDGE` says not to,
/// GTK 4 with `GTK_A11Y=atspi`, Qt with `QT_LINUX_ACCESSIBILITY_ALWAYS_ON`, Chromium and Electron
/// with `ACCESSIBILITY_ENABLED` (Debian's chromium launcher also reads `CHROMIUM_FLAGS`), Gecko
/// (Firefox, Thunderbird) with `GNOME_ACCESSIBILITY`.
const TOOLKIT_SWITCHES: &[(&str, &str)] = &[
    ("NO_AT_BRIDGE", "0"),
    ("GTK_A11Y", "atspi"),
    ("QT_ACCESSIBILITY", "1"),
    ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1"),
    ("ACCESSIBILITY_ENABLED", "1"),
    ("GNOME_ACCESSIBILITY", "1"),
    ("CHROMIUM_FLAGS", "--force-renderer-accessibility"),
];

impl SessionBus {
    /// Start a session bus for the display that `display_env` points programs at, with its runtime
    /// directory under `dir`. `None` when this
    /// machine has no `dbus-daemon` (the desktop then has no accessibility tree; everything else
    /// works).
    pub async fn launch(
        dir: &Path,
        display_env: Vec<(OsString, OsString)>,
        limit: Duration,
    ) -> Result<Option<SessionBus>> {
        let runtime = dir.join("run");
        std::fs::create_dir_all(&runtime)
            .map_err(|e| DesktopError::Io(format!("cannot create {}: {e}", runtime.display())))?;
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700));
        }
        let (read_end, write_end) =
            line_pipe().map_err(|e| DesktopError::Io(format!("cannot create a pipe: {e}")))?;
        let log = dir.join("session-bus.log");
        let spawned = Child::spawn(Launch {
            argv: vec![
                "dbus-daemon".into(),
                "--session".into(),
                "--nofork".into(),
                "--nopidfile".into(),
                format!("--print-address={}", write_end.as_raw_fd()),
            ],
            // What it starts (the accessibility registry) opens the display too, with its key.
            env: display_env
                .into_iter()
                .filter(|(key, _)| key != "XDG_RUNTIME_DIR")
                .chain([(OsString::from("XDG_RUNTIME_DIR"), runtime.into_os_string())])
                .collect(),
            env_clear: false,
            cwd: None,
            log: log.clone(),
            keep_fd: Some(write_end.as_raw_fd()),
        })
        .await;
        let child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(DesktopError::Io(format!("cannot start dbus-daemon: {e}")));
            }
        };
        // Only the daemon holds the write end now: its exit reads as end of file.
        drop(write_end);
        match tokio::time::timeout(limit, crate::process::first_line(read_end)).await {
            Ok(Ok(Some(address))) if !address.is_empty() => Ok(Some(SessionBus { address, child })),
            Ok(_) => {
                child.stop(Duration::from_millis(200)).await;
                Err(DesktopError::Io(format!(
                    "dbus-daemon did not start; its log says: {}",
                    log_tail(&log, 600)
                )))
            }
            Err(_) => {
                child.stop(Duration::from_millis(200)).await;
                Err(DesktopError::Timeout {
                    what: "starting the desktop's session bus".into(),
                    limit,
                })
            }
        }
    }

    /// What a program on the desktop gets: the bus, and the toolkits' switches.
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let mut env = vec![(
            OsString::from("DBUS_SESSION_BUS_ADDRESS"),
            OsString::from(&self.address),
        )];
        env.extend(
            TOOLKIT_SWITCHES
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        if let Some(java) = java_switch(std::env::var_os("JAVA_TOOL_OPTIONS")) {
            env.push((OsString::from("JAVA_TOOL_OPTIONS"), java));
        }
        env
    }
}

/// Where Debian's ATK wrapper for Java (libatk-wrapper-java) puts its classes.
const JAVA_ATK_WRAPPER: &str = "/usr/share/java/java-atk-wrapper.jar";

/// Java's switch, when this machine has the ATK wrapper: every JVM on the desktop loads it (on the
/// boot class path) as its assistive technology, so Swing and AWT programs expose their trees.
/// OpenJDK has accessibility off unless told; `JAVA_TOOL_OPTIONS` reaches every JVM whatever its
/// command line. The caller's own options (`existing`) are kept after ours.
fn java_switch(existing: Option<OsString>) -> Option<OsString> {
    if !std::path::Path::new(JAVA_ATK_WRAPPER).exists() {
        return None;
    }
    let mut options = OsString::from(format!(
        "-Xbootclasspath/a:{JAVA_ATK_WRAPPER} -Djavax.accessibility.assistive_technologies=org.GNOME.Accessibility.AtkWrapper"
    ));
    if let Some(existing) = existing.filter(|e| !e.is_empty()) {
        options.push(" ");
        options.push(existing);
    }
    Some(options)
}
