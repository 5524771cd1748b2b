//! The embedded DejaVu Sans Mono faces and which of them draws a cell.

use std::sync::OnceLock;

use ab_glyph::FontRef;

/// The four faces, embedded so screenshots look the same on every machine. Licence:
/// fonts/LICENSE-DejaVu.txt.
static FACE_BYTES: [&[u8]; 4] = [
    include_bytes!("../../fonts/DejaVuSansMono.ttf"),
    include_bytes!("../../fonts/DejaVuSansMono-Bold.ttf"),
    include_bytes!("../../fonts/DejaVuSansMono-Oblique.ttf"),
    include_bytes!("../../fonts/DejaVuSansMono-BoldOblique.ttf"),
];

/// Which of the embedded faces draws a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Face {
    Regular = 0,
    Bold = 1,
    Italic = 2,
    BoldItalic = 3,
}

impl Face {
    pub fn new(bold: bool, italic: bool) -> Face {
        match (bold, italic) {
            (false, false) => Face::Regular,
            (true, false) => Face::Bold,
            (false, true) => Face::Italic,
            (true, true) => Face::BoldItalic,
        }
    }

    pub fn is_bold(self) -> bool {
        matches!(self, Face::Bold | Face::BoldItalic)
    }

    pub fn is_italic(self) -> bool {
        matches!(self, Face::Italic | Face::BoldItalic)
    }
}

/// The parsed embedded faces. Parsing cannot fail for these files, but if it ever did every glyph would
/// fall back to the system fonts or the placeholder box rather than crash a screenshot.
pub(crate) fn embedded() -> &'static [Option<FontRef<'static>>; 4] {
    static FACES: OnceLock<[Option<FontRef<'static>>; 4]> = OnceLock::new();
    FACES.get_or_init(|| FACE_BYTES.map(|bytes| FontRef::try_from_slice(bytes).ok()))
}
