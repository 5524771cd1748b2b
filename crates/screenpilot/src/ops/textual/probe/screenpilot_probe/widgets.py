"""What the app's widgets are: the tree, each widget's state (see state.py), and where a click would land.

Regions are 0-based screen cells, as [x, y, width, height].
"""

from textual.errors import NoWidget

from . import state


class Refusal(Exception):
    """A click or hover that would not reach its widget; ``code`` names the cause."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def label(widget):
    """How a widget is named in messages: Type#id, or Type.class, or Type."""
    name = type(widget).__name__
    if widget.id:
        return f"{name}#{widget.id}"
    classes = sorted(widget.classes)
    return f"{name}.{classes[0]}" if classes else name


def _region(region):
    return [region.x, region.y, region.width, region.height]


def _is_focused(widget):
    try:
        return widget.has_focus
    except Exception:
        return False


def describe(widget):
    info = {
        "type": type(widget).__name__,
        "id": widget.id,
        "classes": sorted(widget.classes),
        "visible": bool(widget.visible),
        "display": bool(widget.display),
        "disabled": bool(widget.disabled),
        "focused": _is_focused(widget),
        "region": _region(widget.region),
    }
    return info


def state_of(widget):
    info = describe(widget)
    info.update(state.state(widget))
    return info


def tree(app):
    """Every widget of the active screen, nested, with the screen stack."""

    def node(widget):
        entry = describe(widget)
        children = [node(child) for child in widget.children]
        if children:
            entry["children"] = children
        return entry

    screen = app.screen
    return {
        "screen": node(screen),
        "screens": [label(s) for s in app.screen_stack],
        "focused": label(app.focused) if app.focused is not None else None,
        "notifications": notifications(screen),
    }


def notifications(screen):
    """The notifications on screen now (Textual shows them as toasts), oldest first."""
    shown = []
    for widget in screen.walk_children():
        if "Toast" in {cls.__name__ for cls in type(widget).__mro__}:
            toast = state.state(widget)
            if "message" in toast:
                shown.append(toast)
    return shown


def _find(app, selector):
    """Matches on the active screen, else on the screens beneath it: (widgets, screen)."""
    for screen in reversed(app.screen_stack):
        found = list(screen.query(selector))
        if found:
            return found, screen
    return [], app.screen


def query(app, selectors):
    results = []
    for selector in selectors:
        try:
            found, screen = _find(app, selector)
        except Exception as error:
            results.append({"selector": selector, "error": f"invalid selector: {error}"})
            continue
        entry = {"selector": selector, "count": len(found), "widgets": [state_of(w) for w in found]}
        if found and screen is not app.screen:
            entry["screen"] = label(screen)
            entry["covered_by"] = label(app.screen)
        results.append(entry)
    return results


def widget_at(app, x, y):
    try:
        widget, region = app.screen.get_widget_at(x, y)
    except NoWidget:
        return {"widget": None}
    return {"widget": describe(widget), "region": _region(region)}


def _ids_here(screen, limit=12):
    ids = [f"#{w.id}" for w in screen.walk_children() if w.id and not w.id.startswith("textual-")]
    more = len(ids) - limit
    text = ", ".join(ids[:limit])
    return text + (f" and {more} more" if more > 0 else "") if ids else "none"


def locate(app, selector, offset=None):
    """The cell where a click on ``selector`` lands, after checking it would reach that widget."""
    try:
        found, screen = _find(app, selector)
    except Exception as error:
        raise Refusal("invalid_selector", f"selector {selector!r} is not valid: {error}") from None
    active = app.screen
    if not found:
        raise Refusal(
            "absent",
            f"no widget matches {selector!r} on {label(active)} (ids there: {_ids_here(active)})",
        )
    widget = found[0]
    name = label(widget)
    if screen is not active:
        raise Refusal(
            "covered",
            f"{selector!r} ({name}) is on {label(screen)}, covered by the screen {label(active)} "
            f"(a {'modal ' if getattr(active, 'is_modal', False) else ''}screen on top); "
            "dismiss it first",
        )
    for node in widget.ancestors_with_self:
        if node is screen:
            break
        if not node.display:
            cause = "it has" if node is widget else f"its ancestor {label(node)} has"
            raise Refusal("hidden", f"{selector!r} ({name}) is hidden: {cause} display: none")
    if not widget.visible:
        raise Refusal("hidden", f"{selector!r} ({name}) is hidden: visibility: hidden")
    if widget.is_disabled:
        raise Refusal("disabled", f"{selector!r} ({name}) is disabled; a click would do nothing")
    try:
        geometry = screen.find_widget(widget)
    except NoWidget:
        raise Refusal("off_screen", f"{selector!r} ({name}) is not laid out on the screen") from None
    region = geometry.region
    visible = geometry.visible_region.intersection(screen.region)
    if offset is not None:
        x, y = region.x + int(offset[0]), region.y + int(offset[1])
        if not region.contains(x, y):
            raise Refusal(
                "outside",
                f"offset {list(offset)} is outside {selector!r} ({name}), which is "
                f"{region.width}x{region.height} cells",
            )
        if not visible.contains(x, y):
            raise Refusal(
                "off_screen",
                f"offset {list(offset)} of {selector!r} ({name}) is scrolled out of view or off the screen",
            )
    else:
        if visible.width <= 0 or visible.height <= 0:
            raise Refusal(
                "off_screen",
                f"{selector!r} ({name}) at {_region(region)} is scrolled out of view or off the "
                f"{screen.size.width}x{screen.size.height} screen; scroll it into view first",
            )
        x, y = visible.x + visible.width // 2, visible.y + visible.height // 2
    try:
        hit, _ = screen.get_widget_at(x, y)
    except NoWidget:
        hit = None
    if hit is None or (hit is not widget and widget not in hit.ancestors):
        what = label(hit) if hit is not None else "nothing"
        raise Refusal(
            "covered",
            f"{selector!r} ({name}) is covered by {what} at cell ({x}, {y}); a click there would reach {what}",
        )
    return {"x": x, "y": y, "widget": describe(widget), "count": len(found)}
