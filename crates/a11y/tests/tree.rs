//! The tree of real GTK programs on a private desktop (Xvfb, openbox, its own session bus), read and
//! acted on through this crate.

use std::time::Duration;

use screenpilot_a11y::{snapshot, Act, Bounds, Budget, Bus, Done, Refs, TopLevel};
use screenpilot_desktop::{Desktop, DesktopSpec, Target};

fn spec(program: &[&str]) -> DesktopSpec {
    DesktopSpec {
        target: Target::Launch {
            width: 1024,
            height: 768,
        },
        program: Some(program.iter().map(|s| (*s).to_owned()).collect()),
        ..DesktopSpec::default()
    }
}

async fn tops(desktop: &Desktop) -> Vec<TopLevel> {
    desktop
        .windows()
        .await
        .expect("windows")
        .into_iter()
        .map(|w| TopLevel {
            id: w.id,
            title: w.title,
            class: w.class,
            pid: w.pid,
            bounds: Bounds::new(w.x, w.y, w.width as i32, w.height as i32),
            focused: w.focused,
            shown: w.mapped,
            scale: 1.0,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zenity_entry_reads_as_its_widgets_and_takes_text_and_a_click() {
    let desktop = Desktop::start(
        "a11y".into(),
        spec(&[
            "zenity",
            "--entry",
            "--title",
            "Who",
            "--text",
            "Your name:",
        ]),
    )
    .await
    .expect("a desktop");
    let address = desktop.session_bus_address().expect("a session bus");
    let bus = match Bus::connect(&address).await {
        Ok(bus) => bus,
        Err(e) => {
            let log = desktop
                .info()
                .log
                .and_then(|p| std::fs::read_to_string(p.with_file_name("session-bus.log")).ok());
            panic!("the accessibility bus: {e}\nsession bus log: {log:?}");
        }
    };
    let screen = Bounds::new(0, 0, 1024, 768);
    let trees = bus.trees(screen).await.expect("trees");
    let mut refs = Refs::default();
    let shot = snapshot::compose(
        &tops(&desktop).await,
        &trees,
        &Default::default(),
        &mut refs,
        Budget::default(),
    );
    println!("{}", shot.text);
    // zenity's window is a GTK dialog: it reads by that role.
    assert!(shot.text.starts_with("dialog \"Who\""), "{}", shot.text);
    let entry = shot
        .elements
        .iter()
        .find(|e| e.role == "text" && e.states.contains(&"editable"))
        .expect("an editable text");
    let done = bus
        .act(entry, &Act::Set("Ada".into()), "ref")
        .await
        .expect("set text");
    assert_eq!(done, Done::Interface("editable text".into()));
    let ok = shot
        .elements
        .iter()
        .find(|e| e.role == "button" && e.name == "OK")
        .expect("OK");
    bus.act(ok, &Act::Click, "ref").await.expect("click");
    let status = desktop
        .wait_program_exit(Duration::from_secs(20))
        .await
        .expect("zenity ends");
    assert_eq!(status.exit_code, Some(0), "{status:?}");
    let log = desktop.program_log_tail();
    assert!(log.contains("Ada"), "{log}");
    desktop.close().await;
}
