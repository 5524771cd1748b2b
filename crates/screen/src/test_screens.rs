//! Screens for the tests of styled text, highlights and compact cells, drawn with the escape
//! sequences the programs they imitate send.

use crate::emulator::Screen;
use crate::geometry::Size;
use crate::grid::CellGrid;

/// The cells `bytes` draw on a fresh `cols` x `rows` screen.
pub fn grid(cols: u16, rows: u16, bytes: &[u8]) -> CellGrid {
    let mut screen = Screen::new(Size::new(cols, rows), 0);
    screen.feed(bytes);
    screen.cells()
}

/// The plain text of the same screen, as `snapshot` gives it.
pub fn text(cols: u16, rows: u16, bytes: &[u8]) -> String {
    let mut screen = Screen::new(Size::new(cols, rows), 0);
    screen.feed(bytes);
    screen.text().to_owned()
}

/// A dialog(1)-like menu on a 40x14 screen: blue backdrop, a white box with a black shadow and a
/// 3D top border, three items with a red hotkey letter each, Banana selected, the OK button
/// focused, the cursor parked on OK.
pub fn dialog_menu() -> Vec<u8> {
    let mut b = b"\x1b[44m\x1b[2J".to_vec();
    for row in 3..=11 {
        b.extend(format!("\x1b[{row};6H\x1b[30;47m{}", " ".repeat(30)).as_bytes());
        b.extend(format!("\x1b[{};36H\x1b[40m  ", row + 1).as_bytes());
    }
    b.extend(format!("\x1b[13;8H\x1b[40m{}", " ".repeat(30)).as_bytes());
    b.extend("\x1b[3;6H\x1b[0;1;37;47m┌────────────────────────────┐".as_bytes());
    b.extend(b"\x1b[4;7H\x1b[22;30mPick one");
    b.extend(b"\x1b[5;10H\x1b[31;47ma\x1b[30m  Apple");
    b.extend(b"\x1b[6;10H\x1b[1;31;44mb\x1b[22;30;47m  \x1b[1;37;44mBanana");
    b.extend(b"\x1b[7;10H\x1b[0;31;47mc\x1b[30m  Cherry");
    b.extend(
        b"\x1b[10;12H\x1b[1;37;44m<\x1b[33m OK \x1b[37m>\x1b[0;30;47m  <\x1b[1mCancel\x1b[22m>",
    );
    b.extend(b"\x1b[0m\x1b[10;14H");
    b
}

/// A less(1)-like page with reverse-video search hits, a `~` filler in bright blue and the prompt.
pub fn search_hits() -> Vec<u8> {
    let mut b = b"apple \x1b[7mbanana\x1b[0m cherry\r\n".to_vec();
    b.extend(b"\x1b[7mbanana\x1b[0m split\r\nno fruit here\r\n");
    b.extend(b"\x1b[7mbanana\x1b[0ms and more \x1b[7mbanana\x1b[0ms\r\n");
    for _ in 0..4 {
        b.extend(b"\x1b[1;34m~\x1b[0m\r\n");
    }
    b.extend(b"\x1b[7m(END)\x1b[0m");
    b
}

/// An htop-like list on 40x10: coloured columns on every row, a header bar, the third process
/// selected, a key bar on the last row.
pub fn process_list() -> Vec<u8> {
    let mut b = b"\x1b[2J\x1b[H  Tasks: \x1b[1;36m12\x1b[0m running\r\n".to_vec();
    b.extend(b"\x1b[30;42m  PID USER     CPU% Command\x1b[K\x1b[0m\r\n");
    for (i, pid) in [1, 58, 60, 61, 62, 63, 64].iter().enumerate() {
        let line = format!("{pid:>5} root \x1b[36m{:>8}\x1b[39m /bin/app", "0.0");
        if i == 2 {
            let plain = format!("{pid:>5} root {:>8} /bin/app", "0.0");
            b.extend(format!("\x1b[30;46m{plain}\x1b[K\x1b[0m\r\n").as_bytes());
        } else {
            b.extend(format!("{line}\r\n").as_bytes());
        }
    }
    b.extend(b"F1\x1b[30;46mHelp\x1b[0m  F10\x1b[30;46mQuit\x1b[0m");
    b
}
