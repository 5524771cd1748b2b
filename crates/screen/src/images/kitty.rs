//! The kitty graphics protocol: control keys, the images a program transmitted (kept by id until it
//! deletes them or they are evicted), chunked transmissions, and turning a payload into pixels.
//! Where a picture goes on the screen is the emulator's business (`emulator/images_glue.rs`).

use std::sync::Arc;

use super::bitmap::{Bitmap, MAX_PAYLOAD_BYTES};
use super::decode::{self, check_size, Refusal};

/// The keys of one command (`a=T,f=100,i=3,...`); absent keys take kitty's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Keys {
    /// `a`: t, T, p, d, q (default t).
    pub action: u8,
    /// `f`: 24, 32 or 100 (default 32).
    pub format: u32,
    /// `t`: d (direct), f (file), t (temporary file), s (shared memory).
    pub medium: u8,
    /// `O`, `S`: where in a file or shared memory the data starts, and how long it is (0: to the end).
    pub offset: u32,
    pub length: u32,
    /// `o=z`: zlib.
    pub zlib: bool,
    /// `s`, `v`: size in pixels of raw data.
    pub width: u32,
    pub height: u32,
    /// `i`, `I`, `p`.
    pub id: u32,
    pub number: u32,
    pub placement: u32,
    /// `m=1`: more chunks follow.
    pub more: bool,
    /// `q`: 1 leaves out OK replies, 2 errors too.
    pub quiet: u32,
    /// `c`, `r`: cells to fit the picture into.
    pub cols: u32,
    pub rows: u32,
    /// `C=1`: the cursor stays.
    pub still: bool,
    /// `U=1`: a virtual placement shown through placeholder characters.
    pub virtual_: bool,
    /// `d`: what to delete (default a).
    pub delete: u8,
    /// `x`, `y`: cell for `d=p`, `d=x`, `d=y` (1-based).
    pub x: u32,
    pub y: u32,
    /// Keys that start a command of their own (not only `m` and `q`).
    pub fresh: bool,
}

impl Keys {
    pub(crate) fn parse(control: &[u8]) -> Keys {
        let mut keys = Keys {
            action: b't',
            format: 32,
            medium: b'd',
            delete: b'a',
            ..Keys::default()
        };
        for pair in control.split(|&b| b == b',') {
            let [key, b'=', value @ ..] = pair else {
                continue;
            };
            let number = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<i64>().ok())
                .map_or(0, |n| n.clamp(0, i64::from(u32::MAX)) as u32);
            let letter = value.first().copied().unwrap_or(0);
            if !matches!(key, b'm' | b'q') {
                keys.fresh = true;
            }
            match key {
                b'a' => keys.action = letter,
                b'f' => keys.format = number,
                b't' => keys.medium = letter,
                b'O' => keys.offset = number,
                b'S' => keys.length = number,
                b'o' => keys.zlib = letter == b'z',
                b's' => keys.width = number,
                b'v' => keys.height = number,
                b'i' => keys.id = number,
                b'I' => keys.number = number,
                b'p' => keys.placement = number,
                b'm' => keys.more = number == 1,
                b'q' => keys.quiet = number,
                b'c' => keys.cols = number,
                b'r' => keys.rows = number,
                b'C' => keys.still = number == 1,
                b'U' => keys.virtual_ = number == 1,
                b'd' => keys.delete = letter,
                b'x' => keys.x = number,
                b'y' => keys.y = number,
                _ => {}
            }
        }
        keys
    }

    /// The reply kitty gives to this command (`ESC _ G i=..;OK ESC \`), if any: only commands that
    /// name an image are answered, and `q` silences them.
    pub(crate) fn reply(&self, outcome: &Result<(), Refusal>) -> Option<Vec<u8>> {
        if self.id == 0 && self.number == 0 {
            return None;
        }
        let message = match outcome {
            Ok(()) if self.quiet == 0 => "OK".to_owned(),
            // Errors carry a POSIX-like code first, as kitty's do.
            Err(why) if self.quiet < 2 && why.starts_with("ENOENT:") => why.clone(),
            Err(why) if self.quiet < 2 => format!("EINVAL:{why}"),
            _ => return None,
        };
        let mut ids = format!("i={}", self.id);
        if self.number != 0 {
            ids.push_str(&format!(",I={}", self.number));
        }
        if self.placement != 0 {
            ids.push_str(&format!(",p={}", self.placement));
        }
        Some(format!("\x1b_G{ids};{message}\x1b\\").into_bytes())
    }
}

/// The data a transmission names: its payload (`t=d`), or what the payload points at: a file
/// (`t=f`), a temporary file removed once read (`t=t`, its name must hold `tty-graphics-protocol`
/// and it must sit in a temporary folder), a POSIX shared-memory object removed once read (`t=s`).
/// As in kitty, only regular files are read, nothing under /proc, /sys or /dev (but /dev/shm), and
/// at most [`MAX_PAYLOAD_BYTES`].
pub(crate) fn medium_data(keys: &Keys, payload: Vec<u8>) -> Result<Vec<u8>, Refusal> {
    use std::os::unix::ffi::OsStringExt;
    use std::path::{Path, PathBuf};
    let medium = keys.medium as char;
    let named = PathBuf::from(std::ffi::OsString::from_vec(payload));
    let path = match keys.medium {
        b'd' => return Ok(named.into_os_string().into_vec()),
        b'f' | b't' if named.is_absolute() => named,
        b'f' | b't' => {
            return Err(format!(
                "t={medium}: {} is not an absolute path",
                named.display()
            ))
        }
        b's' => {
            let name = named.to_string_lossy();
            let name = name.strip_prefix('/').unwrap_or(&name);
            if name.is_empty() || name.contains('/') {
                return Err(format!("t=s: {name:?} is not a shared-memory name"));
            }
            Path::new("/dev/shm").join(name)
        }
        _ => return Err(format!("transmission medium t={medium} not supported")),
    };
    let shown = path.display().to_string();
    let real = path
        .canonicalize()
        .map_err(|e| format!("ENOENT:t={medium}: {shown}: {e}"))?;
    let under = |top: &str| real.starts_with(top);
    if under("/proc") || under("/sys") || (under("/dev") && !under("/dev/shm")) {
        return Err(format!("t={medium}: {shown} is a device or kernel file"));
    }
    if keys.medium == b't' {
        let temporary = real.parent().is_some_and(|dir| {
            dir == Path::new("/tmp")
                || dir == Path::new("/dev/shm")
                || std::env::temp_dir().canonicalize().is_ok_and(|t| dir == t)
        });
        let name_ok = real
            .file_name()
            .is_some_and(|n| n.to_string_lossy().contains("tty-graphics-protocol"));
        if !(temporary && name_ok) {
            return Err(format!(
                "t=t: {shown} is not a temporary file named *tty-graphics-protocol*"
            ));
        }
    }
    let data = read_regular(&real, keys.offset, keys.length)
        .map_err(|why| format!("t={medium}: {shown}: {why}"))?;
    if matches!(keys.medium, b't' | b's') {
        // Ours to remove once read, as in kitty.
        let _ = std::fs::remove_file(&real);
    }
    Ok(data)
}

/// `length` bytes (0: to the end) of a regular file from `offset`, at most [`MAX_PAYLOAD_BYTES`].
fn read_regular(path: &std::path::Path, offset: u32, length: u32) -> Result<Vec<u8>, String> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    // Non-blocking: a FIFO put there must not hold the screen; it is refused just below.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".to_owned());
    }
    let end = meta.len();
    let offset = u64::from(offset);
    let length = match length {
        0 => end.saturating_sub(offset),
        n => u64::from(n),
    };
    if offset + length > end {
        return Err(format!(
            "{length} bytes from {offset} run past its end ({end} bytes)"
        ));
    }
    if length > MAX_PAYLOAD_BYTES as u64 {
        return Err(format!("past the {} MB limit", MAX_PAYLOAD_BYTES >> 20));
    }
    let mut data = vec![0; length as usize];
    file.read_exact_at(&mut data, offset)
        .map_err(|e| e.to_string())?;
    Ok(data)
}

/// The pixels of a transmission's data (see [`medium_data`]).
pub(crate) fn bitmap(keys: &Keys, data: &[u8]) -> Result<Bitmap, Refusal> {
    let channels = match keys.format {
        24 => 3,
        32 => 4,
        100 => 0,
        other => return Err(format!("format f={other} not supported")),
    };
    if channels != 0 {
        check_size(u64::from(keys.width), u64::from(keys.height))?;
    }
    let inflated;
    let data = if keys.zlib {
        let limit = if channels == 0 {
            MAX_PAYLOAD_BYTES
        } else {
            keys.width as usize * keys.height as usize * channels
        };
        inflated = decode::inflate(data, limit)?;
        &inflated[..]
    } else {
        data
    };
    match channels {
        0 => decode::png(data),
        n => decode::raw(data, keys.width, keys.height, n),
    }
}

#[derive(Debug)]
struct Stored {
    id: u32,
    number: u32,
    bitmap: Arc<Bitmap>,
    seq: u64,
}

/// A transmission sent in chunks (`m=1` ... `m=0`), gathered so far.
#[derive(Debug)]
pub(crate) struct Chunked {
    pub keys: Keys,
    pub data: Vec<u8>,
    pub refused: Option<Refusal>,
}

/// The images a program transmitted, by id.
#[derive(Debug, Default)]
pub(crate) struct KittyStore {
    images: Vec<Stored>,
    pub chunked: Option<Chunked>,
    next_id: u32,
}

impl KittyStore {
    pub(crate) fn bytes(&self) -> usize {
        self.images.iter().map(|i| i.bitmap.bytes()).sum::<usize>()
            + self.chunked.as_ref().map_or(0, |c| c.data.len())
    }

    /// The oldest image: (its arrival, its id).
    pub(crate) fn oldest(&self) -> Option<(u64, u32)> {
        self.images.iter().map(|i| (i.seq, i.id)).min()
    }

    pub(crate) fn id_of_seq(&self, seq: u64) -> Option<u32> {
        self.images.iter().find(|i| i.seq == seq).map(|i| i.id)
    }

    /// Keep `bitmap` as image `id` (or a new id for an image known by `number` alone); returns the id.
    pub(crate) fn store(&mut self, id: u32, number: u32, bitmap: Arc<Bitmap>, seq: u64) -> u32 {
        let id = if id != 0 {
            id
        } else {
            // Ids kitty picks for numbered images count down from the top, away from programs' own.
            self.next_id += 1;
            u32::MAX - self.next_id
        };
        self.images.retain(|i| i.id != id);
        self.images.push(Stored {
            id,
            number,
            bitmap,
            seq,
        });
        id
    }

    /// Image `id`, or the newest with `number` when `id` is 0: (id, pixels).
    pub(crate) fn find(&self, id: u32, number: u32) -> Option<(u32, Arc<Bitmap>)> {
        let found = if id != 0 {
            self.images.iter().find(|i| i.id == id)
        } else {
            self.images
                .iter()
                .filter(|i| number != 0 && i.number == number)
                .max_by_key(|i| i.seq)
        };
        found.map(|i| (i.id, i.bitmap.clone()))
    }

    pub(crate) fn remove(&mut self, id: u32) {
        self.images.retain(|i| i.id != id);
    }

    /// Ids of the images with `number`.
    pub(crate) fn ids_numbered(&self, number: u32) -> Vec<u32> {
        self.images
            .iter()
            .filter(|i| i.number == number)
            .map(|i| i.id)
            .collect()
    }

    pub(crate) fn ids(&self) -> Vec<u32> {
        self.images.iter().map(|i| i.id).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_take_kittys_defaults() {
        let k = Keys::parse(b"a=T,f=100,i=7,c=8,r=4,q=2");
        assert_eq!(
            (k.action, k.format, k.id, k.cols, k.rows, k.quiet),
            (b'T', 100, 7, 8, 4, 2)
        );
        let k = Keys::parse(b"m=1");
        assert_eq!(
            (k.action, k.format, k.more, k.fresh),
            (b't', 32, true, false)
        );
    }

    #[test]
    fn replies_name_the_image_and_follow_quiet() {
        let k = Keys::parse(b"a=q,i=31");
        assert_eq!(k.reply(&Ok(())).unwrap(), b"\x1b_Gi=31;OK\x1b\\");
        assert!(Keys::parse(b"a=q").reply(&Ok(())).is_none());
        assert!(Keys::parse(b"i=1,q=1").reply(&Ok(())).is_none());
        assert!(Keys::parse(b"i=1,q=1").reply(&Err("x".into())).is_some());
    }

    #[test]
    fn raw_and_zlib_pixels_decode() {
        let rgb = [255u8, 0, 0, 0, 255, 0];
        let b = bitmap(&Keys::parse(b"f=24,s=2,v=1"), &rgb).unwrap();
        assert_eq!(b.rgba, [255, 0, 0, 255, 0, 255, 0, 255]);
        let z = miniz_oxide::deflate::compress_to_vec_zlib(&rgb, 6);
        let b = bitmap(&Keys::parse(b"f=24,s=2,v=1,o=z"), &z).unwrap();
        assert_eq!(b.width, 2);
        // A zlib bomb stops at the declared size.
        let bomb = miniz_oxide::deflate::compress_to_vec_zlib(&vec![0u8; 10 << 20], 6);
        assert!(bitmap(&Keys::parse(b"f=32,s=2,v=2,o=z"), &bomb).is_err());
        assert!(bitmap(&Keys::parse(b"f=32,s=100000,v=100000"), &[])
            .unwrap_err()
            .contains("limit"));
    }
}
