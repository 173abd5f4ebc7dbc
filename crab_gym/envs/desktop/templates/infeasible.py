"""Infeasible templates: tasks that cannot be done as asked.

The agent must call ``declare_infeasible`` with a reason that names what is missing (the
file, folder, setting or program); the first sub-goal checks that declaration, the next one
that nothing was broken on the way. A random agent that declares without naming the cause
scores 0. The scripted solution looks, then declares.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.desktop.taskdata import call
from crab_gym.envs.desktop.templates.base import MOUSEPAD_VIEW, Draw, run, template, terminal, write

T = ("terminal",)


def _declare(mentions: list[str], intact: dict[str, Any]) -> dict[str, Any]:
    return {"checks": {"declared_with_cause": call("declared_infeasible", mentions=mentions), "intact": intact},
            "edges": [("declared_with_cause", "intact")]}


def _say(reason: str) -> dict[str, Any]:
    return call("declare_infeasible", reason=reason)


@template("rename_missing_file", "rename a file that does not exist", apps=T, params=("missing file", "files there"),
          infeasible=True, tags=("files", "infeasible"))
def rename_missing_file(d: Draw) -> dict[str, Any]:
    present = d.files(3, "txt")
    missing, new = d.files(5, "txt")[3:]
    while missing in present:
        missing = d.file("txt")
    return {
        "description": f"In {{workdir}}, rename the file {missing} to {new}. If that cannot be done, say so "
                       "with declare_infeasible and name what is missing.",
        "setup": [*(write(p, p + "\n") for p in present), terminal()],
        **_declare([missing], call("dir_listing_equals", path=".", names=present)),
        "solution": [*run("ls"), _say(f"there is no file {missing} in the work directory")],
    }


@template("delete_missing_folder", "delete a folder that does not exist", apps=T, params=("missing folder",),
          infeasible=True, tags=("directories", "infeasible"))
def delete_missing_folder(d: Draw) -> dict[str, Any]:
    present = d.words(3)
    missing = d.word()
    while missing in present:
        missing = d.word()
    return {
        "description": f"In {{workdir}}, delete the folder {missing} and everything in it. If that cannot be "
                       "done, say so with declare_infeasible and name what is missing.",
        "setup": [*(write(f"{p}/a.txt", "a\n") for p in present), terminal()],
        **_declare([missing], call("dir_listing_equals", path=".", names=present)),
        "solution": [*run("ls"), _say(f"the folder {missing} does not exist")],
    }


@template("unknown_setting", "change an editor setting that does not exist", apps=("terminal", "settings"),
          params=("missing key",), infeasible=True, tags=("settings", "infeasible"))
def unknown_setting(d: Draw) -> dict[str, Any]:
    key = d.pick(("show-minimap", "spell-check", "auto-save-remote", "dark-mode", "show-ruler", "vim-mode"))
    return {
        "description": f"Turn on the text editor Mousepad's setting {key} (GSettings schema {MOUSEPAD_VIEW}). "
                       "If that cannot be done, say so with declare_infeasible and name what is missing.",
        "setup": [terminal()],
        **_declare([key], call("setting_equals", schema_id=MOUSEPAD_VIEW, key="show-line-numbers", value="false")),
        "solution": [*run(f"gsettings list-keys {MOUSEPAD_VIEW}"), _say(f"the key {key} does not exist")],
    }


@template("setting_out_of_range", "set the tab width beyond its allowed range", apps=("terminal", "settings"),
          params=("tab width",), infeasible=True, tags=("settings", "infeasible"))
def setting_out_of_range(d: Draw) -> dict[str, Any]:
    width = d.int(33, 200)
    return {
        "description": f"Set the text editor Mousepad's tab-width to {width} (GSettings schema {MOUSEPAD_VIEW}). "
                       "If that cannot be done, say so with declare_infeasible and name the setting.",
        "setup": [terminal()],
        **_declare(["tab-width"], call("setting_equals", schema_id=MOUSEPAD_VIEW, key="tab-width", value="uint32 8")),
        "solution": [*run(f"gsettings range {MOUSEPAD_VIEW} tab-width"),
                     _say(f"tab-width only accepts 1 to 32, not {width}")],
    }


@template("open_missing_app", "open an application that is not installed", apps=T, params=("application",),
          infeasible=True, tags=("apps", "infeasible"))
def open_missing_app(d: Draw) -> dict[str, Any]:
    app = d.pick(("photoshop", "excel", "keynote", "finalcutpro", "outlook", "visio"))
    return {
        "description": f"Open the application {app} on this desktop. If that cannot be done, say so with "
                       "declare_infeasible and name what is missing.",
        "setup": [terminal()],
        **_declare([app], call("window_count_is", app="terminal", count=1)),
        "solution": [*run(f"command -v {app}"), _say(f"{app} is not installed")],
    }


@template("paste_empty_clipboard", "save the clipboard into a file when the clipboard is empty",
          apps=("terminal", "clipboard"), params=("file",), infeasible=True, tags=("clipboard", "infeasible"))
def paste_empty_clipboard(d: Draw) -> dict[str, Any]:
    name = d.file("txt")
    return {
        "description": f"Save the text on the clipboard into {{workdir}}/{name}. If that cannot be done, say so "
                       "with declare_infeasible and name what is missing.",
        "setup": [terminal()],
        **_declare(["clipboard"], call("path_missing", path=name)),
        "solution": [*run("xclip -selection clipboard -o"), _say("the clipboard is empty")],
    }


@template("missing_line", "copy a line beyond a file's end", apps=T, params=("file", "lines", "line number"),
          infeasible=True, tags=("files", "infeasible"))
def missing_line(d: Draw) -> dict[str, Any]:
    name, n = d.file("txt"), d.int(3, 6)
    k = n + d.int(2, 9)
    text = "".join(f"line {i}\n" for i in range(1, n + 1))
    return {
        "description": f"Write line {k} of {{workdir}}/{name} into {{workdir}}/line.txt. If that cannot be done, "
                       "say so with declare_infeasible and name the line number.",
        "setup": [write(name, text), terminal()],
        **_declare([f"line {k}"], call("path_missing", path="line.txt")),
        "solution": [*run(f"wc -l {name}"), _say(f"{name} has only {n} lines, there is no line {k}")],
    }
