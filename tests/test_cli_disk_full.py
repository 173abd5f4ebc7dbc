"""Issue 38, item 4: a full disk during ``crab-gym run --out`` is one line on stderr and exit
code 1; the episodes written before it are kept, no half-written report is left, and the same
command run again (with room) resumes to the report an uninterrupted run gives."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

import pytest

from crab_gym.evaluation.report import strip_wall_clock

RUN = ["run", "--env", "Realm-P11-v0", "--policy", "random", "--episodes", "3", "--quiet"]


def crab_gym(out, file_size_limit: int | None = None) -> subprocess.CompletedProcess:
    def limit() -> None:  # what `ulimit -f` does: writes past the size fail (EFBIG), as on a full disk
        if file_size_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))
    return subprocess.run([sys.executable, "-m", "crab_gym.cli", *RUN, "--out", str(out)], capture_output=True,
                          text=True, preexec_fn=limit, timeout=300, check=False)


@pytest.mark.parametrize("limit, where", [(14 * 1024, "the reports"), (6 * 1024, "the episodes")])
def test_a_full_disk_is_one_line_and_loses_nothing(tmp_path, limit, where):
    full, whole = tmp_path / "full", tmp_path / "whole"
    done = crab_gym(full, limit)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "File too large" in done.stderr, done.stderr
    kept = (full / "episodes.jsonl").read_text().splitlines()
    assert kept and all(json.loads(line) for line in kept[:-1])  # whole lines, the last maybe torn
    assert not (full / "report.json").exists() and not list(full.glob("*.partial"))
    again = crab_gym(full)
    assert again.returncode == 0, again.stderr
    assert crab_gym(whole).returncode == 0
    report, reference = (json.loads((d / "report.json").read_text()) for d in (full, whole))
    assert strip_wall_clock(report) == strip_wall_clock(reference), where
