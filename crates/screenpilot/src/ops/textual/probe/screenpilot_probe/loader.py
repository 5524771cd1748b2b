"""Finding the app in an app file: a module-level ``app`` instance, or exactly one App subclass."""

import importlib.util
import inspect
import os
import sys
import traceback


class LoadError(Exception):
    """The app file could not give an app; the message says why and what to change."""


def _user_traceback(path):
    """The current exception's traceback from the app file's first frame on: the probe's and
    importlib's frames above it say nothing about the app. A syntax error in the app file itself has no
    frame of its own, so it is the error alone, which quotes the line."""
    error_type, error, tb = sys.exc_info()
    while tb is not None and tb.tb_frame.f_code.co_filename != path:
        tb = tb.tb_next
    if tb is None:
        return "".join(traceback.format_exception_only(error_type, error))
    return "".join(traceback.format_exception(error_type, error, tb))


def load_app(path):
    from textual.app import App

    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise LoadError(f"app: {path} is not a file")
    directory = os.path.dirname(path)
    if directory not in sys.path:
        # Sibling modules of the app import as they would with `python app.py`.
        sys.path.insert(0, directory)
    name = os.path.splitext(os.path.basename(path))[0] or "app"
    # Never "__main__": the file's own `if __name__ == "__main__": app.run()` must not start it.
    module_name = name if name.isidentifier() and name not in sys.modules else "screenpilot_app"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise LoadError(f"app: cannot import {path} (is it a Python file?)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        raise LoadError(f"app: importing {path} failed:\n{_user_traceback(path)}") from None

    instance = getattr(module, "app", None)
    if isinstance(instance, App):
        return instance
    classes = [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, App)
        and value is not App
        and value.__module__ == module_name
    ]
    if not classes:
        raise LoadError(
            f"app: no Textual app found in {path}: define a module-level `app = MyApp()` "
            "or exactly one App subclass"
        )
    if len(classes) > 1:
        names = ", ".join(sorted(cls.__name__ for cls in classes))
        raise LoadError(
            f"app: several App subclasses in {path} ({names}); "
            "add a module-level `app = OneOfThem()` to say which to run"
        )
    try:
        return classes[0]()
    except BaseException:
        raise LoadError(
            f"app: creating {classes[0].__name__}() failed (it must take no arguments, "
            f"or define a module-level `app`):\n{_user_traceback(path)}"
        ) from None
