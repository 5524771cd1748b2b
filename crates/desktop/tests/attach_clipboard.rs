//! The clipboard of a display we attached to (another desktop's Xvfb standing in for a person's
//! own): what we set there is pasted by its programs, and closing the attached desktop leaves
//! nothing of ours behind: the selection is given back and no window of ours stays.
//!
//! One test in this file: it sets XAUTHORITY for the whole process, as a person's session has it.

use crate::common;

use common::*;
use screenpilot_desktop::x11rb::connection::Connection;
use screenpilot_desktop::x11rb::protocol::xproto::ConnectionExt as _;
use screenpilot_desktop::{ClipContent, ClipKind, Desktop, DesktopSpec, Selection, Target};

/// The children of the root window: every top-level window, ours included.
async fn root_children(desktop: &Desktop) -> Vec<u32> {
    desktop
        .run("listing the root's children", LONG, |x| {
            let x = x.x11("listing the root's children")?;
            let root = x.connection().setup().roots[0].root;
            Ok(x.connection().query_tree(root)?.reply()?.children)
        })
        .await
        .expect("query the tree")
}

#[tokio::test]
async fn the_clipboard_of_an_attached_display_is_set_read_and_given_back_at_close() {
    require(&["Xvfb", "openbox", "xclip"]);
    let own = start(spec(None, openbox())).await;
    let info = own.info();
    std::env::set_var(
        "XAUTHORITY",
        info.xauthority.clone().expect("our Xvfb has a cookie file"),
    );
    let before = root_children(&own).await;

    let attached = Desktop::start(
        "attached".into(),
        DesktopSpec {
            label: "attach".into(),
            target: Target::Attach {
                display: info.display.clone(),
            },
            step_timeout: LONG,
            ready_timeout: READY,
            ..DesktopSpec::default()
        },
    )
    .await
    .expect("attach");
    attached
        .clipboard_set(
            Selection::Clipboard,
            ClipContent::Text("from the agent".into()),
        )
        .await
        .expect("set");
    let out = run_on(&own, &["xclip", "-o", "-selection", "clipboard"], b"").await;
    assert_eq!(out.stdout, b"from the agent");
    assert_eq!(
        own.clipboard_get(Selection::Clipboard, ClipKind::Text)
            .await
            .expect("read"),
        ClipContent::Text("from the agent".into())
    );

    let given_back = OwnerWatch::new(&own, "CLIPBOARD");
    attached.close().await;
    assert_eq!(given_back.changed().await, 0, "the selection has no owner");
    let empty = own
        .clipboard_get(Selection::Clipboard, ClipKind::Text)
        .await
        .expect_err("nobody owns it now");
    assert_eq!(empty.code(), "selection_empty");
    let after = root_children(&own).await;
    let new: Vec<u32> = after.into_iter().filter(|w| !before.contains(w)).collect();
    assert!(
        new.is_empty(),
        "windows of ours outlived the attached desktop: {new:?}"
    );
    own.close().await;
}
