//! A unified diff of a file before and after a change, for a person to read before saying yes.
//!
//! Our changes are each in one place of a file (an entry added, replaced or taken out), so one hunk
//! spans the lines between the common start and the common end, with three lines around it. No
//! longest-common-subsequence search: `~/.claude.json` can be large, and the hunk is the same.

use std::fmt::Write;

/// Lines of context around the change.
const CONTEXT: usize = 3;

/// `before` and `after` as a unified diff headed by `path`; `None` for a file that is not there.
pub fn unified(path: &str, before: Option<&str>, after: Option<&str>) -> String {
    let old: Vec<&str> = before.map_or_else(Vec::new, |t| t.split_inclusive('\n').collect());
    let new: Vec<&str> = after.map_or_else(Vec::new, |t| t.split_inclusive('\n').collect());
    let prefix = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "--- {}",
        if before.is_some() { path } else { "/dev/null" }
    );
    let _ = writeln!(
        out,
        "+++ {}",
        if after.is_some() { path } else { "/dev/null" }
    );
    if prefix == old.len() && prefix == new.len() {
        return out;
    }
    let from = prefix.saturating_sub(CONTEXT);
    let old_to = (old.len() - suffix + CONTEXT).min(old.len());
    let new_to = (new.len() - suffix + CONTEXT).min(new.len());
    let range = |start: usize, end: usize| match end - start {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        n => format!("{},{n}", start + 1),
    };
    let _ = writeln!(
        out,
        "@@ -{} +{} @@",
        range(from, old_to),
        range(from, new_to)
    );
    let mut line = |mark: char, text: &str| {
        out.push(mark);
        out.push_str(text);
        if !text.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for text in &old[from..prefix] {
        line(' ', text);
    }
    for text in &old[prefix..old.len() - suffix] {
        line('-', text);
    }
    for text in &new[prefix..new.len() - suffix] {
        line('+', text);
    }
    for text in &old[old.len() - suffix..old_to] {
        line(' ', text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hunk_with_three_lines_around_the_change() {
        let before = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4\n}\n";
        let after = "{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3,\n  \"d\": 4,\n  \"e\": 5\n}\n";
        assert_eq!(
            unified("f.json", Some(before), Some(after)),
            "--- f.json\n+++ f.json\n@@ -2,5 +2,6 @@\n   \"a\": 1,\n   \"b\": 2,\n   \"c\": 3,\n-  \"d\": 4\n+  \"d\": 4,\n+  \"e\": 5\n }\n"
        );
    }

    #[test]
    fn a_new_file_and_a_deleted_one_read_against_dev_null() {
        assert_eq!(
            unified("f", None, Some("x\ny")),
            "--- /dev/null\n+++ f\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"
        );
        assert_eq!(
            unified("f", Some("x\n"), None),
            "--- f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        );
    }
}
