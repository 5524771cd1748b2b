//! Fonts found on the system for characters DejaVu lacks (CJK above all).
//!
//! Only a short list of well-known paths is tried, in order, and each font is read the first time a
//! character needs it: most screenshots never touch this module, and the ones that do pay for one file
//! read per font at most once per process.

use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use ab_glyph::{Font, FontVec, GlyphId};

/// Single font files, tried first, in order: broad CJK coverage, then the Android fallback.
const FONT_FILES: &[&str] = &[
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/google-noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/opentype/noto/NotoSansMonoCJK-Regular.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
    "/usr/share/fonts/google-droid-sans-fonts/DroidSansFallbackFull.ttf",
];

/// Directories whose .ttf/.ttc/.otf files are tried next, in name order (WenQuanYi, then Unifont for
/// everything else in the Basic Multilingual Plane).
const FONT_DIRS: &[&str] = &[
    "/usr/share/fonts/truetype/wqy",
    "/usr/share/fonts/wenquanyi",
    "/usr/share/fonts/truetype/unifont",
    "/usr/share/fonts/opentype/unifont",
    "/usr/share/fonts/unifont",
];

struct Fallbacks {
    /// Every candidate file that exists, in the order it is tried.
    paths: Vec<PathBuf>,
    /// `fonts[i]` is the parsed `paths[i]`, or `None` when it could not be read or parsed. Grows as
    /// characters need more fonts.
    fonts: Vec<Option<FontVec>>,
}

impl Fallbacks {
    fn discover() -> Fallbacks {
        let mut paths: Vec<PathBuf> = FONT_FILES
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_file())
            .collect();
        for dir in FONT_DIRS {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                        matches!(e.to_ascii_lowercase().as_str(), "ttf" | "ttc" | "otf")
                    })
                })
                .collect();
            found.sort();
            paths.extend(found);
        }
        Fallbacks {
            paths,
            fonts: Vec::new(),
        }
    }

    /// Font number `i`, reading it on first use.
    fn font(&mut self, i: usize) -> Option<&FontVec> {
        while self.fonts.len() <= i {
            let path = self.paths.get(self.fonts.len())?;
            // Index 0 of a collection is the font's primary face (for Noto CJK, the Japanese one, which
            // covers the Han characters shared by every CJK language).
            let font = std::fs::read(path)
                .ok()
                .and_then(|bytes| FontVec::try_from_vec_and_index(bytes, 0).ok());
            self.fonts.push(font);
        }
        self.fonts.get(i)?.as_ref()
    }
}

fn fallbacks() -> &'static Mutex<Fallbacks> {
    static FALLBACKS: OnceLock<Mutex<Fallbacks>> = OnceLock::new();
    FALLBACKS.get_or_init(|| Mutex::new(Fallbacks::discover()))
}

/// Call `f` with the first system font that has a glyph for `ch`; `None` when none has.
pub(crate) fn with_font_for<R>(ch: char, f: impl FnOnce(&FontVec, GlyphId) -> R) -> Option<R> {
    // A panic while the lock was held leaves the font list intact, so a poisoned lock is still usable.
    let mut fallbacks = fallbacks().lock().unwrap_or_else(|e| e.into_inner());
    for i in 0..fallbacks.paths.len() {
        if let Some(font) = fallbacks.font(i) {
            let id = font.glyph_id(ch);
            if id.0 != 0 {
                return Some(f(font, id));
            }
        }
    }
    None
}
