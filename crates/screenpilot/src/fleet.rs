//! The daemons a client talks to: this machine's, another host's, or several at once. A request goes
//! to one host, picked by its sid (`NAME/SID`, or the one host that has `SID`); `list` goes to all of
//! them at once, each bounded on its own, so a failing host never delays the others. With more than
//! one host, every sid in an answer reads `NAME/SID`.
//!
//! Parameters are completed for the host they go to: for this machine's daemon with this process's
//! directory and environment; for another host's, with nothing of ours (its bridge fills in its own).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::client::{Call, Client};
use crate::host::Host;
use crate::ops::{self, Caller, ErrorCode, OpError, Operation};
use crate::paths::Paths;

/// The fields that name a session, in parameters and answers.
const SID_FIELDS: &[&str] = &["sid", "session"];

/// The operation starts a session, on the host its sid names.
fn starts_session(op: &str) -> bool {
    ops::find(op).is_ok_and(|op| op.starts_session)
}

/// How long `list` waits for each host (a host that does not answer in time is listed as such).
const LIST_LIMIT: Duration = Duration::from_secs(30);

/// The hosts, and a connection to each once one was needed.
pub struct Fleet {
    paths: Paths,
    hosts: Vec<Host>,
    clients: Vec<tokio::sync::Mutex<Option<Arc<Client>>>>,
}

/// A request made ready for one host.
pub struct Routed {
    pub host: usize,
    pub params: Value,
}

impl Fleet {
    /// `hosts` must not be empty (see [`crate::host::hosts_from`]).
    pub fn new(paths: Paths, hosts: Vec<Host>) -> Fleet {
        let hosts = if hosts.is_empty() {
            vec![Host::local()]
        } else {
            hosts
        };
        Fleet {
            clients: hosts
                .iter()
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
            paths,
            hosts,
        }
    }

    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    pub fn paths(&self) -> &Paths {
        &self.paths
    }

    /// Only this machine's daemon.
    pub fn is_local(&self) -> bool {
        self.hosts.len() == 1 && self.hosts[0].is_local()
    }

    fn several(&self) -> bool {
        self.hosts.len() > 1
    }

    /// The caller for requests to host `index`: this process for this machine, reading as `reader`;
    /// a caller elsewhere for another host.
    pub fn caller(&self, index: usize, reader: Option<String>) -> Caller {
        if self.hosts[index].is_local() {
            Caller::this_process().reading_as(reader)
        } else {
            Caller::elsewhere(reader)
        }
    }

    /// A live connection to host `index` (made when there is none, or `fresh`).
    pub async fn client(&self, index: usize, fresh: bool) -> Result<Arc<Client>, OpError> {
        let mut slot = self.clients[index].lock().await;
        if let Some(client) = slot.as_ref() {
            if !fresh && !is_closed(client).await {
                return Ok(client.clone());
            }
        }
        let client = Client::connect_host(&self.hosts[index], &self.paths).await?;
        *slot = Some(client.clone());
        Ok(client)
    }

    /// Which host `op` goes to, and its parameters completed for that host (`reader`: who is looking).
    pub async fn route(
        &self,
        op: &str,
        mut params: Value,
        reader: Option<String>,
    ) -> Result<Routed, OpError> {
        let host = self.host_of(op, &mut params).await?;
        let params = ops::prepare(op, params, &self.caller(host, reader))?;
        Ok(Routed { host, params })
    }

    /// The host of session `sid` (`NAME/SID`, or the one host that has it), and its sid there.
    pub async fn locate(&self, op: &str, sid: &str) -> Result<(usize, String), OpError> {
        let mut params = json!({ "sid": sid });
        let host = self.host_of(op, &mut params).await?;
        Ok((host, params["sid"].as_str().unwrap_or(sid).to_owned()))
    }

    /// Pick the host from the request's sid, taking the `NAME/` off it.
    async fn host_of(&self, op: &str, params: &mut Value) -> Result<usize, OpError> {
        let named = SID_FIELDS
            .iter()
            .find_map(|f| Some((*f, params.get(*f)?.as_str()?.to_owned())));
        let Some((field, sid)) = named else {
            if !self.several() {
                return Ok(0);
            }
            return Err(self.which_host(op));
        };
        if let Some((name, rest)) = sid.split_once('/') {
            let Some(index) = self.hosts.iter().position(|h| h.name == name) else {
                return Err(OpError::invalid(
                    field,
                    format!(
                        "{sid:?}: no host is called {name:?}; the hosts are {}",
                        self.names()
                    ),
                ));
            };
            if rest.is_empty() && starts_session(op) {
                // `NAME/`: a new session there, its sid made up.
                if let Value::Object(map) = params {
                    map.remove(field);
                }
            } else {
                params[field] = json!(rest);
            }
            return Ok(index);
        }
        if !self.several() {
            return Ok(0);
        }
        if starts_session(op) {
            return Err(self.which_host(op).with_field(field));
        }
        self.find(field, &sid).await
    }

    fn which_host(&self, op: &str) -> OpError {
        OpError::invalid(
            "sid",
            format!(
                "{op} goes to one of several hosts ({}): give the sid as NAME/SID, e.g. {}/{}",
                self.names(),
                self.hosts[0].name,
                if starts_session(op) { "" } else { "SID" }
            ),
        )
    }

    fn names(&self) -> String {
        self.hosts
            .iter()
            .map(|h| h.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The one host with a session `sid`.
    async fn find(&self, field: &str, sid: &str) -> Result<usize, OpError> {
        let listed = self.list_each().await;
        let holders: Vec<usize> = listed
            .iter()
            .enumerate()
            .filter(|(_, answer)| {
                answer.as_ref().is_ok_and(|a| {
                    a["sessions"]
                        .as_array()
                        .is_some_and(|s| s.iter().any(|s| s["sid"] == sid))
                })
            })
            .map(|(i, _)| i)
            .collect();
        match holders[..] {
            [one] => Ok(one),
            [] => Err(OpError::new(
                ErrorCode::UnknownSession,
                format!(
                    "{field}: no host has a session {sid:?} (hosts: {})",
                    self.names()
                ),
            )
            .with_field(field)),
            _ => Err(OpError::invalid(
                field,
                format!(
                    "{sid:?} is a session on several hosts ({}); say which: {}/{sid}",
                    holders
                        .iter()
                        .map(|i| self.hosts[*i].name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    self.hosts[holders[0]].name
                ),
            )),
        }
    }

    /// `list` of every host at once, each bounded.
    async fn list_each(&self) -> Vec<Result<Value, OpError>> {
        let asks = (0..self.hosts.len()).map(|i| async move {
            let ask = async {
                let client = self.client(i, false).await?;
                client.call(ops::List::NAME, json!({})).await
            };
            tokio::time::timeout(LIST_LIMIT, ask)
                .await
                .unwrap_or_else(|_| {
                    Err(OpError::new(
                        ErrorCode::HostUnreachable,
                        format!(
                            "host {}: no answer within {} s",
                            self.hosts[i].name,
                            LIST_LIMIT.as_secs()
                        ),
                    ))
                })
        });
        futures_join_all(asks).await
    }

    /// `list` over every host: sessions labelled `NAME/SID`, and the hosts that did not answer.
    async fn list_all(&self) -> Result<Value, OpError> {
        let mut sessions = Vec::new();
        let mut unreachable = Vec::new();
        for (i, answer) in self.list_each().await.into_iter().enumerate() {
            match answer {
                Ok(mut answer) => {
                    self.label(i, &mut answer);
                    if let Some(list) = answer["sessions"].as_array() {
                        sessions.extend(list.iter().cloned());
                    }
                }
                Err(e) => unreachable.push(json!({"host": self.hosts[i].name, "error": e.message})),
            }
        }
        let mut answer = json!({"ok": true, "sessions": sessions});
        if !unreachable.is_empty() {
            answer["unreachable"] = json!(unreachable);
        }
        Ok(answer)
    }

    /// With several hosts, write every sid in `answer` (from host `index`) as `NAME/SID`.
    pub fn label(&self, index: usize, answer: &mut Value) {
        if self.several() {
            label_sids(answer, &self.hosts[index].name);
        }
    }

    /// Start `op` on its host; `reader` is who is looking. A link to this machine's daemon that went
    /// away since the last call is made once more.
    pub async fn start(
        &self,
        op: &str,
        params: Value,
        reader: Option<String>,
    ) -> Result<(usize, Arc<Client>, Call), OpError> {
        let Routed { host, params } = self.route(op, params, reader).await?;
        let client = self.client(host, false).await?;
        match client.start(op, params.clone()).await {
            Ok(call) => Ok((host, client, call)),
            Err(e) if e.code == ErrorCode::DaemonGone => {
                let client = self.client(host, true).await?;
                let call = client.start(op, params).await?;
                Ok((host, client, call))
            }
            Err(e) => Err(e),
        }
    }

    /// Run `op` and wait for its answer, passing progress lines on; `list` with several hosts asks
    /// them all.
    pub async fn call(
        &self,
        op: &str,
        params: Value,
        reader: Option<String>,
        on_progress: impl FnMut(&Value),
    ) -> Result<Value, OpError> {
        if ops::find(op).is_ok_and(|op| op.every_host) && self.several() {
            return self.list_all().await;
        }
        let (host, _client, call) = self.start(op, params, reader).await?;
        let mut answer = call.finish(on_progress).await?;
        self.label(host, &mut answer);
        Ok(answer)
    }
}

/// Prefix every sid field in `value` with `name/`.
fn label_sids(value: &mut Value, name: &str) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match item {
                    Value::String(sid) if SID_FIELDS.contains(&key.as_str()) => {
                        *sid = format!("{name}/{sid}");
                    }
                    Value::Array(sids) if key == "sids" || key == "sessions" => {
                        for sid in sids.iter_mut() {
                            match sid {
                                Value::String(s) => *s = format!("{name}/{s}"),
                                other => label_sids(other, name),
                            }
                        }
                    }
                    other => label_sids(other, name),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| label_sids(v, name)),
        _ => {}
    }
}

async fn is_closed(client: &Client) -> bool {
    tokio::select! {
        biased;
        _ = client.closed() => true,
        _ = std::future::ready(()) => false,
    }
}

/// Every future at once, answers in order.
async fn futures_join_all<F: Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let mut set = Vec::new();
    for f in futures {
        set.push(Box::pin(f));
    }
    let mut outputs: Vec<Option<F::Output>> = set.iter().map(|_| None).collect();
    let mut pending: Vec<usize> = (0..set.len()).collect();
    std::future::poll_fn(|cx| {
        pending.retain(|&i| match set[i].as_mut().poll(cx) {
            std::task::Poll::Ready(out) => {
                outputs[i] = Some(out);
                false
            }
            std::task::Poll::Pending => true,
        });
        if pending.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    outputs
        .into_iter()
        .map(|o| o.expect("each future finished"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fleet(specs: &[&str]) -> Fleet {
        let hosts = specs
            .iter()
            .map(|s| Host::parse(s).expect("host"))
            .collect();
        Fleet::new(Paths::in_dir("/nonexistent".into()), hosts)
    }

    #[tokio::test]
    async fn a_named_sid_picks_its_host_and_loses_its_name() {
        let f = fleet(&["a=ssh://x", "b=ssh://y"]);
        let routed = f
            .route("send", json!({"sid": "b/vim", "text": "x"}), None)
            .await
            .expect("routed");
        assert_eq!(routed.host, 1);
        assert_eq!(routed.params["sid"], "vim");
        // NAME/ alone starts a session there with a sid of its own.
        let routed = f
            .route("spawn", json!({"sid": "a/", "cmd": "bash"}), None)
            .await
            .expect("routed");
        assert_eq!(routed.host, 0);
        assert!(routed.params["sid"].is_null(), "{}", routed.params);
    }

    #[tokio::test]
    async fn without_a_host_name_several_hosts_are_an_error_naming_the_field() {
        let f = fleet(&["a=ssh://x", "b=ssh://y"]);
        let e = f
            .route("spawn", json!({"cmd": "bash"}), None)
            .await
            .err()
            .expect("ambiguous");
        assert_eq!(e.field.as_deref(), Some("sid"), "{e:?}");
        assert!(e.message.contains("a, b"), "{e:?}");
        let e = f
            .route("send", json!({"sid": "c/x", "text": "y"}), None)
            .await
            .err()
            .expect("no such host");
        assert!(e.message.contains("no host is called \"c\""), "{e:?}");
    }

    #[test]
    fn every_sid_in_an_answer_gets_its_host() {
        let mut answer = json!({"sid": "vim", "sessions": [{"sid": "a"}, {"sid": "b"}], "sids": ["c"], "screen": {"text": "sid"}});
        label_sids(&mut answer, "h");
        assert_eq!(answer["sid"], "h/vim");
        assert_eq!(answer["sessions"][1]["sid"], "h/b");
        assert_eq!(answer["sids"][0], "h/c");
        assert_eq!(answer["screen"]["text"], "sid");
    }

    #[test]
    fn a_remote_host_gets_no_local_directory_or_environment() {
        let f = fleet(&["ssh://x"]);
        let params = ops::prepare(
            "spawn",
            json!({"cmd": "bash", "cwd": "work", "record": "a.cast"}),
            &f.caller(0, None),
        )
        .expect("prepared");
        assert_eq!(params["cwd"], "work");
        assert_eq!(params["record"], "a.cast");
        assert!(
            params.get("caller_env").is_none_or(Value::is_null),
            "{params}"
        );
    }
}
