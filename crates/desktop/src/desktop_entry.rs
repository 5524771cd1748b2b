//! Finding an application by its desktop-entry name (`mousepad`, `org.xfce.mousepad`,
//! `xterm.desktop`) in the XDG application directories, and the command line its `Exec` key gives,
//! without files or URLs (the field codes removed), as the freedesktop Desktop Entry Specification
//! describes it. No shell runs the result: it is split here.
//!
//! The directories are `$XDG_DATA_HOME/applications` (else `~/.local/share/applications`) then each
//! of `$XDG_DATA_DIRS` (else `/usr/local/share:/usr/share`), first found wins, the variables taken
//! from the environment the program will get. A name matches the desktop file id (its path below
//! the directory, `/` read as `-`) exactly, else as its last reverse-DNS part (`mousepad` finds
//! `org.xfce.mousepad.desktop`), ignoring case.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{DesktopError, Result};

/// What starting a desktop entry runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryCommand {
    /// The command line, field codes removed.
    pub argv: Vec<String>,
    /// `Path=`: the directory to run it in.
    pub cwd: Option<PathBuf>,
    /// The file it came from.
    pub file: PathBuf,
}

/// The application directories, most important first, for an environment `env`.
fn application_dirs(env: &[(OsString, OsString)]) -> Vec<PathBuf> {
    let var = |name: &str| {
        env.iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .filter(|v| !v.is_empty())
    };
    let mut dirs = Vec::new();
    match var("XDG_DATA_HOME") {
        Some(home) => dirs.push(PathBuf::from(home)),
        None => {
            if let Some(home) = var("HOME") {
                dirs.push(PathBuf::from(home).join(".local/share"));
            }
        }
    }
    let data_dirs = var("XDG_DATA_DIRS").unwrap_or_else(|| "/usr/local/share:/usr/share".into());
    dirs.extend(std::env::split_paths(&data_dirs));
    dirs.into_iter().map(|d| d.join("applications")).collect()
}

/// Every desktop file below `dir` with its id (`kde4/foo.desktop` is `kde4-foo.desktop`).
fn entries_in(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>, depth: usize) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let mut listing: Vec<_> = listing.flatten().collect();
    listing.sort_by_key(|e| e.file_name());
    for entry in listing {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if path.is_dir() && depth < 4 {
            entries_in(&path, &format!("{prefix}{name}-"), out, depth + 1);
        } else if name.ends_with(".desktop") {
            out.push((format!("{prefix}{name}"), path));
        }
    }
}

/// Find the desktop entry `name` and the command it runs. `env` is the program's environment (for
/// the XDG directories and `PATH`). Errors name the field `app`.
pub fn resolve(name: &str, env: &[(OsString, OsString)]) -> Result<EntryCommand> {
    let wanted = name.trim();
    let base = wanted.strip_suffix(".desktop").unwrap_or(wanted);
    if base.is_empty() || base.contains('/') {
        return Err(DesktopError::invalid(
            "app",
            format!(
                "{name:?} is not a desktop entry name (like \"mousepad\" or \"org.xfce.mousepad\")"
            ),
        ));
    }
    let exact = format!("{base}.desktop").to_lowercase();
    let suffix = format!(".{exact}");
    let dirs = application_dirs(env);
    let mut all = Vec::new();
    for dir in &dirs {
        let mut found = Vec::new();
        entries_in(dir, "", &mut found, 0);
        all.extend(found);
    }
    // First by exact id, then by last part, each in directory order (an earlier directory wins).
    let file = all
        .iter()
        .find(|(id, _)| id.to_lowercase() == exact)
        .or_else(|| {
            all.iter()
                .find(|(id, _)| id.to_lowercase().ends_with(&suffix))
        })
        .map(|(_, path)| path.clone());
    let Some(file) = file else {
        let searched: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(DesktopError::invalid(
            "app",
            format!("no desktop entry named {base:?} in {}", searched.join(", ")),
        ));
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        DesktopError::invalid("app", format!("cannot read {}: {e}", file.display()))
    })?;
    command_of(&text, &file, env)
}

/// The `[Desktop Entry]` group's untranslated keys.
fn keys(text: &str) -> Vec<(&str, &str)> {
    let mut in_group = false;
    let mut keys = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_group = line == "[Desktop Entry]";
            continue;
        }
        if !in_group || line.starts_with('#') {
            continue;
        }
        if let Some((key, value)) = line.split_once('=') {
            let key = key.trim();
            if !key.contains('[') {
                keys.push((key, value.trim()));
            }
        }
    }
    keys
}

fn command_of(text: &str, file: &Path, env: &[(OsString, OsString)]) -> Result<EntryCommand> {
    let keys = keys(text);
    let get = |key: &str| keys.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
    let shown = file.display();
    if get("Type").is_some_and(|t| t != "Application") {
        return Err(DesktopError::invalid(
            "app",
            format!(
                "{shown} is not an application (Type={})",
                get("Type").unwrap_or_default()
            ),
        ));
    }
    if get("Hidden") == Some("true") {
        return Err(DesktopError::invalid(
            "app",
            format!("{shown} is hidden (Hidden=true: as good as deleted)"),
        ));
    }
    let Some(exec) = get("Exec") else {
        return Err(DesktopError::invalid(
            "app",
            format!("{shown} has no Exec line to run (it may start through D-Bus only)"),
        ));
    };
    let mut argv = exec_argv(
        &unescape(exec),
        get("Name").map(unescape).as_deref(),
        get("Icon"),
        file,
    )
    .map_err(|message| DesktopError::invalid("app", format!("{shown}: Exec: {message}")))?;
    if argv.is_empty() {
        return Err(DesktopError::invalid(
            "app",
            format!("{shown} has an empty Exec line"),
        ));
    }
    if get("Terminal") == Some("true") {
        let terminal = ["x-terminal-emulator", "xterm"]
            .into_iter()
            .find(|t| on_path(t, env))
            .ok_or_else(|| {
                DesktopError::invalid(
                    "app",
                    format!("{shown} runs in a terminal (Terminal=true), and neither x-terminal-emulator nor xterm is installed"),
                )
            })?;
        argv.splice(0..0, [terminal.to_owned(), "-e".to_owned()]);
    }
    Ok(EntryCommand {
        argv,
        cwd: get("Path").filter(|p| !p.is_empty()).map(PathBuf::from),
        file: file.to_path_buf(),
    })
}

fn on_path(program: &str, env: &[(OsString, OsString)]) -> bool {
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_default();
    std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
}

/// A string value's escapes: `\s` `\n` `\t` `\r` `\\`.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('s') => out.push(' '),
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(other) => {
                // `\"`, `\$` and the like belong to the Exec quoting below: keep them.
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Split an Exec value into arguments: spaces separate, double quotes group (inside them `\"`,
/// `` \` ``, `\$`, `\\` escape); then the field codes: `%%` is `%`, `%c` the name, `%k` the file,
/// `%i` `--icon ICON`, and the file and URL codes (`%f %F %u %U`, and the deprecated ones) go.
fn exec_argv(
    exec: &str,
    name: Option<&str>,
    icon: Option<&str>,
    file: &Path,
) -> std::result::Result<Vec<String>, String> {
    // (argument, was it quoted)
    let mut words: Vec<(String, bool)> = Vec::new();
    let mut chars = exec.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        let Some(&first) = chars.peek() else {
            break;
        };
        let mut word = String::new();
        if first == '"' {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') => break,
                    Some('\\') => match chars.next() {
                        Some(c @ ('"' | '`' | '$' | '\\')) => word.push(c),
                        Some(c) => {
                            word.push('\\');
                            word.push(c);
                        }
                        None => return Err("a quoted argument ends in a backslash".into()),
                    },
                    Some(c) => word.push(c),
                    None => return Err("a quoted argument is not closed".into()),
                }
            }
            words.push((word, true));
        } else {
            while let Some(&c) = chars.peek() {
                if c == ' ' || c == '\t' {
                    break;
                }
                word.push(c);
                chars.next();
            }
            words.push((word, false));
        }
    }
    let mut argv = Vec::new();
    for (word, quoted) in words {
        if quoted {
            argv.push(word);
            continue;
        }
        match word.as_str() {
            "%i" => {
                if let Some(icon) = icon.filter(|i| !i.is_empty()) {
                    argv.push("--icon".into());
                    argv.push(icon.into());
                }
                continue;
            }
            "%f" | "%F" | "%u" | "%U" | "%d" | "%D" | "%n" | "%N" | "%v" | "%m" => continue,
            _ => {}
        }
        let mut out = String::new();
        let mut cs = word.chars();
        while let Some(c) = cs.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match cs.next() {
                Some('%') => out.push('%'),
                Some('c') => out.push_str(name.unwrap_or_default()),
                Some('k') => out.push_str(&file.to_string_lossy()),
                Some('f' | 'F' | 'u' | 'U' | 'd' | 'D' | 'n' | 'N' | 'v' | 'm' | 'i') => {}
                Some(other) => return Err(format!("unknown field code %{other}")),
                None => return Err("a lone % at the end".into()),
            }
        }
        if !out.is_empty() {
            argv.push(out);
        }
    }
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(exec: &str) -> Vec<String> {
        exec_argv(
            &unescape(exec),
            Some("Mouse Pad"),
            Some("org.xfce.mousepad"),
            Path::new("/apps/m.desktop"),
        )
        .expect("a valid Exec")
    }

    #[test]
    fn field_codes_for_files_and_urls_are_removed() {
        assert_eq!(argv("mousepad %U"), ["mousepad"]);
        assert_eq!(argv("xterm -e %f"), ["xterm", "-e"]);
        assert_eq!(
            argv("app --name=%c %k"),
            ["app", "--name=Mouse Pad", "/apps/m.desktop"]
        );
        assert_eq!(argv("app %i"), ["app", "--icon", "org.xfce.mousepad"]);
        assert_eq!(argv("printf 100%%"), ["printf", "100%"]);
    }

    #[test]
    fn quoted_arguments_keep_their_spaces_and_escapes() {
        assert_eq!(
            argv(r#"sh -c "echo \"hi there\" \$HOME" %F"#),
            ["sh", "-c", "echo \"hi there\" $HOME"]
        );
        // `\s` is a space before the line is split: it separates unless quoted.
        assert_eq!(argv(r"app a\sb"), ["app", "a", "b"]);
        assert_eq!(argv(r#"app "a\sb""#), ["app", "a b"]);
        assert!(exec_argv("app \"open", None, None, Path::new("x")).is_err());
        assert!(exec_argv("app %z", None, None, Path::new("x")).is_err());
    }

    #[test]
    fn entries_are_found_by_id_then_by_their_last_part_in_directory_order() {
        let root = std::env::temp_dir().join(format!("sp-entries-{}", std::process::id()));
        let home = root.join("home/applications");
        let system = root.join("system/applications/vendor");
        std::fs::create_dir_all(&home).expect("dirs");
        std::fs::create_dir_all(&system).expect("dirs");
        let write = |path: PathBuf, exec: &str| {
            std::fs::write(
                path,
                format!("[Desktop Entry]\nType=Application\nName=X\nName[de]=Y\nExec={exec}\n[Desktop Action new]\nExec=other\n"),
            )
            .expect("write");
        };
        write(
            system.join("org.example.editor.desktop"),
            "system-editor %U",
        );
        write(home.join("org.example.editor.desktop"), "home-editor %U");
        write(system.join("tool.desktop"), "tool --flag");
        let env: Vec<(OsString, OsString)> = vec![
            ("XDG_DATA_HOME".into(), root.join("home").into()),
            ("XDG_DATA_DIRS".into(), root.join("system").into()),
        ];
        // The home directory wins; the last reverse-DNS part finds it.
        let editor = resolve("editor", &env).expect("editor");
        assert_eq!(editor.argv, ["home-editor"]);
        assert_eq!(
            resolve("org.example.editor.desktop", &env)
                .expect("id")
                .argv,
            ["home-editor"]
        );
        // In a subdirectory: the id is "vendor-tool.desktop".
        assert_eq!(
            resolve("vendor-tool", &env).expect("tool").argv,
            ["tool", "--flag"]
        );
        let missing = resolve("nothing-here", &env).expect_err("missing");
        assert_eq!(missing.field(), Some("app"));
        assert!(missing
            .to_string()
            .contains("no desktop entry named \"nothing-here\""));
        let _ = std::fs::remove_dir_all(&root);
    }
}
