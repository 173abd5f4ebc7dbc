"""Templates over the editor's settings (GSettings, in the env's private settings store).

Checks read ``gsettings get``; solutions use ``gsettings set`` in the terminal (the editor's
Preferences dialog would do as well).
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.desktop.taskdata import call
from crab_gym.envs.desktop.templates.base import DONE, MOUSEPAD_VIEW, MOUSEPAD_WINDOW, Draw, run, template, terminal

T = ("terminal", "settings")
#: Boolean keys of the editor's view settings whose default is false.
VIEW_FLAGS = ("show-line-numbers", "word-wrap", "highlight-current-line", "show-right-margin", "auto-indent",
              "match-braces", "insert-spaces", "show-line-endings")
#: Boolean keys of the editor's window settings whose default is false.
WINDOW_FLAGS = ("statusbar-visible", "toolbar-visible", "always-show-tabs", "cycle-tabs")


def _setting(schema: str, key: str, value: str) -> dict[str, Any]:
    return call("setting_equals", schema_id=schema, key=key, value=value)


def _gset(schema: str, key: str, value: str) -> str:
    return f"gsettings set {schema} {key} {value}"


@template("set_tab_width", "set the editor's tab width", apps=T, params=("tab width",), tags=("settings",))
def set_tab_width(d: Draw) -> dict[str, Any]:
    width = d.pick((2, 3, 4, 6, 10, 12, 16))
    return {
        "description": f"Set the text editor Mousepad's tab width to {width} (GSettings schema {MOUSEPAD_VIEW}, "
                       "key tab-width).",
        "setup": [terminal()],
        "checks": {"tab_width": _setting(MOUSEPAD_VIEW, "tab-width", f"uint32 {width}")}, "edges": [],
        "solution": [*run(_gset(MOUSEPAD_VIEW, "tab-width", str(width))), DONE],
    }


@template("view_options", "turn on two of the editor's view options", apps=T, params=("two option keys",),
          tags=("settings", "multi-step"))
def view_options(d: Draw) -> dict[str, Any]:
    a, b = d.sample(VIEW_FLAGS, 2)
    return {
        "description": f"Turn on the text editor Mousepad's settings {a} and {b} (GSettings schema "
                       f"{MOUSEPAD_VIEW}).",
        "setup": [terminal()],
        "checks": {"first_option": _setting(MOUSEPAD_VIEW, a, "true"),
                   "second_option": _setting(MOUSEPAD_VIEW, b, "true")}, "edges": [],
        "solution": [*run(_gset(MOUSEPAD_VIEW, a, "true"), _gset(MOUSEPAD_VIEW, b, "true")), DONE], "partial": 1,
    }


@template("window_option", "turn on one of the editor's window options", apps=T, params=("option key",),
          tags=("settings",))
def window_option(d: Draw) -> dict[str, Any]:
    key = d.pick(WINDOW_FLAGS)
    return {
        "description": f"Turn on the text editor Mousepad's setting {key} (GSettings schema {MOUSEPAD_WINDOW}).",
        "setup": [terminal()],
        "checks": {"option_on": _setting(MOUSEPAD_WINDOW, key, "true")}, "edges": [],
        "solution": [*run(_gset(MOUSEPAD_WINDOW, key, "true")), DONE],
    }


@template("set_font", "use a given editor font instead of the default one", apps=T, params=("font", "size"),
          tags=("settings", "multi-step"))
def set_font(d: Draw) -> dict[str, Any]:
    font = f"{d.pick(('Monospace', 'DejaVu Sans Mono', 'Liberation Mono', 'Courier'))} {d.int(9, 20)}"
    return {
        "description": f"Make the text editor Mousepad use the font '{font}' instead of the default monospace "
                       f"font (GSettings schema {MOUSEPAD_VIEW}, keys use-default-monospace-font and font-name).",
        "setup": [terminal()],
        "checks": {"default_font_off": _setting(MOUSEPAD_VIEW, "use-default-monospace-font", "false"),
                   "font_set": _setting(MOUSEPAD_VIEW, "font-name", f"'{font}'")},
        "edges": [("default_font_off", "font_set")],
        "solution": [*run(_gset(MOUSEPAD_VIEW, "use-default-monospace-font", "false"),
                          _gset(MOUSEPAD_VIEW, "font-name", f'"{font}"')), DONE],
        "partial": 1,
    }


@template("right_margin", "show the right margin at a given column", apps=T, params=("column",),
          tags=("settings", "multi-step"))
def right_margin(d: Draw) -> dict[str, Any]:
    column = d.pick((60, 72, 79, 100, 110, 120))
    return {
        "description": f"Make the text editor Mousepad show its right margin at column {column} (GSettings schema "
                       f"{MOUSEPAD_VIEW}, keys show-right-margin and right-margin-position).",
        "setup": [terminal()],
        "checks": {"margin_shown": _setting(MOUSEPAD_VIEW, "show-right-margin", "true"),
                   "margin_column": _setting(MOUSEPAD_VIEW, "right-margin-position", f"uint32 {column}")},
        "edges": [("margin_shown", "margin_column")],
        "solution": [*run(_gset(MOUSEPAD_VIEW, "show-right-margin", "true"),
                          _gset(MOUSEPAD_VIEW, "right-margin-position", str(column))), DONE],
        "partial": 1,
    }


@template("indent_profile", "set up indentation: spaces, a width, auto-indent", apps=T, params=("indent width",),
          tags=("settings", "multi-step"))
def indent_profile(d: Draw) -> dict[str, Any]:
    width = d.pick((2, 3, 4, 6))
    return {
        "description": f"Set up the text editor Mousepad for indenting with spaces: insert-spaces on, tab-width "
                       f"{width} and auto-indent on (GSettings schema {MOUSEPAD_VIEW}).",
        "setup": [terminal()],
        "checks": {"spaces": _setting(MOUSEPAD_VIEW, "insert-spaces", "true"),
                   "width": _setting(MOUSEPAD_VIEW, "tab-width", f"uint32 {width}"),
                   "auto_indent": _setting(MOUSEPAD_VIEW, "auto-indent", "true")},
        "edges": [("spaces", "width"), ("spaces", "auto_indent")],
        "solution": [*run(_gset(MOUSEPAD_VIEW, "insert-spaces", "true"),
                          f"{_gset(MOUSEPAD_VIEW, 'tab-width', str(width))}; "
                          f"{_gset(MOUSEPAD_VIEW, 'auto-indent', 'true')}"), DONE],
        "partial": 1,
    }
