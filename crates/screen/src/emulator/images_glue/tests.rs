use super::*;
use crate::geometry::Size;

/// A PNG of four quadrants: red, green / blue, yellow.
pub(crate) fn quadrants_png(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = ::png::Encoder::new(&mut out, w, h);
    encoder.set_color(::png::ColorType::Rgb);
    encoder.set_depth(::png::BitDepth::Eight);
    let mut writer = encoder.write_header().unwrap();
    writer.write_image_data(&quadrants_rgb(w, h)).unwrap();
    writer.finish().unwrap();
    out
}

fn quadrants_rgb(w: u32, h: u32) -> Vec<u8> {
    let mut data = Vec::new();
    for y in 0..h {
        for x in 0..w {
            data.extend_from_slice(match (x >= w / 2, y >= h / 2) {
                (false, false) => &[255, 0, 0],
                (true, false) => &[0, 255, 0],
                (false, true) => &[0, 0, 255],
                (true, true) => &[255, 255, 0],
            });
        }
    }
    data
}

fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn screen() -> Screen {
    let mut s = Screen::new(Size::new(40, 10), 100);
    s.set_images(true);
    s
}

fn pixel(b: &Bitmap, x: u32, y: u32) -> [u8; 4] {
    let at = (y * b.width + x) as usize * 4;
    b.rgba[at..at + 4].try_into().unwrap()
}

fn assert_quadrants(b: &Bitmap) {
    let (w, h) = (b.width, b.height);
    assert_eq!(pixel(b, 1, 1), [255, 0, 0, 255]);
    assert_eq!(pixel(b, w - 2, 1), [0, 255, 0, 255]);
    assert_eq!(pixel(b, 1, h - 2), [0, 0, 255, 255]);
    assert_eq!(pixel(b, w - 2, h - 2), [255, 255, 0, 255]);
}

/// A kitty transmission of `data` in chunks of `size` base64 bytes, as chafa and kitty's icat send it.
fn kitty_chunks(keys: &str, data: &[u8], size: usize) -> Vec<u8> {
    let encoded = base64(data);
    let pieces: Vec<&[u8]> = encoded.as_bytes().chunks(size).collect();
    let mut out = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let more = u8::from(i + 1 < pieces.len());
        let keys = if i == 0 {
            format!("{keys},m={more}")
        } else {
            format!("m={more}")
        };
        out.extend_from_slice(format!("\x1b_G{keys};").as_bytes());
        out.extend_from_slice(piece);
        out.extend_from_slice(b"\x1b\\");
    }
    out
}

#[test]
fn a_chunked_kitty_png_sits_at_the_cursor_and_the_cursor_moves_past_it() {
    let mut s = screen();
    let mut input = b"ab\r\ncd".to_vec();
    input.extend(kitty_chunks("a=T,f=100,i=5", &quadrants_png(40, 40), 64));
    // Fed in pieces cut anywhere.
    let mut replies = Vec::new();
    for piece in input.chunks(7) {
        replies.extend(s.feed(piece));
    }
    assert_eq!(replies, b"\x1b_Gi=5;OK\x1b\\");
    let images = s.images();
    assert_eq!(images.len(), 1, "{:?}", s.image_notes());
    let image = &images[0];
    assert_eq!((image.row, image.col, image.cols, image.rows), (1, 2, 4, 2));
    assert_quadrants(&image.bitmap);
    let cursor = s.cursor();
    assert_eq!((cursor.row, cursor.col), (2, 6));
    assert_eq!(s.text().lines().next(), Some("ab"));
    assert_eq!(s.cells().images, images);
}

#[test]
fn kitty_raw_rgb_zlib_and_placements_sized_in_cells() {
    let mut s = screen();
    let rgb = quadrants_rgb(8, 8);
    let z = miniz_oxide::deflate::compress_to_vec_zlib(&rgb, 6);
    s.feed(format!("\x1b_Ga=t,f=24,s=8,v=8,o=z,i=9,q=2;{}\x1b\\", base64(&z)).as_bytes());
    assert!(s.images().is_empty());
    s.feed(b"\x1b_Ga=p,i=9,c=10,r=3,C=1\x1b\\");
    let images = s.images();
    assert_eq!(
        (images[0].cols, images[0].rows, images[0].area_px),
        (10, 3, (100, 60))
    );
    assert_quadrants(&images[0].bitmap);
    assert_eq!(
        (s.cursor().row, s.cursor().col),
        (0, 0),
        "C=1 keeps the cursor"
    );
    // Placed again elsewhere with a placement id, then deleted by id.
    s.feed(b"\x1b[5;1H\x1b_Ga=p,i=9,p=2\x1b\\");
    assert_eq!(s.images().len(), 2);
    s.feed(b"\x1b_Ga=d,d=i,i=9,p=2\x1b\\");
    assert_eq!(s.images().len(), 1);
    s.feed(b"\x1b_Ga=d,d=A\x1b\\");
    assert!(s.images().is_empty());
    // Freed with it: placing it again fails.
    let reply = s.feed(b"\x1b_Ga=p,i=9\x1b\\");
    assert!(reply.starts_with(b"\x1b_Gi=9;ENOENT"), "{reply:?}");
}

#[test]
fn an_iterm_inline_png_takes_the_cells_asked_for() {
    let mut s = screen();
    let png = quadrants_png(64, 64);
    s.feed(b"x");
    s.feed(
        format!(
            "\x1b]1337;File=inline=1;width=8;height=4;preserveAspectRatio=0:{}\x07",
            base64(&png)
        )
        .as_bytes(),
    );
    let images = s.images();
    assert_eq!(images.len(), 1, "{:?}", s.image_notes());
    assert_eq!(
        (images[0].row, images[0].col, images[0].cols, images[0].rows),
        (0, 1, 8, 4)
    );
    assert_eq!(images[0].protocol, Protocol::Iterm);
    assert_quadrants(&images[0].bitmap);
    assert_eq!((s.cursor().row, s.cursor().col), (3, 9));
}

#[test]
fn a_sixel_moves_the_cursor_below_and_goes_when_text_is_written_over_it() {
    let mut s = screen();
    s.feed(b"\x1bPq\"1;1;20;40#1;2;100;0;0#2;2;0;100;0#1!10~#2!10~-#1!10~#2!10~\x1b\\");
    let images = s.images();
    assert_eq!(images.len(), 1, "{:?}", s.image_notes());
    assert_eq!((images[0].cols, images[0].rows), (2, 2));
    assert_eq!(pixel(&images[0].bitmap, 0, 0), [255, 0, 0, 255]);
    assert_eq!(pixel(&images[0].bitmap, 15, 11), [0, 255, 0, 255]);
    assert_eq!((s.cursor().row, s.cursor().col), (2, 0));
    s.feed(b"below\r\n");
    assert_eq!(s.images().len(), 1, "text beside it leaves it");
    s.feed(b"\x1b[2;1Hover");
    assert!(s.images().is_empty(), "text over it removes it");
}

#[test]
fn pictures_scroll_with_the_text_and_go_when_scrolled_away() {
    let mut s = screen();
    s.feed(b"top\r\n");
    s.feed(format!("\x1b_Ga=T,f=24,s=2,v=2;{}\x1b\\\r\n", base64(&[9; 12])).as_bytes());
    assert_eq!(s.images()[0].row, 1);
    s.feed(b"1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7\r\n");
    assert_eq!(
        s.images()[0].row,
        1,
        "the screen is full, nothing scrolled yet"
    );
    s.feed(b"8\r\n");
    assert_eq!(s.images()[0].row, 0, "scrolled up by a row");
    s.feed(b"9\r\n");
    assert!(s.images().is_empty());
}

#[test]
fn clearing_the_screen_removes_pictures_and_the_alternate_screen_keeps_its_own() {
    let mut s = screen();
    let picture = format!("\x1b_Ga=T,f=24,s=2,v=2;{}\x1b\\", base64(&[9; 12]));
    s.feed(picture.as_bytes());
    s.feed(b"\x1b[?1049h");
    assert!(s.images().is_empty(), "the primary screen's picture waits");
    s.feed(picture.as_bytes());
    assert_eq!(s.images().len(), 1);
    s.feed(b"\x1b[?1049l");
    assert_eq!(s.images().len(), 1, "back on the primary screen");
    assert_eq!(s.images()[0].number, 1);
    s.feed(b"\x1b[H\x1b[2J");
    assert!(s.images().is_empty());
}

#[test]
fn queries_are_answered_as_a_graphics_terminal_only_when_opted_in() {
    let mut plain = Screen::new(Size::new(40, 10), 100);
    assert_eq!(plain.feed(b"\x1b[c"), b"\x1b[?6c");
    assert!(plain
        .feed(b"\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\")
        .is_empty());
    assert!(plain.feed(b"\x1b[?1;1;0S").is_empty());
    plain.feed(b"\x1bPq#0!3~\x1b\\");
    assert!(plain.images().is_empty());
    let mut s = screen();
    assert_eq!(s.feed(b"\x1b[c"), b"\x1b[?62;4;22c");
    assert_eq!(
        s.feed(b"\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\\x1b[c"),
        b"\x1b_Gi=31;OK\x1b\\\x1b[?62;4;22c"
    );
    assert_eq!(s.feed(b"\x1b[?1;1;0S"), b"\x1b[?1;0;1024S");
    assert_eq!(s.feed(b"\x1b[?2;1;0S"), b"\x1b[?2;0;400;200S");
    assert_eq!(s.feed(b"\x1b[16t"), b"\x1b[6;20;10t");
    assert_eq!(
        s.feed(b"\x1b]1337;ReportCellSize\x07"),
        b"\x1b]1337;ReportCellSize=20.0;10.0\x1b\\"
    );
    assert!(s.images().is_empty(), "a query places nothing");
}

#[test]
fn bad_pictures_are_refused_with_a_note_and_bounded() {
    let mut s = screen();
    s.feed(b"\x1bP0;1;0q\"1;1;100000;100000#0!100000~\x1b\\after");
    assert!(s.images().is_empty());
    assert_eq!(
        s.image_notes().last().map(String::as_str),
        Some("image refused: sixel declared 100000x100000 px over the 16 M px limit")
    );
    assert!(s.text().contains("after"));
    // 100 MB streamed in one transmission.
    s.feed(b"\x1b_Ga=T,f=100;");
    let chunk = vec![b'A'; 1 << 20];
    for _ in 0..100 {
        s.feed(&chunk);
    }
    s.feed(b"\x1b\\ok");
    assert!(
        s.image_notes().last().unwrap().contains("64 MB limit"),
        "{:?}",
        s.image_notes()
    );
    assert!(s.text().contains("afterok"));
    // The same in chunks of 1 MB.
    let mut first = true;
    for _ in 0..100 {
        let keys = if first {
            "a=T,f=32,s=4096,v=4096,m=1"
        } else {
            "m=1"
        };
        first = false;
        s.feed(format!("\x1b_G{keys};").as_bytes());
        s.feed(&chunk);
        s.feed(b"\x1b\\");
        assert!(s.images.as_ref().unwrap().kitty.bytes() <= MAX_PAYLOAD_BYTES);
    }
    s.feed(b"\x1b_Gm=0;\x1b\\");
    assert!(
        s.image_notes().last().unwrap().contains("64 MB limit"),
        "{:?}",
        s.image_notes()
    );
    // A chunked transmission cut off by a new command is dropped; the new one stands.
    s.feed(b"\x1b_Ga=T,f=24,s=2,v=2,m=1;AAAA\x1b\\");
    s.feed(format!("\x1b_Ga=T,f=24,s=2,v=2;{}\x1b\\", base64(&[7; 12])).as_bytes());
    assert!(s.image_notes().last().unwrap().contains("left unfinished"));
    assert_eq!(s.images().len(), 1);
    // Garbage for a PNG.
    s.feed(b"\x1b_Ga=T,f=100;AAAAAAAA\x1b\\");
    assert!(s.image_notes().last().unwrap().contains("PNG"));
}

#[test]
fn many_pictures_stay_under_the_memory_cap_oldest_going_first() {
    let mut s = Screen::new(Size::new(200, 50), 100);
    s.set_images(true);
    // 20 pictures of 16 MB each, at the top-left each time.
    let rgba = vec![200u8; 2048 * 2048 * 4];
    let z = miniz_oxide::deflate::compress_to_vec_zlib(&rgba, 1);
    let command = format!("\x1b_Ga=T,f=32,s=2048,v=2048,o=z,C=1;{}\x1b\\", base64(&z));
    for i in 0..20 {
        s.feed(format!("\x1b[{};1H", i % 40 + 1).as_bytes());
        s.feed(command.as_bytes());
    }
    let images = s.images.as_ref().unwrap();
    assert!(
        images.bytes() <= crate::images::MAX_SCREEN_BYTES,
        "{}",
        images.bytes()
    );
    let numbers: Vec<u64> = s.images().iter().map(|i| i.number).collect();
    assert_eq!(numbers.last(), Some(&20));
    assert!(numbers.len() < 20 && numbers.len() >= 3, "{numbers:?}");
}

#[test]
fn a_screenshot_draws_the_picture_over_the_cells_it_covers() {
    let mut s = screen();
    s.feed(b"\r\n  ");
    s.feed(kitty_chunks("a=T,f=100,c=8,r=4", &quadrants_png(64, 64), 4096).as_slice());
    let grid = s.cells();
    let options = crate::render::RenderOptions::default();
    let (width, _, rgb) = crate::render::render_pixels(&grid, &options).unwrap();
    let layout = crate::render::Layout::new(grid.size, &options);
    let (cw, ch) = (layout.cell.width, layout.cell.height);
    let at = |x: u32, y: u32| {
        let i = (y * width + x) as usize * 3;
        [rgb[i], rgb[i + 1], rgb[i + 2]]
    };
    // The picture covers columns 2-9 and rows 1-4: sample the middle of each quadrant.
    let (left, top) = (2 * cw, ch);
    let (qw, qh) = (4 * cw, 2 * ch);
    assert_eq!(at(left + qw / 2, top + qh / 2), [255, 0, 0]);
    assert_eq!(at(left + qw + qw / 2, top + qh / 2), [0, 255, 0]);
    assert_eq!(at(left + qw / 2, top + qh + qh / 2), [0, 0, 255]);
    assert_eq!(at(left + qw + qw / 2, top + qh + qh / 2), [255, 255, 0]);
    // Beside it, the background.
    assert_ne!(at(left + 2 * qw + cw, top + qh), [0, 255, 0]);
}

/// kitty's placeholder cell: U+10EEEE with the marks numbering `row`, `col` (when given).
fn placeholder(row: Option<usize>, col: Option<usize>) -> String {
    const MARKS: [char; 4] = ['\u{0305}', '\u{030D}', '\u{030E}', '\u{0310}'];
    let mut cell = String::from('\u{10EEEE}');
    cell.extend(row.map(|r| MARKS[r]));
    cell.extend(col.map(|c| MARKS[c]));
    cell
}

#[test]
fn a_virtual_placement_shows_where_its_placeholder_cells_are() {
    let mut s = screen();
    // As kittytgp does: transmit with a virtual placement of 4x2 cells, then the cells (image id 7
    // in the foreground colour, a row mark on each row's first cell, the columns inferred).
    let mut input = kitty_chunks("a=T,f=100,U=1,i=7,c=4,r=2,q=2", &quadrants_png(40, 40), 64);
    assert!(s.feed(&input).is_empty(), "q=2 silences the reply");
    assert!(
        s.images().is_empty(),
        "nothing is drawn before the cells are written"
    );
    input = b"$ \x1b[38;2;0;0;7m".to_vec();
    for row in 0..2 {
        input.extend(placeholder(Some(row), None).as_bytes());
        input.extend(placeholder(None, None).repeat(3).as_bytes());
        input.extend(b"\r\n  ");
    }
    input.extend(b"\x1b[39m\r$ ");
    s.feed(&input);
    let images = s.images();
    assert_eq!(images.len(), 1, "{images:?}");
    let image = &images[0];
    assert_eq!(
        (image.row, image.col, image.cols, image.rows, image.area_px),
        (0, 2, 4, 2, (40, 40))
    );
    // The square picture fitted into 40x40 nominal pixels fills them: the four quadrants.
    assert_quadrants(&image.bitmap);
    let text = crate::images::label_text(s.text(), &images, 40);
    assert_eq!(text.lines().next(), Some("$ [image 1]"), "{text}");
    assert!(
        !text.contains('\u{10EEEE}'),
        "no placeholder is left in the text: {text}"
    );
    // The same screen shows the very same picture.
    assert!(Arc::ptr_eq(&s.images()[0].bitmap, &image.bitmap));
}

#[test]
fn placeholder_cells_scroll_with_the_text_and_show_their_part() {
    let mut s = screen();
    s.feed(&kitty_chunks(
        "a=T,f=100,U=1,i=9,c=2,r=2,q=2",
        &quadrants_png(20, 40),
        64,
    ));
    // The image id's top byte in the third mark: id 9 | 1 << 24 is not image 9.
    s.feed(format!("\x1b[38;5;9m{}", placeholder(Some(0), Some(0)) + "\u{030D}").as_bytes());
    assert!(
        s.images().is_empty(),
        "a cell naming another image shows nothing"
    );
    // Only the bottom row of tiles, on the last screen row, then scrolled up by one.
    s.feed(b"\x1b[2J\x1b[10;1H\x1b[38;5;9m");
    s.feed((placeholder(Some(1), Some(0)) + &placeholder(Some(1), Some(1))).as_bytes());
    s.feed(b"\x1b[39m\r\n");
    let images = s.images();
    assert_eq!(images.len(), 1, "{images:?}");
    assert_eq!((images[0].row, images[0].cols, images[0].rows), (8, 2, 1));
    // The bottom half of the quadrants: blue, yellow.
    let b = &images[0].bitmap;
    assert_eq!(pixel(b, 1, b.height / 2), [0, 0, 255, 255]);
    assert_eq!(pixel(b, b.width - 2, b.height / 2), [255, 255, 0, 255]);
    // Deleting the image takes its virtual placement: the cells show nothing.
    s.feed(b"\x1b_Ga=d,d=I,i=9\x1b\\");
    assert!(s.images().is_empty());
}

/// A kitty command sending `path` as the payload of medium `medium`.
fn kitty_medium(keys: &str, path: &str) -> Vec<u8> {
    format!("\x1b_G{keys};{}\x1b\\", base64(path.as_bytes())).into_bytes()
}

#[test]
fn files_temporary_files_and_shared_memory_are_read_and_the_temporary_ones_removed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("q.png");
    std::fs::write(&file, quadrants_png(20, 20)).unwrap();
    let mut s = screen();
    let reply = s.feed(&kitty_medium("a=T,t=f,f=100,i=1", file.to_str().unwrap()));
    assert_eq!(reply, b"\x1b_Gi=1;OK\x1b\\");
    assert_quadrants(&s.images()[0].bitmap);
    assert!(file.exists(), "a file (t=f) is the program's: it stays");

    // Raw pixels from an offset, in a temporary file that goes once read.
    let temporary =
        std::env::temp_dir().join(format!("tty-graphics-protocol-sp-{}", std::process::id()));
    let mut raw = b"skip".to_vec();
    raw.extend(quadrants_rgb(4, 4));
    std::fs::write(&temporary, &raw).unwrap();
    let keys = "a=T,t=t,f=24,s=4,v=4,O=4,S=48,i=2";
    let reply = s.feed(&kitty_medium(keys, temporary.to_str().unwrap()));
    assert_eq!(reply, b"\x1b_Gi=2;OK\x1b\\");
    assert!(
        !temporary.exists(),
        "a temporary file (t=t) is removed once read"
    );

    let shm = format!("sp-test-{}", std::process::id());
    std::fs::write(format!("/dev/shm/{shm}"), quadrants_rgb(2, 2)).unwrap();
    let reply = s.feed(&kitty_medium(
        "a=T,t=s,f=24,s=2,v=2,i=3",
        &format!("/{shm}"),
    ));
    assert_eq!(reply, b"\x1b_Gi=3;OK\x1b\\");
    assert!(!std::path::Path::new(&format!("/dev/shm/{shm}")).exists());
    assert_eq!(s.images().len(), 3);
}

#[test]
fn media_that_are_not_plain_files_or_not_temporary_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = screen();
    let refused = |s: &mut Screen, keys: &str, path: &str| {
        String::from_utf8(s.feed(&kitty_medium(keys, path))).unwrap()
    };
    let reply = refused(&mut s, "a=T,t=f,f=100,i=1", "/dev/zero");
    assert!(
        reply.contains("EINVAL") && reply.contains("device"),
        "{reply}"
    );
    let reply = refused(&mut s, "a=T,t=f,f=24,s=1,v=1,i=1", "/proc/self/environ");
    assert!(reply.contains("kernel file"), "{reply}");
    let reply = refused(&mut s, "a=T,t=f,f=100,i=1", dir.path().to_str().unwrap());
    assert!(reply.contains("not a regular file"), "{reply}");
    let reply = refused(&mut s, "a=T,t=f,f=100,i=1", "relative.png");
    assert!(reply.contains("not an absolute path"), "{reply}");
    let reply = refused(&mut s, "a=T,t=f,f=100,i=1", "/nonexistent/q.png");
    assert!(reply.contains("ENOENT"), "{reply}");
    // A temporary transmission of a file that is not one: refused, and the file is kept.
    let kept = dir.path().join("notes.txt");
    std::fs::write(&kept, b"mine").unwrap();
    let reply = refused(&mut s, "a=T,t=t,f=100,i=1", kept.to_str().unwrap());
    assert!(reply.contains("not a temporary file"), "{reply}");
    assert!(kept.exists());
    let reply = refused(
        &mut s,
        "a=T,t=f,f=24,s=2,v=2,O=2,S=12,i=1",
        kept.to_str().unwrap(),
    );
    assert!(reply.contains("past its end"), "{reply}");
    assert!(s.images().is_empty());
    assert!(
        s.image_notes().iter().any(|n| n.contains("/dev/zero")),
        "{:?}",
        s.image_notes()
    );
}
