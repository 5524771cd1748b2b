//! [`Input`] against an EIS server of reis's (`test_server`): what a user means by each call is
//! what arrives at the server, in frames, between start and stop emulating.

use std::time::{Duration, Instant};

use super::keymap::{Press, ServerKeymap};
use super::test_server::{serve, us_intl_keymap, Got, Script};
use super::Input;
use crate::error::DesktopError;
use crate::gestures::Gestures as _;
use crate::keyboard::Modifier;
use crate::keysym;
use crate::x11::{Point, BUTTON_LEFT};

/// Linux input codes (linux/input-event-codes.h).
const BTN_LEFT: u32 = 0x110;
const KEY_LEFTSHIFT: u32 = 42;
const KEY_LEFTCTRL: u32 = 29;
/// AltGr (ISO_Level3_Shift) on US international.
const KEY_RIGHTALT: u32 = 100;
const KEY_H: u32 = 35;
const KEY_E: u32 = 18;
const KEY_L: u32 = 38;
const KEY_O: u32 = 24;
const KEY_T: u32 = 20;
const KEY_A: u32 = 30;
const KEY_LEFTALT: u32 = 56;

const LIMIT: Duration = Duration::from_secs(10);

fn frame(device: &str) -> Got {
    Got::Frame(device.into())
}

fn start(device: &str) -> Got {
    Got::Start(device.into())
}

fn stop(device: &str) -> Got {
    Got::Stop(device.into())
}

/// Connect to a server playing `script`, and start a call.
fn connected(script: Script) -> (Input, std::thread::JoinHandle<Result<Vec<Got>, String>>) {
    let (socket, server) = serve(script);
    let mut input = Input::connect(socket, LIMIT).expect("connected");
    input.begin(Instant::now() + LIMIT).expect("a call begins");
    (input, server)
}

/// Leave, and what the server received.
fn received(input: Input, server: std::thread::JoinHandle<Result<Vec<Got>, String>>) -> Vec<Got> {
    drop(input);
    server
        .join()
        .expect("the server thread")
        .expect("the server ran")
}

/// The keys of the log, as (code, pressed), each in a frame of its own on the keyboard.
fn keys(got: &[Got]) -> Vec<(u32, bool)> {
    let mut keys = Vec::new();
    for pair in got.windows(2) {
        if let [Got::Key(code, pressed), next] = pair {
            assert_eq!(*next, frame("keyboard"), "a key outside a frame: {got:?}");
            keys.push((*code, *pressed));
        }
    }
    keys
}

#[test]
fn a_click_arrives_as_absolute_motion_then_left_press_and_release_in_frames() {
    let (mut input, server) = connected(Script::default());
    assert_eq!(input.size(), (1280, 800));
    input
        .click(Point { x: 300, y: 200 }, BUTTON_LEFT, 1, &[])
        .expect("clicked");
    assert_eq!(input.pointer(), (Point { x: 300, y: 200 }, 0));
    assert_eq!(
        received(input, server),
        [
            start("pointer"),
            Got::Motion(300.0, 200.0),
            frame("pointer"),
            Got::Button(BTN_LEFT, true),
            frame("pointer"),
            Got::Button(BTN_LEFT, false),
            frame("pointer"),
            stop("pointer"),
        ]
    );
}

#[test]
fn typed_text_arrives_as_the_keymaps_keys_with_shift_and_altgr_where_needed() {
    let (mut input, server) = connected(Script::default());
    input.type_text("Héllo").expect("typed");
    let got = received(input, server);
    assert_eq!(got.first(), Some(&start("keyboard")), "{got:?}");
    assert_eq!(got.last(), Some(&stop("keyboard")), "{got:?}");
    let tap = |code| [(code, true), (code, false)];
    let mut expected = vec![(KEY_LEFTSHIFT, true)];
    expected.extend(tap(KEY_H));
    expected.push((KEY_LEFTSHIFT, false));
    expected.push((KEY_RIGHTALT, true));
    expected.extend(tap(KEY_E));
    expected.push((KEY_RIGHTALT, false));
    for code in [KEY_L, KEY_L, KEY_O] {
        expected.extend(tap(code));
    }
    assert_eq!(keys(&got), expected, "{got:?}");
}

#[test]
fn scrolling_three_steps_down_arrives_as_one_discrete_scroll_of_360() {
    let (mut input, server) = connected(Script::default());
    input
        .scroll(Point { x: 10, y: 20 }, 0, 3, &[])
        .expect("scrolled");
    assert_eq!(
        received(input, server),
        [
            start("pointer"),
            Got::Motion(10.0, 20.0),
            frame("pointer"),
            Got::Scroll(0, 360),
            frame("pointer"),
            stop("pointer"),
        ]
    );
}

#[test]
fn a_chord_presses_in_order_and_releases_in_reverse_and_ctrl_click_holds_ctrl() {
    let (mut input, server) = connected(Script::default());
    let chord = [keysym::CONTROL_L, keysym::SHIFT_L, u32::from('t')];
    input.key_chord(&chord, Duration::ZERO).expect("pressed");
    input.begin(Instant::now() + LIMIT).expect("a call begins");
    input
        .click(Point { x: 5, y: 5 }, BUTTON_LEFT, 1, &[Modifier::Ctrl])
        .expect("clicked");
    let got = received(input, server);
    let down_up = [
        (KEY_LEFTCTRL, true),
        (KEY_LEFTSHIFT, true),
        (KEY_T, true),
        (KEY_T, false),
        (KEY_LEFTSHIFT, false),
        (KEY_LEFTCTRL, false),
        (KEY_LEFTCTRL, true),
        (KEY_LEFTCTRL, false),
    ];
    assert_eq!(keys(&got), down_up, "{got:?}");
    let ctrl_down = got.iter().position(|g| *g == Got::Key(KEY_LEFTCTRL, true));
    let click = got.iter().position(|g| *g == Got::Button(BTN_LEFT, true));
    let ctrl_up = got
        .iter()
        .rposition(|g| *g == Got::Key(KEY_LEFTCTRL, false));
    assert!(
        ctrl_down < click && click < ctrl_up,
        "Ctrl is held around the click: {got:?}"
    );
}

#[test]
fn a_button_left_down_stays_down_until_released_and_leaving_releases_it() {
    let (mut input, server) = connected(Script::default());
    input
        .button(Some(Point { x: 40, y: 50 }), BUTTON_LEFT, true)
        .expect("pressed");
    assert_eq!(input.pointer(), (Point { x: 40, y: 50 }, 0x100));
    input.begin(Instant::now() + LIMIT).expect("a call begins");
    input.move_to(Point { x: 60, y: 70 }, &[]).expect("moved");
    input.begin(Instant::now() + LIMIT).expect("a call begins");
    input.leave_as_found().expect("left as found");
    assert_eq!(
        received(input, server),
        [
            start("pointer"),
            Got::Motion(40.0, 50.0),
            frame("pointer"),
            Got::Button(BTN_LEFT, true),
            frame("pointer"),
            // Still emulating: stopping would let the server release the button.
            Got::Motion(60.0, 70.0),
            frame("pointer"),
            Got::Button(BTN_LEFT, false),
            frame("pointer"),
            stop("pointer"),
        ]
    );
}

#[test]
fn a_character_the_keymap_lacks_is_refused_by_name_and_nothing_is_typed() {
    let (mut input, server) = connected(Script::default());
    let e = input.type_text("ok\r\n日本").expect_err("日 is on no key");
    assert_eq!(e.field(), Some("text"));
    let message = e.to_string();
    assert!(
        message.contains("character 4 is '日', which no key of the compositor's keymap types"),
        "{message}"
    );
    assert_eq!(received(input, server), []);
}

#[test]
fn a_point_off_the_region_is_refused_before_anything_is_sent() {
    let (mut input, server) = connected(Script::default());
    let e = input
        .click(Point { x: 1280, y: 10 }, BUTTON_LEFT, 1, &[])
        .expect_err("off screen");
    assert_eq!(e.field(), Some("x/y"));
    assert!(e.to_string().contains("1280x800 at (0, 0)"), "{e}");
    assert_eq!(received(input, server), []);
}

#[test]
fn a_server_that_adds_no_device_times_out_naming_what_is_missing() {
    let (socket, server) = serve(Script {
        add_devices: false,
        ..Script::default()
    });
    let e = Input::connect(socket, Duration::from_millis(300)).expect_err("no devices");
    let DesktopError::Timeout { what, limit } = &e else {
        panic!("a timeout, not {e:?}");
    };
    assert_eq!(*limit, Duration::from_millis(300));
    assert!(
        what.contains("pointer motion (ei_pointer_absolute)")
            && what.contains("keys (ei_keyboard)")
            && what.contains("it added none"),
        "{e}"
    );
    assert_eq!(server.join().expect("server thread"), Ok(vec![]));
}

#[test]
fn a_seat_without_a_keyboard_is_refused_at_once_naming_it() {
    let mut script = Script::default();
    script
        .offers
        .remove(reis::request::DeviceCapability::Keyboard);
    let (socket, server) = serve(script);
    let e = Input::connect(socket, LIMIT).expect_err("no keyboard");
    assert_eq!(e.code(), "eis_error");
    assert!(
        e.to_string()
            .contains("but not ei_keyboard, which input needs"),
        "{e}"
    );
    server.join().expect("server thread").expect("server ran");
}

#[test]
fn a_server_disconnecting_midway_ends_the_call_with_its_reason() {
    let (mut input, server) = connected(Script {
        disconnect_after_frames: Some(3),
        ..Script::default()
    });
    let e = input.type_text("hello").expect_err("disconnected");
    assert_eq!(e.code(), "display_unavailable");
    assert!(
        e.to_string()
            .contains("the EIS server disconnected us (Error): the test server ends the session"),
        "{e}"
    );
    drop(input);
    let got = server.join().expect("server thread").expect("server ran");
    assert_eq!(
        got,
        [
            start("keyboard"),
            Got::Key(KEY_H, true),
            frame("keyboard"),
            Got::Key(KEY_H, false),
            frame("keyboard"),
            Got::Key(KEY_E, true),
            frame("keyboard"),
        ]
    );
}

#[test]
fn with_caps_lock_locked_a_lowercase_letter_is_typed_with_shift() {
    let mut keymap = ServerKeymap::parse(us_intl_keymap().as_bytes()).expect("parsed");
    let press = |key, modifiers: &[u32]| {
        Some(Press {
            key,
            modifiers: modifiers.to_vec(),
        })
    };
    let (a, upper_a) = (u32::from('a'), u32::from('A'));
    assert_eq!(keymap.press(a, 0, 0), press(KEY_A, &[]));
    assert_eq!(keymap.press(upper_a, 0, 0), press(KEY_A, &[KEY_LEFTSHIFT]));
    const LOCK: u32 = 1 << 1;
    assert_eq!(keymap.press(a, LOCK, 0), press(KEY_A, &[KEY_LEFTSHIFT]));
    assert_eq!(keymap.press(upper_a, LOCK, 0), press(KEY_A, &[]));
    assert_eq!(keymap.modifier(Modifier::Alt, LOCK, 0), Some(KEY_LEFTALT));
}

#[test]
fn input_can_live_in_a_backend_which_is_send() {
    fn send<T: Send>() {}
    send::<Input>();
    send::<super::portal::RemoteDesktop>();
}
