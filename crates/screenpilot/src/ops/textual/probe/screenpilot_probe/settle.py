"""Waiting until the app has settled: every input handled, every message processed, short timers fired,
animations and scrolls finished, the layout at the terminal's size, the screen repainted, and that
paint drawn by the terminal. What the terminal then shows is what a person sees once the app is idle.

Event-driven throughout: terminal round trips (see driver.py) fence input and output, and Textual's own
callbacks, timer tasks and animator events say when work is done. The only clock is the caller's limit.

Work comes in two kinds. Finite work ends: queued messages, callbacks waiting for a refresh, one-shot
timers due soon (a Button's pressed look, the Tabs underline, the resize debounce), animations (a
scroll to the focused widget). A settle waits for all of it, round after round, since one piece often
schedules the next (a timer calls back after a refresh, which starts an animation). Endless work never
ends: repeating timers (a blinking cursor, a clock, a spinner), a one-shot timer that sets itself
again, an animation that starts itself again (a pulse). Each round waits for the timers and animations
pending, then for a refresh; what comes back within one settle is waited for once (an animation twice)
and then counted as endless. When only messages, a layout or a repaint are left, three rounds in a row,
that is the app's own activity, and the settle ends.

Textual's internals are read defensively (``getattr`` with defaults): a version that renames one
degrades to a shorter wait, never to an error.
"""

import asyncio
import functools
import time

# One-shot timers due within this many seconds of being set are awaited (a Button's pressed look
# lasts 0.2 s, and a click during it is ignored); longer ones (notifications, app logic) are the
# app's business.
SHORT_TIMER = 1.0
MAX_ROUNDS = 50
# An animation started again in this many rounds of one settle is endless (a pulse), not a transition.
ANIMATION_REPEATS = 2
# Finite work that a round waits for; anything else still pending after CHURN_ROUNDS rounds in a row
# (messages, a layout, a repaint) is the app's own endless activity.
WAITED_FOR = ("timers", "animations", "resize")
CHURN_ROUNDS = 3


def _pumps(app):
    try:
        screen = app.screen
    except Exception:
        return [app]
    return [app, *screen.walk_children(with_self=True)]


def _queued(app):
    """Messages or callbacks waiting in any message pump of the app and its active screen."""
    for pump in _pumps(app):
        queue = getattr(pump, "_message_queue", None)
        if queue is not None and not queue.empty():
            return True
        if getattr(pump, "_next_callbacks", None):
            return True
    return False


def _same_callback(a, b):
    """Do two timer callbacks call the same thing? Textual wraps each in a new ``partial`` (of
    ``call_next``), so partials compare by what they hold; anything else by equality (bound methods
    of one object's one method are equal)."""
    if isinstance(a, functools.partial) and isinstance(b, functools.partial):
        return (
            _same_callback(a.func, b.func)
            and len(a.args) == len(b.args)
            and all(_same_callback(x, y) for x, y in zip(a.args, b.args))
            and a.keywords == b.keywords
        )
    try:
        return bool(a == b)
    except Exception:
        return a is b


class _Recurring:
    """What keeps coming back within one settle is endless work too: a one-shot timer that sets itself
    again (a clock ticking by one-shot timers) is waited for once, an animation started again and again
    (a pulse) a few times; after that they are left running, like a repeating timer."""

    def __init__(self):
        self.timer_callbacks = []  # a list: bound methods are equal, not identical, each time
        self.animation_rounds = {}

    def timer_seen(self, callback):
        return callback is not None and any(_same_callback(callback, seen) for seen in self.timer_callbacks)

    def endless_animation(self, key):
        return self.animation_rounds.get(key, 0) >= ANIMATION_REPEATS


def _short_timers(app, recurring=None):
    """(task, callback) of one-shot timers that fire soon (private Textual API; none found if it
    changes), less those ``recurring`` has already seen.

    A tooltip timer counts only when its widget has a tooltip to show.
    """
    tasks = []
    try:
        screen = app.screen
        tooltip_widget = getattr(screen, "_tooltip_widget", None)
    except Exception:
        tooltip_widget = None
    for pump in _pumps(app):
        for timer in list(getattr(pump, "_timers", ())):
            try:
                task = timer._task
                one_shot = timer._repeat == 0
                running = timer._active.is_set()
                short = timer._interval <= SHORT_TIMER
                name = timer.name
                callback = getattr(timer, "_callback", None)
            except AttributeError:
                continue
            if task is None or task.done() or not (one_shot and running and short):
                continue
            if name == "tooltip-timer" and getattr(tooltip_widget, "tooltip", None) is None:
                continue
            if recurring is not None and recurring.timer_seen(callback):
                continue
            tasks.append((task, callback))
    return tasks


def _animation_keys(app):
    """The animations running or scheduled, by (object id, attribute)."""
    animator = getattr(app, "animator", None)
    if animator is None:
        return []
    return [*(getattr(animator, "_animations", None) or ()), *(getattr(animator, "_scheduled", None) or ())]


def _animating(app, recurring):
    return any(not recurring.endless_animation(key) for key in _animation_keys(app))


def _laid_out_at(app, size):
    """Has the app taken the terminal's new size all the way down to its screen's layout? Textual 8
    applies a resize after a short debounce timer, so the app's size changes before its screen's."""
    if size is None:
        return True
    size = tuple(size)
    if tuple(app.size) != size or getattr(app, "_resize_event", None) is not None:
        return False
    try:
        screen = app.screen
    except Exception:
        return True
    compositor = getattr(screen, "_compositor", None)
    laid_out = getattr(compositor, "size", None)
    if laid_out is None:
        laid_out = getattr(screen, "outer_size", screen.size)
    return tuple(laid_out) == size


def _layout_pending(app):
    """A layout, scroll or recompose that the screen has yet to do."""
    try:
        screen = app.screen
    except Exception:
        return False
    if getattr(screen, "_callbacks", None):
        return True  # callbacks waiting for the next refresh
    return bool(
        getattr(screen, "_layout_required", False)
        or getattr(screen, "_scroll_required", False)
        or getattr(screen, "_recompose_required", False)
    )


def _paint_pending(app):
    try:
        screen = app.screen
    except Exception:
        return False
    return bool(getattr(screen, "_repaint_required", False) or getattr(screen, "_dirty_widgets", None))


def _finite_work(app, size, recurring):
    """What finite work is still to do, by name, or None."""
    if _queued(app):
        return "messages"
    if _short_timers(app, recurring):
        return "timers"
    if _animating(app, recurring):
        return "animations"
    if not _laid_out_at(app, size):
        return "resize"
    if _layout_pending(app):
        return "layout"
    return None


async def _drain(app):
    """Let every message pump on the screen process what is queued now (as Textual's Pilot does)."""
    remaining = 0
    done = asyncio.Event()

    def finished():
        nonlocal remaining
        remaining -= 1
        if remaining == 0:
            done.set()

    for pump in _pumps(app):
        if pump.call_later(finished):
            remaining += 1
    if remaining:
        await done.wait()


async def _refreshed(app):
    """Wait for the active screen's next refresh (it comes at once when nothing is dirty)."""
    try:
        screen = app.screen
    except Exception:
        return
    done = asyncio.Event()
    if screen.call_after_refresh(done.set) is False:
        return
    await done.wait()


def _animator_frames(app):
    """An event set after every frame of the app's animator, or None where its internals differ. The
    animator's own timer drives it; the callback it calls each frame is wrapped, once per app."""
    animator = getattr(app, "animator", None)
    frames = getattr(animator, "_screenpilot_frames", None)
    if frames is not None:
        return frames
    timer = getattr(animator, "_timer", None)
    callback = getattr(timer, "_callback", None)
    if callback is None:
        return None
    frames = asyncio.Event()

    def frame():
        try:
            return callback()
        finally:
            frames.set()

    timer._callback = frame
    animator._screenpilot_frames = frames
    return frames


async def _animations_done(app, recurring):
    """Wait until each animation running now has ended (or been replaced), frame by frame of the
    animator. Not until the animator is idle: an endless one (a pulse that starts itself again) would
    keep it busy for ever."""
    animator = getattr(app, "animator", None)
    running = dict(getattr(animator, "_animations", None) or {})
    waiting = {key: animation for key, animation in running.items() if not recurring.endless_animation(key)}
    if not waiting:
        return
    for key in waiting:
        recurring.animation_rounds[key] = recurring.animation_rounds.get(key, 0) + 1
    frames = _animator_frames(app)
    if frames is None:
        await animator.wait_for_idle()
        return
    while any(animator._animations.get(key) is animation for key, animation in waiting.items()):
        frames.clear()
        await frames.wait()


async def _round(app, recurring):
    """Do one round of waiting: queued messages, then timers due soon, then animations, then a refresh.
    Returns how many timers it waited for."""
    await _drain(app)
    pending = _short_timers(app, recurring)
    if pending:
        recurring.timer_callbacks.extend(callback for _, callback in pending if callback is not None)
        await asyncio.wait([task for task, _ in pending], timeout=SHORT_TIMER)
    await _animations_done(app, recurring)
    await _refreshed(app)
    return len(pending)


async def settle(app, limit=10.0, size=None, paint=True):
    """Settle fully, or with ``paint=False`` only until the input is handled (between keys of one press,
    so a key bound at the app level is handled before the next key is typed, as Textual's Pilot does).
    With ``size``, also until the app and its screen's layout have that size."""
    started = time.monotonic()
    driver = app._driver
    result = {"settled": False, "rounds": 0, "timers": 0}
    recurring = _Recurring()

    async def work():
        await driver.round_trip()  # all input sent so far is queued in the app
        if not paint:
            for rounds in range(1, MAX_ROUNDS + 1):
                result["rounds"] = rounds
                await _drain(app)
                if not _queued(app):
                    break
            result["settled"] = True
            return
        churn = 0
        for rounds in range(1, MAX_ROUNDS + 1):
            result["rounds"] = rounds
            result["timers"] += await _round(app, recurring)
            busy = _finite_work(app, size, recurring)
            if busy in WAITED_FOR:
                churn = 0
                result["busy"] = busy
                continue
            if busy is None and not _paint_pending(app):
                break
            # Only messages, a layout or a repaint, right after a round that handled all there was:
            # a few rounds of that and it is the app's own endless activity (a clock, a spinner).
            churn += 1
            if churn >= CHURN_ROUNDS:
                break
        else:
            result["reason"] = f"the app was still busy ({result.get('busy', 'repainting')}) after {MAX_ROUNDS} rounds"
            await driver.round_trip()
            return
        result.pop("busy", None)
        await driver.round_trip()  # all output written so far is on the terminal's screen
        result["settled"] = True

    try:
        await asyncio.wait_for(work(), timeout=limit)
    except asyncio.TimeoutError:
        busy = _finite_work(app, size, recurring) or "repainting"
        result["reason"] = f"the app was still busy ({busy}) after {limit:.1f} s"
    result["pending_timers"] = len(_short_timers(app))
    result["waited_ms"] = round((time.monotonic() - started) * 1000, 1)
    result["size"] = list(app.size)
    return result
