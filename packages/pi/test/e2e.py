#!/usr/bin/env python3
"""The pi package, and the README's pi MCP config, end to end in real pi (1.6) with a model scripted by
pi-ai's faux provider (test/faux_model.ts). Each scenario runs in a scratch HOME with a private daemon,
checks what pi got back, and prints one JSON summary line.

    packages/pi/test/e2e.py PI NODE_BIN SCREENPILOT PYTHON SCENARIO README NPM_CLI

PI: the `pi` command of @earendil-works/pi-coding-agent; NODE_BIN: a directory with Node >= 22.19;
SCREENPILOT: the binary; PYTHON: an interpreter with Textual; README: the repository's docs/mcp.md;
NPM_CLI: npm's npm-cli.js (run with that Node). SCENARIO:
  seed      `pi install` the package; textual_run on the seed's counter (tab, click #inc, pause, click
            #inc, screenshot) streams the screen after each action; computer (screenshot, click, type,
            keypress, each with a PNG) on a private desktop (DISPLAY is unset) closed when pi ends.
  display   DISPLAY set to an Xvfb of the test's (642x481): computer's screenshots are of that display
            at its size, a click lands in its far corner, and when pi ends it lets go of the display
            and the X server still runs.
  terminal  the package's terminal tools on a Python REPL: spawn, wait_for, send_line, snapshot,
            screenshot (an image), list, close.
  failures  computer on terminal sessions, failing three ways: a click the REPL cannot take (nothing
            sent), typing into a program that reads no input (the outcome is unknown), a click off the
            screenshot (refused). The first two carry the screen as an image under a warning that
            says which; none has the PNG in details.
  cancel    pi in RPC mode, aborted three times, each once the daemon runs the call: during a wait
            that would last 10 minutes, after the first streamed action of a Textual run that would
            last 8 minutes, and during a 60 s computer wait on the private desktop. All end at once,
            and the daemon stops them: its count of requests running (`daemon status`) falls back to
            0, the Textual app and its session are gone, the REPL the wait watched lives; the
            computer result says the outcome is unknown and carries a screenshot.
  binary    no SCREENPILOT_BINARY: with no binary anywhere, computer says what is missing and how to get
            it, and the terminal tools are not registered; with screenpilot on PATH it works; and
            with the pi package npm-installed (offline, from tarballs) with its dependency
            `screenpilot`, it runs the binary of that package's `@screenpilot/linux-x64`.
  mcp       no package: the pi MCP config JSON is read from README (after "pi (1.6, built-in MCP)"),
            checked against what the README's `pi mcp add` command writes, and used to call spawn,
            wait_for, send_line, snapshot and close, then textual_run on the counter, and on a desktop
            running an xterm computer screenshot, click, type and keypress (each with a PNG) and a
            wait_for the window title the typed command set, as mcp__screenpilot__* tools.
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
COUNTER = '''from textual.app import App, ComposeResult
from textual.widgets import Button, Static


class CounterApp(App):
    def __init__(self):
        super().__init__()
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Static(f"count: {self.count}", id="label")
        yield Button("Increment", id="inc")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.count += 1
        self.query_one("#label", Static).update(f"count: {self.count}")
'''


class Run:
    def __init__(self, pi, node_bin, binary, python, scratch):
        self.pi, self.binary, self.python, self.scratch = pi, binary, python, scratch
        self.work = scratch / "work"
        self.home = scratch / "home"
        self.work.mkdir()
        self.home.mkdir()
        self.app = self.work / "counter.py"
        self.app.write_text(COUNTER)
        self.env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
        self.env.update(
            HOME=str(self.home),
            PATH=f"{node_bin}:/usr/local/bin:/usr/bin:/bin",
            SCREENPILOT_DIR=str(scratch / "daemon"),
            SCREENPILOT_BINARY=binary,
            PI_E2E_APP=str(self.app),
            PI_E2E_PYTHON=python,
        )

    def pi_args(self, scenario, *mode):
        self.env["PI_E2E_SCENARIO"] = scenario
        return [self.pi, "-e", str(HERE / "faux_model.ts"), "--provider", "faux", "--model", "faux-1", *mode]

    def install(self):
        subprocess.run([self.pi, "install", str(HERE.parent)], env=self.env, cwd=self.work, check=True,
                       stdout=subprocess.DEVNULL)

    def print_mode(self, scenario, stderr=None):
        """Run one prompt in `--mode json`; its events (pi's stderr appended to `stderr` if given)."""
        out = subprocess.run(self.pi_args(scenario, "--mode", "json", "-p", "go"), env=self.env, cwd=self.work,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, f"pi exited {out.returncode}: {out.stderr[-3000:]}"
        if stderr is not None:
            stderr.append(out.stderr)
        return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]

    def screenpilot(self, *args):
        out = subprocess.run([self.binary, "--json", *args], env=self.env, capture_output=True, text=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    def sessions(self):
        return {s["sid"]: s for s in self.screenpilot("list")["sessions"]}


def ends(events):
    return [e for e in events if e.get("type") == "tool_execution_end"]


def text_of(result):
    return "".join(c.get("text", "") for c in result["content"] if c["type"] == "text")


def images_of(result):
    return [base64.b64decode(c["data"]) for c in result["content"] if c["type"] == "image"]


def all_succeeded(done):
    for e in done:
        assert not e["isError"], (e["toolName"], text_of(e["result"])[:300])


def seed(run):
    run.install()
    events = run.print_mode("seed")
    done = ends(events)
    names = [e["toolName"] for e in done]
    assert names == ["textual_run"] + ["computer"] * 4, names
    all_succeeded(done)
    t = done[0]["result"]
    assert t["content"][0]["text"].startswith("count: 2"), t["content"][0]["text"][:80]
    assert t["details"]["size"] == [80, 25] and t["details"]["screenshot"].endswith(".svg"), t["details"]
    assert Path(t["details"]["screenshot"]).is_file()
    # One update per action, each with the screen after it, as the seed streams them.
    updates = [e["partialResult"] for e in events
               if e.get("type") == "tool_execution_update" and e["toolName"] == "textual_run"]
    firsts = [text_of(u).splitlines()[:2] for u in updates]
    assert firsts == [["1/4 press tab", "count: 0"], ["2/4 click #inc", "count: 1"],
                      ["3/4 pause 0.200 s", "count: 1"], ["4/4 click #inc", "count: 2"]], firsts
    for e in done[1:]:
        images = images_of(e["result"])
        assert len(images) == 1 and images[0].startswith(b"\x89PNG"), e["result"]["content"][:1]
    # The private desktop computer started is closed when pi ends.
    left = [sid for sid in run.sessions() if sid.startswith("pi-computer-")]
    assert not left, f"pi left its desktop open: {left}"
    return {"tools": names, "updates": [f[0] for f in firsts], "textual_text": text_of(t).splitlines()[0],
            "desktop": done[1]["result"]["details"]["sid"]}


def terminal(run):
    run.install()
    done = ends(run.print_mode("terminal"))
    names = [e["toolName"] for e in done]
    assert names == ["terminal_spawn", "terminal_wait_for", "terminal_send_line", "terminal_wait_for",
                     "terminal_snapshot", "terminal_screenshot", "terminal_list", "terminal_close"], names
    all_succeeded(done)
    spawn, prompt, _, answer, snapshot, shot, listed, _ = (e["result"] for e in done)
    assert spawn["structuredContent"]["sid"] == "pi-repl", spawn["structuredContent"]
    assert prompt["structuredContent"]["matched"] is True and text_of(prompt).endswith(">>> "), text_of(prompt)
    assert answer["structuredContent"]["matched"] is True, answer["structuredContent"]
    # The model reads the screen under one line of facts.
    lines = text_of(snapshot).splitlines()
    assert json.loads(lines[0])["alive"] is True and lines[1:3] == [">>> 6 * 7", "42"], lines[:4]
    images = images_of(shot)
    assert len(images) == 1 and images[0].startswith(b"\x89PNG"), shot["content"][:1]
    assert "png" not in shot["structuredContent"]
    assert "pi-repl" in [s["sid"] for s in listed["structuredContent"]["sessions"]]
    assert "pi-repl" not in run.sessions()
    return {"tools": names, "screen": lines[1:3]}


def png_size(png):
    """Width and height from a PNG's header."""
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and png[12:16] == b"IHDR", png[:16]
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def display(run):
    run.install()
    # An X server of the test's own, standing in for the user's desktop; it picks a free display
    # number and writes it to fd 1 once it accepts connections.
    xvfb = subprocess.Popen(["Xvfb", "-displayfd", "1", "-screen", "0", "642x481x24", "-nolisten", "tcp"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        number = xvfb.stdout.readline().strip()
        assert number.isdigit(), f"Xvfb gave no display number ({number!r}, exit {xvfb.poll()})"
        run.env["DISPLAY"] = f":{number}"
        done = ends(run.print_mode("display"))
        names = [e["toolName"] for e in done]
        assert names == ["computer", "computer"], names
        all_succeeded(done)
        sizes = []
        for e in done:
            images = images_of(e["result"])
            assert len(images) == 1, e["result"]["content"][:1]
            details = e["result"]["details"]
            assert details["sid"].startswith("pi-computer-") and details["kind"] == "desktop", details
            assert (details["screen_width"], details["screen_height"]) == (642, 481), details
            sizes.append(png_size(images[0]))
        # The screenshots are of that display, at its size; the click landed in its far corner.
        assert sizes == [(642, 481)] * 2, sizes
        assert done[1]["result"]["details"]["pointer"] == {"x": 641, "y": 480}, done[1]["result"]["details"]
        # pi let go of the display when it ended and left the X server running: it is the user's.
        assert not [sid for sid in run.sessions() if sid.startswith("pi-computer-")], run.sessions()
        assert xvfb.poll() is None, f"the X server exited ({xvfb.returncode}) when pi did"
        probe = subprocess.run(["xdpyinfo", "-display", f":{number}"], capture_output=True, text=True, timeout=60)
        assert probe.returncode == 0 and "642x481 pixels" in probe.stdout, probe.stderr[-500:]
    finally:
        run.env.pop("DISPLAY", None)
        xvfb.terminate()  # SIGTERM: it removes its lock file and socket
        try:
            xvfb.wait(timeout=30)
        except subprocess.TimeoutExpired:
            xvfb.kill()
            xvfb.wait()
    return {"tools": names, "display": f":{number}", "screenshots": sizes}


def binary(run, npm_cli):
    """Where the extension finds the binary, without SCREENPILOT_BINARY: nowhere (a clear error), on
    PATH, and in the npm package `screenpilot` that the pi package depends on."""
    node = str(Path(run.env["PATH"].split(":")[0]) / "node")

    def npm(*args):
        out = subprocess.run([node, npm_cli, *args], cwd=run.scratch, capture_output=True, text=True,
                             env={**run.env, "npm_config_cache": str(run.scratch / "npm-cache"),
                                  "npm_config_update_notifier": "false"})
        assert out.returncode == 0, f"npm {args[0]} failed ({out.returncode}): {out.stderr[-3000:]}"
        return out

    del run.env["SCREENPILOT_BINARY"]
    system = "/usr/bin:/bin"  # Xvfb and the rest the daemon runs; no screenpilot there
    assert not shutil.which("screenpilot", path=system), "a screenpilot in /usr/bin hides what this checks"
    node_bin = run.env["PATH"].split(":")[0]
    run.env["PATH"] = f"{node_bin}:{system}"
    # The package as `pi install DIR` sees it, away from any node_modules of the checkout.
    package = run.scratch / "pi-package"
    package.mkdir()
    for name in ("package.json", "README.md"):
        shutil.copy(HERE.parent / name, package / name)
    shutil.copytree(HERE.parent / "extensions", package / "extensions")
    subprocess.run([run.pi, "install", str(package)], env=run.env, cwd=run.work, check=True, stdout=subprocess.DEVNULL)

    def shot(what):
        stderr = []
        done = ends(run.print_mode("binary", stderr))
        assert [e["toolName"] for e in done] == ["computer"], (what, done)
        return done[0], stderr[0]

    # Nowhere: the tool says so and what to do; the terminal tools, listed by the binary, are missing.
    missing, stderr = shot("no binary")
    said = text_of(missing["result"])
    assert missing["isError"], said
    assert said.startswith("no screenpilot binary: this package's dependency, the npm package screenpilot, "), said
    assert f"run npm install in {package})" in said and "SCREENPILOT_BINARY is not set" in said, said
    assert "terminal tools not registered" in stderr, stderr[-2000:]

    # On PATH.
    on_path = run.scratch / "bin"
    on_path.mkdir()
    (on_path / "screenpilot").symlink_to(run.binary)
    run.env["PATH"] = f"{node_bin}:{on_path}:{system}"
    found, _ = shot("on PATH")
    assert not found["isError"], text_of(found["result"])
    assert len(images_of(found["result"])) == 1, found["result"]["content"][:1]
    run.screenpilot("daemon", "stop", "--end-sessions")
    run.env["PATH"] = f"{node_bin}:{system}"

    # From npm: the pi package installed with its dependency, offline, from tarballs: the launcher
    # as it is in packages/npm/screenpilot, and its platform package as packages/build.sh makes it
    # (the binary, stripped, under bin/; build.sh itself also builds the Python wheel, which this
    # does not need). The binary is the platform package's: the daemon the calls start runs it.
    cargo = (HERE.parent.parent.parent / "Cargo.toml").read_text()
    version = re.search(r'^version = "(.*)"', cargo, re.M).group(1)
    dependency = json.loads((package / "package.json").read_text())["dependencies"]["screenpilot"]
    assert dependency == version, f"the pi package depends on screenpilot {dependency}; the workspace is {version}"
    launcher = HERE.parent.parent / "npm/screenpilot"
    platform = "@screenpilot/linux-x64"
    assert platform in json.loads((launcher / "package.json").read_text())["optionalDependencies"]
    platform_dir = run.scratch / "platform"
    (platform_dir / "bin").mkdir(parents=True)
    subprocess.run(["strip", "-o", str(platform_dir / "bin/screenpilot"), run.binary], check=True)
    (platform_dir / "package.json").write_text(json.dumps({
        "name": platform, "version": version, "os": ["linux"], "cpu": ["x64"], "files": ["bin/screenpilot"]}))
    dist = run.scratch / "dist"
    dist.mkdir()
    npm("pack", "--silent", "--pack-destination", str(dist), str(platform_dir), str(launcher), str(package))
    prefix = run.scratch / "prefix"
    npm("install", "--offline", "--no-audit", "--no-fund", "--prefix", str(prefix), *map(str, dist.glob("*.tgz")))
    # npm took the launcher as the pi package's dependency, and the platform package as the launcher's.
    tree = json.loads(npm("ls", "--all", "--json", "--prefix", str(prefix)).stdout)["dependencies"]
    assert tree["@screenpilot/pi"]["dependencies"]["screenpilot"]["version"] == version, tree
    assert "@screenpilot/linux-x64" in tree["screenpilot"]["dependencies"], tree
    installed = prefix / "node_modules/@screenpilot/pi"
    subprocess.run([run.pi, "remove", str(package)], env=run.env, cwd=run.work, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([run.pi, "install", str(installed)], env=run.env, cwd=run.work, check=True,
                   stdout=subprocess.DEVNULL)
    found, _ = shot("from npm")
    assert not found["isError"], text_of(found["result"])
    assert len(images_of(found["result"])) == 1, found["result"]["content"][:1]
    daemon = run.screenpilot("daemon", "status")["pid"]
    runs = os.readlink(f"/proc/{daemon}/exe")
    assert runs == str(prefix / "node_modules/@screenpilot/linux-x64/bin/screenpilot"), runs
    return {"missing": said, "npm_binary": runs.removeprefix(str(prefix) + "/")}


def failures(run):
    run.install()
    done = ends(run.print_mode("failures"))
    names = [e["toolName"] for e in done]
    assert names == ["terminal_spawn", "terminal_wait_for", "computer", "terminal_spawn", "terminal_wait_for",
                     "computer", "computer", "terminal_close", "terminal_close"], names
    all_succeeded(done[i] for i in (0, 1, 3, 4, 7, 8))
    not_sent, unknown, refused = (done[i] for i in (2, 5, 6))
    for e in (not_sent, unknown, refused):
        assert e["isError"], (e["toolName"], text_of(e["result"])[:300])
        assert "png" not in e["result"]["details"], sorted(e["result"]["details"])
    said = {}
    # Each failure that ran carries the screen after it, as an image, under a warning saying whether
    # its input went out.
    for name, e, first in (
        ("not_sent", not_sent, "click failed before any input was sent: nothing was done; the screenshot"),
        ("unknown", unknown, "type failed after its input may have reached the screen: the outcome is unknown; "
                             "inspect the screenshot before retrying."),
    ):
        text, images = text_of(e["result"]), images_of(e["result"])
        assert text.startswith(first), text[:300]
        assert e["result"]["details"]["outcome"] == name, e["result"]["details"]
        assert len(images) == 1 and images[0].startswith(b"\x89PNG"), e["result"]["content"][:1]
        said[name] = text.splitlines()
    assert "mouse" in said["not_sent"][1], said
    assert "has not read its input" in said["unknown"][1], said
    # Refused before anything ran: the daemon's own error, and no picture.
    assert not images_of(refused["result"]), refused["result"]["content"]
    said["refused"] = text_of(refused["result"]).splitlines()
    assert said["refused"][0].startswith("error: ") and "5000" in said["refused"][0], said["refused"]
    return {"tools": names, "said": said}


class Rpc:
    """pi --mode rpc: commands on stdin, events on stdout."""

    def __init__(self, run):
        self.proc = subprocess.Popen(run.pi_args("cancel", "--mode", "rpc", "--no-session"), env=run.env,
                                     cwd=run.work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        # A bound, not a synchronisation: a run that goes wrong fails instead of hanging the test.
        self.watchdog = threading.Timer(240, self.proc.kill)
        self.watchdog.start()

    def send(self, command):
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def events(self):
        for line in self.proc.stdout:
            if line.startswith("{"):
                yield json.loads(line)
        raise AssertionError(f"pi ended (exit {self.proc.wait()}) before the run did")

    def abort_when(self, prompt, trigger):
        """Prompt, send abort at the first event `trigger` accepts; the tool ends and seconds it took."""
        self.send({"id": prompt, "type": "prompt", "message": prompt})
        aborted_at = None
        seen = None
        ended = None
        for event in self.events():
            if aborted_at is None and trigger(event):
                seen = event
                self.send({"id": f"abort-{prompt}", "type": "abort"})
                aborted_at = time.monotonic()
            elif event.get("type") == "agent_settled" and aborted_at is None:
                raise AssertionError(f"the {prompt!r} run ended before anything to abort")
            elif event.get("type") == "tool_execution_end" and aborted_at is not None:
                ended = (event, time.monotonic() - aborted_at)
            elif event.get("type") == "response" and event.get("id") == f"abort-{prompt}":
                assert event["success"], event
                assert ended, "abort answered before the tool ended"
                return seen, *ended


def processes_running(needle):
    """Command lines of live processes containing `needle` (zombies have none)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmdline:
            found.append(cmdline.strip())
    return found


def cancel(run):
    run.install()

    def until(count, what):
        """The daemon answers once exactly `count` requests run (it acts on a hang-up on its own time,
        which no event pi sends can show), or says it did not within 30 s."""
        status = run.screenpilot("daemon", "status", "--until-running", str(count), "--timeout-ms", "30000")
        assert status.get("reached") is True, f"not within 30 s: {what} ({status})"

    def wait_started(event):
        if event.get("type") != "tool_execution_start" or event["toolName"] != "terminal_wait_for":
            return False
        # Abort once the daemon runs the wait, so that the count falling back shows it stopped it.
        until(1, "the daemon runs the wait")
        return True

    def computer_waits(event):
        if event.get("type") != "tool_execution_start" or event["args"]["action"]["type"] != "wait":
            return False
        until(1, "the daemon runs the computer wait")
        return True

    rpc = Rpc(run)
    try:
        _, wait_end, wait_secs = rpc.abort_when("wait", wait_started)
        # The daemon saw the CLI hang up and stopped the wait (without that, it would run 10 minutes).
        until(0, "the daemon stops the wait pi aborted")
        update, textual_end, textual_secs = rpc.abort_when(
            "textual", lambda e: e.get("type") == "tool_execution_update" and e["toolName"] == "textual_run")
        until(0, "the daemon stops the Textual run pi aborted")
        _, computer_end, computer_secs = rpc.abort_when("computer", computer_waits)
        until(0, "the daemon stops the computer wait pi aborted")
    finally:
        rpc.proc.stdin.close()
        rpc.proc.wait(timeout=60)
        rpc.watchdog.cancel()
    assert wait_end["toolName"] == "terminal_wait_for" and wait_end["isError"], wait_end
    assert textual_end["toolName"] == "textual_run" and textual_end["isError"], textual_end
    # Both asked for minutes; an abort ends them at once.
    assert wait_secs < 20 and textual_secs < 20 and computer_secs < 20, (wait_secs, textual_secs, computer_secs)
    # A computer action cancelled after it went out: its outcome is unknown, and the screen is shown.
    assert computer_end["toolName"] == "computer" and computer_end["isError"], computer_end
    said = text_of(computer_end["result"])
    assert said.startswith("wait was cancelled after it was sent: its outcome is unknown; inspect the screenshot "
                           "before retrying."), said
    images = images_of(computer_end["result"])
    assert len(images) == 1 and images[0].startswith(b"\x89PNG"), computer_end["result"]["content"]
    assert computer_end["result"]["details"]["outcome"] == "unknown", computer_end["result"]["details"]
    assert "png" not in computer_end["result"]["details"], sorted(computer_end["result"]["details"])
    assert not processes_running("call wait_for"), processes_running("call wait_for")
    # The daemon stopped the Textual run it was streaming: the app exits and its session goes.
    sid = update["partialResult"]["details"]["sid"]
    assert text_of(update["partialResult"]).startswith("1/2 press tab"), update["partialResult"]
    waited = run.screenpilot("wait", sid, "--exit", "--timeout-ms", "10000")
    assert waited.get("ok") is False or waited.get("alive") is False, waited
    assert not processes_running(str(run.app)), processes_running(str(run.app))
    sessions = run.sessions()
    assert sid not in sessions or sessions[sid]["state"] != "running", sessions
    # Cancelling a wait ends the wait, not the session it watched.
    assert run.screenpilot("alive", "pi-cancel")["alive"] is True
    run.screenpilot("close", "pi-cancel")
    return {"wait_aborted_after_s": round(wait_secs, 2), "textual_aborted_after_s": round(textual_secs, 2),
            "computer_aborted_after_s": round(computer_secs, 2), "computer_said": said.splitlines()[0],
            "textual_sid": sid, "sessions_left": sorted(run.sessions())}


def readme_pi_config(readme):
    """The JSON block that follows the "pi (1.6, built-in MCP)" paragraph of docs/mcp.md, and its command."""
    text = Path(readme).read_text()
    start = text.index("pi (1.6, built-in MCP)")
    command = re.search(r"`(pi mcp add [^`]+)`", text[start:]).group(1)
    block = re.search(r"```json\n(.*?)```", text[start:], re.S).group(1)
    return json.loads(block), command


def mcp(run, readme):
    config, command = readme_pi_config(readme)
    server = config["mcpServers"]["screenpilot"]
    assert server["command"] == "/path/to/screenpilot", server
    server["command"] = run.binary
    # The README's command writes the same server entry.
    words = [run.binary if w == "/path/to/screenpilot" else w for w in command.split()]
    assert words[0] == "pi", words
    subprocess.run([run.pi, *words[1:]], env=run.env, cwd=run.work, check=True, stdout=subprocess.DEVNULL)
    written = json.loads((run.home / ".pi/agent/mcp.json").read_text())
    assert written["mcpServers"]["screenpilot"] == server, (written, server)
    # Now the README's own JSON is the config pi runs with, and pi says what the README says it does.
    (run.home / ".pi/agent/mcp.json").write_text(json.dumps(config))
    listed = subprocess.run([run.pi, "mcp", "list"], env=run.env, cwd=run.work, capture_output=True, text=True,
                            timeout=120)
    said = re.search(r"screenpilot: connected, (\d+) tools \(direct, global\)", listed.stdout)
    assert said, listed.stdout + listed.stderr
    done = ends(run.print_mode("mcp"))
    names = [e["toolName"] for e in done]
    assert names == [f"mcp__screenpilot__{n}" for n in
                     ["spawn", "send", "send", "close",
                      "textual_run", "desktop_start", "computer", "computer", "computer", "computer",
                      "snapshot", "close"]], names
    all_succeeded(done)
    texts = [text_of(e["result"]) for e in done]
    # spawn waited for the prompt and showed it; send waited for 42 and showed the screen then; the
    # whole screen when asked for.
    assert texts[0].startswith("sid=pi-mcp held=regex") and texts[0].endswith(">>> "), texts[0]
    assert texts[1].startswith('held=regex match="42"'), texts[1]
    assert ">>> 6 * 7\n42" in texts[2], texts[2]
    assert "count: 2" in texts[4], texts[4]
    # Each computer action (screenshot, click, type, keypress) answers with a PNG.
    for e in done[6:10]:
        images = images_of(e["result"])
        assert len(images) == 1 and images[0].startswith(b"\x89PNG"), (text_of(e["result"])[:200], e["result"]["content"][:1])
    # The typed command ran in the xterm: the title it set is among the desktop's windows.
    assert "typed-through-mcp" in texts[10], texts[10][:300]
    assert "pi-mcp" not in run.sessions() and "pi-mcp-desktop" not in run.sessions()
    return {"tools": names, "config": config["mcpServers"]["screenpilot"]["args"], "pi_mcp_list": said.group(0)}


def main():
    pi, node_bin, screenpilot, python, scenario, readme, npm_cli = sys.argv[1:]
    scratch = Path(tempfile.mkdtemp(prefix=f"sp-pi-{scenario}-"))
    run = Run(pi, node_bin, screenpilot, python, scratch)
    try:
        if scenario == "mcp":
            summary = mcp(run, readme)
        elif scenario == "binary":
            summary = binary(run, npm_cli)
        else:
            scenarios = {"seed": seed, "terminal": terminal, "display": display, "failures": failures, "cancel": cancel}
            summary = scenarios[scenario](run)
    finally:
        subprocess.run([screenpilot, "daemon", "stop", "--end-sessions"], env=run.env, capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps({"ok": True, "scenario": scenario, **summary}))


if __name__ == "__main__":
    main()
