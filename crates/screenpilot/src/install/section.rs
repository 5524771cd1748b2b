//! screenpilot's section of a Markdown instructions file (Codex's `AGENTS.md`, Gemini's `GEMINI.md`):
//! lines between two marker comments, which a model reading the file does not see as text, and which
//! say where ours starts and ends so it can be replaced or taken out and nothing else touched.

/// The first line of our section starts with this.
pub const START: &str = "<!-- screenpilot: start";
/// The last line of our section.
pub const END: &str = "<!-- screenpilot: end -->";

/// Where our section is in `text`: from the start of its first line to the end of its last (with
/// the newline, if one follows).
fn find(text: &str) -> Option<(usize, usize)> {
    let mut offset = 0;
    let mut start = None;
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if start.is_none() && bare.starts_with(START) {
            start = Some(offset);
        } else if start.is_some() && bare == END {
            return start.map(|s| (s, offset + line.len()));
        }
        offset += line.len();
    }
    None
}

/// Our section as `text` has it (marker lines included), if it has one.
pub fn get(text: &str) -> Option<&str> {
    find(text).map(|(start, end)| &text[start..end])
}

/// `text` with `section` (marker lines included, ending in a newline) in place of ours, or after
/// everything else, a blank line before it.
pub fn set(text: &str, section: &str) -> String {
    if let Some((start, end)) = find(text) {
        return format!("{}{section}{}", &text[..start], &text[end..]);
    }
    match text {
        "" => section.to_owned(),
        _ if text.ends_with("\n\n") => format!("{text}{section}"),
        _ if text.ends_with('\n') => format!("{text}\n{section}"),
        _ => format!("{text}\n\n{section}"),
    }
}

/// `text` without our section, and without the blank line [`set`] put before it at the end.
pub fn remove(text: &str) -> Option<String> {
    let (start, end) = find(text)?;
    let before = &text[..start];
    let after = &text[end..];
    let before = if after.trim().is_empty() {
        before
            .strip_suffix('\n')
            .filter(|b| b.ends_with('\n'))
            .unwrap_or(before)
    } else {
        before
    };
    Some(format!("{before}{after}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = "<!-- screenpilot: start (x) -->\nuse it\n<!-- screenpilot: end -->\n";

    #[test]
    fn a_section_goes_after_a_blank_line_and_comes_out_byte_for_byte() {
        for before in ["", "# Mine\n", "# Mine\n\n", "# Mine"] {
            let after = set(before, OURS);
            assert!(
                after.ends_with(OURS) && after.starts_with(before),
                "{after:?}"
            );
            assert_eq!(get(&after), Some(OURS));
            let removed = remove(&after).expect("there");
            assert_eq!(removed.trim_end(), before.trim_end(), "{before:?}");
        }
        assert_eq!(remove("# Mine\n\n").as_deref(), None);
        assert_eq!(remove(&set("# Mine\n", OURS)).as_deref(), Some("# Mine\n"));
    }

    #[test]
    fn a_section_in_the_middle_is_replaced_where_it_is() {
        let before = format!("# A\n\n{OURS}\n# B\n");
        let newer = OURS.replace("use it", "use it now");
        assert_eq!(set(&before, &newer), format!("# A\n\n{newer}\n# B\n"));
        assert_eq!(remove(&before).as_deref(), Some("# A\n\n\n# B\n"));
    }
}
