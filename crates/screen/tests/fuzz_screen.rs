//! Property tests, run as ordinary tests with a bounded number of cases (CI stays fast): the key-token
//! parser and encoder, and the emulator fed random bytes interleaved with resizes. Nothing may panic,
//! and what a caller relies on must hold after any input.

use proptest::prelude::*;
use proptest::test_runner::Config;

use screenpilot_screen::keys::{
    check_encodable, encode_paste, encode_text, parse_token, try_encode,
};
use screenpilot_screen::{InputModes, KeyToken, Screen, Size};

/// Cases per property: enough to cover the grammar's corners in well under a second or two each.
fn cases(n: u32) -> Config {
    Config {
        cases: n,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Strings that look like key tokens: modifier prefixes, key names, separators and odd characters.
fn key_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("C-".to_owned()),
        Just("M-".to_owned()),
        Just("S-".to_owned()),
        Just("^".to_owned()),
        Just("ctrl+".to_owned()),
        Just("alt+".to_owned()),
        Just("shift+".to_owned()),
        Just("super+".to_owned()),
        Just("Enter".to_owned()),
        Just("Up".to_owned()),
        Just("F".to_owned()),
        Just("KP_".to_owned()),
        Just("Space".to_owned()),
        Just("BSpace".to_owned()),
        Just("Tab".to_owned()),
        Just("-".to_owned()),
        Just("+".to_owned()),
        (0u32..40).prop_map(|n| n.to_string()),
        any::<char>().prop_map(String::from),
        "[a-zA-Z]{1,3}".prop_map(|s| s),
    ];
    prop::collection::vec(piece, 0..5).prop_map(|pieces| pieces.concat())
}

fn modes() -> impl Strategy<Value = InputModes> {
    (any::<bool>(), any::<bool>(), any::<bool>(), 0u8..32).prop_map(
        |(app_cursor, app_keypad, bracketed_paste, kitty_keyboard)| InputModes {
            app_cursor,
            app_keypad,
            bracketed_paste,
            kitty_keyboard,
            ..InputModes::default()
        },
    )
}

proptest! {
    #![proptest_config(cases(2000))]

    /// Any token parses; it encodes exactly when it is encodable, whatever the modes; text keeps
    /// every character it was given.
    #[test]
    fn key_tokens_parse_and_encode_without_panicking(token in prop_oneof![key_like(), any::<String>()], modes in modes()) {
        let parsed = parse_token(&token);
        let encoded = try_encode(&parsed, &modes);
        prop_assert_eq!(encoded.is_ok(), check_encodable(&parsed).is_ok(), "{:?} -> {:?}", token, parsed);
        if let KeyToken::Text(text) = &parsed {
            prop_assert_eq!(text, &token);
        }
        if let Ok(bytes) = encoded {
            prop_assert!(!bytes.is_empty() || token.is_empty(), "{:?} -> {:?} encodes to nothing", token, parsed);
        }
        let _ = encode_text(&token, &modes);
        let _ = encode_paste(&token, &modes);
    }
}

/// Byte soup biased towards escape sequences: CSI, OSC, DCS, C0 controls, UTF-8 pieces, and text.
fn terminal_bytes() -> impl Strategy<Value = Vec<u8>> {
    let chunk = prop_oneof![
        4 => prop::collection::vec(any::<u8>(), 0..64),
        2 => "[ -~]{0,40}".prop_map(String::into_bytes),
        2 => (prop::collection::vec(0u16..1200, 0..4), prop::sample::select(b"ABCDEFGHJKLMPSTXZ@`abcdefghlmnqrstu".to_vec()), any::<bool>())
            .prop_map(|(params, last, private)| {
                let params: Vec<String> = params.iter().map(u16::to_string).collect();
                format!("\x1b[{}{}{}", if private { "?" } else { "" }, params.join(";"), last as char).into_bytes()
            }),
        1 => "[ -~]{0,30}".prop_map(|body| format!("\x1b]{}\x07", body).into_bytes()),
        1 => "[ -~]{0,30}".prop_map(|body| format!("\x1bP{}\x1b\\", body).into_bytes()),
        1 => prop::sample::select(vec![
            b"\r\n".to_vec(), b"\n".to_vec(), b"\x08".to_vec(), b"\t".to_vec(), b"\x1b7".to_vec(),
            b"\x1b8".to_vec(), b"\x1bc".to_vec(), b"\x1b[?1049h".to_vec(), b"\x1b[?1049l".to_vec(),
            b"\x1b[?2026h".to_vec(), b"\x1b[?2026l".to_vec(), b"\x1b#8".to_vec(), b"\x1bM".to_vec(),
            "\u{4e2d}\u{6587}".as_bytes().to_vec(), "e\u{301}".as_bytes().to_vec(), "\u{1f600}".as_bytes().to_vec(),
        ]),
    ];
    prop::collection::vec(chunk, 0..24).prop_map(|chunks| chunks.concat())
}

#[derive(Debug, Clone)]
enum Step {
    Feed(Vec<u8>),
    Resize(u16, u16),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        5 => terminal_bytes().prop_map(Step::Feed),
        1 => (1u16..=140, 1u16..=50).prop_map(|(cols, rows)| Step::Resize(cols, rows)),
    ];
    prop::collection::vec(step, 1..12)
}

/// What a reader of the screen relies on, after any input.
fn check_screen(screen: &mut Screen) -> Result<(), TestCaseError> {
    let size = screen.size();
    let cursor = screen.cursor();
    prop_assert!(
        cursor.row < size.rows && cursor.col < size.cols,
        "cursor {:?} outside {:?}",
        cursor,
        size
    );
    let text = screen.text().to_owned();
    let lines: Vec<&str> = text.split('\n').collect();
    prop_assert_eq!(
        lines.len(),
        size.rows as usize,
        "text has {} lines for {} rows: {:?}",
        lines.len(),
        size.rows,
        text
    );
    for (row, line) in lines.iter().enumerate() {
        // The cursor's row keeps the spaces up to the cursor (a prompt's `$ `), as documented.
        if cursor.visible && row == cursor.row as usize {
            continue;
        }
        prop_assert!(
            !line.ends_with(' '),
            "trailing space in row {} {:?}",
            row,
            line
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(800))]

    /// Random bytes and resizes never panic the emulator, and after each step the text has one line
    /// per row, no trailing spaces, and the cursor is on the screen.
    #[test]
    fn the_emulator_survives_random_bytes_and_resizes(start in (1u16..=120, 1u16..=40), steps in steps(), scrollback in 0usize..200) {
        let mut screen = Screen::new(Size::new(start.0, start.1), scrollback);
        for step in steps {
            match step {
                Step::Feed(bytes) => {
                    let _ = screen.feed(&bytes);
                }
                Step::Resize(cols, rows) => screen.resize(Size::new(cols, rows)),
            }
            check_screen(&mut screen)?;
        }
    }
}
