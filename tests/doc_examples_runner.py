"""Run a Markdown page's fenced ``python`` examples as a reader pasting them would.

Usage: ``python doc_examples_runner.py PAGE.md RESULTS.jsonl`` (run with the cwd a scratch
directory). The page's examples run in order in one session, as a reader pasting them into one
Python prompt would: a later example sees the names an earlier one defined (a page may continue
an example, and an example that raises keeps what it defined before), but each example is
written to its own file and run as ``__main__``, so that an example starting worker processes
(``SubprocVecEnv``) needs the ``if __name__ == "__main__":`` guard a script needs. An example
that raises is recorded and the next one runs. One JSON line per example goes to RESULTS
(flushed at once, so a timeout keeps the examples already run).

Standard library only; imported by nothing (``tests/test_docs_examples.py`` runs it).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
import types
from pathlib import Path

FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", flags=re.S | re.M)
#: An example's chat server (Ollama, vLLM, ... on localhost) is replaced by the one in this variable.
LLM_URL_VARIABLE = "DOC_EXAMPLES_LLM_URL"
LOCAL_LLM_URL = re.compile(r"http://(?:localhost|127\.0\.0\.1):\d+/v1")


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` blocks of a Markdown text, in order."""
    return FENCE.findall(text)


def with_test_server(block: str) -> str:
    """The block with its local chat server's address replaced by the test's stand-in, if any."""
    url = os.environ.get(LLM_URL_VARIABLE)
    return LOCAL_LLM_URL.sub(url, block) if url else block


def error_line(exc: BaseException) -> str:
    """``Type: message`` with the example's own line, for a test's failure message."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename).name.startswith("example_")]
    where = f" (example line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0] if message else ''}{where}"[:600]


def run_page(page: Path, results: Path) -> None:
    """Run every block of ``page`` in one session (one ``__main__`` namespace); one result line per block."""
    session = types.ModuleType("__main__")  # what a reader's prompt keeps between pastes
    runner_main = sys.modules["__main__"]
    with results.open("w") as out:
        for index, block in enumerate(python_blocks(page.read_text())):
            script = Path(f"example_{index}.py").resolve()
            script.write_text(with_test_server(block))
            session.__file__ = str(script)  # a worker process started by the example re-imports this file
            record: dict = {"index": index, "ok": True, "error": None}
            start = time.perf_counter()
            sys.modules["__main__"] = session
            try:
                exec(compile(script.read_text(), str(script), "exec"), session.__dict__)
            except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are results too
                record.update(ok=False, error=error_line(exc))
            finally:
                sys.modules["__main__"] = runner_main
            record["seconds"] = round(time.perf_counter() - start, 2)
            out.write(json.dumps(record) + "\n")
            out.flush()


if __name__ == "__main__":
    run_page(Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve())
