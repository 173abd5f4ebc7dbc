"""Templates over files and folders, done in the terminal (xterm running bash)."""

from __future__ import annotations

from typing import Any

from crab_gym.envs.desktop.taskdata import call
from crab_gym.envs.desktop.templates.base import DONE, Draw, run, template, terminal, text_of, write

T = ("terminal",)


@template("write_new_file", "create a file with a line of text", apps=T, params=("file", "text"), tags=("files",))
def create_file(d: Draw) -> dict[str, Any]:
    name, text = d.file("txt"), d.sentence()
    return {
        "description": f"Using the terminal, create the file {name} in {{workdir}} whose content is the "
                       f"single line: {text}",
        "setup": [terminal()],
        "checks": {"file_created": call("file_exists", path=name),
                   "content_correct": call("file_text_equals", path=name, text=text + "\n")},
        "edges": [("file_created", "content_correct")],
        "solution": [*run(f"touch {name}", f"echo '{text}' > {name}"), DONE], "partial": 1,
    }


@template("rename_files", "rename a file, keeping its content", apps=T, params=("old name", "new name", "text"),
          tags=("files",))
def rename_files(d: Draw) -> dict[str, Any]:
    old, new = d.file("txt"), d.file("txt")
    while new == old:
        new = d.file("txt")
    text = d.sentence()
    return {
        "description": f"In {{workdir}}, rename the file {old} to {new} (its content must not change).",
        "setup": [write(old, text + "\n"), terminal()],
        "checks": {"renamed": call("file_text_equals", path=new, text=text),
                   "old_name_gone": call("path_missing", path=old)},
        "edges": [("renamed", "old_name_gone")],
        "solution": [*run(f"cp {old} {new}", f"rm {old}"), DONE], "partial": 1,
    }


@template("copy_into_folder", "copy a file into a new folder, keep the original", apps=T,
          params=("file", "folder", "text"), tags=("files", "directories"))
def copy_into_folder(d: Draw) -> dict[str, Any]:
    name, folder, text = d.file(), d.word(), d.sentence()
    return {
        "description": f"In {{workdir}}, create the folder {folder} and copy {name} into it; keep the original.",
        "setup": [write(name, text + "\n"), terminal()],
        "checks": {"folder": call("dir_exists", path=folder),
                   "copied": call("file_text_equals", path=f"{folder}/{name}", text=text),
                   "original_kept": call("file_text_equals", path=name, text=text)},
        "edges": [("folder", "copied"), ("copied", "original_kept")],
        "solution": [*run(f"mkdir {folder}", f"cp {name} {folder}/"), DONE], "partial": 1,
    }


def _mixed_folder(d: Draw, ext: str, k: int, other_k: int) -> tuple[str, list[str], list[str], list]:
    folder = d.word()
    others = [e for e in ("txt", "log", "csv", "md", "json") if e != ext]
    matching = d.files(k, ext)
    rest = [f"{w}.{d.pick(others)}" for w in d.words(other_k + k)[k:]]
    setup = [write(f"{folder}/{f}", f"{f}\n") for f in matching + rest]
    return folder, matching, rest, setup


@template("move_by_extension", "move every file with one extension into a new folder", apps=T,
          params=("source folder", "extension", "file names", "target folder"), tags=("files", "directories"))
def move_by_extension(d: Draw) -> dict[str, Any]:
    ext = d.pick(("txt", "log", "csv", "md"))
    folder, matching, rest, setup = _mixed_folder(d, ext, 3, 2)
    target = d.word()
    while target == folder:
        target = d.word()
    checks: dict[str, Any] = {"target_folder": call("dir_exists", path=target)}
    edges = []
    for i, f in enumerate(matching, 1):
        checks[f"moved_{i}"] = call("file_text_equals", path=f"{target}/{f}", text=f"{f}\n")
        checks[f"left_source_{i}"] = call("path_missing", path=f"{folder}/{f}")
        edges += [("target_folder", f"moved_{i}"), (f"moved_{i}", f"left_source_{i}"), (f"left_source_{i}", "others_kept")]
    checks["others_kept"] = call("dir_listing_equals", path=folder, names=rest)
    return {
        "description": f"In {{workdir}}, move every .{ext} file of the folder {folder} into a new folder "
                       f"named {target}; leave the other files in {folder}.",
        "setup": [*setup, terminal()], "checks": checks, "edges": edges,
        "solution": [*run(f"mkdir {target}", f"mv {folder}/*.{ext} {target}/"), DONE], "partial": 1,
    }


@template("delete_by_extension", "delete every file with one extension, keep the others", apps=T,
          params=("folder", "extension", "file names"), tags=("files",))
def delete_by_extension(d: Draw) -> dict[str, Any]:
    ext = d.pick(("tmp", "bak", "log"))
    folder, matching, rest, setup = _mixed_folder(d, ext, 3, 2)
    checks: dict[str, Any] = {f"deleted_{i}": call("path_missing", path=f"{folder}/{f}")
                              for i, f in enumerate(matching, 1)}
    checks["others_kept"] = call("dir_listing_equals", path=folder, names=rest)
    return {
        "description": f"In {{workdir}}/{folder}, delete every file ending in .{ext} and keep all other files.",
        "setup": [*setup, terminal()], "checks": checks,
        "edges": [(f"deleted_{i}", "others_kept") for i in range(1, 4)],
        "solution": [*run(f"rm {folder}/{matching[0]}", f"rm {folder}/*.{ext}"), DONE], "partial": 1,
    }


@template("make_folder_tree", "create a folder with three sub-folders", apps=T, params=("folder", "sub-folders"),
          tags=("directories",))
def make_tree(d: Draw) -> dict[str, Any]:
    root, *subs = d.words(4)
    checks: dict[str, Any] = {"root": call("dir_exists", path=root)}
    checks.update({f"sub_{i}": call("dir_exists", path=f"{root}/{s}") for i, s in enumerate(subs, 1)})
    return {
        "description": f"Using the terminal, create the folder {root} in {{workdir}} with three sub-folders: "
                       f"{', '.join(subs)}.",
        "setup": [terminal()], "checks": checks, "edges": [("root", f"sub_{i}") for i in range(1, 4)],
        "solution": [*run(f"mkdir {root}", "mkdir " + " ".join(f"{root}/{s}" for s in subs)), DONE], "partial": 1,
    }


@template("nested_file", "create a file three folders deep", apps=T, params=("path", "text"),
          tags=("files", "directories"))
def nested_file(d: Draw) -> dict[str, Any]:
    a, b, c = d.words(3)
    name, text = d.file("txt"), d.sentence()
    path = f"{a}/{b}/{c}/{name}"
    return {
        "description": f"In {{workdir}}, create the file {path} (with its folders) containing the line: {text}",
        "setup": [terminal()],
        "checks": {"folders": call("dir_exists", path=f"{a}/{b}/{c}"),
                   "file": call("file_text_equals", path=path, text=text)},
        "edges": [("folders", "file")],
        "solution": [*run(f"mkdir -p {a}/{b}/{c}", f"echo '{text}' > {path}"), DONE], "partial": 1,
    }


@template("write_script", "write a shell script and make it executable", apps=T,
          params=("script name", "word it prints"), tags=("files", "permissions"))
def executable_script(d: Draw) -> dict[str, Any]:
    name, word = f"{d.word()}.sh", d.pick(NOUN_WORDS)
    return {
        "description": f"In {{workdir}}, write a shell script {name} that runs the command 'echo {word}', "
                       "and make it executable.",
        "setup": [terminal()],
        "checks": {"script_created": call("file_exists", path=name),
                   "script_body": call("file_contains", path=name, text=f"echo {word}"),
                   "executable": call("file_is_executable", path=name)},
        "edges": [("script_created", "script_body"), ("script_created", "executable")],
        "solution": [*run(f"printf '#!/bin/sh\\necho {word}\\n' > {name}", f"chmod +x {name}"), DONE],
        "partial": 1,
    }


NOUN_WORDS = ("hello", "ready", "done", "started", "ok", "success", "finished", "go")


@template("append_line", "append a line to a text file", apps=T, params=("file", "lines", "new line"),
          tags=("files",))
def append_line(d: Draw) -> dict[str, Any]:
    name, lines, new = d.file("txt"), d.lines(d.int(2, 4)), d.sentence()
    return {
        "description": f"Append the line '{new}' at the end of {{workdir}}/{name}; keep its other lines.",
        "setup": [write(name, text_of(lines)), terminal()],
        "checks": {"line_added": call("file_contains", path=name, text=new),
                   "content": call("file_text_equals", path=name, text=text_of([*lines, new]))},
        "edges": [("line_added", "content")],
        "solution": [*run(f"echo '{new}' >> {name}"), DONE],
    }


def _answer(description: str, setup: list, answer: str, command: str, out: str = "answer.txt") -> dict:
    """A "compute something, write it to a file" task: the file, then its exact content."""
    return {
        "description": description, "setup": [*setup, terminal()],
        "checks": {"answer_written": call("file_exists", path=out),
                   "answer_correct": call("file_text_equals", path=out, text=answer)},
        "edges": [("answer_written", "answer_correct")],
        "solution": [*run(command), DONE],
    }


@template("count_lines", "count a file's lines into another file", apps=T, params=("file", "line count"),
          tags=("files",))
def count_lines(d: Draw) -> dict[str, Any]:
    name, lines = d.file("txt"), d.lines(d.int(3, 12))
    return _answer(f"Write the number of lines of {{workdir}}/{name} (just the number) into "
                      "{workdir}/count.txt.", [write(name, text_of(lines))], str(len(lines)),
                   f"wc -l < {name} > count.txt", "count.txt")


@template("sum_numbers", "add up a column of numbers", apps=T, params=("file", "numbers"), tags=("files",))
def sum_numbers(d: Draw) -> dict[str, Any]:
    name, numbers = d.file("txt"), [d.int(1, 500) for _ in range(d.int(3, 7))]
    return _answer(f"{{workdir}}/{name} holds one whole number per line. Write their sum (just the number) "
                      "into {workdir}/total.txt.", [write(name, text_of(map(str, numbers)))], str(sum(numbers)),
                   f"awk '{{s+=$1}} END {{print s}}' {name} > total.txt", "total.txt")


@template("sort_lines", "sort a file's lines into a new file", apps=T, params=("file", "lines"), tags=("files",))
def sort_lines(d: Draw) -> dict[str, Any]:
    name, words = d.file("txt"), d.words(d.int(4, 7))
    return _answer(f"Write the lines of {{workdir}}/{name} in alphabetical order into {{workdir}}/sorted.txt.",
                   [write(name, text_of(words))], text_of(sorted(words)), f"sort {name} > sorted.txt", "sorted.txt")


@template("uppercase_file", "write an upper-case copy of a file", apps=T, params=("file", "text"), tags=("files",))
def uppercase_file(d: Draw) -> dict[str, Any]:
    name, lines = d.file("txt"), d.lines(2)
    return _answer(f"Write a copy of {{workdir}}/{name} in upper-case letters into {{workdir}}/upper.txt.",
                   [write(name, text_of(lines))], text_of(x.upper() for x in lines),
                   f"tr a-z A-Z < {name} > upper.txt", "upper.txt")


@template("replace_word", "replace a word everywhere in a file", apps=T, params=("file", "old word", "new word"),
          tags=("files",))
def replace_word(d: Draw) -> dict[str, Any]:
    name = d.file("txt")
    old, new = d.sample(NOUN_WORDS, 2)
    lines = [f"{d.sentence(2)} {old} {d.sentence(1)}" for _ in range(3)]
    after = [x.replace(old, new) for x in lines]
    return {
        "description": f"In {{workdir}}/{name}, replace every '{old}' with '{new}' (edit the file in place).",
        "setup": [write(name, text_of(lines)), terminal()],
        "checks": {"new_word_in": call("file_contains", path=name, text=new),
                   "content": call("file_text_equals", path=name, text=text_of(after))},
        "edges": [("new_word_in", "content")],
        "solution": [*run(f"sed -i 's/{old}/{new}/g' {name}"), DONE],
    }


@template("concat_files", "join two files into a third", apps=T, params=("first file", "second file", "output"),
          tags=("files",))
def concat_files(d: Draw) -> dict[str, Any]:
    a, b, out = d.files(3, "txt")
    la, lb = d.lines(2), d.lines(2)
    return _answer(f"In {{workdir}}, write {a} followed by {b} into a new file {out}.",
                   [write(a, text_of(la)), write(b, text_of(lb))], text_of(la + lb), f"cat {a} {b} > {out}", out)


@template("find_word_file", "find which file contains a word", apps=T, params=("file names", "word", "which file"),
          tags=("files", "search"))
def find_word_file(d: Draw) -> dict[str, Any]:
    names, word = d.files(4, "txt"), d.pick(NOUN_WORDS)
    hit = d.int(0, 3)
    setup = [write(f"docs/{n}", f"{d.sentence()}\n{word if i == hit else d.sentence(1)}\n")
             for i, n in enumerate(names)]
    return _answer(f"Exactly one file in {{workdir}}/docs contains the word '{word}'. Write its name "
                      "(just the file name) into {workdir}/answer.txt.", setup, names[hit],
                   f"grep -lw {word} docs/* | xargs -n1 basename > answer.txt")


@template("make_symlink", "create a symbolic link to a file", apps=T, params=("target", "link name"),
          tags=("files", "links"))
def make_symlink(d: Draw) -> dict[str, Any]:
    target, link = d.file("txt"), d.word()
    return {
        "description": f"In {{workdir}}, create a symbolic link named {link} that points to {target}.",
        "setup": [write(target, d.sentence() + "\n"), terminal()],
        "checks": {"link": call("symlink_points_to", path=link, target=target)},
        "edges": [], "solution": [*run(f"ln -s {target} {link}"), DONE],
    }


@template("change_mode", "set a file's permission bits", apps=T, params=("file", "mode"),
          tags=("files", "permissions"))
def change_mode(d: Draw) -> dict[str, Any]:
    name, mode = d.file(), d.pick(("600", "640", "444", "755", "700", "750"))
    return {
        "description": f"Set the permissions of {{workdir}}/{name} to {mode} (octal).",
        "setup": [write(name, "data\n"), terminal()],
        "checks": {"mode": call("file_mode_is", path=name, mode=mode)},
        "edges": [], "solution": [*run(f"chmod {mode} {name}"), DONE],
    }


@template("head_lines", "keep the first lines of a file", apps=T, params=("file", "lines", "how many"),
          tags=("files",))
def head_lines(d: Draw) -> dict[str, Any]:
    name, lines = d.file("log"), d.lines(8)
    k = d.int(2, 5)
    return _answer(f"Write the first {k} lines of {{workdir}}/{name} into {{workdir}}/top.txt.",
                   [write(name, text_of(lines))], text_of(lines[:k]), f"head -n {k} {name} > top.txt", "top.txt")


@template("unique_lines", "list a file's distinct lines, sorted", apps=T, params=("file", "lines"), tags=("files",))
def unique_lines(d: Draw) -> dict[str, Any]:
    name, words = d.file("txt"), d.words(4)
    lines = [d.pick(words) for _ in range(9)] + words
    return _answer(f"Write each distinct line of {{workdir}}/{name} once, in alphabetical order, into "
                      "{workdir}/unique.txt.", [write(name, text_of(lines))], text_of(sorted(set(lines))),
                   f"sort -u {name} > unique.txt", "unique.txt")


@template("extract_column", "extract the first column of a CSV file", apps=T, params=("file", "rows"),
          tags=("files",))
def extract_column(d: Draw) -> dict[str, Any]:
    name, names = d.file("csv"), d.words(d.int(3, 6))
    rows = [f"{n},{d.int(1, 99)},{d.pick(NOUN_WORDS)}" for n in names]
    return _answer(f"{{workdir}}/{name} is a CSV file without a header. Write its first column, one value "
                      "per line, into {workdir}/names.txt.", [write(name, text_of(rows))], text_of(names),
                   f"cut -d, -f1 {name} > names.txt", "names.txt")


@template("largest_file", "name the largest file of a folder", apps=T, params=("folder", "file names", "sizes"),
          tags=("files", "search"))
def largest_file(d: Draw) -> dict[str, Any]:
    names = d.files(4, "dat")
    sizes = d.sample(range(10, 400), 4)
    setup = [write(f"data/{n}", "x" * s) for n, s in zip(names, sizes)]
    biggest = names[sizes.index(max(sizes))]
    return _answer("Write the name of the largest file in {workdir}/data (just the file name) into "
                      "{workdir}/answer.txt.", setup, biggest, "ls -S data | head -n 1 > answer.txt")


@template("remove_empty_dirs", "remove the empty folders, keep the others", apps=T,
          params=("empty folders", "non-empty folders"), tags=("directories",))
def remove_empty_dirs(d: Draw) -> dict[str, Any]:
    empty1, empty2, full1, full2 = d.words(4)
    setup = [call("make_dirs", path=empty1), call("make_dirs", path=empty2),
             write(f"{full1}/keep.txt", "keep\n"), write(f"{full2}/keep.txt", "keep\n")]
    return {
        "description": "In {workdir}, remove every empty folder and keep the folders that hold files.",
        "setup": [*setup, terminal()],
        "checks": {"empty_1_gone": call("path_missing", path=empty1),
                   "empty_2_gone": call("path_missing", path=empty2),
                   "others_kept": call("dir_listing_equals", path=".", names=[full1, full2])},
        "edges": [("empty_1_gone", "others_kept"), ("empty_2_gone", "others_kept")],
        "solution": [*run(f"rmdir {empty1}", f"rmdir {empty2}"), DONE], "partial": 1,
    }


@template("make_tarball", "pack a folder's files into a tar archive", apps=T, params=("folder", "files", "archive"),
          tags=("files", "archives"))
def make_tarball(d: Draw) -> dict[str, Any]:
    folder, archive = d.word(), f"{d.word()}.tar"
    names = d.files(3, "txt")
    return {
        "description": f"In {{workdir}}, pack the files of the folder {folder} into the tar archive {archive}.",
        "setup": [*(write(f"{folder}/{n}", n + "\n") for n in names), terminal()],
        "checks": {"archive": call("file_exists", path=archive),
                   "members": call("archive_contains", path=archive, names=names)},
        "edges": [("archive", "members")],
        "solution": [*run(f"tar -cf {archive} {folder}"), DONE],
    }


@template("word_count", "count a file's words into another file", apps=T, params=("file", "word count"),
          tags=("files",))
def word_count(d: Draw) -> dict[str, Any]:
    name, lines = d.file("md"), [d.sentence(d.int(2, 6)) for _ in range(d.int(2, 5))]
    count = sum(len(x.split()) for x in lines)
    return _answer(f"Write the number of words in {{workdir}}/{name} (just the number) into "
                      "{workdir}/words.txt.", [write(name, text_of(lines))], str(count),
                   f"wc -w < {name} > words.txt", "words.txt")


@template("list_folder", "write a folder's listing into a file", apps=T, params=("folder", "file names"),
          tags=("files", "directories"))
def list_folder(d: Draw) -> dict[str, Any]:
    folder, names = d.word(), d.files(d.int(3, 5), "txt")
    return _answer(f"Write the names of the files in {{workdir}}/{folder}, one per line in alphabetical "
                      "order, into {workdir}/listing.txt.", [write(f"{folder}/{n}", "x\n") for n in names],
                   text_of(sorted(names)), f"ls {folder} > listing.txt", "listing.txt")
