"""Templates over windows: focus, close, move, resize, maximise, tile, title, a new terminal.

The window layout is drawn from the seed; checks read the window manager's list (titles,
focus, geometry), never pixels. Solutions use the mouse or window tools from the terminal
(``wmctrl``, ``xdotool``, which the desktop has anyway).
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.desktop.taskdata import call
from crab_gym.envs.desktop.templates.base import DONE, Draw, editor, run, template, terminal, type_, wait

TE = ("terminal", "editor")
#: Screen size into shell variables, so solutions work at any resolution.
SCREEN = 'read W H <<< "$(xdotool getdisplaygeometry)"'


def _layout(d: Draw) -> tuple[dict[str, float], dict[str, float]]:
    """A terminal at the top left and an editor at the bottom right that overlap a little."""
    tw, th = d.pick((0.45, 0.5, 0.55, 0.6)), d.pick((0.5, 0.55, 0.6, 0.65))
    ex, ey = round(tw - d.pick((0.05, 0.1)), 2), round(th - d.pick((0.15, 0.2, 0.25)), 2)
    return ({"x": 0.0, "y": 0.0, "width": tw, "height": th},
            {"x": ex, "y": ey, "width": round(1 - ex, 2), "height": round(1 - ey, 2)})


def _visible_point(app: str, term: dict[str, float], edit: dict[str, float]) -> dict[str, float]:
    """A point of ``app``'s window that the other window does not cover."""
    if app == "terminal":
        return {"x": round(edit["x"] / 2, 3), "y": round((0.06 + edit["y"]) / 2, 3)}
    return {"x": round((term["width"] + 1) / 2, 3), "y": round((edit["y"] + 1.06) / 2, 3)}


def _open_both(d: Draw, last: str) -> tuple[list, dict, dict]:
    term, edit = _layout(d)
    steps = {"terminal": terminal(**term), "editor": editor(**edit)}
    first = "editor" if last == "terminal" else "terminal"
    return [steps[first], steps[last]], term, edit


def _covered(d: Draw, target: str) -> tuple[list, dict[str, float]]:
    """Setup: a small ``target`` window, then the other app's window over all of it but a
    narrow strip (so a random click seldom finds it); the point of that strip to click."""
    other = "editor" if target == "terminal" else "terminal"
    rect = {"x": d.pick((0.1, 0.15, 0.2, 0.5, 0.55, 0.6)), "y": d.pick((0.15, 0.25, 0.35, 0.45)),
            "width": 0.3, "height": 0.35}
    strip = 0.06
    if rect["x"] < 0.5:  # the strip is the target's left edge
        cover = {"x": rect["x"] + strip, "y": 0.0, "width": round(1 - rect["x"] - strip, 2), "height": 1.0}
        point_x = rect["x"] + strip / 2
    else:  # its right edge
        cover = {"x": 0.0, "y": 0.0, "width": round(rect["x"] + rect["width"] - strip, 2), "height": 1.0}
        point_x = rect["x"] + rect["width"] - strip / 2
    launch = {"terminal": terminal, "editor": editor}
    point = {"x": round(point_x, 3), "y": round(rect["y"] + rect["height"] / 2, 3)}
    return [launch[target](**rect), launch[other](**cover)], point


@template("focus_window", "bring a mostly covered window to the front with the mouse", apps=TE,
          params=("which window", "window layout"), tags=("windows", "mouse"))
def focus_window(d: Draw) -> dict[str, Any]:
    target = d.pick(TE)
    other = "editor" if target == "terminal" else "terminal"
    setup, point = _covered(d, target)
    return {
        "description": f"Two windows are open and the {other} has the focus. Bring the {target} window (the "
                       f"small one behind it) to the front and give it the keyboard focus; keep the {other} open.",
        "setup": setup,
        "checks": {"target_focused": call("active_window_is", app=target),
                   "other_still_open": call("window_open", app=other)},
        "edges": [("target_focused", "other_still_open")],
        "solution": [call("click", **point), wait(0.2), DONE],
    }


@template("close_window", "close one of two windows, keep the other", apps=TE,
          params=("which window", "window layout"), tags=("windows", "apps"))
def close_window(d: Draw) -> dict[str, Any]:
    target = d.pick(TE)
    other = "editor" if target == "terminal" else "terminal"
    setup, term, edit = _open_both(d, other)
    close = type_("exit\n") if target == "terminal" else call("hotkey", keys=["ctrl", "q"])
    return {
        "description": f"Close the {target} window (nothing needs saving) and leave the {other} open.",
        "setup": setup,
        "checks": {"target_closed": call("app_closed", app=target),
                   "other_still_open": call("window_open", app=other)},
        "edges": [("target_closed", "other_still_open")],
        "solution": [call("click", **_visible_point(target, term, edit)), wait(0.2), close, wait(0.3), DONE],
    }


_CORNERS = {"top-left": ((0.0, 0.0, 0.45, 0.45), "0", "0"),
            "top-right": ((0.55, 0.0, 1.0, 0.45), "$((W*6/10))", "0"),
            "bottom-left": ((0.0, 0.55, 0.45, 1.0), "0", "$((H*6/10))"),
            "bottom-right": ((0.55, 0.55, 1.0, 1.0), "$((W*6/10))", "$((H*6/10))")}


@template("move_window", "move the terminal window into a corner of the screen", apps=("terminal",),
          params=("corner",), tags=("windows",))
def move_window(d: Draw) -> dict[str, Any]:
    corner = d.pick(tuple(_CORNERS))
    (left, top, right, bottom), x, y = _CORNERS[corner]
    return {
        "description": f"Move the terminal window into the {corner} quarter of the screen (its centre must lie "
                       "there); keep its size.",
        "setup": [terminal(x=0.3, y=0.3, width=0.4, height=0.4)],
        "checks": {"in_corner": call("window_in_region", app="terminal", left=left, top=top, right=right,
                                     bottom=bottom),
                   "size_kept": call("window_size_near", app="terminal", width=0.4, height=0.4)},
        "edges": [("in_corner", "size_kept")],
        "solution": [*run(f"{SCREEN}; wmctrl -r :ACTIVE: -e 0,{x},{y},-1,-1"), DONE],
    }


@template("resize_window", "resize the terminal window to a share of the screen", apps=("terminal",),
          params=("width", "height"), tags=("windows",))
def resize_window(d: Draw) -> dict[str, Any]:
    w, h = d.pick((30, 40, 70, 80, 90)), d.pick((30, 40, 75, 85, 95))
    return {
        "description": f"Resize the terminal window to {w}% of the screen's width and {h}% of its height.",
        "setup": [terminal()],
        "checks": {"resized": call("window_size_near", app="terminal", width=w / 100, height=h / 100,
                                   tolerance=0.05)},
        "edges": [],
        "solution": [*run(f"{SCREEN}; wmctrl -r :ACTIVE: -e 0,-1,-1,$((W*{w}/100)),$((H*{h}/100))"), DONE],
    }


@template("maximize_window", "maximise a window", apps=TE, params=("which window", "window layout"),
          tags=("windows",))
def maximize_window(d: Draw) -> dict[str, Any]:
    target = d.pick(TE)
    setup, _, _ = _open_both(d, "terminal")
    who = ":ACTIVE:" if target == "terminal" else "mousepad -x"
    return {
        "description": f"Maximise the {target} window so that it fills the screen; keep both windows open.",
        "setup": setup,
        "checks": {"maximised": call("window_size_near", app=target, width=1.0, height=1.0, tolerance=0.1),
                   "both_open": call("window_open", app="editor" if target == "terminal" else "terminal")},
        "edges": [("maximised", "both_open")],
        "solution": [*run(f"wmctrl -r {who} -b add,maximized_vert,maximized_horz"), DONE],
    }


@template("tile_windows", "put two windows side by side, one per half of the screen", apps=TE,
          params=("which side each", "window layout"), tags=("windows", "multi-step"))
def tile_windows(d: Draw) -> dict[str, Any]:
    left = d.pick(TE)
    right = "editor" if left == "terminal" else "terminal"
    setup, _, _ = _open_both(d, "terminal")
    who = {"terminal": ":ACTIVE:", "editor": "mousepad -x"}
    move = {left: "0", right: "$((W/2))"}
    return {
        "description": f"Arrange the windows side by side: the {left} in the left half of the screen and the "
                       f"{right} in the right half, each as wide as half the screen.",
        "setup": setup,
        "checks": {"left_tiled": call("window_rect_near", app=left, x=0.0, y=0.0, width=0.5, height=1.0),
                   "right_tiled": call("window_rect_near", app=right, x=0.5, y=0.0, width=0.5, height=1.0)},
        "edges": [],
        "solution": [*run(*(f"{SCREEN}; wmctrl -r {who[a]} -e 0,{move[a]},0,$((W/2)),$H" for a in (left, right))),
                     DONE],
        "partial": 1,
    }


@template("title_terminal", "set the terminal window's title", apps=("terminal",), params=("title",),
          tags=("windows",))
def terminal_title(d: Draw) -> dict[str, Any]:
    title = f"{d.word()}-{d.int(1, 99)}"
    return {
        "description": f"Change the title of the terminal window to {title} (xterm sets its title from the "
                       "escape sequence ESC ] 0 ; title BEL).",
        "setup": [terminal()],
        "checks": {"title_set": call("window_open", app="terminal", title_contains=title),
                   "terminal_focused": call("active_window_is", app="terminal", title_contains=title)},
        "edges": [("title_set", "terminal_focused")],
        "solution": [*run(f"printf '\\033]0;{title}\\007'"), DONE],
    }


@template("second_terminal", "open a second terminal window with a given title", apps=("terminal",),
          params=("title",), tags=("windows", "apps"))
def second_terminal(d: Draw) -> dict[str, Any]:
    title = d.word()
    return {
        "description": f"Open a second terminal window (xterm) whose title is {title}; keep the first one open.",
        "setup": [terminal()],
        "checks": {"titled_window": call("window_open", app="terminal", title_contains=title),
                   "two_terminals": call("window_count_is", app="terminal", count=2)},
        "edges": [("titled_window", "two_terminals")],
        "solution": [*run(f"xterm -T {title} &"), wait(0.5), DONE],
    }
