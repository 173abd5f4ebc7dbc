"""Every fenced ``python`` example in README.md and docs/*.md runs as pasted (issue 28, item 2).

Each page runs in its own Python process (``tests/doc_examples_runner.py``), with the cwd a fresh
scratch directory and a timeout; its examples run in order in one session, as a reader pasting
them into one prompt would, each as ``__main__`` (so one that starts worker processes needs the
``if __name__ == "__main__":`` guard). Examples that talk to a chat server on localhost (Ollama,
vLLM, ...) get a stand-in on loopback instead, which calls the first of the legal calls the
prompt lists (or answers in words when it lists none): the example's code runs end to end, the
model's skill is not the point. Nothing is skipped for being slow: an
example that trains must be cheap as written.

``KNOWN_BROKEN`` lists examples that fail today on pages this change could not edit; each is a
strict expected failure, so an entry that starts passing fails the test and must be removed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.baselines.scripted_chat_server import ScriptedChatServer, calls_message, text_message, tool_call
from tests.doc_examples_runner import LLM_URL_VARIABLE, python_blocks

ROOT = Path(__file__).resolve().parents[1]
RUNNER = Path(__file__).resolve().with_name("doc_examples_runner.py")
PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
PAGE_TIMEOUT_S = 150
PARALLEL_PAGES = 2

#: (page, example index) -> why it fails. For the lead to empty: each entry is a strict xfail.
KNOWN_BROKEN: dict[tuple[str, int], str] = {}

#: Examples that start a real X desktop: on a machine without its Debian packages they must fail
#: with MissingSystemPackageError, and are skipped then (CI installs the packages).
NEEDS_DESKTOP = {("docs/desktop.md", 0)}
DESKTOP_PROGRAMS = ("Xvfb", "xauth", "openbox", "xdotool", "wmctrl", "xterm", "mousepad", "gsettings", "xclip")


def examples() -> list:
    """One pytest param per (page, index); known-broken ones marked strict xfail."""
    params = []
    for page in PAGES:
        for index in range(len(python_blocks((ROOT / page).read_text()))):
            marks = ([pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[page, index])]
                     if (page, index) in KNOWN_BROKEN else [])
            params.append(pytest.param(page, index, marks=marks, id=f"{page}#{index}"))
    return params


def first_legal_call(request: dict) -> dict:
    """The stand-in model: the first call under the newest "# Legal calls now" heading, else words."""
    for message in reversed(request.get("messages", [])):
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        if "# Legal calls now" not in text:
            continue
        for line in text.split("# Legal calls now", 1)[1].splitlines():
            name, _, arguments = line.removeprefix("- ").partition(": ")
            if line.startswith("- ") and arguments.startswith("{"):
                return calls_message(tool_call(name, arguments))
            if line.startswith("- ") and "(no arguments)" in line:
                return calls_message(tool_call(line[2:].split()[0], {}))
        break
    return text_message("I would rather describe the plan in words.")


def run_page(page: str, scratch: Path, env: dict[str, str]) -> list[dict]:
    """Run one page's examples in a fresh process; its per-example results (a timeout ends the rest)."""
    work = scratch / page.replace("/", "_")
    work.mkdir()
    results = work / "results.jsonl"
    try:
        proc = subprocess.run([sys.executable, str(RUNNER), str(ROOT / page), str(results)], cwd=work, env=env,
                              capture_output=True, text=True, timeout=PAGE_TIMEOUT_S)
        tail = proc.stderr[-2000:] if proc.returncode else ""
    except subprocess.TimeoutExpired:
        tail = f"the page's process ran over {PAGE_TIMEOUT_S} s"
    done = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    for index in range(len(done), len(python_blocks((ROOT / page).read_text()))):
        done.append({"index": index, "ok": False, "error": f"did not run: {tail or 'the page process ended'}"})
    return done


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, int], dict]:
    """Every page's results, two pages at a time, with a stand-in chat server."""
    scratch = tmp_path_factory.mktemp("doc_examples")
    with ScriptedChatServer([first_legal_call] * 5000, max_requests=5000, lifetime=PAGE_TIMEOUT_S * len(PAGES)) as server:
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "CRAB_GYM_LLM_MODEL")}
        env.update({LLM_URL_VARIABLE: server.url, "OPENAI_API_KEY": "sk-docs-examples", "NO_PROXY": "127.0.0.1,localhost",
                    "CRAB_GYM_TOKEN": "docs-examples-token", "PYTHONPATH": str(ROOT),
                    "MPLBACKEND": "Agg"})
        with ThreadPoolExecutor(PARALLEL_PAGES) as pool:
            per_page = dict(zip(PAGES, pool.map(lambda page: run_page(page, scratch, env), PAGES)))
    return {(page, r["index"]): r for page, rows in per_page.items() for r in rows}


@pytest.mark.parametrize(("page", "index"), examples())
def test_example_runs(results: dict[tuple[str, int], dict], page: str, index: int) -> None:
    result = results[page, index]
    missing = [p for p in DESKTOP_PROGRAMS if shutil.which(p) is None]
    if (page, index) in NEEDS_DESKTOP and missing and str(result["error"]).startswith("MissingSystemPackageError"):
        pytest.skip(f"desktop system packages missing ({missing}): run scripts/install_desktop_deps.sh")
    assert result["ok"], f"{page}, python example {index} (counting from 0): {result['error']}"


def test_known_broken_names_real_examples() -> None:
    """Every KNOWN_BROKEN key is an example that exists (a renumbered page must update the list)."""
    counts = {page: len(python_blocks((ROOT / page).read_text())) for page in PAGES}
    assert all(0 <= index < counts.get(page, 0) for page, index in KNOWN_BROKEN)
