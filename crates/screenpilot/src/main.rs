//! The `screenpilot` binary: parse the command line, run one verb, report errors in one place.

use std::process::ExitCode;

use clap::Parser;
use serde_json::json;

use screenpilot::cli::{self, Cli, DaemonAction, Verb};
use screenpilot::fleet::Fleet;
use screenpilot::host::Host;
use screenpilot::ops::ErrorCode;
use screenpilot::{daemon, Client, OpError, Paths};

fn main() -> ExitCode {
    // A session's holder, started by the daemon as `daemon hold`: first of all, before the CLI's
    // parser (its whole tree of verbs) takes memory a holder would keep for its session's life; like
    // the guard, it closes what it inherited before anything opens a descriptor.
    let mut args = std::env::args_os().skip(1);
    if (args.next(), args.next(), args.next()) == (Some("daemon".into()), Some("hold".into()), None)
    {
        return match screenpilot_session::held::hold() {
            Ok(status) => ExitCode::from(status),
            Err(message) => fail(&OpError::new(ErrorCode::DaemonConfig, message), false),
        };
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => return bad_arguments(&error),
    };
    // An operation's own verb is read here too, so its bad arguments read as any other's.
    if let Verb::Op(words) = &cli.verb {
        if let Err(error) = cli::parse_op_verb(words) {
            return bad_arguments(&error);
        }
    }
    // The guard closes what it inherited before anything opens a descriptor of its own.
    if let Verb::Daemon {
        action: Some(DaemonAction::Guard),
        ..
    } = &cli.verb
    {
        let grace = daemon::limits_from_env()
            .map(|limits| limits.close_grace)
            .unwrap_or_else(|_| screenpilot_session::Limits::default().close_grace);
        return match screenpilot::guard::run(&Paths::from_env(), grace) {
            Ok(status) => ExitCode::from(status),
            Err(message) => fail(&OpError::new(ErrorCode::DaemonConfig, message), cli.json),
        };
    }
    let hosts = match screenpilot::host::hosts_from(&cli.host) {
        Ok(hosts) => hosts,
        Err(error) => return fail(&error, cli.json),
    };
    let local = hosts.len() == 1 && hosts[0].is_local();
    // SCREENPILOT_HOST is read as --host is, for every verb: a daemon never follows it (shared
    // dotfiles on a host would make its daemon dial itself), and a verb of this machine refuses it.
    if !local {
        if let Some(verb) = here_only(&cli.verb) {
            let how = if cli.host.is_empty() {
                format!("unset {}", screenpilot::host::HOST_VAR)
            } else {
                "leave out --host".to_owned()
            };
            let error =
                OpError::invalid("host", format!("{verb} works on this machine only; {how}"));
            return fail(&error, cli.json);
        }
    }
    // test runs step files on sessions of its own: no daemon.
    if let Verb::Test(args) = &cli.verb {
        return match cli::test::run(args, cli.json) {
            Ok(status) => ExitCode::from(status as u8),
            Err(error) => fail(&error, cli.json),
        };
    }
    // install writes an agent host's configuration files: no daemon.
    if let Verb::Install(args) = &cli.verb {
        return match cli::install::run(args, cli.json) {
            Ok(status) => ExitCode::from(status as u8),
            Err(error) => fail(&error, cli.json),
        };
    }
    // replay plays a file in this terminal: no daemon, no operation.
    if let Verb::Replay(args) = &cli.verb {
        let replay = cli::replay::Replay {
            file: args.file.clone(),
            speed: args.speed,
            idle_limit: args.idle_limit,
        };
        return match cli::replay::run(&replay) {
            Ok(status) => ExitCode::from(status as u8),
            Err(error) => fail(&error, cli.json),
        };
    }
    // render draws a file into another, here too.
    if let Verb::Render(args) = &cli.verb {
        return match cli::render::run(&render_of(args)) {
            Ok(rendered) => {
                if cli.json {
                    println!("{}", json!(rendered));
                } else {
                    println!("{}", rendered.human());
                }
                ExitCode::SUCCESS
            }
            Err(error) => fail(&error, cli.json),
        };
    }
    // Fast path: a one-shot verb to this machine's daemon, already running, needs no async runtime.
    if local {
        if let Some(outcome) = one_shot(&cli) {
            return match outcome {
                Ok(status) => ExitCode::from(status as u8),
                Err(error) => fail(&error, cli.json),
            };
        }
    }
    // The daemon (and the MCP server) serve many requests at once; a one-shot verb is a single
    // request, and a single-threaded runtime starts faster.
    let serving = matches!(
        cli.verb,
        Verb::Daemon {
            action: None | Some(DaemonAction::Run),
            ..
        } | Verb::Mcp { .. }
    );
    let mut builder = if serving {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(2);
        builder
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            return fail(
                &OpError::new(
                    ErrorCode::Runtime,
                    format!("cannot start the async runtime: {e}"),
                ),
                cli.json,
            )
        }
    };
    let outcome = runtime.block_on(run(&cli, hosts));
    // Done: a read of stdin parked on a blocking thread (dial-stdio, whose far side has not closed
    // our stdin) must not hold the exit.
    runtime.shutdown_background();
    match outcome {
        Ok(status) => ExitCode::from(status as u8),
        Err(error) => fail(&error, cli.json),
    }
}

/// The verbs that work on this machine only (a verb, for the error), or `None`.
fn here_only(verb: &Verb) -> Option<&'static str> {
    match verb {
        Verb::Test(_) => Some("test (step files run in this process)"),
        Verb::Replay(_) => Some("replay (it plays a file here)"),
        Verb::Install(_) => Some("install (it writes this machine's agent configuration)"),
        Verb::Render(_) => Some("render (it draws a file here)"),
        Verb::DialStdio { .. } => Some("dial-stdio (it is the far end of a link)"),
        Verb::Daemon {
            action: None | Some(DaemonAction::Run | DaemonAction::Start | DaemonAction::Guard),
            ..
        } => Some("daemon run and daemon start (a host's daemon starts with its first link)"),
        _ => None,
    }
}

/// What `render` draws, from its arguments.
fn render_of(args: &cli::RenderArgs) -> cli::render::Render {
    cli::render::Render {
        file: args.file.clone(),
        output: args.output.clone(),
        font_px: args.font_px,
        theme: match args.theme {
            cli::RenderTheme::Dark => screenpilot_screen::ThemeName::Dark,
            cli::RenderTheme::Light => screenpilot_screen::ThemeName::Light,
        },
        idle_limit: args.idle_limit,
        fps: args.fps,
        speed: args.speed,
    }
}

/// Run an operation verb over a blocking connection when a daemon already answers; `None` otherwise
/// (daemon and MCP verbs, or no daemon yet), and `main` takes the async path.
fn one_shot(cli: &Cli) -> Option<Result<i32, OpError>> {
    if matches!(
        cli.verb,
        Verb::Daemon { .. } | Verb::Mcp { .. } | Verb::Attach(_) | Verb::DialStdio { .. }
    ) {
        return None;
    }
    let plan = match cli::request(&cli.verb) {
        Ok(plan) => plan,
        Err(e) => return Some(Err(e)),
    };
    let paths = Paths::from_env();
    let answer = screenpilot::client::call_blocking(&paths, &plan.op, plan.params, |update| {
        cli::progress(&cli.verb, update, cli.json)
    })?;
    Some(answer.and_then(|result| cli::present(&cli.verb, &plan.op, &result, cli.json)))
}

/// An argument clap could not parse: its own text on stderr (help and version on stdout, exit 0),
/// and under `--json` one JSON object on stdout too, as every other error gives.
fn bad_arguments(error: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) || !std::env::args().skip(1).any(|a| a == "--json")
    {
        error.exit();
    }
    let text = error.render().to_string();
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("the arguments do not parse");
    let message = first.strip_prefix("error: ").unwrap_or(first);
    let error_json = OpError::invalid("arguments", format!("{message} (see --help)"));
    println!("{}", json!({ "ok": false, "error": error_json }));
    eprint!("{text}");
    ExitCode::from(2)
}

/// Print an error: to stderr for people, and as the one JSON object with --json. Exit status 2.
fn fail(error: &OpError, as_json: bool) -> ExitCode {
    if as_json {
        println!("{}", json!({ "ok": false, "error": error }));
    }
    eprintln!("screenpilot: {}", error.message);
    ExitCode::from(2)
}

/// Run one verb; returns the exit status.
async fn run(cli: &Cli, hosts: Vec<Host>) -> Result<i32, OpError> {
    let paths = Paths::from_env();
    let fleet = Fleet::new(paths.clone(), hosts);
    if let Verb::Daemon {
        action,
        until_running,
        timeout_ms,
        keep_sessions,
        end_sessions,
    } = &cli.verb
    {
        let until = until_running.map(|n| (n, *timeout_ms));
        let shutdown = match (keep_sessions, end_sessions) {
            (true, _) => json!({"sessions": "keep"}),
            (_, true) => json!({"sessions": "end"}),
            _ => json!({}),
        };
        if !fleet.is_local() {
            return remote_daemon(*action, until, shutdown, &fleet, cli.json).await;
        }
        return run_daemon(*action, until, shutdown, &paths, cli.json).await;
    }
    if let Verb::DialStdio { watch } = &cli.verb {
        screenpilot::bridge::check_not_a_terminal()?;
        return if *watch {
            screenpilot::bridge::dial_watch(&paths).await
        } else {
            screenpilot::bridge::dial_stdio(&paths).await
        };
    }
    if let Verb::Mcp {
        http,
        token_file,
        tools,
        output_schemas,
    } = &cli.verb
    {
        return screenpilot::mcp::run(
            fleet,
            http.as_deref(),
            token_file.as_deref(),
            tools.as_deref(),
            *output_schemas,
        )
        .await
        .map(|()| 0);
    }
    if let Verb::Attach(args) = &cli.verb {
        return cli::attach::run(args, &fleet).await;
    }
    if let (Verb::Watch { stop: false, .. }, false) = (&cli.verb, fleet.is_local()) {
        return cli::watch_remote::run(&cli.verb, &fleet, cli.json).await;
    }
    let plan = cli::plan(&cli.verb)?;
    let on_progress = |update: &serde_json::Value| match screenpilot::client::link_notice(update) {
        Some(news) => eprintln!("screenpilot: {news}"),
        None => cli::progress(&cli.verb, update, cli.json),
    };
    if screenpilot::ops::find(&plan.op).is_ok_and(|op| op.every_host) {
        let result = fleet.call(&plan.op, plan.params, None, on_progress).await?;
        return cli::present(&cli.verb, &plan.op, &result, cli.json);
    }
    // Ctrl-C is caught from before the request is sent: one that comes while it starts is kept for
    // the select below, not the default action (the CLI killed by SIGINT, the request left running).
    let mut interrupt =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .map_err(|e| OpError::new(ErrorCode::Runtime, format!("cannot catch Ctrl-C: {e}")))?;
    let (host, client, call) = fleet.start(&plan.op, plan.params, None).await?;
    let id = call.id();
    tokio::select! {
        result = call.finish(on_progress) => {
            let mut result = match result {
                Ok(result) => result,
                Err(error) => return Err(client.explain(error).await),
            };
            fleet.label(host, &mut result);
            cli::present(&cli.verb, &plan.op, &result, cli.json)
        }
        // Ctrl-C stops the request in the daemon too (a daemon on another host would otherwise
        // run a wait to its end), then exits as an interrupted program does.
        _ = interrupt.recv() => {
            let cancelled = tokio::time::timeout(CANCEL_LIMIT, client.cancel(id)).await;
            let how = match cancelled {
                Ok(Ok(true)) => "cancelled",
                Ok(Ok(false)) => "had already ended",
                _ => "may still run (the daemon did not answer the cancel)",
            };
            eprintln!("screenpilot: interrupted; the {} request {how}", plan.op);
            Ok(130)
        }
    }
}

/// How long an interrupted CLI waits for the daemon to confirm the cancel.
const CANCEL_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// `daemon status` and `daemon stop` for another host's daemon (through its link, which starts it
/// when none runs: status then reports a fresh one).
async fn remote_daemon(
    action: Option<DaemonAction>,
    until_running: Option<(usize, u64)>,
    shutdown: serde_json::Value,
    fleet: &Fleet,
    as_json: bool,
) -> Result<i32, OpError> {
    if fleet.hosts().len() != 1 {
        return Err(OpError::invalid(
            "host",
            "daemon status and daemon stop act on one host; give one --host",
        ));
    }
    let host = &fleet.hosts()[0];
    let client = fleet.client(0, false).await?;
    match action {
        Some(DaemonAction::Stop) => {
            match client.call("shutdown", shutdown.clone()).await {
                Ok(_) => {}
                Err(e) if matches!(e.code, ErrorCode::DaemonGone | ErrorCode::LinkLost) => {}
                Err(e) => return Err(e),
            }
            if as_json {
                println!(
                    "{}",
                    json!({"ok": true, "stopped": true, "host": host.name})
                );
            } else {
                println!("stopped the daemon on host {}", host.name);
            }
            Ok(0)
        }
        _ => {
            let params = match until_running {
                Some((n, ms)) => json!({"until_running": n, "timeout_ms": ms}),
                None => json!({}),
            };
            let status = with_builds(client.call("status", params).await?);
            if as_json {
                println!("{status}");
            } else {
                println!(
                    "running on host {}: pid {}, screenpilot {}, {} session(s), {} request(s) running, up {} s, socket {}{}",
                    host.name,
                    status["pid"],
                    status["version"].as_str().unwrap_or("?"),
                    status["sessions"],
                    status["requests_running"],
                    status["uptime_secs"],
                    status["socket"].as_str().unwrap_or("?"),
                    other_build(&status)
                );
            }
            Ok(i32::from(status["reached"] == false))
        }
    }
}

/// A daemon's `status` with this client's build beside it (`client`), and how the daemon's differs
/// (`other_build`), when it does.
fn with_builds(mut status: serde_json::Value) -> serde_json::Value {
    use screenpilot::wire::build::Build;
    let this = Build::this();
    let differs = this.differs(&Build::of_status(&status));
    status["client"] = json!(this);
    if let Some(differs) = differs {
        status["other_build"] = json!(differs);
    }
    status
}

/// The words of `with_builds` for a person: a second line when the daemon is another build.
fn other_build(status: &serde_json::Value) -> String {
    status["other_build"]
        .as_str()
        .map(|why| format!("\n{why}"))
        .unwrap_or_default()
}

/// The daemon `daemon stop` stops: the running one; or, to end the sessions a killed daemon left
/// with their holders, one started to take them over.
async fn stop_target(
    paths: &Paths,
    shutdown: &serde_json::Value,
) -> Result<Option<std::sync::Arc<Client>>, OpError> {
    if let Some(client) = Client::connect_existing(paths).await? {
        return Ok(Some(client));
    }
    let held = std::fs::read_dir(paths.dir.join("holders"))
        .map(|mut entries| entries.next().is_some())
        .unwrap_or(false);
    if held && shutdown["sessions"] == "end" {
        return Ok(Some(Client::connect_or_start(paths).await?));
    }
    Ok(None)
}

/// The daemon verbs: run in the foreground, start in the background, stop, status.
async fn run_daemon(
    action: Option<DaemonAction>,
    until_running: Option<(usize, u64)>,
    shutdown: serde_json::Value,
    paths: &Paths,
    as_json: bool,
) -> Result<i32, OpError> {
    let report = |value: serde_json::Value, text: String| {
        if as_json {
            println!("{value}");
        } else {
            println!("{text}");
        }
    };
    match action.unwrap_or(DaemonAction::Run) {
        DaemonAction::Run => {
            let limits = daemon::limits_from_env()
                .map_err(|e| OpError::new(ErrorCode::DaemonConfig, e.to_string()))?;
            match daemon::run(paths.clone(), limits, std::io::stdout()).await {
                Ok(()) => Ok(0),
                Err(daemon::DaemonError::AlreadyRunning(_)) => Ok(0),
                Err(e) => Err(OpError::new(ErrorCode::DaemonFailed, e.to_string())),
            }
        }
        DaemonAction::Start => {
            let client = Client::connect_or_start(paths).await?;
            let status = client.call("status", json!({})).await?;
            report(
                status.clone(),
                format!(
                    "screenpilot daemon running (pid {}) on {}",
                    status["pid"],
                    paths.socket.display()
                ),
            );
            Ok(0)
        }
        DaemonAction::Status => match Client::connect_existing(paths).await? {
            Some(client) => {
                let params = match until_running {
                    Some((n, ms)) => json!({"until_running": n, "timeout_ms": ms}),
                    None => json!({}),
                };
                let status = with_builds(client.call("status", params).await?);
                report(
                    status.clone(),
                    format!(
                        "running: pid {}, screenpilot {}, {} session(s), {} request(s) running, up {} s, socket {}{}",
                        status["pid"],
                        status["version"].as_str().unwrap_or("?"),
                        status["sessions"],
                        status["requests_running"],
                        status["uptime_secs"],
                        paths.socket.display(),
                        other_build(&status)
                    ),
                );
                // With --until-running: 1 when the count was not reached in time.
                Ok(i32::from(status["reached"] == false))
            }
            None => {
                report(
                    json!({"ok": true, "running": false}),
                    format!("not running (socket {})", paths.socket.display()),
                );
                Ok(1)
            }
        },
        DaemonAction::Stop => match stop_target(paths, &shutdown).await? {
            Some(client) => {
                match client.call("shutdown", shutdown.clone()).await {
                    Ok(_) => {}
                    // It may exit before its answer is written: gone is what we asked for.
                    Err(e) if e.code == ErrorCode::DaemonGone => {}
                    Err(e) => return Err(e),
                }
                // Return only once it has closed its sessions and exited, so a next command starts afresh.
                let _ =
                    tokio::time::timeout(std::time::Duration::from_secs(60), client.closed()).await;
                report(json!({"ok": true, "stopped": true}), "stopped".into());
                Ok(0)
            }
            None => {
                report(json!({"ok": true, "stopped": false}), "not running".into());
                Ok(0)
            }
        },
        DaemonAction::Guard => unreachable!("main runs the guard before any runtime starts"),
    }
}
