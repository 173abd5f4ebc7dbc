"""Cross-environment templates: two desktops on two private displays, ``pc1`` and ``pc2``,
standing for two machines. Each has its own work directory, windows, settings and clipboard.

The agent's actions name the machine they run on (``pc1__write_text``, ``pc2__click``; CRAB's
``env_name``), the observation holds each machine's screen and windows, and the evaluator
graph checks sub-goals on both. Nothing connects the machines but the agent: what it reads on
one it must type on the other (the scripted solutions know the values from the seed).
"""

from __future__ import annotations

from typing import Any

from crab_gym.envs.desktop.taskdata import ENV_SEPARATOR, call, on
from crab_gym.envs.desktop.templates.base import DONE, MOUSEPAD_VIEW, Draw, template, terminal, text_of, write

PCS = ("pc1", "pc2")
T = ("terminal",)


def _both_terminals() -> list[dict[str, Any]]:
    return [on(pc, terminal()) for pc in PCS]


def run_on(pc: str, *commands: str) -> list[dict[str, Any]]:
    """Solution: type shell commands into ``pc``'s focused terminal."""
    return [call(f"{pc}{ENV_SEPARATOR}write_text", text=c + "\n") for c in commands]


def cross(id: str, summary: str, params: tuple[str, ...], apps: tuple[str, ...] = T, infeasible: bool = False):
    """Register a two-machine template."""
    return template(id, summary, apps=apps, params=params, envs=PCS, infeasible=infeasible, tags=("cross-env",))


@cross("x_copy_file", "copy a file from one machine to the other", ("file", "text", "direction"))
def x_copy_file(d: Draw) -> dict[str, Any]:
    src, dst = d.sample(PCS, 2)
    name, text = d.file("txt"), d.sentence(5)
    return {
        "description": f"Machine {src} has the file {{workdir:{src}}}/{name}. Create the same file, with the same "
                       f"content, in {{workdir:{dst}}} on machine {dst}.",
        "setup": [on(src, write(name, text + "\n")), *_both_terminals()],
        "checks": {"file_on_target": on(dst, call("file_exists", path=name)),
                   "same_content": on(dst, call("file_text_equals", path=name, text=text)),
                   "source_kept": on(src, call("file_text_equals", path=name, text=text))},
        "edges": [("file_on_target", "same_content"), ("same_content", "source_kept")],
        "solution": [*run_on(src, f"cat {name}"), *run_on(dst, f"echo '{text}' > {name}"), DONE],
    }


@cross("x_move_file", "move a file to the other machine (copy, then delete the original)", ("file", "text"))
def x_move_file(d: Draw) -> dict[str, Any]:
    name, text = d.file("md"), d.sentence(4)
    return {
        "description": f"Move {{workdir:pc1}}/{name} from machine pc1 to {{workdir:pc2}} on machine pc2: same "
                       "name and content there, and no copy left on pc1.",
        "setup": [on("pc1", write(name, text + "\n")), *_both_terminals()],
        "checks": {"copied": on("pc2", call("file_text_equals", path=name, text=text)),
                   "removed_from_pc1": on("pc1", call("path_missing", path=name))},
        "edges": [("copied", "removed_from_pc1")],
        "solution": [*run_on("pc2", f"echo '{text}' > {name}"), *run_on("pc1", f"rm {name}"), DONE], "partial": 1,
    }


@cross("x_sync_setting", "give the second machine's editor the first one's tab width", ("tab width",),
       apps=("terminal", "settings"))
def x_sync_setting(d: Draw) -> dict[str, Any]:
    width = d.pick((2, 3, 4, 6, 12))
    return {
        "description": f"Machine pc1's text editor (Mousepad) has a tab width set (GSettings schema {MOUSEPAD_VIEW}, "
                       "key tab-width). Set the same tab width on machine pc2.",
        "setup": [on("pc1", call("set_setting", schema_id=MOUSEPAD_VIEW, key="tab-width", value=str(width))),
                  *_both_terminals()],
        "checks": {"pc2_tab_width": on("pc2", call("setting_equals", schema_id=MOUSEPAD_VIEW, key="tab-width",
                                                   value=f"uint32 {width}"))},
        "edges": [],
        "solution": [*run_on("pc1", f"gsettings get {MOUSEPAD_VIEW} tab-width"),
                     *run_on("pc2", f"gsettings set {MOUSEPAD_VIEW} tab-width {width}"), DONE],
    }


@cross("x_count_report", "count a file's lines on one machine, report it on the other", ("file", "line count"))
def x_count_report(d: Draw) -> dict[str, Any]:
    name, lines = d.file("log"), d.lines(d.int(3, 15))
    return {
        "description": f"Count the lines of {{workdir:pc1}}/{name} on machine pc1 and write the number (just the "
                       "number) into {workdir:pc2}/report.txt on machine pc2.",
        "setup": [on("pc1", write(name, text_of(lines))), *_both_terminals()],
        "checks": {"report_written": on("pc2", call("file_exists", path="report.txt")),
                   "count_correct": on("pc2", call("file_text_equals", path="report.txt", text=str(len(lines))))},
        "edges": [("report_written", "count_correct")],
        "solution": [*run_on("pc1", f"wc -l {name}"), *run_on("pc2", f"echo {len(lines)} > report.txt"), DONE],
    }


@cross("x_same_folder", "create the same folder on both machines", ("folder",))
def x_same_folder(d: Draw) -> dict[str, Any]:
    folder = d.word()
    return {
        "description": f"Create a folder named {folder} in the work directory of both machines, pc1 and pc2.",
        "setup": _both_terminals(),
        "checks": {"on_pc1": on("pc1", call("dir_exists", path=folder)),
                   "on_pc2": on("pc2", call("dir_exists", path=folder))},
        "edges": [],
        "solution": [*run_on("pc1", f"mkdir {folder}"), *run_on("pc2", f"mkdir {folder}"), DONE], "partial": 1,
    }


@cross("x_swap_files", "exchange two files between the machines", ("two files", "texts"))
def x_swap_files(d: Draw) -> dict[str, Any]:
    a, b = d.files(2, "txt")
    ta, tb = d.sentence(3), d.sentence(3)
    return {
        "description": f"Machine pc1 has {a} and machine pc2 has {b}, each in its work directory. Exchange them: "
                       f"afterwards pc1 has only {b} and pc2 only {a}, with their contents unchanged.",
        "setup": [on("pc1", write(a, ta + "\n")), on("pc2", write(b, tb + "\n")), *_both_terminals()],
        "checks": {"b_on_pc1": on("pc1", call("file_text_equals", path=b, text=tb)),
                   "a_on_pc2": on("pc2", call("file_text_equals", path=a, text=ta)),
                   "pc1_only_b": on("pc1", call("dir_listing_equals", path=".", names=[b])),
                   "pc2_only_a": on("pc2", call("dir_listing_equals", path=".", names=[a]))},
        "edges": [("b_on_pc1", "pc1_only_b"), ("a_on_pc2", "pc2_only_a")],
        "solution": [*run_on("pc1", f"echo '{tb}' > {b}; rm {a}"), *run_on("pc2", f"echo '{ta}' > {a}; rm {b}"),
                     DONE],
        "partial": 1,
    }


@cross("x_clipboard_to_file", "save one machine's clipboard into a file on the other", ("text", "file"),
       apps=("terminal", "clipboard"))
def x_clipboard_to_file(d: Draw) -> dict[str, Any]:
    name, text = d.file("txt"), d.sentence(4)
    return {
        "description": f"Machine pc1's clipboard holds a line of text. Save that text into {{workdir:pc2}}/{name} "
                       "on machine pc2.",
        "setup": [on("pc1", call("set_clipboard", text=text)), *_both_terminals()],
        "checks": {"file_created": on("pc2", call("file_exists", path=name)),
                   "content": on("pc2", call("file_text_equals", path=name, text=text))},
        "edges": [("file_created", "content")],
        "solution": [*run_on("pc1", "xclip -selection clipboard -o"), *run_on("pc2", f"echo '{text}' > {name}"),
                     DONE],
    }


@cross("x_file_to_clipboard", "put a file of one machine on the other machine's clipboard", ("file", "text"),
       apps=("terminal", "clipboard"))
def x_file_to_clipboard(d: Draw) -> dict[str, Any]:
    name, text = d.file("txt"), d.sentence(4)
    return {
        "description": f"Put the text of {{workdir:pc2}}/{name} (on machine pc2) on the clipboard of machine pc1.",
        "setup": [on("pc2", write(name, text + "\n")), *_both_terminals()],
        "checks": {"pc1_clipboard": on("pc1", call("clipboard_equals", text=text))}, "edges": [],
        "solution": [*run_on("pc2", f"cat {name}"), *run_on("pc1", f"echo '{text}' | xclip -selection clipboard"),
                     DONE],
    }


@cross("x_config_port", "copy a port number from one machine's config into the other's", ("port",))
def x_config_port(d: Draw) -> dict[str, Any]:
    port, service = d.int(1025, 65000), d.word()
    return {
        "description": f"{{workdir:pc1}}/server.ini on machine pc1 sets the port of {service}. On machine pc2, "
                       f"write {{workdir:pc2}}/client.ini with the two lines '[{service}]' and 'port = N', N being "
                       "that port.",
        "setup": [on("pc1", write("server.ini", f"[{service}]\nport = {port}\n")), *_both_terminals()],
        "checks": {"config_written": on("pc2", call("file_exists", path="client.ini")),
                   "port_correct": on("pc2", call("file_text_equals", path="client.ini",
                                                  text=f"[{service}]\nport = {port}\n"))},
        "edges": [("config_written", "port_correct")],
        "solution": [*run_on("pc1", "cat server.ini"),
                     *run_on("pc2", f"printf '[{service}]\\nport = {port}\\n' > client.ini"), DONE],
    }


@cross("x_title_from_file", "title the second machine's terminal after a name stored on the first",
       ("name",), apps=("terminal",))
def x_title_from_file(d: Draw) -> dict[str, Any]:
    title = f"{d.word()}-{d.int(1, 99)}"
    return {
        "description": "{workdir:pc1}/name.txt on machine pc1 holds a name. Make it the title of the terminal "
                       "window on machine pc2 (xterm sets its title from the escape sequence ESC ] 0 ; title BEL).",
        "setup": [on("pc1", write("name.txt", title + "\n")), *_both_terminals()],
        "checks": {"pc2_title": on("pc2", call("window_open", app="terminal", title_contains=title))}, "edges": [],
        "solution": [*run_on("pc1", "cat name.txt"), *run_on("pc2", f"printf '\\033]0;{title}\\007'"), DONE],
    }


@cross("x_merge_files", "merge a file of each machine into one on the second", ("two files", "texts"))
def x_merge_files(d: Draw) -> dict[str, Any]:
    a, b = d.files(2, "txt")
    la, lb = d.lines(2), d.lines(2)
    return {
        "description": f"Write {{workdir:pc2}}/merged.txt on machine pc2: the lines of {a} (on pc1) followed by the "
                       f"lines of {b} (on pc2).",
        "setup": [on("pc1", write(a, text_of(la))), on("pc2", write(b, text_of(lb))), *_both_terminals()],
        "checks": {"merged_written": on("pc2", call("file_contains", path="merged.txt", text=text_of(la))),
                   "merged_correct": on("pc2", call("file_text_equals", path="merged.txt", text=text_of(la + lb)))},
        "edges": [("merged_written", "merged_correct")],
        "solution": [*run_on("pc1", f"cat {a}"),
                     *run_on("pc2", "printf '" + "\\n".join(la) + f"\\n' > merged.txt; cat {b} >> merged.txt"), DONE],
    }


@cross("x_mirror_tree", "recreate a folder tree of one machine on the other", ("folder", "sub-folders"),
       apps=("terminal",))
def x_mirror_tree(d: Draw) -> dict[str, Any]:
    root, *subs = d.words(3)
    return {
        "description": f"Machine pc1 has the folder {root} with sub-folders. Create the same folders (empty) on "
                       "machine pc2, in its work directory.",
        "setup": [*(on("pc1", call("make_dirs", path=f"{root}/{s}")) for s in subs), *_both_terminals()],
        "checks": {"root": on("pc2", call("dir_exists", path=root)),
                   "subs": on("pc2", call("dir_listing_equals", path=root, names=subs))},
        "edges": [("root", "subs")],
        "solution": [*run_on("pc1", f"ls {root}"), *run_on("pc2", "mkdir -p " + " ".join(f"{root}/{s}" for s in subs)),
                     DONE],
    }


@cross("x_missing_remote_file", "copy a file that the source machine does not have", ("missing file",),
       infeasible=True)
def x_missing_remote_file(d: Draw) -> dict[str, Any]:
    present = d.files(2, "txt")
    missing = d.file("txt")
    while missing in present:
        missing = d.file("txt")
    return {
        "description": f"Copy {missing} from machine pc1's work directory to machine pc2's. If that cannot be done, "
                       "say so with declare_infeasible and name what is missing.",
        "setup": [*(on("pc1", write(p, p + "\n")) for p in present), *_both_terminals()],
        "checks": {"declared_with_cause": call("declared_infeasible", mentions=[missing]),
                   "pc2_untouched": on("pc2", call("dir_listing_equals", path=".", names=[]))},
        "edges": [("declared_with_cause", "pc2_untouched")],
        "solution": [*run_on("pc1", "ls"), call("declare_infeasible", reason=f"pc1 has no file {missing}")],
    }
