#!/usr/bin/env python3
"""Side by side, one run: how fast an agent learns that a program on another host printed something,
and what one agent step costs there, with screenpilot through `ssh://` against the same wait on the
host itself and against tmux driven through ssh (`ssh HOST tmux capture-pane` polling).

The host is made here, as the tests make theirs: a network namespace joined to a client namespace by a
veth pair (addresses that exist only inside them), with its own sshd (keys and config made here) and
its own screenpilot daemon directory and tmux socket. Needs root.

    sudo .venv/bin/python benches/remote_latency.py --binary target/release/screenpilot [--iterations 30]

ssh runs with a ControlMaster (as the README recommends): each call is a new `ssh` process over one
shared connection. `--no-master` measures a fresh ssh connection per call instead.
"""

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "emit_token.py")
DELAY = "0.3"  # the program answers 150-450 ms after each request: every waiter is armed in time


def run(*args, **kw):
    return subprocess.run(list(args), check=True, capture_output=True, text=True, **kw)


class Lab:
    def __init__(self, binary: str, master: bool):
        self.dir = tempfile.mkdtemp(prefix="sp-remote-bench-")
        tag = str(os.getpid() % 100000)
        self.client_ns, self.host_ns = f"spb{tag}c", f"spb{tag}h"
        self.addr = "10.231.7.2"
        d = self.dir
        os.makedirs("/run/sshd", exist_ok=True)
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/id")
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/host_key")
        shutil.copy(f"{d}/id.pub", f"{d}/authorized_keys")
        for ns in (self.client_ns, self.host_ns):
            run("ip", "netns", "add", ns)
            run("ip", "-n", ns, "link", "set", "lo", "up")
        run("ip", "link", "add", f"vc{tag}", "type", "veth", "peer", "name", f"vh{tag}")
        run("ip", "link", "set", f"vc{tag}", "netns", self.client_ns)
        run("ip", "link", "set", f"vh{tag}", "netns", self.host_ns)
        run("ip", "-n", self.client_ns, "addr", "add", "10.231.7.1/24", "dev", f"vc{tag}")
        run("ip", "-n", self.host_ns, "addr", "add", f"{self.addr}/24", "dev", f"vh{tag}")
        run("ip", "-n", self.client_ns, "link", "set", f"vc{tag}", "up")
        run("ip", "-n", self.host_ns, "link", "set", f"vh{tag}", "up")
        self.daemon_dir = f"{d}/host-daemon"
        self.tmux_socket = f"{d}/tmux.sock"
        bin_dir = os.path.dirname(os.path.abspath(binary))
        with open(f"{d}/sshd_config", "w") as f:
            f.write(
                f"Port 22\nListenAddress {self.addr}\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n"
                "StrictModes no\nUsePAM no\nPermitRootLogin yes\nPidFile none\nLogLevel INFO\n"
                f"SetEnv SCREENPILOT_DIR={self.daemon_dir} PATH={bin_dir}:/usr/local/bin:/usr/bin:/bin\n"
            )
        with open(f"{d}/host_key.pub") as key, open(f"{d}/known_hosts", "w") as known:
            known.write(f"{self.addr} {key.read()}")
        master_lines = (
            f"  ControlMaster auto\n  ControlPath {d}/cm-%r@%h:%p\n  ControlPersist 10m\n" if master else ""
        )
        with open(f"{d}/ssh_config", "w") as f:
            f.write(
                f"Host *\n  User root\n  IdentityFile {d}/id\n  IdentitiesOnly yes\n  UserKnownHostsFile {d}/known_hosts\n"
                f"  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n{master_lines}"
            )
        self.sshd = subprocess.Popen(
            ["ip", "netns", "exec", self.host_ns, "/usr/sbin/sshd", "-D", "-e", "-f", f"{d}/sshd_config"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for line in self.sshd.stderr:
            if "Server listening" in line:
                break
        self.ssh = ["ip", "netns", "exec", self.client_ns, "ssh", "-F", f"{d}/ssh_config"]
        self.binary = binary

    def ssh_run(self, command: str) -> subprocess.CompletedProcess:
        return subprocess.run([*self.ssh, self.addr, command], capture_output=True, text=True, check=True)

    def close(self):
        subprocess.run([self.binary, "daemon", "stop", "--end-sessions"], env={**os.environ, "SCREENPILOT_DIR": self.daemon_dir},
                       capture_output=True)
        subprocess.run(["tmux", "-S", self.tmux_socket, "kill-server"], capture_output=True)
        subprocess.run([*self.ssh, "-O", "exit", self.addr], capture_output=True)
        self.sshd.kill()
        for ns in (self.client_ns, self.host_ns):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def token_time(text: str, n: int):
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "TOKEN" and parts[1] == str(n):
            return int(parts[2])
    return None


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round((len(values) - 1) * p))]


def row(name, values):
    return {"method": name, "runs": len(values), "median_ms": round(statistics.median(values), 2),
            "p95_ms": round(pct(values, 0.95), 2)}


def screenpilot_waits(lab: Lab, iterations: int, remote: bool):
    """`line go` then `wait --regex TOKEN n`, each a CLI call: on the host itself, or through ssh://."""
    if remote:
        env = {**os.environ, "SCREENPILOT_SSH": shlex.join(lab.ssh), "SCREENPILOT_DIR": f"{lab.dir}/client"}
        base = [lab.binary, "--host", f"ssh://root@{lab.addr}"]
    else:
        env = {**os.environ, "SCREENPILOT_DIR": lab.daemon_dir}
        base = [lab.binary]
    sp = lambda *a: subprocess.run([*base, *a], env=env, capture_output=True, text=True, check=True)
    sid = "remote" if remote else "here"
    sp("spawn", "--sid", sid, "--", sys.executable, "-u", FIXTURE, DELAY)
    sp("wait", sid, "--regex", "READY", "--timeout-ms", "20000")
    waits, steps = [], []
    for n in range(1, iterations + 1):
        started = time.monotonic_ns()
        sp("line", sid, "go")
        out = sp("wait", sid, "--regex", rf"^TOKEN {n} \d+$", "--timeout-ms", "20000", "--json")
        seen = time.monotonic_ns()
        waits.append((seen - token_time(json.loads(out.stdout)["text"], n)) / 1e6)
    # One agent step: input and its result in one call.
    for n in range(iterations + 1, 2 * iterations + 1):
        started = time.monotonic_ns()
        sp("line", sid, "go", "--until", rf"^TOKEN {n} \d+$", "--until-timeout-ms", "20000")
        steps.append((time.monotonic_ns() - started) / 1e6)
    sp("close", sid)
    return waits, steps


def tmux_waits(lab: Lab, iterations: int, poll_s: float):
    """What agents do today on a remote box: ssh HOST tmux send-keys, then ssh HOST tmux capture-pane
    until the line shows, every poll_s."""
    tmux = f"tmux -S {lab.tmux_socket}"
    lab.ssh_run(f"{tmux} new-session -d -s b -x 80 -y 24 {shlex.quote(sys.executable)} -u {FIXTURE} {DELAY}")
    while "READY" not in lab.ssh_run(f"{tmux} capture-pane -p -t b").stdout:
        time.sleep(poll_s)
    waits, steps, polls = [], [], 0
    for n in range(1, 2 * iterations + 1):
        started = time.monotonic_ns()
        lab.ssh_run(f"{tmux} send-keys -t b go Enter")
        while True:
            polls += 1
            written = token_time(lab.ssh_run(f"{tmux} capture-pane -p -t b").stdout, n)
            if written is not None:
                now = time.monotonic_ns()
                (waits if n <= iterations else steps).append(
                    (now - written) / 1e6 if n <= iterations else (now - started) / 1e6)
                break
            time.sleep(poll_s)
    lab.ssh_run(f"{tmux} kill-session -t b")
    return waits, steps, polls / (2 * iterations)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="target/release/screenpilot")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--no-master", action="store_true", help="a fresh ssh connection for every call")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root: it makes network namespaces and runs sshd")
    binary = os.path.abspath(args.binary)
    lab = Lab(binary, master=not args.no_master)
    try:
        here_waits, here_steps = screenpilot_waits(lab, args.iterations, remote=False)
        remote_waits, remote_steps = screenpilot_waits(lab, args.iterations, remote=True)
        tmux50_waits, tmux50_steps, polls50 = tmux_waits(lab, args.iterations, 0.05)
        tmux10_waits, tmux10_steps, polls10 = tmux_waits(lab, args.iterations, 0.01)
    finally:
        lab.close()
    waits = [
        row("screenpilot CLI wait, on the host itself (no link)", here_waits),
        row("screenpilot CLI wait through ssh://", remote_waits),
        row("ssh HOST tmux capture-pane, polled every 50 ms", tmux50_waits),
        row("ssh HOST tmux capture-pane, polled every 10 ms", tmux10_waits),
    ]
    steps = [
        row("screenpilot `line --until` on the host (1 call)", here_steps),
        row("screenpilot `line --until` through ssh:// (1 call, 1 ssh)", remote_steps),
        {**row("tmux send-keys + capture-pane polling through ssh, 50 ms", tmux50_steps),
         "ssh_calls_per_step": round(1 + polls50, 1)},
        {**row("tmux send-keys + capture-pane polling through ssh, 10 ms", tmux10_steps),
         "ssh_calls_per_step": round(1 + polls10, 1)},
    ]
    print(json.dumps({"ssh_master": not args.no_master, "fixture_delay_s": float(DELAY),
                      "wait_latency": waits, "agent_step": steps}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
