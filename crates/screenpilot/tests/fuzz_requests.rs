//! Property tests, run as ordinary tests with bounded case counts: the daemon's request lines and the
//! computer-action parser. Whatever arrives (random bytes, JSON of any shape, real operations with
//! parameters of any type), nothing panics and every request gets one answer; an error names what was
//! wrong (its `field`, or the word before the colon of its message).

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{json, Map, Value};

use common::Daemon;

fn config(cases: u32) -> Config {
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

/// Any JSON value, a few levels deep, with numbers at the edges of every range.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        prop::sample::select(vec![0.5, -1.0, 1e300, -1e300, 4294967296.0, 65536.0, 1e-9])
            .prop_map(|f| json!(f)),
        prop::sample::select(vec![0i64, 1, -1, 10, 100, 1000, 65535, 65536, 3_600_001])
            .prop_map(|n| json!(n)),
        any::<String>().prop_map(Value::String),
        "[a-z_]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((field_name(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Field names the operations use, and a few they do not.
fn field_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "sid", "cmd", "argv", "keys", "text", "pattern", "patterns", "timeout_ms", "cols", "rows",
            "scrollback", "as_json", "styled", "format", "font_px", "x", "y", "button", "action",
            "actions", "id", "settle_ms", "env", "cwd", "record", "image", "max_pixels", "count",
        ])
        .prop_map(str::to_owned),
        1 => "[a-z_]{1,10}",
    ]
}

/// Operations that only read or act on a session (none exists here, so none can start anything);
/// `shutdown`, `spawn`, `desktop_start` and `textual_run` would start or stop real things.
const OPS: &[&str] = &[
    "send",
    "wait",
    "run",
    "send_keys",
    "send_line",
    "type",
    "mouse",
    "record",
    "wait_for",
    "expect",
    "wait_change",
    "wait_visual_change",
    "wait_ready",
    "wait_exit",
    "computer",
    "act",
    "list",
    "alive",
    "close",
    "resize",
    "snapshot",
    "screenshot",
    "watch",
    "attach",
    "attach_shown",
    "write_raw",
    "type_secret",
    "status",
    "save_test",
    "cancel",
    "no_such_op",
    "",
];

/// Operations left out of [`OPS`] on purpose: each would start something real.
const NOT_FUZZED: &[&str] = &["spawn", "desktop_start", "textual_run"];

/// The operations the daemon knows, as its answer to an unknown one lists them
/// ("op: unknown operation ...; known: spawn, list, ...").
fn known_operations(answer: &Value) -> Vec<String> {
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    let (_, known) = message
        .split_once("; known: ")
        .unwrap_or_else(|| panic!("no list of operations in {answer}"));
    known.split(", ").map(str::to_owned).collect()
}

/// One request line (without its newline): random bytes, JSON of any shape, or a real operation
/// with random parameters.
fn request_line() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        2 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 1..200),
        1 => any_json().prop_map(|v| v.to_string().into_bytes()),
        1 => (any_json(), any_json()).prop_map(|(op, params)| json!({"id": 1, "op": op, "params": params}).to_string().into_bytes()),
        6 => (prop::sample::select(OPS), prop_oneof![
                3 => prop::collection::vec((field_name(), any_json()), 0..6)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Map<_, _>>())),
                1 => any_json(),
            ], any::<u32>())
            .prop_map(|(op, params, id)| json!({"id": id, "op": op, "params": params}).to_string().into_bytes()),
    ]
    .prop_filter("a blank line gets no answer", |line| {
        !line.iter().all(u8::is_ascii_whitespace)
    })
}

/// An error answer must say what was wrong: a field, or a message of the form "what: why".
fn names_what_was_wrong(error: &Value) -> bool {
    let field_named = error["field"].as_str().is_some_and(|f| !f.is_empty());
    let message = error["message"].as_str().unwrap_or("");
    let prefixed = message
        .split_once(": ")
        .is_some_and(|(what, _)| !what.trim().is_empty() && !what.contains('\n'));
    error["code"].is_string() && !message.is_empty() && (field_named || prefixed)
}

#[test]
fn every_request_line_gets_one_answer_and_errors_name_the_field() {
    let d = Daemon::new();
    d.sp_json(&["list"]);
    let stream = UnixStream::connect(d.path().join("daemon.sock")).expect("connect to the daemon");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    // The runner takes a `Fn`: the reader's buffer lives in a RefCell, and `&UnixStream` writes.
    let reader = std::cell::RefCell::new(BufReader::new(
        stream.try_clone().expect("clone the socket"),
    ));
    let writer = &stream;
    // Every operation the daemon knows is fuzzed, or left out above on purpose: a new operation
    // fails this until it is added to one of the lists.
    writeln!(
        &stream,
        r#"{{"id": 0, "op": "no_such_op", "params": {{}}}}"#
    )
    .expect("write");
    let mut text = String::new();
    reader.borrow_mut().read_line(&mut text).expect("an answer");
    let known = known_operations(&serde_json::from_str(&text).expect("JSON"));
    assert!(known.len() > 20, "{known:?}");
    let missing: Vec<&String> = known
        .iter()
        .filter(|op| !OPS.contains(&op.as_str()) && !NOT_FUZZED.contains(&op.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "operations not fuzzed: {missing:?}; add them to OPS (or NOT_FUZZED, saying why)"
    );
    let seen = std::cell::RefCell::new(std::collections::BTreeMap::<String, usize>::new());
    let mut runner = TestRunner::new(config(1500));
    let outcome = runner.run(&request_line(), |line| {
        let mut writer = writer;
        writer
            .write_all(&line)
            .and_then(|()| writer.write_all(b"\n"))
            .map_err(|e| {
                TestCaseError::fail(format!(
                    "the daemon stopped reading after {:?}: {e}",
                    String::from_utf8_lossy(&line)
                ))
            })?;
        let answer: Value = loop {
            let mut text = String::new();
            let read = reader.borrow_mut().read_line(&mut text).map_err(|e| {
                TestCaseError::fail(format!(
                    "no answer to {:?}: {e}",
                    String::from_utf8_lossy(&line)
                ))
            })?;
            prop_assert!(
                read > 0,
                "the daemon hung up after {:?}",
                String::from_utf8_lossy(&line)
            );
            let answer: Value = serde_json::from_str(&text)
                .map_err(|e| TestCaseError::fail(format!("a malformed answer {text:?}: {e}")))?;
            if answer.get("ok").is_some() {
                break answer;
            }
        };
        let code = answer["error"]["code"].as_str().unwrap_or("ok").to_owned();
        *seen.borrow_mut().entry(code).or_default() += 1;
        if answer["ok"] == false {
            prop_assert!(
                names_what_was_wrong(&answer["error"]),
                "{:?} got an error that names nothing: {}",
                String::from_utf8_lossy(&line),
                answer
            );
            prop_assert_ne!(
                &answer["error"]["code"],
                "internal",
                "a panic answered {:?}",
                String::from_utf8_lossy(&line)
            );
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    eprintln!("answers by code: {:?}", seen.borrow());
    // Still serving, on a fresh connection too.
    assert_eq!(d.sp_json(&["list"])["sessions"], json!([]));
}

#[test]
fn parameters_that_are_not_an_object_are_refused_naming_params() {
    let d = Daemon::new();
    d.sp_json(&["list"]);
    let stream = UnixStream::connect(d.path().join("daemon.sock")).expect("connect to the daemon");
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("read timeout");
    let mut reader = BufReader::new(stream.try_clone().expect("clone the socket"));
    let mut ask = |line: &str| -> Value {
        writeln!(&stream, "{line}").expect("write");
        let mut text = String::new();
        reader.read_line(&mut text).expect("an answer");
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    };
    // Operations of the registry and the daemon's own (status, cancel, shutdown) alike.
    for op in ["list", "snapshot", "status", "cancel", "shutdown"] {
        for (params, got) in [
            ("[]", "an array"),
            ("5", "a number"),
            (r#""{}""#, "a string"),
            ("false", "a boolean"),
        ] {
            let answer = ask(&format!(r#"{{"id": 1, "op": "{op}", "params": {params}}}"#));
            assert_eq!(answer["ok"], false, "{op} {params}: {answer}");
            assert_eq!(
                answer["error"]["code"], "invalid_argument",
                "{op} {params}: {answer}"
            );
            assert_eq!(
                answer["error"]["field"], "params",
                "{op} {params}: {answer}"
            );
            assert_eq!(
                answer["error"]["message"],
                format!("{op}: params: expected an object, got {got}"),
                "{op} {params}: {answer}"
            );
        }
    }
    // An object, null, or no params at all are parameters.
    for line in [
        r#"{"id": 2, "op": "list", "params": {}}"#,
        r#"{"id": 3, "op": "list", "params": null}"#,
        r#"{"id": 4, "op": "list"}"#,
    ] {
        let answer = ask(line);
        assert_eq!(answer["result"]["sessions"], json!([]), "{line}: {answer}");
    }
}

/// Action objects: a known type (or a random one) with any of the fields, of any JSON type.
fn action() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        6 => prop::sample::select(vec![
            "screenshot", "click", "left_click", "right_click", "middle_click", "double_click",
            "triple_click", "move", "mouse_move", "scroll", "type", "wait", "keypress", "key",
            "hold_key", "drag", "left_click_drag", "left_mouse_down", "left_mouse_up",
            "cursor_position", "zoom",
        ])
        .prop_map(|k| json!(k)),
        1 => any_json(),
    ];
    let number = prop_oneof![
        any::<i32>().prop_map(|n| json!(n)),
        prop::sample::select(vec![-1.5, 0.0, 0.4, 1e12, -1e12, 3.0, 2.5, 1e308])
            .prop_map(|f| json!(f)),
    ];
    let point = prop_oneof![
        (number.clone(), number.clone()).prop_map(|(x, y)| json!([x, y])),
        (number.clone(), number.clone()).prop_map(|(x, y)| json!({"x": x, "y": y})),
        any_json(),
    ];
    let value_for = move |field: &'static str| -> BoxedStrategy<Value> {
        match field {
            "x" | "y" | "scroll_x" | "scroll_y" | "ms" | "scroll_amount" | "duration"
            | "repeat" => prop_oneof![3 => number.clone(), 1 => any_json()].boxed(),
            "coordinate" | "start_coordinate" => point.clone().boxed(),
            "path" => prop::collection::vec(point.clone(), 0..5)
                .prop_map(Value::Array)
                .boxed(),
            "region" => prop::collection::vec(number.clone(), 0..6)
                .prop_map(Value::Array)
                .boxed(),
            "keys" => prop::collection::vec(
                prop_oneof![
                    prop::sample::select(vec![
                        "ctrl+c", "CTRL", "alt+F4", "enter", "KP_1", "F25", "shift+", "+", "a",
                        "Return"
                    ])
                    .prop_map(|k| json!(k)),
                    any::<String>().prop_map(Value::String),
                    any_json(),
                ],
                0..4,
            )
            .prop_map(Value::Array)
            .boxed(),
            "text" | "button" | "scroll_direction" | "key" => prop_oneof![
                prop::sample::select(vec![
                    "left", "right", "wheel", "back", "forward", "up", "down", "ctrl+s", "hello\n",
                    ""
                ])
                .prop_map(|s| json!(s)),
                any::<String>().prop_map(Value::String),
                any_json(),
            ]
            .boxed(),
            _ => any_json().boxed(),
        }
    };
    let fields = prop::sample::subsequence(
        vec![
            "x",
            "y",
            "button",
            "scroll_x",
            "scroll_y",
            "text",
            "keys",
            "path",
            "ms",
            "coordinate",
            "start_coordinate",
            "scroll_direction",
            "scroll_amount",
            "duration",
            "region",
            "key",
            "repeat",
        ],
        0..6,
    );
    (kind, fields)
        .prop_flat_map(move |(kind, fields)| {
            let values: Vec<BoxedStrategy<Value>> = fields.iter().map(|f| value_for(f)).collect();
            (Just(kind), Just(fields), values)
        })
        .prop_map(|(kind, fields, values)| {
            let mut object = Map::new();
            for (field, value) in fields.into_iter().zip(values) {
                object.insert(field.into(), value);
            }
            (kind, object)
        })
        .prop_flat_map(|(kind, object)| {
            // The flat form, or Anthropic's toolset tool_use block around the same fields, with
            // now and then a block field of any value.
            let flat = {
                let mut flat = object.clone();
                flat.insert("type".into(), kind.clone());
                Just(Value::Object(flat))
            };
            let block = (
                prop::sample::select(vec![
                    "type",
                    "id",
                    "toolset_name",
                    "caller",
                    "name",
                    "input",
                    "x",
                ]),
                any_json(),
                any::<bool>(),
            )
                .prop_map(move |(field, value, spoil)| {
                    let mut block = Map::new();
                    block.insert("type".into(), json!("tool_use"));
                    block.insert("id".into(), json!("toolu_1"));
                    block.insert("name".into(), kind.clone());
                    block.insert("toolset_name".into(), json!("computer"));
                    block.insert("input".into(), Value::Object(object.clone()));
                    if spoil {
                        block.insert(field.into(), value);
                    }
                    Value::Object(block)
                });
            prop_oneof![2 => flat, 1 => block]
        })
}

#[test]
fn the_computer_action_parser_refuses_nonsense_naming_the_field() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let ctx = runtime.block_on(async {
        screenpilot::Context::new(screenpilot_session::Registry::new(
            screenpilot_session::Limits::default(),
        ))
    });
    let seen = std::cell::RefCell::new(std::collections::BTreeMap::<String, usize>::new());
    let mut runner = TestRunner::new(config(3000));
    let outcome = runner.run(&prop::collection::vec(action(), 1..4), |actions| {
        // No session of this name exists: valid actions end at the session lookup (field "sid"),
        // so every call here ends in an error, and the parser runs on every action first.
        let params = if actions.len() == 1 && actions[0]["type"] != "zoom" {
            json!({"sid": "nosuch", "action": actions[0]})
        } else {
            json!({"sid": "nosuch", "actions": actions})
        };
        let result = runtime.block_on(screenpilot::execute(
            &ctx,
            "computer",
            params.clone(),
            &screenpilot::Progress::default(),
        ));
        let error = match result {
            Ok(value) => {
                return Err(TestCaseError::fail(format!(
                    "{params} succeeded without a session: {value}"
                )))
            }
            Err(error) => serde_json::to_value(&error).expect("errors serialise"),
        };
        prop_assert!(
            names_what_was_wrong(&error),
            "{} got an error that names nothing: {}",
            params,
            error
        );
        let field = error["field"].as_str().unwrap_or("");
        let blamed = field.split('.').next_back().unwrap_or("").to_owned();
        *seen.borrow_mut().entry(blamed).or_default() += 1;
        prop_assert!(
            field == "sid" || field.starts_with("action") || field == "params",
            "{} blamed {:?}: {}",
            params,
            field,
            error
        );
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    eprintln!("errors by field blamed: {:?}", seen.borrow());
}
