//! The desktops of one daemon: unique ids, the running-session limit (shared with terminal sessions,
//! which the caller counts), lookup, closing and idle expiry.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use crate::desktop::{Desktop, DesktopInfo};
use crate::error::{DesktopError, Result};
use crate::process::ExitStatus;

#[derive(Default)]
struct State {
    desktops: BTreeMap<String, Arc<Desktop>>,
    /// Ids of desktops still starting: taken, and counted against the limit.
    starting: BTreeSet<String>,
}

pub struct DesktopRegistry {
    state: Mutex<State>,
    counter: AtomicU64,
    expiry_started: AtomicBool,
    /// Counts desktops added and removed, for those who show the list live (the watch page).
    changes: tokio::sync::watch::Sender<u64>,
}

/// A sid held while its desktop starts. Dropping it without [`DesktopRegistry::insert`] frees the sid.
pub struct Reservation {
    sid: String,
    registry: Weak<DesktopRegistry>,
}

impl Reservation {
    pub fn sid(&self) -> &str {
        &self.sid
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.upgrade() {
            registry.state().starting.remove(&self.sid);
        }
    }
}

/// Sessions that are not desktops, as the caller sees them.
pub struct OtherSessions<'a> {
    /// Ids of running sessions of other kinds.
    pub running: Vec<String>,
    /// Is this sid taken by a session of another kind?
    pub taken: &'a dyn Fn(&str) -> bool,
    /// The most running sessions of all kinds.
    pub max_sessions: usize,
}

impl DesktopRegistry {
    pub fn new() -> Arc<DesktopRegistry> {
        Arc::new(DesktopRegistry {
            state: Mutex::default(),
            counter: AtomicU64::default(),
            expiry_started: AtomicBool::default(),
            changes: tokio::sync::watch::channel(0).0,
        })
    }

    /// A receiver that wakes whenever a desktop is added or removed.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Take a sid (the given one, or a new "desktop-N") within the session limit.
    pub fn reserve(
        self: &Arc<Self>,
        requested: Option<&str>,
        others: &OtherSessions<'_>,
    ) -> Result<Reservation> {
        let mut state = self.state();
        let free = |state: &State, sid: &str| {
            !state.desktops.contains_key(sid)
                && !state.starting.contains(sid)
                && !(others.taken)(sid)
        };
        if let Some(sid) = requested {
            if !free(&state, sid) {
                return Err(DesktopError::Duplicate(sid.to_owned()));
            }
        }
        let mut running: Vec<String> = others.running.clone();
        running.extend(
            state
                .desktops
                .values()
                .filter(|d| d.alive())
                .map(|d| d.sid.clone()),
        );
        running.extend(state.starting.iter().cloned());
        if running.len() >= others.max_sessions {
            return Err(DesktopError::Limit(format!(
                "limit: {} sessions are running, the most allowed (running: {}); close one first, or raise the limit with SCREENPILOT_MAX_SESSIONS",
                running.len(),
                running.join(", ")
            )));
        }
        let sid = match requested {
            Some(sid) => sid.to_owned(),
            None => loop {
                let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
                let candidate = format!("desktop-{n}");
                if free(&state, &candidate) {
                    break candidate;
                }
            },
        };
        state.starting.insert(sid.clone());
        Ok(Reservation {
            sid,
            registry: Arc::downgrade(self),
        })
    }

    /// Register a started desktop under its reservation.
    pub fn insert(&self, reservation: Reservation, desktop: Arc<Desktop>) {
        let mut state = self.state();
        state.starting.remove(&reservation.sid);
        state.desktops.insert(reservation.sid.clone(), desktop);
        self.changes.send_modify(|n| *n += 1);
    }

    pub fn get(&self, sid: &str) -> Option<Arc<Desktop>> {
        self.state().desktops.get(sid).cloned()
    }

    /// Is this sid a desktop (or one being started)?
    pub fn contains(&self, sid: &str) -> bool {
        let state = self.state();
        state.desktops.contains_key(sid) || state.starting.contains(sid)
    }

    /// Ids of desktops that are running or starting.
    pub fn running(&self) -> Vec<String> {
        let state = self.state();
        state
            .desktops
            .values()
            .filter(|d| d.alive())
            .map(|d| d.sid.clone())
            .chain(state.starting.iter().cloned())
            .collect()
    }

    pub fn list(&self) -> Vec<DesktopInfo> {
        let desktops: Vec<Arc<Desktop>> = self.state().desktops.values().cloned().collect();
        desktops.iter().map(|d| d.info()).collect()
    }

    /// Close a desktop and forget it; `None` when there is no such desktop.
    pub async fn close(&self, sid: &str) -> Option<(DesktopInfo, Option<ExitStatus>)> {
        let desktop = self.state().desktops.remove(sid)?;
        self.changes.send_modify(|n| *n += 1);
        let status = desktop.close().await;
        Some((desktop.info(), status))
    }

    /// Close every desktop (daemon shutdown).
    pub async fn close_all(&self) {
        let all: Vec<Arc<Desktop>> = std::mem::take(&mut self.state().desktops)
            .into_values()
            .collect();
        self.changes.send_modify(|n| *n += 1);
        for desktop in all {
            desktop.close().await;
        }
    }

    /// Start closing desktops idle for longer than `idle` (once; later calls do nothing). The task
    /// sleeps until the next desktop could expire and ends when the registry is dropped.
    pub fn start_expiry(self: &Arc<Self>, idle: Duration) {
        if self.expiry_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak = Arc::downgrade(self);
        tokio::spawn(async move {
            loop {
                let Some(registry) = weak.upgrade() else {
                    return;
                };
                let desktops: Vec<Arc<Desktop>> =
                    registry.state().desktops.values().cloned().collect();
                let mut next = idle;
                for desktop in desktops {
                    let idle_for = desktop.idle_for();
                    if idle_for >= idle {
                        registry.close(&desktop.sid).await;
                    } else {
                        next = next.min(idle - idle_for);
                    }
                }
                drop(registry);
                tokio::time::sleep(next.max(Duration::from_millis(100))).await;
            }
        });
    }
}
