//! A desktop as text: its windows (from the X server, so a window whose application has no tree is
//! still there), each with the elements its application shows, every element a person could act on
//! with a ref. Within a budget: past it, the text says how many elements were left out and how to
//! read them (a snapshot of one element's part).

use serde::Serialize;

use crate::element::{Bounds, Element, Frame, Placement, Refs, Target};
use crate::walk::{Trees, WindowTree};

/// A top-level window as the X server knows it.
#[derive(Debug, Clone)]
pub struct TopLevel {
    pub id: u32,
    pub title: String,
    pub class: String,
    pub pid: Option<u32>,
    pub bounds: Bounds,
    pub focused: bool,
    /// Shown (not minimised or withdrawn).
    pub shown: bool,
    /// Screen pixels per unit of the window's own coordinates (a Wayland output's scale; else 1):
    /// how boxes given relative to the window are placed.
    pub scale: f64,
}

/// How much a snapshot may hold, and in which pixels its boxes are.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// The most element lines.
    pub lines: usize,
    /// The most bytes of text.
    pub bytes: usize,
    /// Boxes are multiplied by this (a screenshot scaled for a model: its pixels).
    pub scale: f64,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            lines: 400,
            bytes: 24 * 1024,
            scale: 1.0,
        }
    }
}

/// A desktop's windows and elements, as text with refs.
#[derive(Debug, Clone, Serialize)]
pub struct Snapshot {
    /// One line an element, indented by nesting.
    pub text: String,
    /// The elements shown, with their refs (the windows among them with `window` set).
    pub elements: Vec<Element>,
    /// Elements read but left out by the budget.
    pub left_out: usize,
}

/// Which of `trees` belongs to X window `top`: the same process, then the same title, else the
/// most overlap.
fn tree_of(top: &TopLevel, trees: &[WindowTree], taken: &[bool]) -> Option<usize> {
    let candidates: Vec<usize> = (0..trees.len())
        .filter(|i| !taken[*i])
        .filter(|i| match (top.pid, trees[*i].app.pid) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        })
        .collect();
    if let Some(i) = candidates
        .iter()
        .copied()
        .find(|i| trees[*i].elements[0].name == top.title)
    {
        return Some(i);
    }
    // Else the same place: most of the two boxes shared (a frame is a little larger than its
    // client area; a dialog over its main window shares only part of it).
    let area = |b: &Bounds| i64::from(b.width) * i64::from(b.height);
    candidates
        .iter()
        .copied()
        .filter_map(|i| {
            let b = trees[i].elements[0].bounds?;
            let shared = area(&b.intersect(&top.bounds)?);
            let union = area(&b) + area(&top.bounds) - shared;
            (shared * 2 > union).then_some((shared, i))
        })
        .max()
        .map(|(_, i)| i)
        .or_else(|| (candidates.len() == 1 && top.pid.is_some()).then(|| candidates[0]))
}

/// Each of X's `tops` in the order a snapshot lists them (the focused window first, then the
/// others from the top of the stack down), with the index of its tree in `trees`, if it has one.
fn assign<'t>(tops: &'t [TopLevel], trees: &Trees) -> Vec<(&'t TopLevel, Option<usize>)> {
    let mut taken = vec![false; trees.windows.len()];
    let mut order: Vec<&TopLevel> = tops.iter().rev().collect();
    order.sort_by_key(|t| !t.focused);
    order
        .into_iter()
        .map(|top| {
            let tree = tree_of(top, &trees.windows, &taken);
            if let Some(i) = tree {
                taken[i] = true;
            }
            (top, tree)
        })
        .collect()
}

/// The shown windows a person sees but a snapshot cannot read from a tree: their application has
/// none, or its tree holds nothing (a browser keeping its page to itself). Their text can only be
/// read from their pixels.
pub fn unread_windows<'t>(tops: &'t [TopLevel], trees: &Trees) -> Vec<&'t TopLevel> {
    assign(tops, trees)
        .into_iter()
        .filter(|(top, tree)| {
            top.shown && tree.is_none_or(|i| trees.windows[i].elements.len() == 1)
        })
        .map(|(top, _)| top)
        .collect()
}

/// The snapshot of `trees` under X's `tops` (stacking order, bottom first), refs from `refs`;
/// `pixels` holds text read from windows' pixels (see [`Element::from_pixels`]), by window, shown
/// under each.
pub fn compose(
    tops: &[TopLevel],
    trees: &Trees,
    pixels: &std::collections::HashMap<u32, Vec<Element>>,
    refs: &mut Refs,
    budget: Budget,
) -> Snapshot {
    let mut out: Vec<Element> = Vec::new();
    let assigned = assign(tops, trees);
    let taken: Vec<bool> = (0..trees.windows.len())
        .map(|i| assigned.iter().any(|(_, tree)| *tree == Some(i)))
        .collect();
    for (top, tree) in assigned {
        let mut states = Vec::new();
        if top.focused {
            states.push("focused");
        }
        if !top.shown {
            states.push("minimized");
        }
        let what = format!("window {}", crate::element::quoted(&top.title, 80));
        let id = refs.id_for(&Target::Window(top.id), &what);
        let mut window = Element {
            id,
            role: "window".into(),
            name: top.title.clone(),
            value: None,
            states,
            bounds: Some(top.bounds),
            depth: 0,
            window: Some(top.id),
            object: None,
            raw_states: atspi::StateSet::empty(),
            interfaces: atspi::InterfaceSet::empty(),
            raw_role: atspi::Role::Window,
            frame: Frame::Screen,
            pixels: None,
        };
        match tree {
            Some(i) if top.shown => {
                let elements = &trees.windows[i].elements;
                window.object = elements[0].object.clone();
                window.raw_states = elements[0].raw_states;
                window.interfaces = elements[0].interfaces;
                window.raw_role = elements[0].raw_role;
                // A dialog, an alert or a file chooser reads (and is found) by the role AT-SPI
                // gives it; a frame is a window.
                if matches!(
                    elements[0].raw_role,
                    atspi::Role::Dialog | atspi::Role::Alert | atspi::Role::FileChooser
                ) {
                    window.role.clone_from(&elements[0].role);
                }
                if elements[0].has(atspi::State::Modal) {
                    window.states.push("modal");
                }
                // A tree with nothing in it (a browser that keeps its page to itself): said so.
                if elements.len() == 1 {
                    window.states.push("no-elements");
                }
                out.push(window);
                // Boxes relative to the window (GTK 4; Wayland) are placed where the window list
                // shows it.
                let at = Placement {
                    x: top.bounds.x,
                    y: top.bounds.y,
                    scale: top.scale,
                };
                out.extend(elements[1..].iter().cloned().map(|mut e| {
                    if let Frame::Window { placed, .. } = &mut e.frame {
                        *placed = Some(at);
                        e.bounds = e.bounds.map(|b| at.place(b));
                    }
                    e
                }));
            }
            Some(_) => out.push(window),
            None => {
                if top.shown {
                    window.states.push("no-tree");
                }
                out.push(window);
            }
        }
        if top.shown {
            out.extend(pixels.get(&top.id).into_iter().flatten().cloned());
        }
    }
    // Windows of the tree the X server does not list (menus and popups open now), but for what was
    // already shown where it belongs (GTK lists a combo box's open menu under the box, and again
    // as a window of its own).
    let shown: std::collections::HashSet<crate::element::Object> =
        out.iter().filter_map(|e| e.object.clone()).collect();
    for (i, tree) in trees.windows.iter().enumerate() {
        if taken[i] {
            continue;
        }
        // Where a popup of an application that gives boxes relative to its windows shows is not
        // known (on Wayland the compositor places it, and tells no other client): no boxes.
        let fresh: Vec<Element> = tree
            .elements
            .iter()
            .filter(|e| e.object.as_ref().is_none_or(|o| !shown.contains(o)))
            .cloned()
            .map(|mut e| {
                if matches!(e.frame, Frame::Window { .. }) {
                    e.bounds = None;
                }
                e
            })
            .collect();
        if fresh.len() > 1
            || fresh
                .first()
                .is_some_and(|w| !crate::element::top_level(w.raw_role))
        {
            out.extend(fresh);
        }
    }
    let (mut lines, kept, left_out) = lay_out(out, refs, budget);
    if tops.iter().all(|t| !t.shown) && trees.windows.is_empty() {
        lines.push("(no windows)".into());
    } else if trees.windows.is_empty() && pixels.is_empty() {
        lines.push("(no application here exposes an accessibility tree: read the windows with a screenshot)".into());
    } else if trees.windows.is_empty() {
        lines.push("(no application here exposes an accessibility tree: text marked ocr is read from pixels, and may be misread)".into());
    }
    for unread in &trees.unread {
        lines.push(format!(
            "(application {} pid {}: {})",
            crate::element::quoted(&unread.app.name, 60),
            unread.app.pid.map_or("?".into(), |p| p.to_string()),
            unread.why
        ));
    }
    if left_out > 0 {
        lines.push(format!(
            "… {left_out} more elements left out; snapshot with ref set to a window or container reads it alone"
        ));
    }
    if trees.cut_short {
        lines.push(format!(
            "… the tree is larger than {} objects; what is past them was not read",
            crate::walk::MAX_VISITS
        ));
    }
    refs.mark_current(kept.iter().filter(|e| e.id != 0).map(|e| e.id));
    Snapshot {
        text: lines.join("\n"),
        elements: kept,
        left_out,
    }
}

/// A part: `elements` of one subtree (a window, a list), refs given, within the budget.
pub fn compose_part(elements: Vec<Element>, refs: &mut Refs, budget: Budget) -> Snapshot {
    let (mut lines, kept, left_out) = lay_out(elements, refs, budget);
    if left_out > 0 {
        lines.push(format!(
            "… {left_out} more elements left out; snapshot a ref inside to read it alone"
        ));
    }
    refs.mark_current(kept.iter().filter(|e| e.id != 0).map(|e| e.id));
    Snapshot {
        text: lines.join("\n"),
        elements: kept,
        left_out,
    }
}

/// Give refs to what a person acts on, and keep what fits the budget, in order: the lines, the
/// elements kept, and how many were left out.
fn lay_out(
    elements: Vec<Element>,
    refs: &mut Refs,
    budget: Budget,
) -> (Vec<String>, Vec<Element>, usize) {
    let mut lines = Vec::new();
    let mut kept = Vec::new();
    let mut bytes = 0;
    let mut left_out = 0;
    for mut element in elements {
        let acts =
            crate::element::actionable(element.raw_role, &element.raw_states, &element.interfaces);
        if let (0, Some(pixels), Some(bounds)) = (element.id, element.pixels, element.bounds) {
            let what = format!(
                "text {} (read from pixels)",
                crate::element::quoted(&element.name, 80)
            );
            let target = Target::Pixels(pixels.window, element.name.clone(), bounds);
            element.id = refs.id_for(&target, &what);
        }
        if element.id == 0 && acts {
            if let Some(object) = &element.object {
                let what = format!(
                    "{} {}",
                    element.role,
                    crate::element::quoted(&element.name, 80)
                );
                element.id = refs.id_for(&Target::Element(object.clone()), &what);
            }
        }
        let mut shown = element.clone();
        if budget.scale != 1.0 {
            shown.bounds = shown.bounds.map(|b| scaled(b, budget.scale));
        }
        let line = shown.line();
        if kept.len() >= budget.lines || bytes + line.len() + 1 > budget.bytes {
            left_out += 1;
            continue;
        }
        bytes += line.len() + 1;
        lines.push(line);
        kept.push(element);
    }
    (lines, kept, left_out)
}

fn scaled(b: Bounds, factor: f64) -> Bounds {
    let s = |v: i32| (f64::from(v) * factor).round() as i32;
    Bounds::new(s(b.x), s(b.y), s(b.width).max(1), s(b.height).max(1))
}

#[cfg(test)]
mod tests {
    use atspi::{Interface, InterfaceSet, Role, State, StateSet};

    use super::*;
    use crate::element::Object;
    use crate::walk::{App, Unread};

    fn element(role: Role, name: &str, depth: usize, path: &str, acts: bool) -> Element {
        Element {
            id: 0,
            role: format!("{role:?}").to_lowercase(),
            name: name.into(),
            value: None,
            states: Vec::new(),
            bounds: Some(Bounds::new(10, 20 * depth as i32, 80, 20)),
            depth,
            window: None,
            object: Some(Object {
                bus: ":1.7".into(),
                path: path.into(),
            }),
            raw_states: if acts {
                StateSet::new(State::Focusable)
            } else {
                StateSet::empty()
            },
            interfaces: if acts {
                InterfaceSet::new(Interface::Action)
            } else {
                InterfaceSet::empty()
            },
            raw_role: role,
            frame: Frame::Screen,
            pixels: None,
        }
    }

    /// A snapshot with nothing read from pixels.
    fn from_tree(tops: &[TopLevel], trees: &Trees, refs: &mut Refs, budget: Budget) -> Snapshot {
        compose(tops, trees, &Default::default(), refs, budget)
    }

    #[test]
    fn text_read_from_pixels_sits_under_its_window_with_refs_that_stay() {
        let mut refs = Refs::default();
        let tops = [top(7, "Tk Form", true, true)];
        let read = |look| {
            let save = Element::from_pixels(7, "Save".into(), Bounds::new(90, 200, 34, 11), look);
            std::collections::HashMap::from([(7, vec![save])])
        };
        let snap = compose(
            &tops,
            &Trees::default(),
            &read(1),
            &mut refs,
            Budget::default(),
        );
        let lines: Vec<&str> = snap.text.lines().collect();
        assert!(lines[0].contains("no-tree"), "{}", snap.text);
        assert!(
            lines[1].starts_with("  text \"Save\" [e") && lines[1].ends_with("ocr @90,200,34,11"),
            "{}",
            snap.text
        );
        assert!(lines[2].contains("read from pixels"), "{}", snap.text);
        // The same text at the same place keeps its ref, however it is drawn now.
        let again = compose(
            &tops,
            &Trees::default(),
            &read(2),
            &mut refs,
            Budget::default(),
        );
        assert_eq!(again.elements[1].id, snap.elements[1].id);
        assert_eq!(again.elements[1].pixels.map(|p| p.look), Some(2));
    }

    fn top(id: u32, title: &str, focused: bool, shown: bool) -> TopLevel {
        TopLevel {
            id,
            title: title.into(),
            class: "app".into(),
            pid: Some(42),
            bounds: Bounds::new(0, 0, 400, 300),
            focused,
            shown,
            scale: 1.0,
        }
    }

    fn app() -> App {
        App {
            bus: ":1.7".into(),
            name: "app".into(),
            pid: Some(42),
        }
    }

    fn form() -> Trees {
        Trees {
            windows: vec![WindowTree {
                app: app(),
                elements: vec![
                    element(Role::Frame, "Signup", 0, "/w", true),
                    element(Role::Label, "Name", 1, "/w/1", false),
                    element(Role::Button, "OK", 1, "/w/2", true),
                ],
            }],
            ..Trees::default()
        }
    }

    #[test]
    fn a_window_shows_its_elements_and_only_what_a_person_acts_on_gets_a_ref() {
        let mut refs = Refs::default();
        let tops = [top(7, "Other", false, true), top(9, "Signup", true, true)];
        let snap = from_tree(&tops, &form(), &mut refs, Budget::default());
        let lines: Vec<&str> = snap.text.lines().collect();
        // The focused window first, matched to its tree by title; the other has no tree.
        assert!(
            lines[0].starts_with("window \"Signup\" [e"),
            "{}",
            snap.text
        );
        assert!(lines[0].contains("focused"), "{}", snap.text);
        assert!(lines[1].starts_with("  label \"Name\" @"), "{}", snap.text);
        assert!(lines[2].starts_with("  button \"OK\" [e"), "{}", snap.text);
        assert!(
            lines[3].starts_with("window \"Other\" [e") && lines[3].contains("no-tree"),
            "{}",
            snap.text
        );
        assert_eq!(snap.left_out, 0);
        // The same elements keep their refs in the next snapshot.
        let again = from_tree(&tops, &form(), &mut refs, Budget::default());
        assert_eq!(again.text, snap.text);
    }

    #[test]
    fn dialogs_and_alerts_read_by_their_own_roles() {
        let mut refs = Refs::default();
        let mut trees = form();
        trees.windows[0].elements[0] = element(Role::Dialog, "Signup", 0, "/w", true);
        trees.windows[0].elements[0].role = "dialog".into();
        let snap = from_tree(
            &[top(9, "Signup", true, true)],
            &trees,
            &mut refs,
            Budget::default(),
        );
        assert!(
            snap.text.starts_with("dialog \"Signup\" [e"),
            "{}",
            snap.text
        );
        assert!(crate::act::role_matches(&snap.elements[0], "dialog"));
    }

    #[test]
    fn past_the_budget_elements_are_counted_and_the_way_to_read_them_said() {
        let mut refs = Refs::default();
        let budget = Budget {
            lines: 2,
            ..Budget::default()
        };
        let snap = from_tree(&[top(9, "Signup", true, true)], &form(), &mut refs, budget);
        assert_eq!(snap.left_out, 1, "{}", snap.text);
        assert_eq!(snap.elements.len(), 2);
        assert!(
            snap.text.ends_with("… 1 more elements left out; snapshot with ref set to a window or container reads it alone"),
            "{}",
            snap.text
        );
    }

    #[test]
    fn boxes_are_in_the_pixels_of_a_scaled_screenshot() {
        let mut refs = Refs::default();
        let budget = Budget {
            scale: 0.5,
            ..Budget::default()
        };
        let snap = from_tree(&[top(9, "Signup", true, true)], &form(), &mut refs, budget);
        assert!(
            snap.text
                .lines()
                .next()
                .is_some_and(|l| l.ends_with("@0,0,200,150")),
            "{}",
            snap.text
        );
        // The elements kept hold the real boxes: acting on them needs screen pixels.
        assert_eq!(snap.elements[0].bounds, Some(Bounds::new(0, 0, 400, 300)));
    }

    #[test]
    fn boxes_relative_to_a_window_are_placed_by_its_place_and_scale_and_a_popup_s_are_unknown() {
        // A Wayland application: boxes in its window's logical pixels, on an output of scale 2.
        let relative = Frame::Window {
            placed: None,
            visible_is_shown: false,
        };
        let mut trees = form();
        for e in &mut trees.windows[0].elements {
            e.frame = relative;
        }
        // A context menu of the same application, which no window list holds.
        let mut menu = vec![
            element(Role::Window, "", 0, "/m", false),
            element(Role::MenuItem, "Paste", 1, "/m/1", true),
        ];
        for e in &mut menu {
            e.frame = relative;
        }
        trees.windows.push(WindowTree {
            app: app(),
            elements: menu,
        });
        let mut window = top(9, "Signup", true, true);
        window.bounds = Bounds::new(100, 60, 800, 600);
        window.scale = 2.0;
        let snap = from_tree(&[window], &trees, &mut Refs::default(), Budget::default());
        let line = |start: &str| {
            snap.text
                .lines()
                .find(|l| l.trim_start().starts_with(start))
                .unwrap_or_else(|| panic!("no {start} in {}", snap.text))
                .to_owned()
        };
        // (10, 20, 80, 20) of the window's: twice that, from its corner.
        assert!(
            line("label \"Name\"").ends_with("@120,100,160,40"),
            "{}",
            snap.text
        );
        let ok = snap.elements.iter().find(|e| e.name == "OK").expect("OK");
        assert_eq!(
            ok.placement(),
            Some(Placement {
                x: 100,
                y: 60,
                scale: 2.0
            })
        );
        // The popup is listed, without a box a click could be aimed by.
        assert!(!line("menuitem \"Paste\"").contains('@'), "{}", snap.text);
        let paste = snap
            .elements
            .iter()
            .find(|e| e.name == "Paste")
            .expect("Paste");
        assert_eq!((paste.bounds, paste.placement()), (None, None));
    }

    #[test]
    fn a_minimised_window_hides_its_elements_and_desktops_without_trees_say_so() {
        let mut refs = Refs::default();
        let snap = from_tree(
            &[top(9, "Signup", false, false)],
            &form(),
            &mut refs,
            Budget::default(),
        );
        assert_eq!(snap.text.lines().count(), 1, "{}", snap.text);
        assert!(snap.text.contains("minimized"), "{}", snap.text);
        let bare = Trees {
            unread: vec![Unread {
                app: app(),
                why: "no answer in 2 s".into(),
            }],
            ..Trees::default()
        };
        let snap = from_tree(
            &[top(9, "xterm", true, true)],
            &bare,
            &mut refs,
            Budget::default(),
        );
        assert!(snap.text.contains("no-tree"), "{}", snap.text);
        assert!(
            snap.text.contains("(no application here exposes an accessibility tree: read the windows with a screenshot)"),
            "{}",
            snap.text
        );
        assert!(
            snap.text
                .ends_with("(application \"app\" pid 42: no answer in 2 s)"),
            "{}",
            snap.text
        );
        let none = from_tree(&[], &Trees::default(), &mut refs, Budget::default());
        assert_eq!(none.text, "(no windows)");
    }
}
