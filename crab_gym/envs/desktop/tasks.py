"""The fixed desktop tasks (the parameterised ones are in :mod:`.templates`).

Each is plain data in the shape :class:`~crab_gym.envs.desktop.taskdata.DesktopTask`
describes. Screen layout used by the setups: the terminal on the left (x 0..0.55,
y 0..0.6), the editor on the right (x 0.45..1, y 0.3..1), so a part of each is always visible.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from crab_gym.envs.desktop.taskdata import DesktopTask, call

TERMINAL_RECT = {"x": 0.0, "y": 0.0, "width": 0.55, "height": 0.6}
EDITOR_RECT = {"x": 0.45, "y": 0.3, "width": 0.55, "height": 0.7}
MOUSEPAD_VIEW = "org.xfce.mousepad.preferences.view"


def _terminal() -> dict[str, Any]:
    return call("launch_app", app="terminal", **TERMINAL_RECT)


def _editor(file: str = "") -> dict[str, Any]:
    return call("launch_app", app="editor", file=file, **EDITOR_RECT)


def _type(text: str) -> dict[str, Any]:
    return call("write_text", text=text)


def _wait(seconds: float = 0.4) -> dict[str, Any]:
    return call("wait", seconds=seconds)


_DONE = call("complete")

TASK_DATA: tuple[dict[str, Any], ...] = (
    {
        "id": "create_file",
        "description": "Using the terminal, create the file hello.txt in {workdir} whose content "
                       "is the single line: Hello, CRAB!",
        "setup": [_terminal()],
        "checks": {
            "file_created": call("file_exists", path="hello.txt"),
            "content_correct": call("file_text_equals", path="hello.txt", text="Hello, CRAB!\n"),
        },
        "edges": [("file_created", "content_correct")],
        "solution": [_type("touch hello.txt\n"), _wait(), _type("echo 'Hello, CRAB!' > hello.txt\n"), _wait(), _DONE],
        "partial": 2,
        "tags": ["terminal", "files"],
    },
    {
        "id": "make_tree",
        "description": "Using the terminal, create the directory project in {workdir} with three "
                       "sub-directories: src, docs and tests.",
        "setup": [_terminal()],
        "checks": {
            "project": call("dir_exists", path="project"),
            "src": call("dir_exists", path="project/src"),
            "docs": call("dir_exists", path="project/docs"),
            "tests": call("dir_exists", path="project/tests"),
        },
        "edges": [("project", "src"), ("project", "docs"), ("project", "tests")],
        "solution": [_type("mkdir project\n"), _wait(), _type("mkdir project/src project/docs project/tests\n"),
                     _wait(), _DONE],
        "partial": 2,
        "tags": ["terminal", "directories"],
    },
    {
        "id": "archive_text_files",
        "description": "In {workdir}, move every .txt file of the directory inbox into a new "
                       "directory named archive; leave the other files in inbox.",
        "setup": [call("write_file", path="inbox/a.txt", text="alpha\n"),
                  call("write_file", path="inbox/b.txt", text="beta\n"),
                  call("write_file", path="inbox/notes.log", text="keep me\n"),
                  _terminal()],
        "checks": {
            "archive": call("dir_exists", path="archive"),
            "a_archived": call("file_text_equals", path="archive/a.txt", text="alpha\n"),
            "b_archived": call("file_text_equals", path="archive/b.txt", text="beta\n"),
            "a_left_inbox": call("path_missing", path="inbox/a.txt"),
            "b_left_inbox": call("path_missing", path="inbox/b.txt"),
            "log_kept": call("file_text_equals", path="inbox/notes.log", text="keep me\n"),
        },
        "edges": [("archive", "a_archived"), ("archive", "b_archived"), ("a_archived", "a_left_inbox"),
                  ("b_archived", "b_left_inbox"), ("a_left_inbox", "log_kept"), ("b_left_inbox", "log_kept")],
        "solution": [_type("mkdir archive\n"), _wait(), _type("mv inbox/*.txt archive/\n"), _wait(), _DONE],
        "partial": 2,
        "tags": ["terminal", "files", "directories"],
    },
    {
        "id": "rename_file",
        "description": "In {workdir}, rename the file draft.txt to report-final.txt (its content "
                       "must not change).",
        "setup": [call("write_file", path="draft.txt", text="Quarterly report\n"), _terminal()],
        "checks": {
            "renamed": call("file_text_equals", path="report-final.txt", text="Quarterly report\n"),
            "draft_gone": call("path_missing", path="draft.txt"),
        },
        "edges": [("renamed", "draft_gone")],
        "solution": [_type("cp draft.txt report-final.txt\n"), _wait(), _type("rm draft.txt\n"), _wait(), _DONE],
        "partial": 2,
        "tags": ["terminal", "files"],
    },
    {
        "id": "clean_cache",
        "description": "In {workdir}/cache, delete every file ending in .tmp and keep all other files.",
        "setup": [call("write_file", path="cache/1.tmp", text="x\n"),
                  call("write_file", path="cache/2.tmp", text="y\n"),
                  call("write_file", path="cache/keep.txt", text="important\n"),
                  _terminal()],
        "checks": {
            "tmp1_deleted": call("path_missing", path="cache/1.tmp"),
            "tmp2_deleted": call("path_missing", path="cache/2.tmp"),
            "keep_kept": call("file_text_equals", path="cache/keep.txt", text="important\n"),
        },
        "edges": [("tmp1_deleted", "keep_kept"), ("tmp2_deleted", "keep_kept")],
        "solution": [_type("rm cache/1.tmp\n"), _wait(), _type("rm cache/2.tmp\n"), _wait(), _DONE],
        "partial": 2,
        "tags": ["terminal", "files"],
    },
    {
        "id": "backup_config",
        "description": "In {workdir}, copy config.ini to backup/config.ini.bak (create the backup "
                       "directory) and keep the original file.",
        "setup": [call("write_file", path="config.ini", text="[server]\nport = 8080\n"), _terminal()],
        "checks": {
            "backup_dir": call("dir_exists", path="backup"),
            "copied": call("file_text_equals", path="backup/config.ini.bak", text="[server]\nport = 8080\n"),
            "original_kept": call("file_text_equals", path="config.ini", text="[server]\nport = 8080\n"),
        },
        "edges": [("backup_dir", "copied"), ("copied", "original_kept")],
        "solution": [_type("mkdir backup\n"), _wait(), _type("cp config.ini backup/config.ini.bak\n"), _wait(), _DONE],
        "partial": 2,
        "tags": ["terminal", "files"],
    },
    {
        "id": "executable_script",
        "description": "In {workdir}, write a shell script greet.sh that runs the command "
                       "'echo hi', and make it executable.",
        "setup": [_terminal()],
        "checks": {
            "script_created": call("file_exists", path="greet.sh"),
            "script_body": call("file_contains", path="greet.sh", text="echo hi"),
            "executable": call("file_is_executable", path="greet.sh"),
        },
        "edges": [("script_created", "script_body"), ("script_created", "executable")],
        "solution": [_type("printf '#!/bin/sh\\necho hi\\n' > greet.sh\n"), _wait(),
                     _type("chmod +x greet.sh\n"), _wait(), _DONE],
        "partial": 2,
        "tags": ["terminal", "files", "permissions"],
    },
    {
        "id": "editor_write_note",
        "description": "The editor shows the empty file {workdir}/notes.txt. Type the text "
                       "'Buy milk' into it and save the file.",
        "setup": [call("write_file", path="notes.txt", text=""), _editor("notes.txt")],
        "checks": {
            "edited": call("window_open", app="editor", title_contains="*"),
            "saved": call("file_text_equals", path="notes.txt", text="Buy milk"),
        },
        "edges": [("edited", "saved")],
        "solution": [_type("Buy milk"), _wait(), call("hotkey", keys=["ctrl", "s"]), _wait(0.6), _DONE],
        "partial": 2,
        "tags": ["editor", "files"],
    },
    {
        "id": "editor_append_line",
        "description": "The editor shows {workdir}/todo.txt, a two-line list. Add a third line "
                       "'3. ship it' at its end and save the file.",
        "setup": [call("write_file", path="todo.txt", text="1. write code\n2. test code\n"), _editor("todo.txt")],
        "checks": {
            "edited": call("window_open", app="editor", title_contains="*"),
            "saved": call("file_text_equals", path="todo.txt", text="1. write code\n2. test code\n3. ship it\n"),
        },
        "edges": [("edited", "saved")],
        "solution": [call("hotkey", keys=["ctrl", "end"]), _type("3. ship it"), _wait(),
                     call("hotkey", keys=["ctrl", "s"]), _wait(0.6), _DONE],
        "partial": 3,
        "tags": ["editor", "files"],
    },
    {
        "id": "open_editor",
        "description": "Open the text editor Mousepad (its command is mousepad) so that its "
                       "window is in front and focused.",
        "setup": [_terminal()],
        "checks": {
            "editor_open": call("window_open", app="editor"),
            "editor_focused": call("active_window_is", app="editor"),
        },
        "edges": [("editor_open", "editor_focused")],
        "solution": [_type("mousepad &\n"), _wait(1.5), _DONE],
        "partial": None,
        "tags": ["apps", "windows"],
    },
    {
        "id": "focus_terminal",
        "description": "Two windows are open and the editor has the focus. Bring the terminal "
                       "window to the front and give it the keyboard focus; keep the editor open.",
        "setup": [_terminal(), _editor()],
        "checks": {
            "terminal_focused": call("active_window_is", app="terminal"),
            "editor_still_open": call("window_open", app="editor"),
        },
        "edges": [("terminal_focused", "editor_still_open")],
        "solution": [call("click", x=0.2, y=0.3), _wait(0.3), _DONE],
        "partial": None,
        "tags": ["windows", "mouse"],
    },
    {
        "id": "close_editor",
        "description": "Close the editor window (nothing needs saving) and leave the terminal open.",
        "setup": [_terminal(), _editor()],
        "checks": {
            "editor_closed": call("app_closed", app="editor"),
            "terminal_still_open": call("window_open", app="terminal"),
        },
        "edges": [("editor_closed", "terminal_still_open")],
        "solution": [call("hotkey", keys=["ctrl", "q"]), _wait(0.6), _DONE],
        "partial": None,
        "tags": ["apps", "windows"],
    },
    {
        "id": "terminal_title",
        "description": "Change the title of the terminal window to build-42 (xterm sets its title "
                       "from the escape sequence ESC ] 0 ; title BEL).",
        "setup": [_terminal()],
        "checks": {
            "title_set": call("window_open", app="terminal", title_contains="build-42"),
            "terminal_focused": call("active_window_is", app="terminal", title_contains="build-42"),
        },
        "edges": [("title_set", "terminal_focused")],
        "solution": [_type("printf '\\033]0;build-42\\007'\n"), _wait(), _DONE],
        "partial": None,
        "tags": ["terminal", "windows"],
    },
    {
        "id": "editor_settings",
        "description": "Change the text editor Mousepad's settings so that it shows line numbers "
                       "and wraps long lines (GSettings schema " + MOUSEPAD_VIEW + ", keys "
                       "show-line-numbers and word-wrap).",
        "setup": [_terminal()],
        "checks": {
            "line_numbers": call("setting_equals", schema_id=MOUSEPAD_VIEW, key="show-line-numbers", value="true"),
            "word_wrap": call("setting_equals", schema_id=MOUSEPAD_VIEW, key="word-wrap", value="true"),
        },
        "edges": [],
        "solution": [_type(f"gsettings set {MOUSEPAD_VIEW} show-line-numbers true\n"), _wait(0.6),
                     _type(f"gsettings set {MOUSEPAD_VIEW} word-wrap true\n"), _wait(0.6), _DONE],
        "partial": 2,
        "tags": ["settings", "terminal"],
    },
)


@cache
def _registry() -> dict[str, DesktopTask]:
    tasks = [DesktopTask.from_dict(d) for d in TASK_DATA]
    registry = {t.id: t for t in tasks}
    if len(registry) != len(tasks):
        raise ValueError("desktop task ids must be unique")
    return registry


def fixed_tasks() -> dict[str, DesktopTask]:
    """The fixed tasks by id."""
    return dict(_registry())
