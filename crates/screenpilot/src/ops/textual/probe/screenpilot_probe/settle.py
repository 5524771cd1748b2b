"""Waiting until the app has settled: every input handled, every message processed, the screen repainted,
and that paint drawn by the terminal.

Event-driven throughout: terminal round trips (see driver.py) fence input and output, and Textual's own
callbacks say when queues are drained and the screen refreshed. The only clock is the caller's limit.
A focused Input blinks forever, so a quiet screen is not the test; idle queues are.
"""

import asyncio
import time

# One-shot timers due within this many seconds are awaited (a Button's pressed look lasts 0.2 s, and a
# click during it is ignored); longer ones (notifications, app logic) are the app's business.
SHORT_TIMER = 1.0
MAX_ROUNDS = 20


def _pumps(app):
    try:
        screen = app.screen
    except Exception:
        return [app]
    return [app, *screen.walk_children(with_self=True)]


def _busy(app, paint=True):
    """Anything still queued, or (with ``paint``) a repaint pending?"""
    for pump in _pumps(app):
        queue = getattr(pump, "_message_queue", None)
        if queue is not None and not queue.empty():
            return True
    if not paint:
        return False
    try:
        screen = app.screen
    except Exception:
        return False
    return bool(
        getattr(screen, "_layout_required", False)
        or getattr(screen, "_repaint_required", False)
        or getattr(screen, "_dirty_widgets", None)
    )


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


def _short_timers(app):
    """Tasks of one-shot timers that fire soon (private Textual API; none found if it changes).

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
            except AttributeError:
                continue
            if task is None or task.done() or not (one_shot and running and short):
                continue
            if name == "tooltip-timer" and getattr(tooltip_widget, "tooltip", None) is None:
                continue
            tasks.append(task)
    return tasks


async def _round(app, timers):
    await _drain(app)
    pending = _short_timers(app) if timers else []
    if pending:
        await asyncio.wait(pending, timeout=SHORT_TIMER)
    try:
        await app.animator.wait_for_idle()
    except Exception:
        pass
    screen = app.screen
    await screen.wait_for_refresh()
    return len(pending)


async def settle(app, limit=10.0, size=None, paint=True, timers=True):
    """Settle fully, or with ``paint=False`` only until the input is handled (between keys of one press,
    so a key bound at the app level is handled before the next key is typed, as Textual's Pilot does).

    With ``timers=False`` short one-shot timers are not awaited, only counted in ``pending_timers``:
    screenpilot waits for them lazily, before the next input or the final picture, so a pause the
    caller asked for covers them at no extra cost."""
    started = time.monotonic()
    driver = app._driver
    result = {"settled": False, "rounds": 0}

    async def work():
        await driver.round_trip()  # all input sent so far is queued in the app
        if not paint:
            for rounds in range(1, MAX_ROUNDS + 1):
                result["rounds"] = rounds
                await _drain(app)
                if not _busy(app, paint=False):
                    break
            result["settled"] = True
            return
        for rounds in range(1, MAX_ROUNDS + 1):
            result["rounds"] = rounds
            fired = await _round(app, timers)
            size_ok = size is None or tuple(app.size) == tuple(size)
            if not fired and not _busy(app) and size_ok:
                break
        await driver.round_trip()  # all output written so far is on the terminal's screen
        result["settled"] = True

    try:
        await asyncio.wait_for(work(), timeout=limit)
    except asyncio.TimeoutError:
        result["reason"] = f"the app was still busy after {limit:.1f} s"
    result["pending_timers"] = len(_short_timers(app))
    result["waited_ms"] = round((time.monotonic() - started) * 1000, 1)
    result["size"] = list(app.size)
    return result
