"""Templates in the text editor (Mousepad): type, append, replace, prepend, open, two edits.

Checks read the saved file, never the editor's window: a template's sub-goals are a
fragment saved, then the exact content.
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.desktop.taskdata import call
from crab_gym.envs.desktop.templates.base import (
    DONE,
    Draw,
    editor,
    run,
    template,
    terminal,
    text_of,
    type_,
    wait,
    write,
)

E = ("editor",)
SAVE = call("hotkey", keys=["ctrl", "s"])


def _saved(name: str, fragment: str, final: str) -> dict[str, Any]:
    return {"checks": {"fragment_saved": call("file_contains", path=name, text=fragment),
                       "content": call("file_text_equals", path=name, text=final)},
            "edges": [("fragment_saved", "content")]}


@template("editor_write_text", "type text into an empty file in the editor and save", apps=E,
          params=("file", "text"), tags=("files",))
def editor_write_text(d: Draw) -> dict[str, Any]:
    name, text = d.file("txt"), d.sentence(5)
    return {
        "description": f"The editor shows the empty file {{workdir}}/{name}. Type the text '{text}' into it "
                       "and save the file.",
        "setup": [write(name, ""), editor(name)], **_saved(name, text.split()[0], text),
        "solution": [type_(text), SAVE, DONE],
    }


@template("editor_add_last_line", "add a line at the end of a file in the editor and save", apps=E,
          params=("file", "lines", "new line"), tags=("files",))
def editor_append_line(d: Draw) -> dict[str, Any]:
    name, lines, new = d.file("txt"), d.lines(d.int(2, 4)), d.sentence()
    return {
        "description": f"The editor shows {{workdir}}/{name}. Add the line '{new}' at its end and save the file.",
        "setup": [write(name, text_of(lines)), editor(name)], **_saved(name, new, text_of([*lines, new])),
        "solution": [call("hotkey", keys=["ctrl", "end"]), type_(new), SAVE, DONE],
    }


@template("editor_replace_text", "replace a file's whole text in the editor and save", apps=E,
          params=("file", "old text", "new text"), tags=("files",))
def editor_replace_text(d: Draw) -> dict[str, Any]:
    name, old, new = d.file("md"), d.lines(3), d.sentence(4)
    return {
        "description": f"The editor shows {{workdir}}/{name}. Replace all of its text with the single line "
                       f"'{new}' and save the file.",
        "setup": [write(name, text_of(old)), editor(name)], **_saved(name, new, new),
        "solution": [call("hotkey", keys=["ctrl", "a"]), type_(new), SAVE, DONE],
    }


@template("editor_prepend_line", "add a first line to a file in the editor and save", apps=E,
          params=("file", "lines", "heading"), tags=("files",))
def editor_prepend_line(d: Draw) -> dict[str, Any]:
    name, lines, head = d.file("txt"), d.lines(d.int(2, 4)), "# " + d.sentence(2)
    return {
        "description": f"The editor shows {{workdir}}/{name}. Insert the line '{head}' before its first line "
                       "and save the file.",
        "setup": [write(name, text_of(lines)), editor(name)], **_saved(name, head, text_of([head, *lines])),
        "solution": [call("hotkey", keys=["ctrl", "home"]), type_(head + "\n"), SAVE, DONE],
    }


@template("editor_header_footer", "add a first and a last line in the editor, saving after each", apps=E,
          params=("file", "lines", "header", "footer"), tags=("files", "multi-step"))
def editor_header_footer(d: Draw) -> dict[str, Any]:
    name, lines = d.file("txt"), d.lines(2)
    head, foot = "BEGIN " + d.word(), "END " + d.word()
    return {
        "description": f"The editor shows {{workdir}}/{name}. Insert the line '{head}' before its first line, "
                       f"save, then add the line '{foot}' after its last line and save again.",
        "setup": [write(name, text_of(lines)), editor(name)],
        "checks": {"header_saved": call("file_contains", path=name, text=head + "\n"),
                   "footer_saved": call("file_contains", path=name, text=foot),
                   "content": call("file_text_equals", path=name, text=text_of([head, *lines, foot]))},
        "edges": [("header_saved", "footer_saved"), ("footer_saved", "content")],
        "solution": [call("hotkey", keys=["ctrl", "home"]), type_(head + "\n"), SAVE,
                     call("hotkey", keys=["ctrl", "end"]), type_(foot), SAVE, DONE],
        "partial": 3,
    }


@template("editor_open_file", "open a file in the editor from the terminal", apps=("terminal", "editor"),
          params=("file",), tags=("apps", "windows"))
def editor_open_file(d: Draw) -> dict[str, Any]:
    name = d.file("txt")
    return {
        "description": f"Open {{workdir}}/{name} in the text editor Mousepad (its command is mousepad) so that "
                       "its window is in front and focused.",
        "setup": [write(name, d.sentence() + "\n"), terminal()],
        "checks": {"file_open": call("window_open", app="editor", title_contains=name),
                   "editor_focused": call("active_window_is", app="editor", title_contains=name)},
        "edges": [("file_open", "editor_focused")],
        "solution": [*run(f"mousepad {name} &"), wait(1.0), DONE],
    }
