//! The harness: one daemon and scratch directory per test, the interpreters with the newest and the
//! oldest supported Textual, Textual's own example apps, and helpers to read results.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

use crate::common::Daemon;

/// The interpreter with the newest Textual screenpilot supports.
pub fn python() -> String {
    let python = std::env::var("SCREENPILOT_TEST_PYTHON")
        .unwrap_or_else(|_| format!("{}/../../.venv/bin/python", env!("CARGO_MANIFEST_DIR")));
    assert!(
        imports_textual(&python),
        "no Python with Textual at {python}: run scripts/test.sh (it creates .venv with textual), \
         or set SCREENPILOT_TEST_PYTHON to an interpreter that has it"
    );
    python
}

/// The interpreter with the oldest Textual screenpilot supports: the Textual tests run on both.
pub fn oldest_python() -> String {
    let python = std::env::var("SCREENPILOT_TEST_PYTHON_OLDEST").unwrap_or_else(|_| {
        format!(
            "{}/../../.venv/textual-oldest/bin/python",
            env!("CARGO_MANIFEST_DIR")
        )
    });
    assert!(
        imports_textual(&python),
        "no Python with the oldest supported Textual at {python}: run scripts/test.sh (it creates \
         .venv/textual-oldest), or set SCREENPILOT_TEST_PYTHON_OLDEST to an interpreter that has it"
    );
    python
}

fn imports_textual(python: &str) -> bool {
    Command::new(python)
        .args(["-c", "import textual"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Textual's own example apps (the docs examples from the source distribution of the interpreter's
/// Textual), which scripts/test.sh unpacks into `<venv>/textual-examples`.
pub fn textual_examples(python: &str) -> PathBuf {
    let out = Command::new(python)
        .args(["-c", "import sys; print(sys.prefix)"])
        .output()
        .unwrap_or_else(|e| panic!("run {python}: {e}"));
    let prefix = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let examples = PathBuf::from(prefix).join("textual-examples");
    assert!(
        examples.join("widgets").is_dir(),
        "no Textual example apps at {}: run scripts/test.sh (it unpacks them from the source \
         distribution of the venv's Textual)",
        examples.display()
    );
    examples
}

/// One test's daemon (the shared e2e harness: its own directory, stopped and removed on drop) and the
/// interpreter with Textual.
pub struct Harness {
    daemon: Daemon,
    /// The scratch directory: apps are copied here, so screenshots land here too.
    pub dir: PathBuf,
    pub python: String,
    /// Directories of Textual's examples already copied into `dir`.
    examples_copied: Mutex<HashSet<PathBuf>>,
}

impl Harness {
    /// A harness driving apps under the newest supported Textual.
    pub fn new() -> Harness {
        Harness::with_python(python())
    }

    /// A harness driving apps under the given interpreter's Textual.
    pub fn with_python(python: String) -> Harness {
        let daemon = Daemon::new();
        let dir = daemon.path().to_path_buf();
        Harness {
            daemon,
            dir,
            python,
            examples_copied: Mutex::default(),
        }
    }

    /// Copy one of Textual's own example apps (a path under its docs examples, such as
    /// "widgets/checkbox.py"), with the files beside it (its CSS), into the test directory; returns
    /// its path there.
    pub fn example(&self, example: &str) -> String {
        let from = textual_examples(&self.python).join(example);
        let source_dir = from.parent().expect("an example is in a directory");
        let to_dir = self.dir.join("examples").join(
            Path::new(example)
                .parent()
                .expect("an example is in a directory"),
        );
        let to = to_dir.join(from.file_name().expect("a file name"));
        // Once per directory, even when tests on several threads ask at once (none may read a file
        // another is still writing).
        let mut copied = self
            .examples_copied
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !copied.insert(to_dir.clone()) {
            return to.to_string_lossy().into_owned();
        }
        std::fs::create_dir_all(&to_dir).unwrap_or_else(|e| panic!("mkdir {to_dir:?}: {e}"));
        for entry in std::fs::read_dir(source_dir).expect("read the example's directory") {
            let entry = entry.expect("a directory entry");
            if entry.file_type().is_ok_and(|t| t.is_file()) {
                std::fs::copy(entry.path(), to_dir.join(entry.file_name()))
                    .unwrap_or_else(|e| panic!("copy {:?}: {e}", entry.path()));
            }
        }
        to.to_string_lossy().into_owned()
    }

    /// Copy a fixture app into the test directory; returns its path.
    pub fn app(&self, fixture: &str) -> String {
        let from = format!(
            "{}/tests/fixtures/textual/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        );
        let to = self.dir.join(fixture);
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copy {from}: {e}"));
        to.to_string_lossy().into_owned()
    }

    /// Write an executable script into the test directory; returns its path.
    pub fn script(&self, name: &str, body: &str) -> String {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.join(name);
        std::fs::write(&path, body).unwrap_or_else(|e| panic!("write {name}: {e}"));
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("chmod {name}: {e}"));
        path.to_string_lossy().into_owned()
    }

    pub fn command(&self, args: &[&str]) -> Command {
        self.daemon.command(args)
    }

    /// `screenpilot --json ARGS`: (exit status, progress updates, final object).
    pub fn run(&self, args: &[&str]) -> (i32, Vec<Value>, Value) {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = self
            .command(&full)
            .output()
            .unwrap_or_else(|e| panic!("run screenpilot {args:?}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut lines: Vec<Value> = stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| {
                    panic!(
                        "not a JSON line ({e}): {line}\nstderr: {}",
                        String::from_utf8_lossy(&out.stderr)
                    )
                })
            })
            .collect();
        let last = lines.pop().unwrap_or_else(|| {
            panic!(
                "screenpilot {args:?} printed nothing; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let progress = lines.into_iter().map(|l| l["progress"].clone()).collect();
        (out.status.code().unwrap_or(-1), progress, last)
    }

    /// A `textual` run that must succeed; returns (progress, result).
    pub fn textual(&self, args: &[&str]) -> (Vec<Value>, Value) {
        let mut full = vec!["textual", "--python", &self.python];
        full.extend_from_slice(args);
        let (status, progress, result) = self.run(&full);
        assert_eq!(status, 0, "screenpilot {full:?} failed: {result}");
        assert_eq!(result["ok"], true, "{result}");
        (progress, result)
    }

    /// A `textual` run that must fail; returns the error object.
    pub fn textual_error(&self, args: &[&str]) -> Value {
        let mut full = vec!["textual", "--python", &self.python];
        full.extend_from_slice(args);
        let (status, _, result) = self.run(&full);
        assert_eq!(status, 2, "screenpilot {full:?} should fail: {result}");
        assert_eq!(result["ok"], false, "{result}");
        result["error"].clone()
    }
}

/// The state of the first widget `selector` matched in a result's `query`.
pub fn queried<'a>(result: &'a Value, selector: &str) -> &'a Value {
    let entry = result["query"]
        .as_array()
        .and_then(|q| q.iter().find(|e| e["selector"] == selector))
        .unwrap_or_else(|| panic!("no query result for {selector}: {result}"));
    &entry["widgets"][0]
}

/// Find a widget by id in a `tree` result.
pub fn find_in_tree<'a>(node: &'a Value, id: &str) -> Option<&'a Value> {
    if node["id"] == id {
        return Some(node);
    }
    node["children"]
        .as_array()?
        .iter()
        .find_map(|child| find_in_tree(child, id))
}

/// Check that a PNG decodes: signature, IHDR, and the inflated pixel data has exactly the size the
/// header promises (decoded by Python's zlib, the reference inflater).
pub fn assert_png_decodes(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
    let script = r#"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]:
        sys.exit("bad CRC in " + kind.decode())
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
width, height, depth, colour = ihdr[:4]
channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
raw = zlib.decompress(idat)
expected = height * (1 + width * channels * depth // 8)
if len(raw) != expected:
    sys.exit(f"pixel data is {len(raw)} bytes, expected {expected}")
print(width, height)
"#;
    let out = Command::new(python())
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("run python to decode the PNG");
    assert!(
        out.status.success(),
        "{} does not decode: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}
