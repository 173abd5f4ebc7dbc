"""``crab-gym run`` at scale from the command line: a run killed with SIGKILL resumes to the
uninterrupted run's report, ``crab-gym report DIR`` rebuilds the reports from episodes.jsonl,
and the new options' mistakes are one line with exit code 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import crab_gym  # noqa: F401
from crab_gym.cli import main
from crab_gym.evaluation.report import strip_wall_clock

ROOT = Path(__file__).resolve().parents[1]
SLOW = "tests.evaluation.scale_envs:SlowLamps-v0"  # 0.05 s per step; the module registers it
RUN = ["run", "--env", SLOW, "--policy", "random", "--episodes", "8", "--max-steps", "30", "--quiet"]


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def comparable(directory: Path) -> dict:
    return strip_wall_clock(json.loads((directory / "report.json").read_text()))


def jsonl_lines(directory: Path) -> int:
    path = directory / "episodes.jsonl"
    return len(path.read_bytes().split(b"\n")) - 1 if path.exists() else 0


def test_a_run_killed_with_sigkill_resumes_to_the_uninterrupted_report(capsys, tmp_path):
    killed, fresh = tmp_path / "killed", tmp_path / "fresh"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "crab_gym.cli", *RUN, "--out", str(killed)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while jsonl_lines(killed) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read().decode()
    done = jsonl_lines(killed)
    assert 2 <= done < 8, "the kill must land mid-run"
    assert not (killed / "report.json").exists()

    code, _, err = run_cli(capsys, *RUN, "--out", str(killed))  # the same command again
    assert code == 0, err
    assert f"resumed {done} of 8 episodes from {killed / 'episodes.jsonl'}; running the other {8 - done}" in err
    assert jsonl_lines(killed) == 8
    code, _, err = run_cli(capsys, *RUN, "--out", str(fresh))
    assert code == 0, err
    assert comparable(killed) == comparable(fresh)
    assert [e["seed"] for e in comparable(killed)["episodes"]] == list(range(8))


def test_report_rebuilds_the_reports_from_episodes_jsonl(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    code, out, err = run_cli(capsys, "run", "--env", "Realm-P11-v0", "--env-kwargs", '{"instance": "ft06"}',
                             "--policy", "spt", "random", "--episodes", "2", "--quiet", "--out", str(tmp_path))
    assert code == 0, err
    written = (tmp_path / "report.json").read_text(), (tmp_path / "report.md").read_text()
    for name in ("report.json", "report.md"):
        (tmp_path / name).unlink()
    code, out2, err = run_cli(capsys, "report", str(tmp_path), "--plot")
    assert code == 0 and err == ""
    assert ((tmp_path / "report.json").read_text(), (tmp_path / "report.md").read_text()) == written
    assert (tmp_path / "report.png").stat().st_size > 1000
    assert out2.splitlines()[:4] == out.splitlines()[:4]  # the same table


def test_a_torn_line_is_dropped_with_a_note_and_the_run_completes(capsys, tmp_path):
    args = ["run", "--env", "Realm-P11-v0", "--env-kwargs", '{"instance": "ft06"}', "--policy", "spt",
            "--episodes", "3", "--quiet", "--out", str(tmp_path)]
    assert run_cli(capsys, *args)[0] == 0
    path = tmp_path / "episodes.jsonl"
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][:40])  # the third line torn by a kill
    code, _, err = run_cli(capsys, *args)
    assert code == 0
    assert f"{path} line 3: dropped a torn last line (40 bytes; an interrupted write)" in err
    assert "resumed 2 of 3 episodes" in err
    assert len(json.loads((tmp_path / "report.json").read_text())["episodes"]) == 3


MISTAKES = {
    "address without ray": (["run", "--address", "auto"], "--address joins a Ray cluster: add --backend ray"),
    "max-rps without llm": (["run", "--policy", "random", "--max-rps", "2"], "--max-rps paces requests"),
    "max-rps not positive": (["run", "--max-rps", "0"], "--max-rps: must be above 0"),
    "zero workers": (["run", "--workers", "0"], "--workers: must be at least 1, got 0"),
    "report without episodes": (["report", "{tmp}"], "episodes.jsonl does not exist: `crab-gym run ... --out"),
}


@pytest.mark.parametrize("argv, fragment", MISTAKES.values(), ids=MISTAKES.keys())
def test_mistakes_are_one_line(capsys, tmp_path, argv, fragment):
    code, out, err = run_cli(capsys, *[a.replace("{tmp}", str(tmp_path)) for a in argv], *(
        ["--quiet"] if argv[0] == "run" else []))
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert fragment in err, err


def test_ray_backend_without_ray_names_the_extra(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as if not installed
    code, _, err = run_cli(capsys, "run", "--backend", "ray", "--quiet")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert 'pip install "crab_gym[ray]"' in err


@pytest.mark.parametrize("command", ["run", "report"])
def test_a_corrupt_line_is_one_line_naming_file_and_line(capsys, tmp_path, command):
    (tmp_path / "episodes.jsonl").write_text('{"oops"\n{"env_id": "x"}\n')
    argv = ["report", str(tmp_path)] if command == "report" else [
        "run", "--env", "Realm-P11-v0", "--policy", "spt", "--quiet", "--out", str(tmp_path)]
    code, out, err = run_cli(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"{tmp_path / 'episodes.jsonl'} line 1 is corrupt: not JSON" in err
