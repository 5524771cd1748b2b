//! Limits and abuse (issue 13, points 5-12): each test drives a real daemon the way an attacker or a
//! careless client would, and checks that the daemon answers, refuses with a reason, or sheds the one
//! bad connection, while it keeps serving everyone else.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Daemon, Stopped, LONG_MS};
use serde_json::{json, Value};

/// A raw connection to the daemon of `d` (started if needed), for what the CLI never sends.
fn raw_connection(d: &Daemon) -> UnixStream {
    d.daemon_pid();
    UnixStream::connect(d.path().join("daemon.sock")).expect("connect to the daemon socket")
}

#[test]
fn a_recording_gets_the_callers_umask_and_never_replaces_a_file_without_force() {
    let d = Daemon::new();
    let cast = d.path().join("out.cast");
    let cast_arg = cast.to_string_lossy().into_owned();
    let spawn_with_umask = |sid: &str, extra: &[&str]| {
        let mut args = vec!["--json", "spawn", "--sid", sid, "--record", &cast_arg];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", "cat"]);
        let mut cmd = d.command(&args);
        // SAFETY: umask is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::umask(0o077);
                Ok(())
            });
        }
        cmd.output().expect("run screenpilot spawn")
    };
    let first = spawn_with_umask("rec1", &[]);
    assert!(first.status.success(), "{first:?}");
    let mode = std::fs::metadata(&cast).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the recording is {mode:o} under umask 077");

    let second = spawn_with_umask("rec2", &[]);
    assert_eq!(second.status.code(), Some(2), "{second:?}");
    let answer: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(answer["error"]["field"], "record", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already exists"),
        "{answer}"
    );
    assert_eq!(d.sp_json(&["alive", "rec1"])["alive"], true);

    let forced = spawn_with_umask("rec3", &["--force"]);
    assert!(forced.status.success(), "{forced:?}");
}

#[test]
fn a_font_size_out_of_range_is_refused_naming_the_field() {
    let d = Daemon::new();
    d.sp_json(&["spawn", "--sid", "s", "--", "cat"]);
    let out_of_range = [
        "NaN", "inf", "-inf", "0", "-1", "5.99", "96.01", "1e6", "1e308", "1e-300",
    ];
    for scale in out_of_range {
        let flag = format!("--scale={scale}");
        let out = d.sp(&["screenshot", "s", "-o", "x.png", &flag]);
        assert_eq!(out.status.code(), Some(2), "--scale {scale}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--scale"), "--scale {scale}: {stderr}");
        assert!(
            stderr.contains("6-96 px") || stderr.contains("not a number of pixels"),
            "--scale {scale}: {stderr}"
        );
    }
    assert!(!d.path().join("x.png").exists());
    // The same through the daemon: a number past f32's range was once read as infinity and sent on
    // as null, the default size.
    for font_px in [
        "0", "-1", "5.99", "96.01", "1e6", "1e308", "1e-300", "3.4e39",
    ] {
        let params = format!(r#"{{"sid": "s", "font_px": {font_px}}}"#);
        let error = d.sp_error(&["call", "screenshot", &params]);
        assert_eq!(error["code"], "invalid_argument", "{font_px}: {error}");
        assert_eq!(error["field"], "font_px", "{font_px}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(message.contains("6-96 px"), "{font_px}: {message}");
    }
    let drawn = d.sp_json(&["call", "screenshot", r#"{"sid": "s", "font_px": 6}"#]);
    assert!(drawn["width"].as_u64().is_some_and(|w| w > 0), "{drawn}");
}

#[test]
fn a_session_limit_of_zero_is_refused_at_daemon_start() {
    let d = Daemon::with_env(&[("SCREENPILOT_MAX_SESSIONS", "0")]);
    let out = d.sp(&["--json", "spawn", "--", "cat"]);
    assert!(!out.status.success(), "{out:?}");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("SCREENPILOT_MAX_SESSIONS=0"), "{text}");
}

#[test]
fn the_session_limit_error_names_a_few_sessions_not_all_of_them() {
    let d = Daemon::with_env(&[("SCREENPILOT_MAX_SESSIONS", "14")]);
    for i in 0..14 {
        d.sp_json(&["spawn", "--sid", &format!("s{i:02}"), "--", "cat"]);
    }
    let refused = d.sp_error(&["spawn", "--sid", "one-too-many", "--", "cat"]);
    let message = refused["message"].as_str().unwrap();
    assert!(message.contains("s00, s01"), "{message}");
    assert!(!message.contains("s13"), "{message}");
    assert!(message.contains("and 4 more"), "{message}");
}

/// Send one request line on a raw connection.
fn send(conn: &mut UnixStream, request: Value) {
    let mut line = request.to_string();
    line.push('\n');
    conn.write_all(line.as_bytes()).expect("send a request");
}

/// Block until the daemon has closed `conn` entirely (hang-up), or `limit` passes; true on hang-up.
/// Unread answers in our receive buffer do not hide it: poll reports POLLHUP regardless.
fn hung_up_within(conn: &UnixStream, limit: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let deadline = std::time::Instant::now() + limit;
    loop {
        let mut pfd = libc::pollfd {
            fd: conn.as_raw_fd(),
            events: 0,
            revents: 0,
        };
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, left.as_millis() as i32) };
        // A signal of another test's (a SIGCHLD handler tokio installed for the whole process)
        // interrupts the wait: wait on for what is left.
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        return n == 1 && pfd.revents & libc::POLLHUP != 0;
    }
}

#[test]
fn a_client_that_half_closes_after_its_request_still_gets_every_answer() {
    let d = Daemon::new();
    d.spawn_bash("b");
    for i in 0..10 {
        let mut conn = raw_connection(&d);
        conn.set_read_timeout(Some(Duration::from_millis(LONG_MS)))
            .unwrap();
        send(&mut conn, json!({"id": i, "op": "list", "params": {}}));
        conn.shutdown(std::net::Shutdown::Write).unwrap();
        // The daemon answers, then closes: reading to the end returns the answer.
        let mut answers = String::new();
        conn.read_to_string(&mut answers)
            .expect("the daemon closes after answering");
        let answer: Value = serde_json::from_str(answers.trim())
            .unwrap_or_else(|e| panic!("list {i}: no answer ({e}): {answers:?}"));
        assert_eq!(answer["id"], i, "{answer}");
        assert_eq!(answer["ok"], true, "{answer}");
    }
    for i in 0..5 {
        let mut conn = raw_connection(&d);
        conn.set_read_timeout(Some(Duration::from_millis(LONG_MS)))
            .unwrap();
        let text = format!("echo $((500+{i}))");
        send(
            &mut conn,
            json!({"id": 1, "op": "send_line", "params": {"sid": "b", "text": text}}),
        );
        conn.shutdown(std::net::Shutdown::Write).unwrap();
        let mut answers = String::new();
        conn.read_to_string(&mut answers).unwrap();
        assert!(
            answers.contains("\"ok\":true"),
            "send_line {i}: {answers:?}"
        );
        d.wait_regex("b", &format!("^{}$", 500 + i));
    }
}

#[test]
fn a_client_that_never_reads_its_answers_is_disconnected_and_others_are_served() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn", "--sid", "big", "--size", "1000x100", "--", "python3", "-c",
        "import sys, time; sys.stdout.write(('x' * 999 + '\\n') * 9000 + 'flood-end\\n'); sys.stdout.flush(); time.sleep(600)",
    ]);
    // Once the whole flood is in (its last line), not at its first screenful: each answer below
    // is then the size measured here.
    d.wait_regex("big", "^flood-end$");
    // Each answer carries 9000 lines of 999 characters of history: about 9 MB.
    let one = d.sp_json(&["call", "snapshot", r#"{"sid": "big", "scrollback": 10000}"#]);
    let answer_bytes = one.to_string().len();
    // Three times the queue limit, so the daemon must shed the connection well before the end.
    let requests = (3 * 64 * 1024 * 1024 / answer_bytes + 1).max(3);
    eprintln!("{requests} snapshots of {answer_bytes} bytes");
    let mut conn = raw_connection(&d);
    for i in 0..requests {
        let line = format!(
            "{}\n",
            json!({"id": i, "op": "snapshot", "params": {"sid": "big", "scrollback": 10000}})
        );
        // The daemon may shed the connection before the last request is even sent.
        if conn.write_all(line.as_bytes()).is_err() {
            break;
        }
    }
    assert!(
        hung_up_within(&conn, Duration::from_secs(120)),
        "{requests} unread answers of {answer_bytes} bytes did not get the connection closed"
    );
    let log = std::fs::read_to_string(d.path().join("daemon.log")).unwrap_or_default();
    assert!(
        log.contains("unread"),
        "the daemon log gives no reason: {log}"
    );
    let list = d.sp_json(&["list"]);
    assert!(list.to_string().contains("big"), "{list}");
}

#[test]
fn out_of_file_descriptors_the_daemon_refuses_new_clients_and_keeps_serving() {
    let d = Daemon::new();
    let mut start = d.command(&["daemon", "start"]);
    // SAFETY: setrlimit is async-signal-safe; the daemon inherits the limit.
    unsafe {
        start.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 64,
                rlim_max: 64,
            };
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            Ok(())
        });
    }
    let started = start.stdout(Stdio::null()).status().unwrap();
    assert!(started.success());
    d.sp_json(&["spawn", "--sid", "c", "--", "cat"]);
    let pid = d.daemon_pid();
    // One connection opened early, to ask for work while the rest have used up the descriptors.
    let mut early = raw_connection(&d);
    let socket = d.path().join("daemon.sock");
    let mut idle = Vec::new();
    // Each of these is accepted (holding a descriptor) until the daemon runs out.
    let refused = loop {
        assert!(idle.len() < 200, "200 connections and none refused");
        let mut conn = UnixStream::connect(&socket).expect("connect");
        conn.set_read_timeout(Some(Duration::from_millis(LONG_MS)))
            .unwrap();
        // A refused client may find the connection already closed when it writes (the refusal is
        // sent as soon as it connects): the refusal is still there to read.
        let request = json!({"id": 1, "op": "alive", "params": {"sid": "c"}});
        let _ = conn.write_all(format!("{request}\n").as_bytes());
        let mut answer = String::new();
        BufReader::new(&conn).read_line(&mut answer).unwrap();
        let answer: Value = serde_json::from_str(answer.trim()).unwrap();
        if answer["ok"] == false {
            break answer;
        }
        idle.push(conn);
    };
    assert_eq!(refused["error"]["code"], "limit_exceeded", "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("file descriptors"),
        "{refused}"
    );
    // The daemon does not spin while it is out of descriptors: a 1 s wait costs it little CPU.
    let before = cpu_ticks(pid);
    let wall = Instant::now();
    send(
        &mut early,
        json!({"id": 7, "op": "wait_for", "params": {"sid": "c", "pattern": "never-shows", "timeout_ms": 1000}}),
    );
    let mut answer = String::new();
    BufReader::new(&early).read_line(&mut answer).unwrap();
    let spent = cpu_ticks(pid) - before;
    assert!(answer.contains("\"id\":7"), "{answer}");
    let ticks_per_sec = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let share = spent as f64 / ticks_per_sec / wall.elapsed().as_secs_f64();
    assert!(
        share < 0.2,
        "the daemon used {:.0}% of a core while out of descriptors",
        share * 100.0
    );
    // Clients leaving frees descriptors; new clients are served again.
    // The daemon learns of the hang-ups as it gets to them; retry (each try a full round trip) until
    // one of the freed descriptors serves a new client.
    drop(idle);
    let served = (0..1000).any(|_| d.json_status(&["alive", "c"]).1["alive"] == true);
    assert!(
        served,
        "no new client was served after 100+ connections closed"
    );
}

/// User plus system CPU time of `pid`, in clock ticks.
fn cpu_ticks(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

#[test]
fn the_cli_gives_up_on_a_stopped_daemon_after_the_requests_timeout_plus_a_grace() {
    let d = Daemon::new();
    d.sp_json(&["spawn", "--sid", "c", "--", "cat"]);
    let pid = d.daemon_pid();
    let stopped = Stopped::stop(pid);
    let ask = |args: &[&str]| {
        let started = Instant::now();
        let out = d
            .command(args)
            .env("SCREENPILOT_ANSWER_GRACE_MS", "300")
            .output()
            .unwrap();
        (out, started.elapsed())
    };
    let (out, took) = ask(&["--json", "alive", "c"]);
    assert!(!out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("did not answer within 300 ms"), "{stdout}");
    assert!(took < Duration::from_secs(10), "gave up after {took:?}");
    // A wait's own timeout counts: 1000 ms of wait plus 300 ms of grace.
    let (out, took) = ask(&["--json", "wait", "c", "--regex=x", "--timeout-ms", "1000"]);
    assert!(!out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("did not answer within 1300 ms"), "{stdout}");
    assert!(
        took >= Duration::from_millis(1300),
        "gave up after {took:?}"
    );
    drop(stopped);
    assert_eq!(d.sp_json(&["alive", "c"])["alive"], true);
}

#[test]
fn mcp_stdio_answers_overlong_malformed_and_ill_typed_lines_with_errors() {
    let d = Daemon::new();
    let mut mcp = d
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start screenpilot mcp");
    let mut stdin = mcp.stdin.take().unwrap();
    let stdout = mcp.stdout.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut long = vec![b'x'; 16 * 1024 * 1024 + 10];
        long.push(b'\n');
        stdin.write_all(&long)?;
        stdin.write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n")?;
        for (id, arguments) in [(2, json!("{\"sid\": \"x\"}")), (3, json!(["x"]))] {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "list", "arguments": arguments}});
            stdin.write_all(format!("{call}\n").as_bytes())?;
        }
        Ok::<_, std::io::Error>(())
        // stdin closes here: the client is done.
    });
    let answers: Vec<Value> = BufReader::new(stdout)
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    writer.join().unwrap().unwrap();
    let _ = mcp.wait();
    assert_eq!(answers.len(), 4, "{answers:?}");
    assert_eq!(answers[0]["error"]["code"], -32600, "{}", answers[0]);
    assert!(answers[0]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("longer than"));
    assert_eq!(answers[1]["error"]["code"], -32700, "{}", answers[1]);
    for (answer, id) in answers[2..].iter().zip([2, 3]) {
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("params.arguments"),
            "{answer}"
        );
    }
}

/// `screenpilot --json ARGS...` under the memory limit: its exit status and the JSON it printed.
fn limited_json(d: &Daemon, args: &[&str], env: &[(&str, &str)]) -> (i32, Value) {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let mut cmd = d.command(&full);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::limit_memory(&mut cmd)
        .output()
        .expect("run screenpilot");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "screenpilot {args:?} printed no JSON ({e}); {:?}\nstdout: {stdout}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), value)
}

#[test]
fn a_link_that_sends_an_endless_line_is_dropped_naming_why_in_256_mib_and_its_group_ends() {
    let d = Daemon::new();
    let pid_file = d.path().join("sleep.pid");
    // A far side that answers the handshake, starts a child of its own, then answers the next
    // request with one line that never ends.
    let mid = common::script(
        d.path(),
        "endless-bridge",
        &format!(
            "sleep 1000 &\necho $! > {}\nread -r first\nprintf '%s\\n' '{{\"id\":0,\"ok\":true,\"result\":{{\"instance\":\"hostile\"}}}}'\nread -r next\nexec cat /dev/zero",
            pid_file.display()
        ),
    );
    let mid = format!("exec:{}", mid.display());
    for host in ["exec:cat /dev/zero", mid.as_str()] {
        let (status, answer) = limited_json(&d, &["--host", host, "list"], &[]);
        assert_eq!(status, 2, "{host}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("dropped the link") && message.contains("longer than 67108864 bytes"),
            "{host}: {answer}"
        );
    }
    assert_ended(&pid_file, "the bridge's");
}

#[test]
fn a_failed_bridges_children_end_with_it() {
    let d = Daemon::new();
    let pid_file = d.path().join("sleep.pid");
    let failing = common::script(
        d.path(),
        "failing-bridge",
        &format!(
            "sleep 1000 &\necho $! > {}\necho 'no daemon here' >&2\nexit 3",
            pid_file.display()
        ),
    );
    let (status, answer) = limited_json(
        &d,
        &["--host", &format!("exec:{}", failing.display()), "list"],
        &[],
    );
    assert_eq!(status, 2, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("status 3") && message.contains("no daemon here"),
        "{answer}"
    );
    assert_ended(&pid_file, "the failed bridge's");
}

#[test]
fn screenpilot_host_is_read_as_host_is_and_the_daemon_never_follows_it() {
    let d = Daemon::new();
    let marker = d.path().join("dialled");
    let bridge = common::script(
        d.path(),
        "marking-bridge",
        &format!("touch {}\nexit 1", marker.display()),
    );
    let host = format!("exec:{}", bridge.display());
    let env = [("SCREENPILOT_HOST", host.as_str())];
    // Verbs of this machine refuse the variable as they refuse --host, and dial nothing.
    for verb in [
        &["daemon", "start"][..],
        &["daemon", "run"],
        &["dial-stdio"],
    ] {
        let (status, answer) = limited_json(&d, verb, &env);
        assert_eq!(status, 2, "{verb:?}: {answer}");
        assert_eq!(answer["error"]["field"], "host", "{verb:?}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("unset SCREENPILOT_HOST")),
            "{verb:?}: {answer}"
        );
    }
    // A client aimed at this machine starts its daemon, which serves here and dials nothing.
    let (status, answer) = limited_json(
        &d,
        &["--host", "local", "spawn", "--sid", "s", "true"],
        &env,
    );
    assert_eq!(status, 0, "{answer}");
    let (status, answer) = limited_json(&d, &["--host", "local", "list"], &env);
    assert_eq!(status, 0, "{answer}");
    assert!(
        !marker.exists(),
        "something dialled SCREENPILOT_HOST's bridge"
    );
}

#[test]
fn requests_in_flight_on_one_connection_are_bounded_and_a_flood_stays_in_256_mib() {
    let d = Daemon::new();
    let out = common::limit_memory(&mut d.command(&["daemon", "start"]))
        .output()
        .expect("start the daemon");
    assert!(out.status.success(), "{out:?}");
    d.spawn_bash("b");
    // Waits that hold: the first 256 run, every one past them is answered at once.
    let mut conn = raw_connection(&d);
    for id in 0..300 {
        send(
            &mut conn,
            json!({"id": id, "op": "wait_for", "params": {"sid": "b", "pattern": "never-shown", "timeout_ms": 600_000}}),
        );
    }
    let mut reader = BufReader::new(conn.try_clone().expect("clone the connection"));
    for _ in 0..44 {
        let mut line = String::new();
        reader.read_line(&mut line).expect("an answer");
        let answer: Value = serde_json::from_str(&line).expect("a JSON answer");
        assert_eq!(answer["error"]["code"], "limit_exceeded", "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("256 requests are already running")),
            "{answer}"
        );
        assert!(
            answer["id"].as_u64().is_some_and(|id| id >= 256),
            "{answer}"
        );
    }
    drop(reader);
    drop(conn);
    // 12,000 pipelined snapshots: each is answered, ok or refused, and the daemon lives on.
    let conn = raw_connection(&d);
    let mut writer = conn.try_clone().expect("clone the connection");
    let total = 12_000;
    let sender = std::thread::spawn(move || {
        let mut batch = String::new();
        for id in 0..total {
            batch.push_str(&format!(
                "{{\"id\":{id},\"op\":\"snapshot\",\"params\":{{\"sid\":\"b\"}}}}\n"
            ));
        }
        writer.write_all(batch.as_bytes())
    });
    let mut answered = 0;
    let mut refused = 0;
    for line in BufReader::new(&conn).lines() {
        let answer: Value = serde_json::from_str(&line.expect("a line")).expect("JSON");
        if answer.get("progress").is_some() {
            continue;
        }
        answered += 1;
        if answer["ok"] == false {
            assert_eq!(answer["error"]["code"], "limit_exceeded", "{answer}");
            refused += 1;
        }
        if answered == total {
            break;
        }
    }
    sender.join().unwrap().expect("send every request");
    assert_eq!(answered, total);
    let pid = d.daemon_pid();
    let peak = common::peak_kib(pid);
    eprintln!("12,000 pipelined snapshots: {refused} refused; daemon peak {peak} KiB");
    assert!(peak < common::MEMORY_LIMIT_BYTES / 1024, "{peak} KiB");
    d.sp_json(&["list"]);
}

#[test]
fn an_mcp_line_at_the_bound_is_answered_and_longer_ones_are_refused() {
    let d = Daemon::new();
    let mut cmd = d.command(&["mcp"]);
    let mut mcp = common::limit_memory(&mut cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start screenpilot mcp");
    let mut stdin = mcp.stdin.take().unwrap();
    let stdout = mcp.stdout.take().unwrap();
    let bound = 8 * 1024 * 1024;
    let writer = std::thread::spawn(move || {
        let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "limits", "version": "1"}}});
        stdin.write_all(format!("{hello}\n").as_bytes())?;
        stdin.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")?;
        // A call whose line is the bound exactly: answered by the tool, not lost.
        let head = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"send\",\"arguments\":{\"sid\":\"nobody\",\"text\":\"";
        let tail = "\"}}}";
        let mut line = head.as_bytes().to_vec();
        line.resize(bound - tail.len(), b'x');
        line.extend_from_slice(tail.as_bytes());
        line.push(b'\n');
        stdin.write_all(&line)?;
        // Past it, and the 16 MiB lines that went unanswered or wrongly daemon_gone before.
        for len in [bound + 1, 16 * 1024 * 1024 - 1, 16 * 1024 * 1024] {
            let mut long = vec![b'x'; len];
            long.push(b'\n');
            stdin.write_all(&long)?;
        }
        let list = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
            "params": {"name": "list", "arguments": {}}});
        stdin.write_all(format!("{list}\n").as_bytes())?;
        Ok::<_, std::io::Error>(stdin)
    });
    let mut answers = Vec::new();
    let mut lines = BufReader::new(stdout).lines();
    while answers.len() < 6 {
        let line = lines.next().expect("an answer").expect("a line");
        answers.push(serde_json::from_str::<Value>(&line).expect("JSON"));
    }
    drop(writer.join().unwrap().unwrap());
    let _ = mcp.wait();
    let of = |id: i64| answers.iter().find(|a| a["id"] == id).cloned();
    let call = of(7).expect("the call at the bound was answered");
    assert!(!call.to_string().contains("daemon_gone"), "{call}");
    assert!(call.to_string().contains("nobody"), "{call}");
    let refused: Vec<&Value> = answers
        .iter()
        .filter(|a| a["error"]["code"] == -32600)
        .collect();
    assert_eq!(refused.len(), 3, "{answers:?}");
    let list = of(8).expect("the call after was answered");
    assert!(list.get("result").is_some(), "{list}");
}

#[test]
fn argument_errors_are_one_json_object_under_json() {
    let d = Daemon::new();
    for args in [
        &["--json", "list", "--nope"][..],
        &["--json", "frobnicate"],
        &["--json", "render"],
        &["--json", "snapshot", "--timeout-ms", "many"],
    ] {
        let out = d.command(args).output().expect("run screenpilot");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let answer: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: no JSON ({e}): {out:?}"));
        assert_eq!(answer["ok"], false, "{answer}");
        assert_eq!(answer["error"]["code"], "invalid_argument", "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("arguments: ") && m.len() > 20),
            "{answer}"
        );
    }
}

/// The process whose pid a bridge wrote to `pid_file` ends (woken by its pidfd): `whose` names it.
fn assert_ended(pid_file: &std::path::Path, whose: &str) {
    let pid: i32 = std::fs::read_to_string(pid_file)
        .expect("the bridge wrote its child's pid")
        .trim()
        .parse()
        .expect("a pid");
    assert!(
        common::wait_for_process_exit(pid, Duration::from_millis(LONG_MS)),
        "{whose} child {pid} outlived its link"
    );
}
