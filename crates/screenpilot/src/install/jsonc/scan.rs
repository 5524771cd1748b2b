//! Where things are in a JSON (or JSONC) document's text, by byte offset: its objects, their braces
//! and members. The text is checked with serde_json first, its comments and trailing commas blanked
//! to spaces (so a line and column still point into the file); the scanner then only finds places.

use serde_json::Value;

/// Text that is not JSON, or not shaped as a server list can be added to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonTextError {
    #[error("not valid JSON at line {line}, column {column} ({message})")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{what} is not a JSON object")]
    NotAnObject { what: String },
    /// A value to be replaced holds comments, which replacing it would lose.
    #[error("the value of {key} (line {line}) has comments inside, which replacing it would lose")]
    CommentsInside { key: String, line: usize },
}

/// The document's value, if `text` is JSON (comments and trailing commas allowed); `None` when it
/// holds no value at all (empty, or only blanks and comments).
pub fn check(text: &str) -> Result<Option<Value>, JsonTextError> {
    let blanked = blank(text);
    if blanked.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(&blanked).map(Some).map_err(|e| {
        let said = e.to_string();
        let message = said.split(" at line ").next().unwrap_or(&said).to_owned();
        JsonTextError::Syntax {
            line: e.line(),
            column: e.column(),
            message,
        }
    })
}

/// `text` with its comments, a leading byte order mark and trailing commas turned into spaces, and
/// every newline where it was.
fn blank(text: &str) -> Vec<u8> {
    let mut out = text.as_bytes().to_vec();
    let mut i = 0;
    if text.starts_with('\u{feff}') {
        out[..3].fill(b' ');
        i = 3;
    }
    let mut in_string = false;
    while i < out.len() {
        let b = out[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match (b, out.get(i + 1)) {
            (b'"', _) => in_string = true,
            (b'/', Some(b'/')) => {
                while i < out.len() && out[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
                continue;
            }
            (b'/', Some(b'*')) => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(out.len(), |k| i + 2 + k + 2);
                for byte in &mut out[i..end] {
                    if *byte != b'\n' {
                        *byte = b' ';
                    }
                }
                i = end;
                continue;
            }
            (b',', _) => {
                let next = out[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
                if matches!(next, Some(b'}' | b']')) {
                    out[i] = b' ';
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Where one object of the document is: its braces and its members, by byte offset.
#[derive(Debug, Clone)]
pub(super) struct Object {
    pub(super) open: usize,
    pub(super) close: usize,
    pub(super) members: Vec<Member>,
}

#[derive(Debug, Clone)]
pub(super) struct Member {
    pub(super) key: String,
    pub(super) key_start: usize,
    pub(super) value_start: usize,
    pub(super) value_end: usize,
}

impl Object {
    /// The member named `key` (the last, if it is there twice: serde_json keeps the last too).
    pub(super) fn member(&self, key: &str) -> Option<(usize, &Member)> {
        self.members.iter().enumerate().rfind(|(_, m)| m.key == key)
    }
}

/// Reads a text known to be JSON (checked by [`check`]) for where its objects are.
pub(super) struct Scan<'t> {
    pub(super) text: &'t str,
    pub(super) pos: usize,
}

impl Scan<'_> {
    pub(super) fn byte(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    pub(super) fn error(&self, message: &str) -> JsonTextError {
        let before = &self.text[..self.pos.min(self.text.len())];
        JsonTextError::Syntax {
            line: before.matches('\n').count() + 1,
            column: before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1,
            message: message.into(),
        }
    }

    /// Past blanks, comments and a byte order mark.
    pub(super) fn trivia(&mut self) {
        loop {
            let rest = &self.text[self.pos..];
            if let Some(after) = rest.strip_prefix('\u{feff}') {
                self.pos = self.text.len() - after.len();
            } else if rest.starts_with("//") {
                self.pos += rest.find('\n').unwrap_or(rest.len());
            } else if let Some(comment) = rest.strip_prefix("/*") {
                self.pos += comment.find("*/").map_or(rest.len(), |k| k + 4);
            } else if rest.starts_with(|c: char| c.is_ascii_whitespace()) {
                self.pos += 1;
            } else {
                return;
            }
        }
    }

    fn value(&mut self) -> Result<(), JsonTextError> {
        match self.byte() {
            Some(b'{') => self.object().map(|_| ()),
            Some(b'[') => {
                self.pos += 1;
                loop {
                    self.trivia();
                    if self.byte() == Some(b']') {
                        self.pos += 1;
                        return Ok(());
                    }
                    self.value()?;
                    self.trivia();
                    match self.byte() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {}
                        _ => return Err(self.error("expected `,` or `]`")),
                    }
                }
            }
            Some(b'"') => self.string().map(|_| ()),
            Some(_) => {
                let rest = &self.text.as_bytes()[self.pos..];
                let len = rest
                    .iter()
                    .position(|b| b",]}/".contains(b) || b.is_ascii_whitespace())
                    .unwrap_or(rest.len());
                if len == 0 {
                    return Err(self.error("expected a value"));
                }
                self.pos += len;
                Ok(())
            }
            None => Err(self.error("expected a value")),
        }
    }

    fn string(&mut self) -> Result<String, JsonTextError> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.byte() {
                Some(b'\\') => self.pos += 2,
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => self.pos += 1,
                None => return Err(self.error("a string does not end")),
            }
        }
        serde_json::from_str(&self.text[start..self.pos]).map_err(|_| self.error("a bad string"))
    }

    fn object(&mut self) -> Result<Object, JsonTextError> {
        let open = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.trivia();
            match self.byte() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Object {
                        open,
                        close: self.pos - 1,
                        members,
                    });
                }
                Some(b'"') => {}
                _ => return Err(self.error("expected a key or `}`")),
            }
            let key_start = self.pos;
            let key = self.string()?;
            self.trivia();
            if self.byte() != Some(b':') {
                return Err(self.error("expected `:`"));
            }
            self.pos += 1;
            self.trivia();
            let value_start = self.pos;
            self.value()?;
            members.push(Member {
                key,
                key_start,
                value_start,
                value_end: self.pos,
            });
            self.trivia();
            match self.byte() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {}
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }
}

/// The object that starts at `pos`, or `None` when another kind of value does.
pub(super) fn object_at(text: &str, pos: usize) -> Result<Option<Object>, JsonTextError> {
    let mut scan = Scan { text, pos };
    scan.trivia();
    if scan.byte() != Some(b'{') {
        return Ok(None);
    }
    scan.object().map(Some)
}

/// `text` holds a comment (which [`blank`] turned into spaces; a trailing comma is no comment).
pub(super) fn has_comment(text: &str) -> bool {
    blank(text)
        .iter()
        .zip(text.as_bytes())
        .any(|(blanked, byte)| blanked != byte && *byte != b',')
}
