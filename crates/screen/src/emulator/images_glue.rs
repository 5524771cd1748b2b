//! Where the pictures of [`crate::images`] meet the grid: the feed split at each picture, the
//! cursor read where it stands, the placement anchored to its row and followed as rows scroll, and
//! the answers to capability queries.
//!
//! A placement is anchored by the address of its first row's cells (see [`row_address`]): alacritty
//! rotates rows but never moves their cells, so after every piece of input the row is looked for
//! among the visible rows and the newest history rows. A picture whose row is gone (scrolled out of
//! reach, or, on the alternate screen, scrolled off and reused further down) goes. Sixel and iTerm2
//! pictures belong to their cells, as in xterm and iTerm2: a hash of the cells under them is kept,
//! and writing over or clearing those cells removes the picture. kitty pictures stay until deleted,
//! scrolled away or the screen is cleared (`CSI 2 J`), as in kitty.

use std::sync::Arc;

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::vte::ansi::Color as AnsiColor;
use xxhash_rust::xxh3::Xxh3;

use super::{color_key, row_address, Screen};
use crate::images::decode::Refusal;
use crate::images::intercept::{Event, Piece};
use crate::images::kitty::{self, Chunked, Keys};
use crate::images::placeholders::{Mark, PLACEHOLDER};
use crate::images::{iterm, Bitmap, Placement, Protocol, ShownImage, Virtual, CELL_PX};
use crate::images::{MAX_PAYLOAD_BYTES, MAX_PLACEMENTS};

/// Where the cursor goes after a picture.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Movement {
    /// To the row below the picture (sixel).
    Below,
    /// To the column after it on its last row (iTerm2, kitty).
    After,
    /// Nowhere (kitty `C=1`).
    Stay,
}

/// A picture about to be placed.
struct Incoming {
    protocol: Protocol,
    kitty: Option<(u32, u32)>,
    /// Its pixels are its own, not a stored kitty image's.
    owned: bool,
    bitmap: Arc<Bitmap>,
    area_px: (u32, u32),
    movement: Movement,
}

impl Screen {
    /// Show the pictures programs draw (kitty graphics, iTerm2 inline images, sixel) and answer
    /// their capability queries as a terminal with graphics does. Off by default: programs then get
    /// the answers of a text terminal and keep their text fallback.
    pub fn set_images(&mut self, on: bool) {
        match (on, self.images.is_some()) {
            (true, false) => self.images = Some(Box::default()),
            (false, true) => self.images = None,
            _ => {}
        }
        self.generation += 1;
    }

    /// Whether pictures are shown ([`Screen::set_images`]).
    pub fn images_enabled(&self) -> bool {
        self.images.is_some()
    }

    /// The pictures on the visible screen now, oldest first.
    pub fn images(&self) -> Vec<ShownImage> {
        let Some(images) = &self.images else {
            return Vec::new();
        };
        let alt = self.alt_screen();
        let screen = self.term.screen_lines() as i32;
        let mut shown: Vec<ShownImage> = images
            .placements
            .iter()
            .filter(|p| p.alt == alt && p.row + i32::from(p.rows) > 0 && p.row < screen)
            .map(Placement::shown)
            .collect();
        if !images.virtuals.is_empty() {
            shown.extend(images.placeholder_pictures(0, &self.placeholder_marks()));
        }
        shown
    }

    /// The placeholder cells of the visible screen, row by row (see [`crate::images::placeholders`]).
    fn placeholder_marks(&self) -> Vec<Vec<Option<Mark>>> {
        let grid = self.term.grid();
        let id_of = |color: AnsiColor| match color {
            AnsiColor::Spec(rgb) => {
                Some((u32::from(rgb.r) << 16) | (u32::from(rgb.g) << 8) | u32::from(rgb.b))
            }
            AnsiColor::Indexed(index) => Some(u32::from(index)),
            AnsiColor::Named(_) => None,
        };
        (0..self.term.screen_lines() as i32)
            .map(|line| {
                let row = &grid[Line(line)];
                if !row[..].iter().any(|cell| cell.c == PLACEHOLDER) {
                    return Vec::new();
                }
                row[..]
                    .iter()
                    .map(|cell| {
                        if cell.c != PLACEHOLDER {
                            return None;
                        }
                        let id = id_of(cell.fg)?;
                        let placement = cell.underline_color().and_then(id_of).unwrap_or(0);
                        Some(Mark::new(
                            id,
                            placement,
                            cell.zerowidth().unwrap_or_default(),
                        ))
                    })
                    .collect()
            })
            .collect()
    }

    /// Why pictures were refused or left out, newest last (a few are kept).
    pub fn image_notes(&self) -> Vec<String> {
        self.images.as_ref().map(|i| i.notes()).unwrap_or_default()
    }

    /// [`Screen::feed`] for a screen that shows pictures.
    pub(super) fn feed_with_images(&mut self, bytes: &[u8]) -> Vec<u8> {
        let Some(images) = self.images.as_mut() else {
            return Vec::new();
        };
        let pending = images.intercept.take_pending();
        let joined;
        let input: &[u8] = if pending.is_empty() {
            bytes
        } else {
            joined = [&pending[..], bytes].concat();
            &joined
        };
        let pieces = images.intercept.scan(input);
        let mut replies = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Text(range) => self.feed_text(&input[range]),
                Piece::Esc => self.feed_text(b"\x1b"),
                Piece::Event(event) => {
                    replies.extend(self.drain_outbox());
                    let reply = self.image_event(event);
                    replies.extend(reply);
                }
            }
        }
        self.generation += 1;
        replies.extend(self.drain_outbox());
        replies
    }

    /// Act on one event of the intercepted stream; the reply to write back.
    fn image_event(&mut self, event: Event) -> Vec<u8> {
        match event {
            Event::PrimaryDa => b"\x1b[?62;4;22c".to_vec(),
            Event::Graphics(params) => self.graphics_attributes(&params),
            Event::CellPixels => format!("\x1b[6;{};{}t", CELL_PX.1, CELL_PX.0).into_bytes(),
            Event::ItermCellSize => format!(
                "\x1b]1337;ReportCellSize={:.1};{:.1}\x1b\\",
                CELL_PX.1 as f32, CELL_PX.0 as f32
            )
            .into_bytes(),
            Event::Clear => {
                let alt = self.alt_screen();
                if let Some(images) = self.images.as_mut() {
                    images.placements.retain(|p| p.alt != alt);
                }
                Vec::new()
            }
            Event::Reset => {
                if let Some(images) = self.images.as_mut() {
                    images.placements.clear();
                    images.virtuals.clear();
                    images.kitty = Default::default();
                }
                Vec::new()
            }
            Event::Sixel(Ok(bitmap)) => {
                let area = (bitmap.width, bitmap.height);
                self.place(Incoming {
                    protocol: Protocol::Sixel,
                    kitty: None,
                    owned: true,
                    bitmap: Arc::new(bitmap),
                    area_px: area,
                    movement: Movement::Below,
                });
                Vec::new()
            }
            Event::Sixel(Err(why)) => {
                self.note(format!("image refused: {why}"));
                Vec::new()
            }
            Event::Iterm { args, payload } => {
                self.iterm(&args, payload);
                Vec::new()
            }
            Event::Kitty { control, payload } => self.kitty(&control, payload),
        }
    }

    fn note(&mut self, note: String) {
        if let Some(images) = self.images.as_mut() {
            images.note(note);
        }
    }

    /// XTSMGRAPHICS: colour registers (1) and the largest sixel picture (2) can be read.
    fn graphics_attributes(&self, params: &[u32]) -> Vec<u8> {
        let size = self.size();
        let reply = match params.first() {
            Some(1) => "1;0;1024".to_owned(),
            Some(2) => format!(
                "2;0;{};{}",
                u32::from(size.cols) * CELL_PX.0,
                u32::from(size.rows) * CELL_PX.1
            ),
            Some(other) => format!("{other};1;0"),
            None => return Vec::new(),
        };
        format!("\x1b[?{reply}S").into_bytes()
    }

    fn iterm(&mut self, args: &[u8], payload: Result<Vec<u8>, Refusal>) {
        let args = iterm::Args::parse(args);
        if !args.inline {
            return;
        }
        let bitmap = args
            .check()
            .and(payload)
            .and_then(|data| crate::images::decode::file(&data));
        match bitmap {
            Ok(bitmap) => {
                let size = self.size();
                let area = args.area((bitmap.width, bitmap.height), (size.cols, size.rows));
                self.place(Incoming {
                    protocol: Protocol::Iterm,
                    kitty: None,
                    owned: true,
                    bitmap: Arc::new(bitmap),
                    area_px: area,
                    movement: Movement::After,
                });
            }
            Err(why) => self.note(format!("image refused: iTerm2 {why}")),
        }
    }

    /// A kitty graphics command, or one chunk of a transmission.
    fn kitty(&mut self, control: &[u8], payload: Result<Vec<u8>, Refusal>) -> Vec<u8> {
        let keys = Keys::parse(control);
        let Some(images) = self.images.as_mut() else {
            return Vec::new();
        };
        if let Some(mut chunk) = images.kitty.chunked.take() {
            if keys.fresh {
                images.note("image refused: kitty chunked transmission left unfinished");
            } else {
                match payload {
                    Ok(data) if chunk.refused.is_none() => {
                        if chunk.data.len() + data.len() > MAX_PAYLOAD_BYTES {
                            chunk.data = Vec::new();
                            chunk.refused = Some(format!(
                                "transmission past the {} MB limit",
                                MAX_PAYLOAD_BYTES >> 20
                            ));
                        } else {
                            chunk.data.extend_from_slice(&data);
                        }
                    }
                    Ok(_) => {}
                    Err(why) => {
                        chunk.data = Vec::new();
                        chunk.refused.get_or_insert(why);
                    }
                }
                if keys.more {
                    images.kitty.chunked = Some(chunk);
                    return Vec::new();
                }
                let payload = match chunk.refused {
                    Some(why) => Err(why),
                    None => Ok(chunk.data),
                };
                return self.kitty_command(chunk.keys, payload);
            }
        }
        if keys.more && matches!(keys.action, b't' | b'T' | b'q') {
            let (data, refused) = match payload {
                Ok(data) => (data, None),
                Err(why) => (Vec::new(), Some(why)),
            };
            images.kitty.chunked = Some(Chunked {
                keys,
                data,
                refused,
            });
            return Vec::new();
        }
        self.kitty_command(keys, payload)
    }

    fn kitty_command(&mut self, mut keys: Keys, payload: Result<Vec<u8>, Refusal>) -> Vec<u8> {
        let payload = payload.and_then(|data| kitty::medium_data(&keys, data));
        let outcome = match keys.action {
            b'q' => payload.and_then(|data| kitty::bitmap(&keys, &data).map(|_| ())),
            b't' | b'T' => match payload.and_then(|data| kitty::bitmap(&keys, &data)) {
                Ok(bitmap) => {
                    let bitmap = Arc::new(bitmap);
                    let named = keys.id != 0 || keys.number != 0;
                    if named {
                        let Some(images) = self.images.as_mut() else {
                            return Vec::new();
                        };
                        images.make_room(bitmap.bytes());
                        let seq = images.next_seq();
                        keys.id = images
                            .kitty
                            .store(keys.id, keys.number, bitmap.clone(), seq);
                    }
                    if keys.action == b'T' {
                        self.kitty_place(&keys, bitmap, !named);
                    }
                    Ok(())
                }
                Err(why) => {
                    self.note(format!("image refused: kitty {why}"));
                    Err(why)
                }
            },
            b'p' => {
                let found = self
                    .images
                    .as_ref()
                    .and_then(|i| i.kitty.find(keys.id, keys.number));
                match found {
                    Some((id, bitmap)) => {
                        keys.id = id;
                        self.kitty_place(&keys, bitmap, false);
                        Ok(())
                    }
                    None => Err("ENOENT:no such image".to_owned()),
                }
            }
            b'd' => {
                self.kitty_delete(&keys);
                return Vec::new();
            }
            _ => return Vec::new(),
        };
        keys.reply(&outcome).unwrap_or_default()
    }

    fn kitty_place(&mut self, keys: &Keys, bitmap: Arc<Bitmap>, owned: bool) {
        let (iw, ih) = (
            u64::from(bitmap.width.max(1)),
            u64::from(bitmap.height.max(1)),
        );
        let (c, r) = (u64::from(keys.cols), u64::from(keys.rows));
        let (cw, ch) = (u64::from(CELL_PX.0), u64::from(CELL_PX.1));
        let area = match (c, r) {
            (0, 0) => (iw, ih),
            (c, 0) => (c * cw, c * cw * ih / iw),
            (0, r) => (r * ch * iw / ih, r * ch),
            (c, r) => (c * cw, r * ch),
        };
        let clamp = |v: u64| v.clamp(1, u64::from(u32::MAX)) as u32;
        if keys.virtual_ {
            // Shown wherever placeholder cells name it; the cursor stays.
            let Some(images) = self.images.as_mut() else {
                return;
            };
            if owned {
                images.note("image refused: kitty placeholders (U=1) need an image id (i=)");
                return;
            }
            images.placed += 1;
            let cells = |px: u32, cell: u32| px.div_ceil(cell).clamp(1, 1 << 16);
            let number = images.placed;
            images.add_virtual(Virtual {
                id: keys.id,
                placement: keys.placement,
                cols: cells(clamp(area.0), CELL_PX.0),
                rows: cells(clamp(area.1), CELL_PX.1),
                number,
            });
            return;
        }
        self.place(Incoming {
            protocol: Protocol::Kitty,
            kitty: Some((keys.id, keys.placement)),
            owned,
            bitmap,
            area_px: (clamp(area.0), clamp(area.1)),
            movement: if keys.still {
                Movement::Stay
            } else {
                Movement::After
            },
        });
    }

    /// `a=d`: the placements chosen by `d`; upper case also frees the images left unplaced.
    fn kitty_delete(&mut self, keys: &Keys) {
        let cursor = self.cursor();
        let alt = self.alt_screen();
        let Some(images) = self.images.as_mut() else {
            return;
        };
        let numbered = images.kitty.ids_numbered(keys.number);
        let (x, y) = (
            keys.x.saturating_sub(1) as i64,
            keys.y.saturating_sub(1) as i64,
        );
        let covers = |p: &Placement, col: i64, row: i64| {
            (i64::from(p.col)..i64::from(p.col) + i64::from(p.cols)).contains(&col)
                && (i64::from(p.row)..i64::from(p.row) + i64::from(p.rows)).contains(&row)
        };
        let chosen = |p: &Placement| -> bool {
            let Some((id, placement)) = p.kitty else {
                return false;
            };
            if p.alt != alt {
                return false;
            }
            match keys.delete.to_ascii_lowercase() {
                b'a' => true,
                b'i' => id == keys.id && (keys.placement == 0 || placement == keys.placement),
                b'n' => numbered.contains(&id),
                b'c' => covers(p, i64::from(cursor.col), i64::from(cursor.row)),
                b'p' => covers(p, x, y),
                b'x' => covers(p, x, i64::from(p.row)),
                b'y' => covers(p, i64::from(p.col), y),
                _ => false,
            }
        };
        let mut touched = Vec::new();
        images.virtuals.retain(|v| {
            let gone = match keys.delete.to_ascii_lowercase() {
                b'a' => true,
                b'i' => v.id == keys.id && (keys.placement == 0 || v.placement == keys.placement),
                b'n' => numbered.contains(&v.id),
                _ => false,
            };
            if gone {
                touched.push(v.id);
            }
            !gone
        });
        images.placements.retain(|p| {
            let gone = chosen(p);
            if gone {
                touched.extend(p.kitty.map(|(id, _)| id));
            }
            !gone
        });
        if keys.delete.is_ascii_uppercase() {
            if matches!(keys.delete, b'I' | b'N') {
                touched.extend(if keys.delete == b'I' {
                    vec![keys.id]
                } else {
                    numbered
                });
            }
            if keys.delete == b'A' {
                touched.extend(images.kitty.ids());
            }
            for id in touched {
                let placed = images
                    .placements
                    .iter()
                    .any(|p| p.kitty.is_some_and(|(i, _)| i == id))
                    || images.virtuals.iter().any(|v| v.id == id);
                if !placed {
                    images.kitty.remove(id);
                }
            }
        }
    }

    /// Put a picture at the cursor and move the cursor past it as its protocol says.
    fn place(&mut self, incoming: Incoming) {
        if self.parser.sync_bytes_count() > 0 {
            // The cursor a synchronized update will leave is not known until it runs: run it.
            let replies = self.flush_sync();
            if let Ok(mut outbox) = self.outbox.lock() {
                outbox.replies.splice(0..0, replies);
            }
        }
        let cells = |px: u32, cell: u32| px.div_ceil(cell).clamp(1, u32::from(u16::MAX)) as u16;
        let cols = cells(incoming.area_px.0, CELL_PX.0);
        let rows = cells(incoming.area_px.1, CELL_PX.1);
        let point = self.term.grid().cursor.point;
        let alt = self.alt_screen();
        let anchor = row_address(self.term.grid(), point.line.0);
        let Some(images) = self.images.as_mut() else {
            return;
        };
        images.make_room(if incoming.owned {
            incoming.bitmap.bytes()
        } else {
            0
        });
        images.placed += 1;
        let number = images.placed;
        let seq = images.next_seq();
        images.add(Placement {
            number,
            protocol: incoming.protocol,
            kitty: incoming.kitty,
            owned: incoming.owned,
            bitmap: incoming.bitmap,
            anchor,
            alt,
            row: point.line.0,
            col: point.column.0 as u16,
            cols,
            rows,
            area_px: incoming.area_px,
            under: None,
            seq,
        });
        debug_assert!(images.placements.len() <= MAX_PLACEMENTS);
        // Past a screenful of line feeds the picture is gone from view anyway.
        let feeds = usize::from(rows).min(self.term.screen_lines() + 1);
        match incoming.movement {
            Movement::Below => self.feed_text(&b"\n".repeat(feeds)),
            Movement::After => {
                let mut moves = b"\n".repeat(feeds - 1);
                moves.extend_from_slice(format!("\x1b[{cols}C").as_bytes());
                self.feed_text(&moves);
            }
            Movement::Stay => {}
        }
        if incoming.protocol != Protocol::Kitty {
            self.remember_cells_under(number);
        }
    }

    /// Hash the cells under placement `number`, row by row, to see later whether they changed.
    fn remember_cells_under(&mut self, number: u64) {
        let Screen { images, term, .. } = self;
        let Some(images) = images.as_mut() else {
            return;
        };
        let Some(p) = images.placements.iter_mut().find(|p| p.number == number) else {
            return;
        };
        let grid = term.grid();
        let lowest = -(grid.history_size() as i32);
        let screen = grid.screen_lines() as i32;
        p.under = Some(
            (0..i32::from(p.rows))
                .map(|i| {
                    let line = p.row + i;
                    (line >= lowest && line < screen).then(|| row_hash(term, line, p.col, p.cols))
                })
                .collect(),
        );
    }

    /// Follow every placement to where its row went; drop those whose row is gone or whose cells
    /// were written over. Runs after every piece of input.
    pub(super) fn relocate_images(&mut self) {
        let alt = self.alt_screen();
        let Screen { images, term, .. } = self;
        let Some(images) = images.as_mut() else {
            return;
        };
        if images.placements.is_empty() {
            return;
        }
        let grid = term.grid();
        let screen = grid.screen_lines() as i32;
        let history = if alt { 0 } else { grid.history_size() as i32 };
        images.placements.retain_mut(|p| {
            if p.alt != alt {
                // The alternate screen's pictures go with it; the primary's wait for it.
                return !p.alt;
            }
            let lowest = (1 - i32::from(p.rows)).max(-history);
            let at =
                |line: i32| (lowest..screen).contains(&line) && row_address(grid, line) == p.anchor;
            let found = if at(p.row) {
                Some(p.row)
            } else {
                (lowest..screen).find(|&line| at(line))
            };
            let Some(line) = found else {
                return false;
            };
            if alt && line > p.row {
                // Scrolled off the top and reused as a new row below.
                return false;
            }
            p.row = line;
            if let Some(under) = &p.under {
                for (i, hash) in under.iter().enumerate() {
                    let line = line + i as i32;
                    if let Some(hash) = hash.filter(|_| line >= -history && line < screen) {
                        if row_hash(term, line, p.col, p.cols) != hash {
                            return false;
                        }
                    }
                }
            }
            true
        });
    }
}

/// A hash of the cells `col..col + cols` of `line`: their characters, colours and attributes.
fn row_hash<T>(term: &alacritty_terminal::Term<T>, line: i32, col: u16, cols: u16) -> u64 {
    let grid = term.grid();
    let row = &grid[Line(line)];
    let end = (usize::from(col) + usize::from(cols)).min(grid.columns());
    let mut hasher = Xxh3::new();
    for c in usize::from(col)..end {
        let cell = &row[Column(c)];
        hasher.update(&u32::from(cell.c).to_le_bytes());
        hasher.update(&color_key(cell.bg));
        hasher.update(&cell.flags.bits().to_le_bytes());
    }
    hasher.digest()
}

#[cfg(test)]
mod tests;
