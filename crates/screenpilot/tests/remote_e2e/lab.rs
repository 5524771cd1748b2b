//! Hosts on one machine: network namespaces made by the test itself, each joined to a client
//! namespace by a veth pair whose two addresses exist only inside those namespaces (no traffic to
//! any other address), each host with its own `sshd` (Debian's openssh-server, keys made here, its
//! own config, never the machine's own sshd or keys) and its own screenpilot daemon directory.
//!
//! The client side runs in the root namespace; only its `ssh` enters the client namespace
//! (`SCREENPILOT_SSH="ip netns exec NS ssh -F CONFIG"`). Each host's daemon socket is also reachable
//! from here through the file system, which the tests use to look at a host out of band (to type into
//! a session while the link is cut, to see what a daemon runs).
//!
//! Needs root (CI runs as root), `ip`, `nsenter` and `/usr/sbin/sshd`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::common::{binary, wait_for_process_exit};

/// How long a host's sshd may take to say it listens.
const SSHD_READY: Duration = Duration::from_secs(30);

pub struct Lab {
    pub dir: tempfile::TempDir,
    client_ns: String,
    pub hosts: Vec<LabHost>,
    ssh_config: PathBuf,
    user: String,
}

pub struct LabHost {
    /// `h1`, `h2`, ...
    pub name: String,
    pub ns: String,
    pub addr: String,
    /// The veth end in the client namespace, for cutting the link.
    client_if: String,
    sshd: Option<Child>,
    /// The host's SCREENPILOT_DIR.
    pub daemon_dir: PathBuf,
}

fn run(args: &[&str]) {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {args:?}: {e}"));
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Lab {
    /// A lab of `count` hosts; `host_env` is set for every session on the hosts (sshd's SetEnv).
    pub fn new(count: usize, host_env: &[(&str, &str)]) -> Lab {
        assert!(
            rustix::process::getuid().is_root(),
            "the remote-host tests make network namespaces and run sshd: run them as root (CI does)"
        );
        static LABS: AtomicU32 = AtomicU32::new(0);
        let n = LABS.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{}{n}", std::process::id() % 100_000);
        let dir = tempfile::Builder::new()
            .prefix("sp-lab-")
            .tempdir()
            .expect("a temp dir");
        let path = dir.path().to_owned();
        std::fs::create_dir_all("/run/sshd").expect("sshd's privilege separation directory");
        run(&[
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            &format!("{}/id", path.display()),
        ]);
        run(&[
            "ssh-keygen",
            "-q",
            "-t",
            "ed25519",
            "-N",
            "",
            "-f",
            &format!("{}/host_key", path.display()),
        ]);
        std::fs::copy(path.join("id.pub"), path.join("authorized_keys")).expect("authorized_keys");
        let host_pub = std::fs::read_to_string(path.join("host_key.pub")).expect("host key");
        let user = std::env::var("USER")
            .ok()
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| "root".into());

        let client_ns = format!("spl{tag}c");
        let _ = Command::new("ip")
            .args(["netns", "del", &client_ns])
            .output();
        run(&["ip", "netns", "add", &client_ns]);
        run(&["ip", "-n", &client_ns, "link", "set", "lo", "up"]);
        let bin_dir = Path::new(binary()).parent().expect("bin dir").to_owned();
        let mut hosts = Vec::new();
        let mut known = String::new();
        for k in 1..=count {
            let ns = format!("spl{tag}h{k}");
            let _ = Command::new("ip").args(["netns", "del", &ns]).output();
            run(&["ip", "netns", "add", &ns]);
            run(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
            let (client_if, host_if) = (format!("vc{tag}{k}"), format!("vh{tag}{k}"));
            run(&[
                "ip", "link", "add", &client_if, "type", "veth", "peer", "name", &host_if,
            ]);
            run(&["ip", "link", "set", &client_if, "netns", &client_ns]);
            run(&["ip", "link", "set", &host_if, "netns", &ns]);
            let net = format!("10.{}.{k}", 100 + n % 100);
            let addr = format!("{net}.2");
            run(&[
                "ip",
                "-n",
                &client_ns,
                "addr",
                "add",
                &format!("{net}.1/24"),
                "dev",
                &client_if,
            ]);
            run(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                &host_if,
            ]);
            run(&["ip", "-n", &client_ns, "link", "set", &client_if, "up"]);
            run(&["ip", "-n", &ns, "link", "set", &host_if, "up"]);
            let daemon_dir = path.join(format!("h{k}"));
            // SHLVL=1: the login shell counts itself the second level and so does not source the
            // user's ~/.bashrc, which bash otherwise does for every ssh command. The machine's
            // root .bashrc may run `pyenv rehash` under a lock file; a login killed while holding
            // it (a link the tests cut) leaves the lock behind, and every later login then waits
            // 60 s for it: longer than a link may take to come up.
            let mut set_env = format!(
                "SHLVL=1 SCREENPILOT_DIR={} PATH={}:/usr/local/bin:/usr/bin:/bin SCREENPILOT_MAX_SESSIONS=64",
                daemon_dir.display(),
                bin_dir.display()
            );
            for (key, value) in host_env {
                set_env.push_str(&format!(" {key}={value}"));
            }
            let config = path.join(format!("sshd_h{k}"));
            std::fs::write(
                &config,
                format!(
                    "Port 22\nListenAddress {addr}\nHostKey {dir}/host_key\nAuthorizedKeysFile {dir}/authorized_keys\n\
                     StrictModes no\nUsePAM no\nPermitRootLogin yes\nPasswordAuthentication yes\nPidFile none\n\
                     LogLevel INFO\nClientAliveInterval 2\nClientAliveCountMax 3\nSetEnv {set_env}\n",
                    dir = path.display()
                ),
            )
            .expect("sshd config");
            let mut sshd = Command::new("ip")
                .args(["netns", "exec", &ns, "/usr/sbin/sshd", "-D", "-e", "-f"])
                .arg(&config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start sshd");
            // sshd says when it listens; that line is the event we wait for.
            let stderr = sshd.stderr.take().expect("sshd's stderr");
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if line.contains("Server listening") {
                        let _ = tx.send(());
                    }
                }
            });
            rx.recv_timeout(SSHD_READY)
                .unwrap_or_else(|_| panic!("sshd in {ns} never said it listens"));
            known.push_str(&format!("{addr} {host_pub}"));
            hosts.push(LabHost {
                name: format!("h{k}"),
                ns,
                addr,
                client_if,
                sshd: Some(sshd),
                daemon_dir,
            });
        }
        std::fs::write(path.join("known_hosts"), known).expect("known_hosts");
        let ssh_config = path.join("ssh_config");
        std::fs::write(
            &ssh_config,
            format!(
                "Host *\n  User {user}\n  IdentityFile {dir}/id\n  IdentitiesOnly yes\n  UserKnownHostsFile {dir}/known_hosts\n  \
                 GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n",
                dir = path.display()
            ),
        )
        .expect("ssh config");
        std::fs::create_dir_all(path.join("here")).expect("the client's directory");
        Lab {
            dir,
            client_ns,
            hosts,
            ssh_config,
            user,
        }
    }

    /// The ssh program the client runs: ssh inside the client namespace with the lab's config.
    pub fn ssh_argv(&self) -> Vec<String> {
        ["ip", "netns", "exec", &self.client_ns, "ssh", "-F"]
            .iter()
            .map(|s| (*s).to_owned())
            .chain([self.ssh_config.display().to_string()])
            .collect()
    }

    /// `ssh://USER@ADDR` of host `k` (0-based).
    pub fn ssh_url(&self, k: usize) -> String {
        format!("ssh://{}@{}", self.user, self.hosts[k].addr)
    }

    /// A command bridge into host `k`'s namespace, standing in for `docker exec -i BOX`: like it,
    /// the bridge starts in the box's own directory and environment, not the client's.
    pub fn exec_url(&self, k: usize) -> String {
        let bin_dir = Path::new(binary()).parent().expect("bin dir");
        format!(
            "{}=exec:nsenter --net=/run/netns/{} --wd=/ env -i HOME=/root SCREENPILOT_DIR={} PATH={}:/usr/bin:/bin {} dial-stdio",
            self.hosts[k].name,
            self.hosts[k].ns,
            self.hosts[k].daemon_dir.display(),
            bin_dir.display(),
            binary()
        )
    }

    /// The client's working directory.
    pub fn here(&self) -> PathBuf {
        self.dir.path().join("here")
    }

    /// `screenpilot --host HOST... ARGS` as the client runs it.
    pub fn cli(&self, hosts: &[&str], args: &[&str]) -> Command {
        let mut cmd = Command::new(binary());
        for host in hosts {
            cmd.arg("--host").arg(host);
        }
        cmd.args(args)
            .env("SCREENPILOT_SSH", shell_words::join(self.ssh_argv()))
            .env("SCREENPILOT_DIR", self.dir.path().join("local"))
            .env_remove("SCREENPILOT_HOST")
            .current_dir(self.here())
            .stdin(Stdio::null());
        cmd
    }

    /// Run the client to completion, at most `limit`; panics if it runs longer.
    pub fn run(&self, mut cmd: Command, limit: Duration) -> Output {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let child = cmd.spawn().expect("start screenpilot");
        let pid = child.id() as i32;
        let finished = wait_for_process_exit(pid, limit);
        if !finished {
            // SAFETY: kill on a pid we started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let out = child.wait_with_output().expect("its output");
        assert!(finished, "screenpilot ran longer than {limit:?}: {out:?}");
        out
    }

    /// `screenpilot --json --host HOST ARGS`: its exit status and JSON answer.
    pub fn json(&self, host: &str, args: &[&str]) -> (i32, serde_json::Value) {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = self.run(self.cli(&[host], &full), Duration::from_secs(120));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let value = serde_json::from_str(stdout.lines().last().unwrap_or("").trim())
            .unwrap_or_else(|e| {
                panic!(
                    "screenpilot {args:?} on {host} printed no JSON ({e}): {stdout}\nstderr: {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            });
        (out.status.code().unwrap_or(-1), value)
    }

    /// The same, which must succeed.
    pub fn ok(&self, host: &str, args: &[&str]) -> serde_json::Value {
        let (status, value) = self.json(host, args);
        assert_eq!(status, 0, "screenpilot {args:?} on {host} failed: {value}");
        value
    }

    /// `screenpilot ARGS` straight at host `k`'s daemon through its socket (out of band: no link).
    pub fn at_host(&self, k: usize, args: &[&str]) -> Output {
        Command::new(binary())
            .args(args)
            .env("SCREENPILOT_DIR", &self.hosts[k].daemon_dir)
            .env_remove("SCREENPILOT_HOST")
            .stdin(Stdio::null())
            .output()
            .expect("run screenpilot at the host")
    }

    /// Take host `k`'s link down (its veth in the client namespace).
    pub fn cut(&self, k: usize) {
        run(&[
            "ip",
            "-n",
            &self.client_ns,
            "link",
            "set",
            &self.hosts[k].client_if,
            "down",
        ]);
    }

    pub fn restore(&self, k: usize) {
        run(&[
            "ip",
            "-n",
            &self.client_ns,
            "link",
            "set",
            &self.hosts[k].client_if,
            "up",
        ]);
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for (k, host) in self.hosts.iter_mut().enumerate() {
            let _ = Command::new(binary())
                .args(["daemon", "stop", "--end-sessions"])
                .env("SCREENPILOT_DIR", &host.daemon_dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if let Some(mut sshd) = host.sshd.take() {
                let _ = sshd.kill();
                let _ = sshd.wait();
            }
            let _ = Command::new("ip").args(["netns", "del", &host.ns]).output();
            let _ = k;
        }
        let _ = Command::new(binary())
            .args(["daemon", "stop", "--end-sessions"])
            .env("SCREENPILOT_DIR", self.dir.path().join("local"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.client_ns])
            .output();
    }
}
