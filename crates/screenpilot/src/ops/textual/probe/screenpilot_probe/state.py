"""What a widget holds, by kind: an Input's value, a DataTable's cursor, a Log's last lines, ...

Each reader is named after the Textual class it knows (matched anywhere in the widget's class
hierarchy, so subclasses count) and reads public attributes first, private ones only as a fallback.
Anything a Textual version lacks is left out, never an error: a reader that fails adds nothing.
"""

# How many of a log's last lines a query reports.
LAST_LINES = 5
# How many headings of a Markdown document a query reports.
HEADINGS = 50


def text(value):
    """Plain text of a str, rich Text or Textual Content (None stays None)."""
    if value is None:
        return None
    plain = getattr(value, "plain", None)
    if isinstance(plain, str):
        return plain
    return str(value)


def _get(widget, *names):
    """The first of ``names`` the widget has as a plain value (not a method); raises if none."""
    for name in names:
        try:
            value = getattr(widget, name)
        except Exception:
            continue
        if not callable(value):
            return value
    raise AttributeError(names[0])


def _input(w):
    state = {"value": w.value, "placeholder": text(w.placeholder), "cursor_position": w.cursor_position}
    template = getattr(w, "template", None)  # MaskedInput
    if isinstance(template, str):
        state["template"] = template
    return state


def _text_area(w):
    return {"text": w.text, "cursor_location": list(w.cursor_location)}


def _button(w):
    return {"label": text(w.label), "variant": str(w.variant)}


def _toggle(w):  # Checkbox, RadioButton
    return {"value": w.value, "label": text(w.label)}


def _switch(w):
    return {"value": w.value}


def _radio_set(w):
    return {"pressed_index": w.pressed_index}


def _select(w):
    value = w.value
    blank = w.is_blank() if hasattr(w, "is_blank") else type(value).__name__ == "NoSelection"
    return {"value": None if blank else value}


def _data_table(w):
    return {
        "row_count": w.row_count,
        "column_count": len(w.columns),
        "cursor_row": w.cursor_row,
        "cursor_column": w.cursor_column,
        "cursor_coordinate": list(w.cursor_coordinate),
    }


def _list_view(w):
    return {"index": w.index, "item_count": len(w)}


def _option_list(w):
    state = {"highlighted": w.highlighted, "option_count": w.option_count}
    if w.highlighted is not None:
        try:
            state["highlighted_prompt"] = text(w.get_option_at_index(w.highlighted).prompt)
        except Exception:
            pass
    return state


def _selection_list(w):
    return {"selected": list(w.selected)}


def _progress_bar(w):
    return {"progress": w.progress, "total": w.total, "percentage": w.percentage}


def _tabs(w):  # Tabs, TabbedContent
    return {"active": w.active}


def _tree(w):
    node = w.cursor_node
    return {"cursor_label": text(node.label) if node is not None else None, "cursor_line": w.cursor_line}


def _directory_tree(w):
    return {"path": str(w.path)}


def _digits(w):
    return {"value": w.value}


def _content_switcher(w):
    return {"current": w.current}


def _collapsible(w):
    return {"collapsed": w.collapsed, "title": text(w.title)}


def _log(w):
    lines = list(_get(w, "lines"))
    return {"line_count": len(lines), "last_lines": [str(line) for line in lines[-LAST_LINES:]]}


def _rich_log(w):
    lines = list(_get(w, "lines"))
    last = [strip.text.rstrip() if hasattr(strip, "text") else text(strip) for strip in lines[-LAST_LINES:]]
    return {"line_count": len(lines), "last_lines": last}


def _headings(w):
    toc = getattr(w, "table_of_contents", None)
    if toc is None or callable(toc):
        toc = getattr(w, "_table_of_contents", None)
    if toc:
        return [{"level": level, "text": text(label)} for level, label, *_ in toc]
    # Older Textual builds the table lazily elsewhere: read the heading blocks themselves.
    found = []
    for block in w.query("*"):
        name = type(block).__name__
        if name.startswith("MarkdownH") and name[-1:].isdigit() and name != "MarkdownHeader":
            found.append({"level": int(name[-1]), "text": text(getattr(block, "_text", None) or block.render())})
    return found


def _markdown(w):
    source = _get(w, "source", "_markdown")
    state = {"source_length": len(source or "")}
    headings = _headings(w)
    state["heading_count"] = len(headings)
    state["headings"] = headings[:HEADINGS]
    return state


def _markdown_viewer(w):
    document = getattr(w, "document", None)
    return _markdown(document) if document is not None else {}


def _markup_text(markup):
    """The plain text of console markup ("[b]ARMED[/b]" is "ARMED")."""
    try:
        from textual.content import Content

        return Content.from_markup(markup).plain
    except Exception:
        pass
    try:
        from rich.text import Text

        return Text.from_markup(markup).plain
    except Exception:
        return markup


def _toast(w):
    notification = _get(w, "_notification")
    message = text(notification.message)
    if getattr(notification, "markup", True) and isinstance(message, str):
        message = _markup_text(message)
    return {
        "message": message,
        "title": text(notification.title) or None,
        "severity": notification.severity,
    }


def _loading_indicator(w):
    # Textual covers a widget whose `loading` is set with an indicator whose parent is that widget.
    parent = w.parent
    covering = parent is not None and getattr(parent, "_cover_widget", None) is w
    return {"covering": _name(parent) if covering else None}


def _sparkline(w):
    data = _get(w, "data")
    return {"data_count": len(data) if data is not None else 0}


def _placeholder(w):
    return {"variant": str(w.variant)}


def _link(w):
    return {"text": text(_get(w, "text")), "url": _get(w, "url")}


def _static(w):
    return {"content": text(_get(w, "content", "renderable"))}


def _name(widget):
    name = type(widget).__name__
    return f"{name}#{widget.id}" if widget.id else name


# (class name anywhere in the widget's hierarchy, reader), in order: later readers add to earlier ones.
READERS = [
    ("Input", _input),
    ("TextArea", _text_area),
    ("Button", _button),
    ("ToggleButton", _toggle),
    ("Switch", _switch),
    ("RadioSet", _radio_set),
    ("Select", _select),
    ("DataTable", _data_table),
    ("ListView", _list_view),
    ("OptionList", _option_list),
    ("SelectionList", _selection_list),
    ("ProgressBar", _progress_bar),
    ("Tabs", _tabs),
    ("TabbedContent", _tabs),
    ("Tree", _tree),
    ("DirectoryTree", _directory_tree),
    ("Digits", _digits),
    ("ContentSwitcher", _content_switcher),
    ("Collapsible", _collapsible),
    ("Log", _log),
    ("RichLog", _rich_log),
    ("Markdown", _markdown),
    ("MarkdownViewer", _markdown_viewer),
    ("Toast", _toast),
    ("LoadingIndicator", _loading_indicator),
    ("Sparkline", _sparkline),
    ("Placeholder", _placeholder),
    ("Link", _link),
]

# Widgets that are Statics underneath but whose content is what their own reader says.
_NOT_CONTENT = {"Button", "Toast", "Link", "Digits", "Placeholder"}


def state(widget):
    """The widget's own state, by what it is."""
    kinds = {cls.__name__ for cls in type(widget).__mro__}
    found = {}
    for kind, reader in READERS:
        if kind in kinds:
            try:
                found.update(reader(widget))
            except Exception:
                pass
    if "Static" in kinds and not kinds & _NOT_CONTENT and "content" not in found:
        try:
            found.update(_static(widget))
        except Exception:
            pass
    try:
        if widget.loading:
            found["loading"] = True
    except Exception:
        pass
    return found
