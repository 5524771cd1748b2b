//! Reports of a test run: JUnit XML, which CI systems read (one `testcase` a step file, its failure
//! with the step's line), and for each failed file a self-contained HTML page a person opens: every
//! step with what it did and the screen after it (text and picture), the failed expectation, the
//! files it left, and the recording.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use base64::Engine;

use super::runner::FileOutcome;

fn xml(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .map(|c| match c {
            '<' => "&lt;".to_owned(),
            '>' => "&gt;".to_owned(),
            '&' => "&amp;".to_owned(),
            '"' => "&quot;".to_owned(),
            '\'' => "&apos;".to_owned(),
            c => c.to_string(),
        })
        .collect()
}

/// The JUnit XML of a run.
pub fn junit(outcomes: &[FileOutcome]) -> String {
    let failures = outcomes.iter().filter(|o| !o.passed()).count();
    let time: f64 = outcomes.iter().map(|o| o.elapsed.as_secs_f64()).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites tests=\"{}\" failures=\"{failures}\" time=\"{time:.3}\">",
        outcomes.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"screenpilot\" tests=\"{}\" failures=\"{failures}\" time=\"{time:.3}\">",
        outcomes.len()
    );
    for o in outcomes {
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"{:.3}\"",
            xml(&o
                .path
                .parent()
                .map_or_else(String::new, |p| p.display().to_string())),
            xml(&o.name),
            xml(&o.path.display().to_string()),
            o.elapsed.as_secs_f64()
        );
        match &o.failure {
            None => out.push_str("/>\n"),
            Some(f) => {
                let first = f.message.lines().next().unwrap_or("");
                let _ = writeln!(
                    out,
                    ">\n      <failure message=\"{}:{}: {}\">{}</failure>\n    </testcase>",
                    xml(&o.path.display().to_string()),
                    f.line,
                    xml(first),
                    xml(&f.message)
                );
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn html(text: &str) -> String {
    xml(text)
}

/// The HTML report of a failed file; its images inline, so the page is one file.
pub fn failure_page(outcome: &FileOutcome) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{name}: failed</title><style>\
body{{font-family:sans-serif;margin:2em;max-width:90em}}pre{{background:#111;color:#ddd;padding:.6em;overflow:auto}}\
.fail{{border-left:6px solid #d33;padding-left:1em}}.step{{margin:1em 0;border-top:1px solid #ccc}}img{{max-width:100%;border:1px solid #888}}\
</style></head><body><h1>{name}</h1><p>{path} — failed at line {line}, after {secs:.2} s</p>",
        name = html(&outcome.name),
        path = html(&outcome.path.display().to_string()),
        line = outcome.failure.as_ref().map_or(0, |f| f.line),
        secs = outcome.elapsed.as_secs_f64(),
    );
    if let Some(f) = &outcome.failure {
        let _ = write!(
            out,
            "<div class=\"fail\"><h2>What failed (line {})</h2><pre>{}</pre>",
            f.line,
            html(&f.message)
        );
        for file in &f.files {
            let _ = write!(out, "<p>{}</p>", html(&file.display().to_string()));
            if file.extension().is_some_and(|e| e == "png") {
                if let Ok(bytes) = std::fs::read(file) {
                    let _ = write!(
                        out,
                        "<img alt=\"{}\" src=\"data:image/png;base64,{}\">",
                        html(&file.display().to_string()),
                        base64::engine::general_purpose::STANDARD.encode(bytes)
                    );
                }
            }
        }
        out.push_str("</div>");
    }
    out.push_str("<h2>Steps</h2>");
    for step in &outcome.steps {
        let _ = write!(
            out,
            "<div class=\"step\"><h3>line {}: {}</h3><p>{}</p>",
            step.line,
            html(&step.what),
            html(&step.result)
        );
        if let Some(screen) = &step.screen {
            let _ = write!(out, "<pre>{}</pre>", html(screen.trim_end()));
        }
        if let Some(png) = &step.png {
            let _ = write!(
                out,
                "<img alt=\"the screen after line {}\" src=\"data:image/png;base64,{}\">",
                step.line,
                base64::engine::general_purpose::STANDARD.encode(png)
            );
        }
        out.push_str("</div>");
    }
    if !outcome.recordings.is_empty() {
        out.push_str("<h2>Recordings</h2><ul>");
        for cast in &outcome.recordings {
            let _ = write!(
                out,
                "<li>{} (play it with <code>screenpilot replay</code>)</li>",
                html(&cast.display().to_string())
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</body></html>\n");
    out
}

/// Write the HTML page of each failed file into `dir`; the pages written.
pub fn write_failure_pages(dir: &Path, outcomes: &[FileOutcome]) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for o in outcomes.iter().filter(|o| !o.passed()) {
        let page = dir.join(format!("{}.html", o.name.replace(['/', ' '], "_")));
        std::fs::write(&page, failure_page(o))?;
        written.push(page);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::runner::{StepFailure, StepRecord};
    use std::time::Duration;

    fn outcome(failed: bool) -> FileOutcome {
        FileOutcome {
            path: PathBuf::from("t/menu.toml"),
            name: "menu <1>".into(),
            elapsed: Duration::from_millis(1500),
            steps: vec![StepRecord {
                line: 3,
                what: "send keys [\"Down\"]".into(),
                result: "held=visual".into(),
                screen: Some("a & b\n".into()),
                png: None,
            }],
            failure: failed.then(|| StepFailure {
                line: 7,
                message: "expected text /x/\nthe screen:\n  | a".into(),
                files: Vec::new(),
            }),
            updated: Vec::new(),
            recordings: vec![PathBuf::from("r/menu-main.cast")],
        }
    }

    #[test]
    fn junit_names_each_file_and_the_line_that_failed() {
        let xml = junit(&[outcome(false), outcome(true)]);
        assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
        assert!(xml.contains("name=\"menu &lt;1&gt;\""), "{xml}");
        assert!(
            xml.contains("<failure message=\"t/menu.toml:7: expected text /x/\">"),
            "{xml}"
        );
        assert_eq!(xml.matches("<testcase").count(), 2);
    }

    #[test]
    fn the_failure_page_shows_the_steps_and_what_failed() {
        let page = failure_page(&outcome(true));
        assert!(page.contains("failed at line 7"), "{page}");
        assert!(page.contains("<pre>a &amp; b</pre>"), "{page}");
        assert!(page.contains("r/menu-main.cast"), "{page}");
    }
}
