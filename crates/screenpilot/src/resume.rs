//! Answers kept for clients whose link may drop: a request that carries a `resume` key runs to its end
//! even when its connection goes, and its final answer is kept here, so a client that reconnects (over
//! a new `ssh` or `docker exec`) asks for it with `resume` and learns what happened meanwhile, instead
//! of sending the request again.
//!
//! Over a link that broke silently (a network cut), the daemon cannot tell a dead connection from a
//! slow one: the answer may have gone into a pipe nobody reads. So every keyed answer is kept, whether
//! or not it was also sent, until `resume` takes it or it is too old; the store is bounded in count,
//! bytes and age, so a client that never comes back costs a bounded amount. Only clients on other
//! hosts key their requests (the CLI and MCP server over `--host`); local ones pay nothing.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio::task::AbortHandle;

/// How long a finished answer is kept for a client to come back for it.
pub const KEEP_FOR: Duration = Duration::from_secs(600);
/// The most answers kept at once.
const KEEP_AT_MOST: usize = 1024;
/// The most answer bytes kept at once (a few large screenshots).
const KEEP_BYTES: usize = 64 * 1024 * 1024;
/// The longest key taken.
pub const MAX_KEY_LEN: usize = 128;

/// A keyed request: running (its answer to come), or done (its final answer, serialised without the
/// request id, which the asking connection supplies).
enum Entry {
    Running {
        abort: AbortHandle,
        done: watch::Receiver<Option<Arc<Done>>>,
    },
    Done(Arc<Done>),
}

/// A final answer: the `ok`, `result` and `error` fields of the response.
#[derive(Debug)]
pub struct Done {
    pub outcome: serde_json::Value,
    bytes: usize,
    at: Instant,
}

#[derive(Default)]
struct Store {
    entries: HashMap<String, Entry>,
    /// Finished keys, oldest first, for the bounds.
    finished: VecDeque<String>,
    bytes: usize,
}

/// Every keyed request of this daemon.
#[derive(Default, Clone)]
pub struct Resumable(Arc<Mutex<Store>>);

/// What `resume` finds for a key.
pub enum Found {
    /// Still running: its answer comes on this receiver.
    Running(watch::Receiver<Option<Arc<Done>>>),
    Done(Arc<Done>),
    /// This daemon never saw the key, or let its answer go (too old, or over the bounds).
    Unknown,
}

/// What a running request reports its end to.
pub struct Finish {
    store: Resumable,
    key: String,
    tx: watch::Sender<Option<Arc<Done>>>,
}

impl Resumable {
    fn store(&self) -> std::sync::MutexGuard<'_, Store> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Is a request with this key running or kept? A second request with a live key is refused.
    pub fn contains(&self, key: &str) -> bool {
        self.store().entries.contains_key(key)
    }

    /// Record a request that started under `key`.
    pub fn start(&self, key: &str, abort: AbortHandle) -> Finish {
        let (tx, done) = watch::channel(None);
        self.store()
            .entries
            .insert(key.to_owned(), Entry::Running { abort, done });
        Finish {
            store: self.clone(),
            key: key.to_owned(),
            tx,
        }
    }

    /// What there is for `key`; a finished answer is handed over once.
    pub fn take(&self, key: &str) -> Found {
        let mut store = self.store();
        store.expire(Instant::now());
        match store.entries.get(key) {
            None => Found::Unknown,
            Some(Entry::Running { done, .. }) => Found::Running(done.clone()),
            Some(Entry::Done(_)) => match store.entries.remove(key) {
                Some(Entry::Done(done)) => {
                    store.bytes = store.bytes.saturating_sub(done.bytes);
                    store.finished.retain(|k| k != key);
                    Found::Done(done)
                }
                _ => Found::Unknown,
            },
        }
    }

    /// Stop the request running under `key`; whether one was.
    pub fn cancel(&self, key: &str) -> bool {
        match self.store().entries.get(key) {
            Some(Entry::Running { abort, .. }) => {
                abort.abort();
                true
            }
            _ => false,
        }
    }
}

impl Store {
    /// Let go of answers kept too long, then of the oldest while over the bounds.
    fn expire(&mut self, now: Instant) {
        while let Some(key) = self.finished.front() {
            let drop = match self.entries.get(key) {
                Some(Entry::Done(done)) => {
                    now.duration_since(done.at) > KEEP_FOR
                        || self.finished.len() > KEEP_AT_MOST
                        || self.bytes > KEEP_BYTES
                }
                // Taken already (or replaced): only its place in the queue is left.
                _ => true,
            };
            if !drop {
                break;
            }
            let key = self.finished.pop_front().unwrap_or_default();
            if let Some(Entry::Done(done)) = self.entries.get(&key) {
                self.bytes = self.bytes.saturating_sub(done.bytes);
                self.entries.remove(&key);
            }
        }
    }
}

impl Finish {
    /// The request ended with `outcome` (its `ok`, `result` and `error` fields): keep it, and wake
    /// whoever waits for it.
    pub fn done(self, outcome: serde_json::Value) {
        let bytes = outcome.to_string().len();
        let done = Arc::new(Done {
            outcome,
            bytes,
            at: Instant::now(),
        });
        {
            let mut store = self.store.store();
            store
                .entries
                .insert(self.key.clone(), Entry::Done(done.clone()));
            store.finished.push_back(self.key.clone());
            store.bytes += bytes;
            store.expire(Instant::now());
        }
        self.tx.send_replace(Some(done));
    }
}

impl Drop for Finish {
    /// A request that ends without an answer (aborted: cancelled, or the daemon stopping) leaves
    /// nothing to resume; its waiters learn that it is gone.
    fn drop(&mut self) {
        if self.tx.borrow().is_none() {
            let mut store = self.store.store();
            if matches!(store.entries.get(&self.key), Some(Entry::Running { .. })) {
                store.entries.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn idle_task() -> AbortHandle {
        tokio::spawn(std::future::pending::<()>()).abort_handle()
    }

    #[tokio::test]
    async fn an_answer_is_kept_until_taken_once() {
        let store = Resumable::default();
        let finish = store.start("k1", idle_task());
        let Found::Running(mut done) = store.take("k1") else {
            panic!("running");
        };
        finish.done(json!({"ok": true, "result": {"n": 1}}));
        done.changed().await.expect("woken");
        assert!(done.borrow().is_some());
        let Found::Done(answer) = store.take("k1") else {
            panic!("kept");
        };
        assert_eq!(answer.outcome["result"]["n"], 1);
        assert!(
            matches!(store.take("k1"), Found::Unknown),
            "handed over once"
        );
        assert!(matches!(store.take("never"), Found::Unknown));
    }

    #[tokio::test]
    async fn a_request_that_ends_without_an_answer_leaves_nothing() {
        let store = Resumable::default();
        let finish = store.start("k", idle_task());
        assert!(store.contains("k"));
        drop(finish);
        assert!(!store.contains("k"));
    }

    #[tokio::test]
    async fn the_oldest_answers_go_past_the_count_bound() {
        let store = Resumable::default();
        for n in 0..KEEP_AT_MOST + 5 {
            store
                .start(&format!("k{n}"), idle_task())
                .done(json!({"ok": true}));
        }
        assert!(matches!(store.take("k0"), Found::Unknown));
        assert!(matches!(store.take("k4"), Found::Unknown));
        assert!(matches!(store.take("k5"), Found::Done(_)));
        assert!(matches!(
            store.take(&format!("k{}", KEEP_AT_MOST + 4)),
            Found::Done(_)
        ));
    }

    #[tokio::test]
    async fn cancel_stops_a_running_request_by_its_key() {
        let store = Resumable::default();
        let task = tokio::spawn(std::future::pending::<()>());
        let _finish = store.start("k", task.abort_handle());
        assert!(store.cancel("k"));
        assert!(task.await.expect_err("aborted").is_cancelled());
        assert!(!store.cancel("other"));
    }
}
