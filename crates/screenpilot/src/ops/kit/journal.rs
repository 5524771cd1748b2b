//! What was done to each session, kept so that it can be written down as a step file
//! (`save_test`): every input, resize, wait and close an operation made, in order, with the screen as
//! it was before it and as it was when the next operation on that session began (what the agent or
//! person saw before acting again). An input that carried no condition gets one from those two
//! screens: a line that appeared, or else "anything visible changed", so the file waits for what the
//! pause was for instead of pausing.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::Mutex;

use serde_json::{json, Value};

use screenpilot_session::{ReadOptions, Registry};

use super::step_table::SecretRef;
use super::step_table::{Journaled, StepTable};

/// The most operations kept; the oldest go first.
const KEPT: usize = 10_000;

/// A screen as a condition reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Screen {
    text: String,
    visual: String,
    /// The program had ended.
    ended: bool,
    /// The terminal was reading a hidden line (a password): what was typed is not kept.
    secret: bool,
}

/// One step of a future step file.
#[derive(Debug, Clone)]
struct Entry {
    /// Its place in the order operations were done, across sessions.
    seq: u64,
    sid: String,
    /// The step (its sid is the entry's).
    step: StepTable,
    /// The step gives input (or starts a program) whose reaction the next step must wait for.
    acts: bool,
    before: Option<Screen>,
    seen: Option<Screen>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: VecDeque<Entry>,
    /// Some were dropped (more than [`KEPT`]) since the last save.
    dropped: bool,
    next_seq: u64,
    /// Each session's steps already written, from its start: a later file on the same session
    /// begins with them, so it starts the session and brings it where the new steps begin.
    written: BTreeMap<String, Vec<Entry>>,
}

/// The operations of a context, since the last `save_test`.
#[derive(Debug, Default)]
pub struct Journal {
    inner: Mutex<Inner>,
}

fn screen_of(registry: &Registry, sid: &str) -> Option<Screen> {
    let session = registry.get(sid).ok()?;
    let state = session.read(ReadOptions::default());
    Some(Screen {
        text: state.text,
        visual: state.visual_hash,
        ended: !state.alive,
        secret: session.reading_secret(),
    })
}

impl Journal {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An operation on `sid` begins: the screen now is what its last step's reaction came to.
    /// Returns it, as the screen before this operation.
    pub fn begin(&self, registry: &Registry, sid: Option<&str>) -> Option<(String, Screen)> {
        let sid = sid?;
        let screen = screen_of(registry, sid)?;
        let mut inner = self.lock();
        if let Some(last) = inner.entries.iter_mut().rev().find(|e| e.sid == sid) {
            last.seen = Some(screen.clone());
        }
        Some((sid.to_owned(), screen))
    }

    /// An operation with `params` answered `answer`, and becomes `steps` in a step file (what
    /// [`super::operation::Operation::journal`] made of it).
    pub fn done(
        &self,
        mut steps: Vec<Journaled>,
        params: &Value,
        answer: &Value,
        before: Option<(String, Screen)>,
    ) {
        let sid = answer
            .get("sid")
            .or_else(|| params.get("sid"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if sid.is_empty() {
            return;
        }
        if steps.is_empty() {
            return;
        }
        let before = before.filter(|(s, _)| *s == sid).map(|(_, screen)| screen);
        if before.as_ref().is_some_and(|b| b.secret) {
            // Typed into a hidden line: the step file names where a secret comes from instead.
            if let Some(first) = steps.first_mut().filter(|j| j.step.secret.is_none()) {
                let step = &mut first.step;
                if step.text.take().is_some() | step.keys.take().is_some() {
                    step.secret = Some(SecretRef {
                        env: Some("SCREENPILOT_SECRET".into()),
                        ..SecretRef::default()
                    });
                }
            }
        }
        let mut inner = self.lock();
        for (i, Journaled { mut step, acts }) in steps.into_iter().enumerate() {
            step.sid = None;
            let seq = inner.next_seq;
            inner.next_seq += 1;
            inner.entries.push_back(Entry {
                seq,
                sid: sid.clone(),
                step,
                acts,
                // Later parts of one call (its `steps`) began on a screen nobody kept.
                before: if i == 0 { before.clone() } else { None },
                seen: None,
            });
        }
        while inner.entries.len() > KEPT {
            inner.entries.pop_front();
            inner.dropped = true;
        }
    }

    /// Write the steps on `sids` (all when empty) as a step file for `dir`; `now` gives each
    /// session's current screen, the reaction to its last step. Nothing is forgotten until
    /// [`Journal::written`] says the file is on disk: a failed write loses no step.
    pub fn take(
        &self,
        registry: &Registry,
        sids: &[String],
        name: &str,
        dir: &Path,
    ) -> Result<Written, String> {
        let inner = self.lock();
        let wanted = |e: &Entry| sids.is_empty() || sids.contains(&e.sid);
        let fresh: Vec<Entry> = inner
            .entries
            .iter()
            .filter(|e| wanted(e))
            .cloned()
            .collect();
        if fresh.is_empty() {
            return Err(match sids.is_empty() {
                true => "nothing to write: no session was driven since the last save_test".into(),
                false => format!(
                    "nothing to write: {} had no input since the last save_test",
                    sids.join(", ")
                ),
            });
        }
        let dropped = inner.dropped;
        // A session whose start went into an earlier file starts again here, with the steps since.
        let mut taken = fresh.clone();
        let mut restarted: Vec<&str> = Vec::new();
        for e in &fresh {
            if restarted.contains(&e.sid.as_str()) {
                continue;
            }
            restarted.push(&e.sid);
            let first = fresh.iter().find(|f| f.sid == e.sid);
            if first.is_some_and(|f| !f.step.starts()) {
                if let Some(before) = inner.written.get(&e.sid) {
                    taken.extend(before.iter().cloned());
                }
            }
        }
        drop(inner);
        taken.sort_by_key(|e| e.seq);
        // The last step of each session reacted into the screen it shows now.
        let mut last_of: BTreeMap<String, usize> = BTreeMap::new();
        for (i, e) in taken.iter().enumerate() {
            last_of.insert(e.sid.clone(), i);
        }
        for (sid, i) in &last_of {
            if let Some(now) = screen_of(registry, sid) {
                taken[*i].seen = Some(now);
            }
        }
        let sessions: Vec<String> = last_of.keys().cloned().collect();
        let text = write_file(&taken, name, dir, sessions.len() > 1, dropped);
        Ok(Written {
            text,
            steps: taken.len(),
            sessions,
            fresh: taken
                .into_iter()
                .filter(|e| fresh.iter().any(|f| f.seq == e.seq))
                .collect(),
        })
    }

    /// The file of `written` is on disk: forget its steps (and remember them as written).
    pub fn written(&self, written: Written) {
        let mut inner = self.lock();
        let seqs: Vec<u64> = written.fresh.iter().map(|e| e.seq).collect();
        inner.entries.retain(|e| !seqs.contains(&e.seq));
        inner.dropped = false;
        for entry in written.fresh {
            let sid = entry.sid.clone();
            if entry.step.close.is_some() {
                // A closed session is not started again by a later file.
                inner.written.remove(&sid);
                continue;
            }
            let history = inner.written.entry(sid).or_default();
            if entry.step.starts() {
                history.clear();
            }
            history.push(entry);
            if history.len() > KEPT {
                history.remove(0);
            }
        }
    }
}

/// A step file, written.
pub struct Written {
    pub text: String,
    pub steps: usize,
    pub sessions: Vec<String>,
    /// The steps it holds that no file held before.
    fresh: Vec<Entry>,
}

/// A regex for the whole of `line` that holds however its digits and spacing come out next time (a
/// pid, a clock, a column realigned).
fn line_regex(line: &str) -> String {
    let mut out = String::from("^\\s*");
    let mut chars = line.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            out.push_str("\\d+");
        } else if c.is_whitespace() {
            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                chars.next();
            }
            out.push_str("\\s+");
        } else {
            // Only what a regex reads as syntax: the pattern stays readable (`root@vm:~#`).
            if "\\.+*?()|[]{}^$".contains(c) {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push_str("\\s*$");
    out
}

/// What to wait for after a step that gave input (or started a program), from the screen before it
/// and the one seen after: the program's end; else the last line that appeared (not the input's own
/// echo, when there is more) and that nothing on the screen before matched, or the wait would hold
/// at once; else a change of anything visible.
fn reaction(step: &StepTable, before: Option<&Screen>, seen: &Screen) -> Option<Value> {
    if before == Some(seen) {
        return None;
    }
    if seen.ended && !before.is_some_and(|b| b.ended) {
        return Some(json!({"exit": true}));
    }
    let old = before.map_or("", |b| b.text.as_str());
    let typed: Vec<String> = [&step.text, &step.line]
        .into_iter()
        .flatten()
        .chain(step.keys.iter().flatten())
        .map(|t| t.trim().to_owned())
        .filter(|t| t.chars().count() >= 2)
        .collect();
    let mut echo = None;
    let mut found = None;
    for line in seen.text.lines().map(str::trim_end) {
        if line.chars().filter(|c| c.is_alphanumeric()).count() < 2 {
            continue;
        }
        let pattern = line_regex(line);
        let Ok(regex) = regex::RegexBuilder::new(&pattern).multi_line(true).build() else {
            continue;
        };
        if regex.is_match(old) {
            continue;
        }
        if typed.iter().any(|t| line.contains(t.as_str())) {
            echo = Some(pattern);
        } else {
            found = Some(pattern);
        }
    }
    match found.or(echo) {
        Some(pattern) => Some(json!({"regex": pattern})),
        None if before.is_none() && seen.text.trim().is_empty() => None,
        None => Some(json!({"visual": true})),
    }
}

/// The step file's text.
fn write_file(entries: &[Entry], name: &str, dir: &Path, many: bool, dropped: bool) -> String {
    let mut out = format!(
        "# Written by screenpilot save_test; run it with `screenpilot test FILE`.\n\
         # A condition the session was not given is what its screen showed before the next step.\n\
         name = {}\n",
        toml_value(&Value::String(name.to_owned()))
    );
    if dropped {
        out.push_str(
            "# The earliest steps were not kept (more than 10000): this file starts later.\n",
        );
    }
    for (i, entry) in entries.iter().enumerate() {
        let mut step = entry.step.clone();
        // A wait the caller made next says what this input's reaction was; otherwise the screens do.
        let waited_next = entries[i + 1..]
            .iter()
            .find(|e| e.sid == entry.sid)
            .is_some_and(|next| {
                next.step
                    == StepTable {
                        until: next.step.until.clone(),
                        ..StepTable::default()
                    }
            });
        if entry.acts && step.until.is_none() && !waited_next {
            if let Some(seen) = &entry.seen {
                step.until = reaction(&step, entry.before.as_ref(), seen);
            }
        }
        if let Some(cwd) = &step.cwd {
            step.cwd = Some(relative(Path::new(cwd), dir));
        }
        out.push_str("\n[[step]]\n");
        if many || entry.sid != "main" {
            out.push_str(&format!(
                "sid = {}\n",
                toml_value(&entry.sid.clone().into())
            ));
        }
        // In the order the step type declares its fields (what it does, then what it waits for).
        let table = step.to_map();
        let fields = StepTable::fields();
        let rank = |key: &str| fields.iter().position(|k| *k == key).unwrap_or(0);
        let mut keys: Vec<&String> = table.keys().collect();
        keys.sort_by_key(|k| rank(k));
        for key in keys {
            out.push_str(&format!("{key} = {}\n", toml_value(&table[key])));
        }
    }
    out
}

/// `path` relative to `dir` (the step file's, which a file's relative cwd is read against) when it
/// is inside it or at most two levels up from it; else as it is.
fn relative(path: &Path, dir: &Path) -> String {
    let (to, from): (Vec<_>, Vec<_>) = (path.components().collect(), dir.components().collect());
    let common = to.iter().zip(&from).take_while(|(a, b)| a == b).count();
    let ups = from.len() - common;
    if common <= 1 || ups > 2 {
        return path.to_string_lossy().into_owned();
    }
    let mut out = std::path::PathBuf::new();
    for _ in 0..ups {
        out.push("..");
    }
    out.extend(&to[common..]);
    match out.as_os_str().is_empty() {
        true => ".".into(),
        false => out.to_string_lossy().into_owned(),
    }
}

/// A JSON value as a TOML value on one line (tables inline).
fn toml_value(value: &Value) -> String {
    match value {
        Value::Null => "\"\"".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => toml::Value::String(s.clone()).to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{} = {}", toml_key(k), toml_value(v)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
    }
}

fn toml_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_owned()
    } else {
        toml::Value::String(key.to_owned()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What operation `op` makes of a call that held, as the daemon asks it.
    fn steps_of(op: &str, params: &Value) -> Vec<Journaled> {
        (crate::ops::find(op).expect("an operation").journal)(params, true)
    }

    fn screen(text: &str, visual: &str) -> Screen {
        Screen {
            text: text.into(),
            visual: visual.into(),
            ended: false,
            secret: false,
        }
    }

    #[test]
    fn a_reaction_is_the_last_new_line_that_is_not_the_echo_and_not_there_before() {
        let step = StepTable {
            text: Some("ls\r".into()),
            ..StepTable::default()
        };
        let before = screen("$ true\n$", "a");
        let seen = screen("$ true\n$ ls\nnotes.txt  todo 42.txt\n$", "b");
        assert_eq!(
            reaction(&step, Some(&before), &seen),
            Some(json!({"regex": r"^\s*notes\.txt\s+todo\s+\d+\.txt\s*$"}))
        );
        // Only the echo is new: it is all there is to wait for.
        let seen = screen("$ true\n$ ls", "b");
        assert_eq!(
            reaction(&step, Some(&before), &seen),
            Some(json!({"regex": r"^\s*\$\s+ls\s*$"}))
        );
        // A prompt like one already shown would hold at once: not that one.
        let step = StepTable {
            keys: Some(vec!["Enter".into()]),
            ..StepTable::default()
        };
        let before = screen("host:~# ls\nx1\nhost:~# echo 42", "a");
        let seen = screen("host:~# ls\nx1\nhost:~# echo 42\n42\nhost:~#", "b");
        assert_eq!(
            reaction(&step, Some(&before), &seen),
            Some(json!({"regex": r"^\s*host:~#\s*$"}))
        );
        let before = screen("host:~#\nhost:~# echo 42", "a");
        assert_eq!(
            reaction(&step, Some(&before), &seen),
            Some(json!({"regex": r"^\s*\d+\s*$"}))
        );
        // The program ended: that is what to wait for.
        let ended = Screen {
            ended: true,
            ..seen.clone()
        };
        assert_eq!(
            reaction(&step, Some(&before), &ended),
            Some(json!({"exit": true}))
        );
    }

    #[test]
    fn a_highlight_that_moved_is_waited_for_as_a_visual_change() {
        let step = StepTable {
            keys: Some(vec!["Down".into()]),
            ..StepTable::default()
        };
        let before = screen("1 Apple\n2 Banana", "a");
        assert_eq!(
            reaction(&step, Some(&before), &screen("1 Apple\n2 Banana", "b")),
            Some(json!({"visual": true}))
        );
        assert_eq!(reaction(&step, Some(&before), &before.clone()), None);
    }

    #[test]
    fn steps_read_as_a_person_writes_them() {
        let journal = Journal::default();
        let spawn = json!({"cmd": "bash", "cols": 80, "rows": 24, "cwd": "/w/p", "caller_env": {"HOME": "/root"}});
        journal.done(
            steps_of("spawn", &spawn),
            &spawn,
            &json!({"sid": "main"}),
            None,
        );
        let send =
            json!({"sid": "main", "keys": ["Down"], "until": {"regex": "x"}, "timeout_ms": 5});
        journal.done(steps_of("send", &send), &send, &json!({}), None);
        let inner = journal.lock();
        let steps: Vec<&Entry> = inner.entries.iter().collect();
        let text = write_file(
            &steps.into_iter().cloned().collect::<Vec<_>>(),
            "a \"test\"",
            Path::new("/w"),
            false,
            false,
        );
        assert!(text.contains("name = 'a \"test\"'\n"), "{text}");
        assert!(
            text.contains("\n[[step]]\nspawn = \"bash\"\nsize = \"80x24\"\ncwd = \"p\"\n"),
            "{text}"
        );
        assert!(
            text.contains("\n[[step]]\nkeys = [\"Down\"]\nuntil = { regex = \"x\" }\n"),
            "{text}"
        );
        assert!(
            !text.contains("HOME") && !text.contains("timeout_ms"),
            "{text}"
        );
        assert_eq!(relative(Path::new("/w/p"), Path::new("/w/p")), ".");
        assert_eq!(relative(Path::new("/w"), Path::new("/w/t")), "..");
        assert_eq!(
            relative(Path::new("/w/src"), Path::new("/w/t/a")),
            "../../src"
        );
        assert_eq!(relative(Path::new("/opt/x"), Path::new("/w/t")), "/opt/x");
    }

    #[test]
    fn elements_acted_on_become_act_steps_that_run_again() {
        let journal = Journal::default();
        let start = json!({"sid": "d", "cmd": "zenity --entry", "caller_env": {"HOME": "/root"}});
        journal.done(
            steps_of("desktop_start", &start),
            &start,
            &json!({"sid": "d"}),
            None,
        );
        let act = json!({"sid": "d", "ref": "text \"Name\"", "do": "set", "text": "ada",
            "until": {"appears": {"role": "push button", "state": "enabled"}}, "timeout_ms": 5});
        journal.done(steps_of("act", &act), &act, &json!({"sid": "d"}), None);
        let entries: Vec<Entry> = journal.lock().entries.iter().cloned().collect();
        let text = write_file(&entries, "form", Path::new("/w"), false, false);
        assert!(
            text.contains(
                "\nsid = \"d\"\nact = { do = \"set\", ref = 'text \"Name\"', text = \"ada\""
            ),
            "{text}"
        );
        assert!(
            !text.contains("timeout_ms") && !text.contains("HOME"),
            "{text}"
        );
        let file = crate::steps::StepFile::parse(Path::new("/w/t.toml"), &text)
            .unwrap_or_else(|e| panic!("{e}:\n{text}"));
        let crate::steps::file::Action::Act(params) = &file.steps[1].action else {
            panic!("an act step: {text}")
        };
        assert_eq!(
            Value::Object(params.clone()),
            json!({"ref": "text \"Name\"", "do": "set", "text": "ada",
                "until": {"appears": {"role": "push button", "state": "enabled"}}})
        );
    }
}
