//! Reading sway's answers: the layout tree (`get_tree`) as a list of windows, and the outputs
//! (`get_outputs`). Pure: JSON in, values out.
//!
//! Where a window's client area is: a view's `rect` is its container in layout coordinates, past
//! any title bar (`deco_rect`) but with its border; `window_rect` is the client area inside that
//! box, relative to it. So the client area is `rect` moved by `window_rect`'s x/y, with
//! `window_rect`'s size. With the borders our private sway draws (none) the two agree.
//!
//! What sway reports is its *pending* layout: right after a command, the place it has given a
//! window, which the program takes on with its next frame.

use serde::Deserialize;

use crate::error::{DesktopError, Result};
use crate::x11::WindowInfo;

/// The name of the workspace that holds the scratchpad (sway's minimised windows).
pub const SCRATCHPAD: &str = "__i3_scratch";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WindowProperties {
    class: Option<String>,
    instance: Option<String>,
}

/// One node of the tree, with the fields we read.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Node {
    id: i64,
    name: Option<String>,
    #[serde(rename = "type")]
    kind: String,
    rect: Rect,
    window_rect: Rect,
    deco_rect: Rect,
    focused: bool,
    visible: Option<bool>,
    pid: Option<i64>,
    app_id: Option<String>,
    shell: Option<String>,
    window_properties: Option<WindowProperties>,
    fullscreen_mode: i64,
    nodes: Vec<Node>,
    floating_nodes: Vec<Node>,
}

impl Node {
    /// A view (a program's window) rather than a container of others: only views have `shell`.
    fn is_view(&self) -> bool {
        self.shell.is_some() && matches!(self.kind.as_str(), "con" | "floating_con")
    }
}

/// A window as sway sees it: what [`WindowInfo`] says, and what only Wayland has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub info: WindowInfo,
    /// "xdg_shell" for a native Wayland program, "xwayland" for an X11 one.
    pub shell: String,
    /// Floating (placed freely) rather than tiled.
    pub floating: bool,
    /// The workspace it is on ([`SCRATCHPAD`] when minimised).
    pub workspace: String,
    /// Its border and title bar, around the client area.
    pub frame: Frame,
}

/// A window's decoration: where the client area sits inside its container (the box that sway's
/// `move` and `resize` commands place), and how much bigger the container is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Frame {
    pub left: i32,
    pub top: i32,
    pub extra_width: i32,
    pub extra_height: i32,
}

/// Every view in a `get_tree` answer, in tree order (tiled before floating, per workspace).
pub fn views(tree_json: &[u8]) -> Result<Vec<View>> {
    let root: Node = serde_json::from_slice(tree_json)
        .map_err(|e| DesktopError::Compositor(format!("unreadable get_tree answer: {e}")))?;
    let mut found = Vec::new();
    collect(&root, "", false, &mut found);
    Ok(found)
}

fn collect(node: &Node, workspace: &str, floating: bool, found: &mut Vec<View>) {
    let workspace = if node.kind == "workspace" {
        node.name.as_deref().unwrap_or("")
    } else {
        workspace
    };
    if node.is_view() {
        found.push(view(node, workspace, floating));
    }
    for child in &node.nodes {
        collect(child, workspace, floating, found);
    }
    for child in &node.floating_nodes {
        collect(child, workspace, true, found);
    }
}

fn view(node: &Node, workspace: &str, floating: bool) -> View {
    let shell = node.shell.clone().unwrap_or_default();
    let properties = node.window_properties.as_ref();
    // XWayland windows have a WM_CLASS; native ones only an app_id, which plays both parts.
    let app_id = node.app_id.clone().unwrap_or_default();
    let class = properties
        .and_then(|p| p.class.clone())
        .unwrap_or_else(|| app_id.clone());
    let instance = properties
        .and_then(|p| p.instance.clone())
        .unwrap_or_else(|| app_id.clone());
    let minimized = workspace == SCRATCHPAD;
    // `rect` leaves out the title bar (`deco_rect`, whose height is zero without one).
    let title_bar = node.deco_rect.height;
    let frame = Frame {
        left: node.window_rect.x,
        top: title_bar + node.window_rect.y,
        extra_width: node.rect.width - node.window_rect.width,
        extra_height: node.rect.height + title_bar - node.window_rect.height,
    };
    View {
        info: WindowInfo {
            id: node.id.clamp(0, u32::MAX as i64) as u32,
            title: node.name.clone().unwrap_or_default(),
            class,
            instance,
            pid: node
                .pid
                .filter(|pid| *pid > 0)
                .and_then(|pid| u32::try_from(pid).ok()),
            x: node.rect.x + node.window_rect.x,
            y: node.rect.y + node.window_rect.y,
            width: node.window_rect.width.max(0) as u32,
            height: node.window_rect.height.max(0) as u32,
            focused: node.focused,
            mapped: node.visible.unwrap_or(false) && !minimized,
            minimized,
            maximized: node.fullscreen_mode != 0,
            above: false,
        },
        shell,
        floating,
        workspace: workspace.to_owned(),
        frame,
    }
}

/// An output (a screen) of the compositor.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub name: String,
    pub active: bool,
    /// Where it sits in layout coordinates, and its size there (logical pixels: the physical
    /// size divided by the scale). Window positions are in these coordinates.
    pub x: i32,
    pub y: i32,
    pub logical_width: u32,
    pub logical_height: u32,
    /// Its mode: the pixels a screenshot of it has.
    pub physical_width: u32,
    pub physical_height: u32,
    pub scale: f64,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OutputJson {
    name: String,
    active: bool,
    rect: Rect,
    scale: Option<f64>,
    current_mode: Option<Mode>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Mode {
    width: i32,
    height: i32,
}

/// The outputs in a `get_outputs` answer.
pub fn outputs(outputs_json: &[u8]) -> Result<Vec<Output>> {
    let list: Vec<OutputJson> = serde_json::from_slice(outputs_json)
        .map_err(|e| DesktopError::Compositor(format!("unreadable get_outputs answer: {e}")))?;
    Ok(list
        .into_iter()
        .map(|o| {
            let scale = o.scale.filter(|s| *s > 0.0).unwrap_or(1.0);
            let (physical_width, physical_height) = match &o.current_mode {
                Some(mode) => (mode.width.max(0) as u32, mode.height.max(0) as u32),
                None => (
                    (o.rect.width as f64 * scale).round() as u32,
                    (o.rect.height as f64 * scale).round() as u32,
                ),
            };
            Output {
                name: o.name,
                active: o.active,
                x: o.rect.x,
                y: o.rect.y,
                logical_width: o.rect.width.max(0) as u32,
                logical_height: o.rect.height.max(0) as u32,
                physical_width,
                physical_height,
                scale,
            }
        })
        .collect())
}

/// One command's outcome in a `run_command` answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CommandOutcome {
    pub success: bool,
    /// Why it failed (sway's words).
    #[serde(default)]
    pub error: Option<String>,
    /// It failed because sway could not parse it.
    #[serde(default)]
    pub parse_error: bool,
}

/// The outcomes in a `run_command` answer, one per command (commands are split at `,` and `;`).
pub fn command_outcomes(json: &[u8]) -> Result<Vec<CommandOutcome>> {
    serde_json::from_slice(json)
        .map_err(|e| DesktopError::Compositor(format!("unreadable run_command answer: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trimmed from sway 1.7's answer: one tiled foot with a title bar and 2-pixel borders, a
    /// floating GTK window, a minimised one in the scratchpad.
    const TREE: &str = r#"{
      "id": 1, "type": "root", "name": "root", "rect": {"x":0,"y":0,"width":1024,"height":768},
      "nodes": [
        {"id": 2147483647, "type": "output", "name": "__i3", "nodes": [
          {"id": 2147483646, "type": "workspace", "name": "__i3_scratch", "nodes": [], "floating_nodes": [
            {"id": 9, "type": "floating_con", "name": "hidden", "app_id": "foot", "pid": 77,
             "shell": "xdg_shell", "visible": false, "focused": false, "fullscreen_mode": 0,
             "rect": {"x":10,"y":20,"width":300,"height":200},
             "window_rect": {"x":0,"y":0,"width":300,"height":200}, "nodes": [], "floating_nodes": []}
          ]}
        ]},
        {"id": 3, "type": "output", "name": "HEADLESS-1", "nodes": [
          {"id": 4, "type": "workspace", "name": "1", "nodes": [
            {"id": 5, "type": "con", "name": "sp-foot", "app_id": "foot", "pid": 42,
             "shell": "xdg_shell", "visible": true, "focused": true, "fullscreen_mode": 0,
             "rect": {"x":160,"y":134,"width":704,"height":502},
             "deco_rect": {"x":160,"y":109,"width":704,"height":25},
             "window_rect": {"x":2,"y":0,"width":700,"height":500},
             "window_properties": null, "nodes": [], "floating_nodes": []}
          ], "floating_nodes": [
            {"id": 6, "type": "floating_con", "name": "sp-gtk", "app_id": "gtk.py", "pid": 43,
             "shell": "xdg_shell", "visible": true, "focused": false, "fullscreen_mode": 1,
             "rect": {"x":0,"y":0,"width":1024,"height":768},
             "window_rect": {"x":0,"y":0,"width":1024,"height":768}, "nodes": [], "floating_nodes": []}
          ]}
        ]}
      ]
    }"#;

    #[test]
    fn views_report_the_client_area_and_sway_states() {
        let views = views(TREE.as_bytes()).expect("parses");
        let ids: Vec<u32> = views.iter().map(|v| v.info.id).collect();
        assert_eq!(ids, [9, 5, 6]);
        let foot = &views[1];
        // Inside the 2-pixel border, below the title bar that `rect` already leaves out.
        assert_eq!(
            (foot.info.x, foot.info.y, foot.info.width, foot.info.height),
            (162, 134, 700, 500)
        );
        assert_eq!(
            (foot.info.class.as_str(), foot.info.instance.as_str()),
            ("foot", "foot")
        );
        assert_eq!(foot.info.pid, Some(42));
        assert!(foot.info.focused && foot.info.mapped && !foot.floating);
        assert_eq!(foot.workspace, "1");
        let frame = Frame {
            left: 2,
            top: 25,
            extra_width: 4,
            extra_height: 27,
        };
        assert_eq!(foot.frame, frame);
        let hidden = &views[0];
        assert!(hidden.info.minimized && !hidden.info.mapped);
        let gtk = &views[2];
        assert!(gtk.info.maximized && gtk.floating);
        assert_eq!(gtk.shell, "xdg_shell");
    }

    #[test]
    fn outputs_tell_logical_from_physical_size() {
        let json = br#"[{"name":"HEADLESS-1","active":true,"scale":2.0,
            "rect":{"x":0,"y":0,"width":512,"height":384},
            "current_mode":{"width":1024,"height":768,"refresh":60000}}]"#;
        let outputs = outputs(json).expect("parses");
        assert_eq!(outputs.len(), 1);
        let o = &outputs[0];
        assert_eq!((o.logical_width, o.logical_height), (512, 384));
        assert_eq!((o.physical_width, o.physical_height), (1024, 768));
        assert_eq!(o.scale, 2.0);
    }

    #[test]
    fn command_outcomes_carry_sway_s_words() {
        let json = br#"[{"success":true},{"success":false,"parse_error":true,"error":"Unknown/invalid command 'frob'"}]"#;
        let outcomes = command_outcomes(json).expect("parses");
        assert!(outcomes[0].success);
        assert!(outcomes[1].parse_error);
        assert_eq!(
            outcomes[1].error.as_deref(),
            Some("Unknown/invalid command 'frob'")
        );
    }
}
