//! The registry of live sessions: creation within limits, lookup, listing, closing, idle expiry.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::error::{Result, SessionError};
use crate::leftovers::Records;
use crate::process;
use crate::session::{Session, SessionInfo};
use crate::spec::{Limits, SessionId, SpawnSpec};

/// How many running sessions the session-limit error names.
const LIMIT_ERROR_SIDS: usize = 10;

/// Sessions of other kinds (desktops) that share the sid space and the running-session limit with
/// terminal sessions.
pub trait PeerSessions: Send + Sync {
    /// Ids of the peer sessions that are running (or starting).
    fn running(&self) -> Vec<String>;
    /// Is this sid taken by a peer session?
    fn has(&self, sid: &str) -> bool;
}

pub struct Registry {
    sessions: Mutex<BTreeMap<SessionId, Arc<Session>>>,
    limits: Arc<Limits>,
    counter: AtomicU64,
    peers: std::sync::OnceLock<Arc<dyn PeerSessions>>,
    /// Set (under the sessions lock) when `close_all` begins: no session may start after its sweep.
    shutting_down: std::sync::atomic::AtomicBool,
    /// Where each live session is recorded, so that a daemon started after this one was killed can
    /// end what it left running (`leftovers`). Set once, by the daemon.
    records: std::sync::OnceLock<Records>,
    /// Counts sessions added and removed, for those who show the list live (the watch page).
    changes: tokio::sync::watch::Sender<u64>,
    /// The sessions a killed daemon before this one took with it, and whether a caller was told.
    lost: Mutex<Vec<crate::leftovers::Lost>>,
    /// Where sessions' holders start and listen, when sessions are to outlive this process.
    hold: std::sync::OnceLock<crate::held::HoldConfig>,
    /// Holders this process found and could not take over.
    refused: Mutex<Vec<String>>,
    /// The first caller was told of the lost sessions and the refused holders.
    told: std::sync::atomic::AtomicBool,
}

impl Registry {
    pub fn new(limits: Limits) -> Arc<Registry> {
        Arc::new(Registry {
            sessions: Mutex::new(BTreeMap::new()),
            limits: Arc::new(limits),
            counter: AtomicU64::new(0),
            peers: std::sync::OnceLock::new(),
            shutting_down: std::sync::atomic::AtomicBool::new(false),
            records: std::sync::OnceLock::new(),
            changes: tokio::sync::watch::channel(0).0,
            lost: Mutex::new(Vec::new()),
            hold: std::sync::OnceLock::new(),
            refused: Mutex::new(Vec::new()),
            told: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// The sessions a killed daemon before this one took with it (the daemon says so at start).
    pub fn set_lost(&self, lost: Vec<crate::leftovers::Lost>) {
        *self.lost.lock().unwrap_or_else(|p| p.into_inner()) = lost;
    }

    /// The sessions lost with the daemon before this one; `list` shows them for this daemon's life.
    pub fn lost(&self) -> Vec<crate::leftovers::Lost> {
        self.lost.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Once: the words that tell the first caller which sessions were lost, and which holders could
    /// not be taken over.
    pub fn take_lost_notice(&self) -> Option<String> {
        let lost = self.lost();
        let refused = self
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if (lost.is_empty() && refused.is_empty()) || self.told.swap(true, Ordering::AcqRel) {
            return None;
        }
        let mut said = Vec::new();
        if !lost.is_empty() {
            let named: Vec<String> = lost
                .iter()
                .map(|l| format!("{} ({})", l.sid, l.cmd))
                .collect();
            said.push(format!(
                "the daemon before this one was killed, and its sessions ended with it: {}; `list` shows them",
                named.join(", ")
            ));
        }
        if !refused.is_empty() {
            said.push(format!(
                "sessions left by the daemon before this one that it could not take over: {}",
                refused.join("; ")
            ));
        }
        Some(said.join(". "))
    }

    /// Start every session from now on with a holder of its own ([`crate::held`]), so that it
    /// outlives this process. Set once, before any session starts.
    pub fn use_holders(&self, config: crate::held::HoldConfig) {
        let _ = self.hold.set(config);
    }

    /// Whether sessions started here get holders ([`Registry::use_holders`]).
    pub fn holds(&self) -> bool {
        self.hold.get().is_some()
    }

    /// Take over the sessions whose holders a process before this one left (see
    /// [`Registry::use_holders`]); those that cannot be taken are left running, and named to the
    /// first caller ([`Registry::take_lost_notice`]). Returns how many were taken over.
    pub async fn adopt_held(&self) -> usize {
        let Some(config) = self.hold.get().cloned() else {
            return 0;
        };
        let found = tokio::task::spawn_blocking(move || crate::held::find(&config))
            .await
            .unwrap_or_default();
        let mut taken = 0;
        let mut refused = Vec::new();
        for held in found {
            let adopted = held.and_then(|held| Session::adopt(held, self.limits.clone()));
            match adopted {
                Ok(session) => {
                    let mut sessions = self.sessions();
                    if sessions.contains_key(&session.sid) {
                        refused.push(format!(
                            "a second session named '{}' (pid {})",
                            session.sid, session.pid
                        ));
                        continue;
                    }
                    sessions.insert(session.sid.clone(), session);
                    taken += 1;
                }
                Err(why) => {
                    eprintln!("screenpilot daemon: {why}");
                    refused.push(why);
                }
            }
        }
        *self.refused.lock().unwrap_or_else(|p| p.into_inner()) = refused;
        self.changes.send_modify(|n| *n += 1);
        taken
    }

    /// Record every session started from now on in `records` until it is closed. Set once.
    pub fn keep_records(&self, records: Records) {
        let _ = self.records.set(records);
    }

    fn forget_record(&self, session: &Session) {
        if let Some(records) = self.records.get() {
            records.remove(session.pid);
        }
    }

    /// Share the sid space and the session limit with sessions of another kind. Set once.
    pub fn set_peers(&self, peers: Arc<dyn PeerSessions>) {
        let _ = self.peers.set(peers);
    }

    fn peer_running(&self) -> Vec<String> {
        self.peers.get().map(|p| p.running()).unwrap_or_default()
    }

    fn peer_has(&self, sid: &SessionId) -> bool {
        self.peers.get().is_some_and(|p| p.has(sid.as_str()))
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn sessions(&self) -> MutexGuard<'_, BTreeMap<SessionId, Arc<Session>>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Start a session. Checks the session limit and sid uniqueness before anything runs.
    pub fn spawn(&self, spec: SpawnSpec) -> Result<Arc<Session>> {
        self.limits.check_size(spec.size, "cols/rows")?;
        let mut sessions = self.sessions();
        if self.shutting_down.load(Ordering::Acquire) {
            return Err(SessionError::Limit(
                "limit: the screenpilot daemon is shutting down; start the session again in a moment (a new daemon starts on demand)".into(),
            ));
        }
        let mut running: Vec<String> = sessions
            .values()
            .filter(|s| s.alive())
            .map(|s| s.sid.to_string())
            .collect();
        running.extend(self.peer_running());
        if running.len() >= self.limits.max_sessions {
            // A few names help pick one to close; all of them (hundreds) would drown the message.
            let shown = running.len().min(LIMIT_ERROR_SIDS);
            let mut names = running[..shown].join(", ");
            if running.len() > shown {
                names.push_str(&format!(
                    " and {} more; `list` shows all",
                    running.len() - shown
                ));
            }
            return Err(SessionError::Limit(format!(
                "limit: {} sessions are running, the most allowed (running: {names}); close one first, or raise the limit with SCREENPILOT_MAX_SESSIONS",
                running.len(),
            )));
        }
        // A session whose program has ended, with nothing of it left running, gives its sid up to
        // a new one: starting `py` again after python exited is what a model expects.
        if let Some(sid) = &spec.sid {
            let ended = sessions.get(sid).is_some_and(|old| {
                !old.alive() && old.finished() && process::session_members(old.pid).is_empty()
            });
            if ended {
                if let Some(old) = sessions.remove(sid) {
                    self.forget_record(&old);
                    tokio::spawn(async move { old.release().await });
                }
            }
        }
        let sid = match &spec.sid {
            Some(sid) if sessions.contains_key(sid) || self.peer_has(sid) => {
                return Err(SessionError::DuplicateSession(sid.to_string()))
            }
            Some(sid) => sid.clone(),
            None => loop {
                let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
                let candidate = SessionId::generate(&spec.argv[0], n);
                if !sessions.contains_key(&candidate) && !self.peer_has(&candidate) {
                    break candidate;
                }
            },
        };
        // What the session is known as, should a killed daemon take it along: its command, cut.
        let mut command = shell_words::join(&spec.argv);
        if let Some((cut, _)) = command.char_indices().nth(200) {
            command.truncate(cut);
        }
        let session = Session::start(sid.clone(), spec, self.limits.clone(), self.hold.get())?;
        // A held session outlives this process: nothing of it is a leftover to end.
        if let Some(records) = self.records.get().filter(|_| !session.is_held()) {
            let named = crate::leftovers::Lost {
                sid: sid.to_string(),
                cmd: command,
            };
            records.add(session.pid, named);
        }
        sessions.insert(sid, session.clone());
        self.changes.send_modify(|n| *n += 1);
        Ok(session)
    }

    /// The session named `sid`; a malformed sid and an unknown one are different errors.
    pub fn get(&self, sid: &str) -> Result<Arc<Session>> {
        let id = SessionId::parse(sid)?;
        self.sessions()
            .get(&id)
            .cloned()
            .ok_or_else(|| SessionError::UnknownSession(sid.to_owned()))
    }

    /// A receiver that wakes whenever a session is added or removed (not on a session's own updates:
    /// [`Session::subscribe`] has those).
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub fn list(&self) -> Vec<SessionInfo> {
        let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
        sessions.iter().map(|s| s.info()).collect()
    }

    /// Close a session: end its processes and forget it. Returns its final state.
    pub async fn close(&self, sid: &str) -> Result<SessionInfo> {
        let id = SessionId::parse(sid)?;
        let session = self
            .sessions()
            .remove(&id)
            .ok_or_else(|| SessionError::UnknownSession(sid.to_owned()))?;
        self.changes.send_modify(|n| *n += 1);
        let escaped = session.close().await;
        self.forget_record(&session);
        Ok(SessionInfo {
            escaped,
            ..session.info()
        })
    }

    /// Close every session (daemon shutdown), all at once: each may spend its grace periods waiting for
    /// programs that ignore HUP and TERM, and those waits overlap instead of adding up. With `keep`,
    /// held sessions are left to their holders, running, for the next daemon.
    pub async fn close_all(&self, keep: bool) {
        let all = {
            let mut sessions = self.sessions();
            self.shutting_down.store(true, Ordering::Release);
            std::mem::take(&mut *sessions)
        };
        self.changes.send_modify(|n| *n += 1);
        let mut closing = tokio::task::JoinSet::new();
        for session in all.into_values().filter(|s| !(keep && s.is_held())) {
            closing.spawn(async move {
                session.close().await;
                session
            });
        }
        while let Some(closed) = closing.join_next().await {
            if let Ok(session) = closed {
                self.forget_record(&session);
            }
        }
    }

    /// Close sessions idle for longer than the limit, forever. The task sleeps until the next session
    /// could expire; a session touched meanwhile just moves its deadline.
    pub async fn expire_idle(self: Arc<Self>) {
        loop {
            let idle_limit = self.limits.idle_timeout;
            let sessions: Vec<Arc<Session>> = self.sessions().values().cloned().collect();
            let mut next = idle_limit;
            for session in sessions {
                let idle = session.idle_for();
                if idle >= idle_limit {
                    let _ = self.close(session.sid.as_str()).await;
                } else {
                    next = next.min(idle_limit - idle);
                }
            }
            tokio::time::sleep(next).await;
        }
    }
}
