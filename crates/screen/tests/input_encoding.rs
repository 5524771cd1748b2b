//! Key and mouse encoding driven by the modes a real byte stream switches on, and text search
//! checked against the emulator's own cells.

use screenpilot_screen::keys::{encode_paste, encode_tokens};
use screenpilot_screen::mouse::{click, find_text, find_text_center};
use screenpilot_screen::{CellPos, Modifiers, MouseButton, MouseError, Screen, Size};

fn screen_after(bytes: &[u8]) -> Screen {
    let mut screen = Screen::new(Size::new(80, 24), 100);
    screen.feed(bytes);
    screen
}

#[test]
fn decckm_from_the_stream_switches_arrows_to_ss3() {
    let tokens = ["Up", "C-Up"];
    let normal = screen_after(b"");
    assert_eq!(
        encode_tokens(&tokens, &normal.modes()),
        [b"\x1b[A".to_vec(), b"\x1b[1;5A".to_vec()]
    );
    let app = screen_after(b"\x1b[?1h");
    assert_eq!(
        encode_tokens(&tokens, &app.modes()),
        [b"\x1bOA".to_vec(), b"\x1b[1;5A".to_vec()]
    );
}

#[test]
fn kitty_push_from_the_stream_disambiguates_escape() {
    let screen = screen_after(b"\x1b[>1u");
    assert_eq!(
        encode_tokens(&["Escape", "C-c", "hi"], &screen.modes()),
        [b"\x1b[27u".to_vec(), b"\x1b[99;5u".to_vec(), b"hi".to_vec()]
    );
    let popped = screen_after(b"\x1b[>1u\x1b[<u");
    assert_eq!(encode_tokens(&["Escape"], &popped.modes()), [vec![0x1b]]);
}

#[test]
fn bracketed_paste_from_the_stream() {
    let screen = screen_after(b"\x1b[?2004h");
    assert_eq!(
        encode_paste("a\nb", &screen.modes()),
        b"\x1b[200~a\nb\x1b[201~"
    );
}

#[test]
fn mouse_needs_the_app_to_ask_for_it() {
    let pos = CellPos::new(0, 0);
    let plain = screen_after(b"");
    assert_eq!(
        click(pos, MouseButton::Left, 1, Modifiers::NONE, &plain.modes()),
        Err(MouseError::NotEnabled)
    );
    let sgr = screen_after(b"\x1b[?1000h\x1b[?1006h");
    assert_eq!(
        click(pos, MouseButton::Left, 1, Modifiers::NONE, &sgr.modes()),
        Ok(vec![b"\x1b[<0;1;1M".to_vec(), b"\x1b[<0;1;1m".to_vec()])
    );
}

#[test]
fn found_text_sits_on_the_cells_that_show_it() {
    let mut screen = screen_after("名前: 山田\r\n\u{1F600} [ OK ]".as_bytes());
    let text = screen.text().to_owned();
    let cells = screen.cells();
    let at = |pos| cells.cell(pos).map(|cell| cell.text.clone());

    let name = find_text(&text, "山田", 0);
    assert_eq!(name, Some(CellPos::new(6, 0)));
    assert_eq!(name.and_then(at).as_deref(), Some("山"));

    let ok = find_text(&text, "OK", 0);
    assert_eq!(ok.and_then(at).as_deref(), Some("O"));
    assert_eq!(
        find_text_center(&text, "[ OK ]", 0).and_then(at).as_deref(),
        Some("O")
    );
}
