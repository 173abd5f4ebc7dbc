"""Templates over the X clipboard (the CLIPBOARD selection), with xclip in the terminal."""

from __future__ import annotations

from typing import Any

from crab_gym.envs.desktop.taskdata import call
from crab_gym.envs.desktop.templates.base import DONE, Draw, run, template, terminal, text_of, write

T = ("terminal", "clipboard")
XCLIP_IN = "xclip -selection clipboard"
XCLIP_OUT = "xclip -selection clipboard -o"


@template("copy_file_to_clipboard", "put a file's text on the clipboard", apps=T, params=("file", "text"),
          tags=("clipboard",))
def copy_file_to_clipboard(d: Draw) -> dict[str, Any]:
    name, text = d.file("txt"), d.sentence(5)
    return {
        "description": f"Copy the text of {{workdir}}/{name} to the clipboard (xclip is installed).",
        "setup": [write(name, text + "\n"), terminal()],
        "checks": {"clipboard": call("clipboard_equals", text=text)}, "edges": [],
        "solution": [*run(f"{XCLIP_IN} < {name}"), DONE],
    }


@template("paste_clipboard_to_file", "save the clipboard's text into a file", apps=T, params=("text", "file"),
          tags=("clipboard", "files"))
def paste_clipboard_to_file(d: Draw) -> dict[str, Any]:
    name, text = d.file("txt"), d.sentence(5)
    return {
        "description": f"The clipboard holds a line of text. Save it into a new file {{workdir}}/{name}.",
        "setup": [call("set_clipboard", text=text), terminal()],
        "checks": {"file_created": call("file_exists", path=name),
                   "content": call("file_text_equals", path=name, text=text)},
        "edges": [("file_created", "content")],
        "solution": [*run(f"{XCLIP_OUT} > {name}"), DONE],
    }


@template("copy_line_to_clipboard", "put one line of a file on the clipboard", apps=T,
          params=("file", "lines", "line number"), tags=("clipboard", "files"))
def copy_line_to_clipboard(d: Draw) -> dict[str, Any]:
    name, lines = d.file("txt"), d.lines(6)
    k = d.int(1, 6)
    return {
        "description": f"Copy line {k} of {{workdir}}/{name} (only that line) to the clipboard.",
        "setup": [write(name, text_of(lines)), terminal()],
        "checks": {"clipboard": call("clipboard_equals", text=lines[k - 1])}, "edges": [],
        "solution": [*run(f"sed -n {k}p {name} | {XCLIP_IN}"), DONE],
    }


@template("clipboard_uppercase", "replace the clipboard's text by its upper-case form", apps=T,
          params=("text",), tags=("clipboard",))
def clipboard_uppercase(d: Draw) -> dict[str, Any]:
    text = d.sentence(4)
    return {
        "description": "Replace the text on the clipboard by the same text in upper-case letters.",
        "setup": [call("set_clipboard", text=text), terminal()],
        "checks": {"clipboard": call("clipboard_equals", text=text.upper())}, "edges": [],
        "solution": [*run(f"{XCLIP_OUT} | tr a-z A-Z | {XCLIP_IN}"), DONE],
    }


@template("clipboard_to_two_files", "save the clipboard into one file, then a file's text onto the clipboard",
          apps=T, params=("clipboard text", "file", "output file"), tags=("clipboard", "files", "multi-step"))
def clipboard_to_two_files(d: Draw) -> dict[str, Any]:
    out, src = d.files(2, "txt")
    first, second = d.sentence(3), d.sentence(3)
    return {
        "description": f"Save the text now on the clipboard into {{workdir}}/{out}; then put the text of "
                       f"{{workdir}}/{src} on the clipboard.",
        "setup": [call("set_clipboard", text=first), write(src, second + "\n"), terminal()],
        "checks": {"saved": call("file_text_equals", path=out, text=first),
                   "clipboard": call("clipboard_equals", text=second)},
        "edges": [("saved", "clipboard")],
        "solution": [*run(f"{XCLIP_OUT} > {out}", f"{XCLIP_IN} < {src}"), DONE], "partial": 1,
    }
