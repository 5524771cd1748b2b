//! What each session left running, read from /proc: its processes (the program and every process of
//! its process session: background jobs, a dev server started with `&`, their children) and the TCP
//! and UDP ports they listen on. A session's program leads a process session of its own, so its
//! members are the processes whose session id is the program's pid.

use std::collections::{BTreeMap, HashMap};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::process::stat;

/// The most processes listed per session (a fork bomb's session lists this many and says so).
const MAX_LISTED: usize = 64;

/// What one session runs now.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Running {
    /// Its processes, the program first, then by pid.
    pub processes: Vec<Process>,
    /// More processes than listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: usize,
    /// The ports its processes listen on.
    pub listening: Vec<Listening>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One process of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Process {
    pub pid: i32,
    pub ppid: i32,
    /// Its command line (its name when it has none to read), cut to 120 characters.
    pub command: String,
}

/// A port a session's process listens on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub struct Listening {
    /// `tcp` or `udp` (IPv4 or IPv6 alike).
    pub proto: String,
    /// The local address, e.g. `127.0.0.1`, `0.0.0.0`, `::`.
    pub address: String,
    pub port: u16,
    pub pid: i32,
}

/// What the sessions led by `leaders` (their programs' pids) run now, by leader.
pub fn of_sessions(leaders: &[i32]) -> HashMap<i32, Running> {
    let mut found: HashMap<i32, Running> = HashMap::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    let mut members: BTreeMap<i32, Vec<(i32, i32)>> = BTreeMap::new();
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        // Gone meanwhile: not running.
        let Some(stat) = stat(pid) else {
            continue;
        };
        if leaders.contains(&stat.session) {
            members
                .entry(stat.session)
                .or_default()
                .push((pid, stat.ppid));
        }
    }
    let sockets = listening_sockets();
    for (leader, mut pids) in members {
        // The program first, then the others by pid.
        pids.sort_by_key(|(pid, _)| (*pid != leader, *pid));
        let mut running = Running::default();
        for &(pid, ppid) in &pids {
            for inode in socket_inodes(pid) {
                if let Some((proto, address, port)) = sockets.get(&inode) {
                    running.listening.push(Listening {
                        proto: proto.clone(),
                        address: address.clone(),
                        port: *port,
                        pid,
                    });
                }
            }
            if running.processes.len() < MAX_LISTED {
                running.processes.push(Process {
                    pid,
                    ppid,
                    command: command_of(pid),
                });
            } else {
                running.more += 1;
            }
        }
        running.listening.sort();
        running.listening.dedup();
        found.insert(leader, running);
    }
    found
}

fn command_of(pid: i32) -> String {
    let argv = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let mut command = argv
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    if command.is_empty() {
        command = std::fs::read_to_string(format!("/proc/{pid}/comm"))
            .map(|c| format!("[{}]", c.trim()))
            .unwrap_or_default();
    }
    match command.char_indices().nth(120) {
        Some((cut, _)) => format!("{}...", &command[..cut]),
        None => command,
    }
}

/// The socket inodes process `pid` holds open.
fn socket_inodes(pid: i32) -> Vec<u64> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|target| {
            let target = target.to_string_lossy().into_owned();
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .parse()
                .ok()
        })
        .collect()
}

/// Every listening socket of this network namespace, by inode: its protocol, address and port.
fn listening_sockets() -> HashMap<u64, (String, String, u16)> {
    let mut sockets = HashMap::new();
    // TCP listens in state 0A; a bound UDP socket with no peer is in state 07.
    for (file, proto, state) in [
        ("tcp", "tcp", "0A"),
        ("tcp6", "tcp", "0A"),
        ("udp", "udp", "07"),
        ("udp6", "udp", "07"),
    ] {
        let Ok(table) = std::fs::read_to_string(format!("/proc/net/{file}")) else {
            continue;
        };
        sockets.extend(parse_table(&table, proto, state));
    }
    sockets
}

/// The sockets of one `/proc/net` table in `state`, by inode.
fn parse_table(table: &str, proto: &str, state: &str) -> Vec<(u64, (String, String, u16))> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.get(3) != Some(&state) {
                return None;
            }
            let (address, port) = fields.get(1)?.split_once(':')?;
            let port = u16::from_str_radix(port, 16).ok()?;
            let inode = fields.get(9)?.parse().ok()?;
            Some((inode, (proto.to_owned(), address_of(address)?, port)))
        })
        .collect()
}

/// A `/proc/net` address (hex, each 32-bit word in host order) as people write it.
fn address_of(hex: &str) -> Option<String> {
    let words: Vec<u32> = (0..hex.len() / 8)
        .map(|i| u32::from_str_radix(&hex[i * 8..i * 8 + 8], 16).ok())
        .collect::<Option<_>>()?;
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    match bytes.len() {
        4 => Some(std::net::Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]).to_string()),
        16 => {
            let octets: [u8; 16] = bytes.try_into().ok()?;
            Some(std::net::Ipv6Addr::from(octets).to_string())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listening_sockets_are_read_from_a_proc_table() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n   1: 0100007F:A0B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1\n";
        let found = parse_table(table, "tcp", "0A");
        assert_eq!(
            found,
            [(4242, ("tcp".to_owned(), "127.0.0.1".to_owned(), 8080))],
            "the established connection (state 01) is no listener"
        );
        assert_eq!(
            address_of("00000000000000000000000000000000").as_deref(),
            Some("::")
        );
    }

    #[test]
    fn this_process_is_found_in_its_own_session_with_its_listener() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let port = listener.local_addr().expect("its address").port();
        let me = std::process::id() as i32;
        let session = stat(me).expect("this process's stat").session;
        let running = of_sessions(&[session])
            .remove(&session)
            .expect("this session");
        // Under a CI runner this process may share session 0 with every kernel thread: past the
        // listing's cap it is counted, not named.
        let listed = running.processes.iter().any(|p| p.pid == me);
        let counted = running.processes.len() == MAX_LISTED && running.more > 0;
        assert!(listed || counted, "{running:?}");
        assert!(
            running
                .listening
                .iter()
                .any(|l| l.port == port && l.pid == me && l.address == "127.0.0.1"),
            "{running:?}"
        );
    }
}
