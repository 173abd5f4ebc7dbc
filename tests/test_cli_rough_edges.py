"""``crab-gym`` rough edges a first week finds (issue 28, items 3, 4 and 7): an unusable --out or
--seed is one line before anything runs; the desktop's hint names --policy; ``| head`` and a
killed driver end quietly; an --out folder belongs to one run (other arguments and a second
run at once are refused); the plot and the printed report carry the REALM metrics and the
legend; a slow reset says what it waits on; a wrong-typed value in episodes.jsonl names the
file and the line."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.cli import BROKEN_PIPE, main
from crab_gym.evaluation import episode_runner
from crab_gym.evaluation.benchmark import Benchmark
from crab_gym.evaluation.episode_store import EpisodeStore
from crab_gym.evaluation.report import BenchmarkReport
from tests.core.toy_env import LampsEnv
from tests.test_cli import run_cli

ROOT = Path(__file__).resolve().parents[1]
P11 = ["run", "--env", "Realm-P11-v0", "--policy", "spt", "--episodes", "1", "--quiet"]




def assert_one_line(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 2 and out == "", (code, out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


# ---------------------------------------------------------------------------------- up-front checks
def test_out_that_is_a_file_is_one_line(capsys, tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert_one_line(*run_cli(capsys, *P11, "--out", str(afile)), f"--out {afile} is a file, not a directory")
    assert_one_line(*run_cli(capsys, *P11, "--out", str(afile / "run")), f"{afile} is a file, so no directory")
    assert_one_line(*run_cli(capsys, "report", str(afile)), "is a file: give the --out directory")


def test_a_negative_seed_is_refused_up_front(capsys):
    assert_one_line(*run_cli(capsys, *P11, "--seed", "-1"), "--seed", "must be 0 or more", "got -1")


def test_the_desktop_with_default_policies_names_the_policy_to_pass(capsys):
    code, out, err = run_cli(capsys, "run", "--env", "CrabDesktop-v0", "--quiet")
    assert_one_line(code, out, err, "policy 'oracle' does not fit CrabDesktop-v0", "policies that fit it: random, llm",
                    "run with --policy random (--policy defaults to random oracle)")


@pytest.mark.parametrize(("argv", "hint"), [
    (["--env", "Realm-P11-v0", "--policy", "SPT"], "unknown policy 'SPT' (did you mean 'spt'?)"),
    (["--env", "realm-p11-v0", "--policy", "spt"], "unknown env id 'realm-p11-v0' (did you mean 'Realm-P11-v0'?)"),
])
def test_a_name_in_the_wrong_case_gets_did_you_mean(capsys, argv, hint):
    assert_one_line(*run_cli(capsys, "run", "--quiet", *argv), hint)


# ---------------------------------------------------------------------------------- output
def test_the_printed_report_has_the_legend_and_the_plot_the_realm_metrics(capsys, tmp_path):
    code, out, err = run_cli(capsys, *P11, "--out", str(tmp_path), "--plot")
    assert code == 0, err
    assert "**Columns**" in out and "- `optimality`: REALM:" in out
    assert out.split("\nwrote ")[0].strip() == (tmp_path / "report.md").read_text().strip()
    results = EpisodeStore(tmp_path).load()
    assert BenchmarkReport(results).plotted_metrics() == [
        "return", "planning_quality", "optimality", "constraint_satisfaction"]
    from PIL import Image

    tall = Image.open(tmp_path / "report.png").size[1]
    one = BenchmarkReport(results).plot(tmp_path / "one.png", "return")
    assert tall > 3 * Image.open(one).size[1]  # four panels, one above the other


class _ClosedPipe(io.StringIO):
    """stdout whose reader has gone (``| head`` after its first lines)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_that_goes_away_ends_the_run_quietly_after_writing_the_reports(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    assert main([*P11, "--out", str(tmp_path)]) == BROKEN_PIPE
    assert (tmp_path / "report.md").exists() and (tmp_path / "report.json").exists()
    assert "Traceback" not in capsys.readouterr().err


def test_piping_into_head_prints_no_traceback(tmp_path):
    command = f"{sys.executable} -m crab_gym.cli {' '.join(P11)} --out {tmp_path} | head -1"
    proc = subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert proc.stdout.startswith("| env | policy |")
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr, proc.stderr
    assert (tmp_path / "report.md").exists()


def _children(pid: int) -> list[int]:
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the workers through /proc")
def test_workers_end_quietly_with_a_driver_killed_with_sigkill(tmp_path):
    argv = ["run", "--env", "tests.evaluation.scale_envs:SlowLamps-v0", "--policy", "random", "--episodes", "40",
            "--max-steps", "30", "--workers", "2", "--quiet", "--out", str(tmp_path)]
    proc = subprocess.Popen([sys.executable, "-m", "crab_gym.cli", *argv], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 120
    episodes = tmp_path / "episodes.jsonl"
    while not (episodes.exists() and episodes.read_bytes().count(b"\n") >= 2) and time.monotonic() < deadline:
        time.sleep(0.05)  # both workers busy with an episode they will not be able to send
    workers = _children(proc.pid)
    assert workers, "the run must have started its workers"
    os.kill(proc.pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=30)  # EOF once every worker holding stderr has gone
    assert "Traceback" not in err.decode() and "BrokenPipeError" not in err.decode(), err.decode()
    time.sleep(0.2)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()
                and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]]


# ---------------------------------------------------------------------------------- one run per --out
def test_reusing_out_with_other_arguments_is_refused_and_more_seeds_extend_it(capsys, tmp_path):
    code, _, err = run_cli(capsys, *P11, "--out", str(tmp_path))
    assert code == 0, err
    before = (tmp_path / "episodes.jsonl").read_text()
    code, out, err = run_cli(capsys, *[a if a != "spt" else "mwkr" for a in P11], "--episodes", "1",
                             "--out", str(tmp_path), "--seed", "5")
    assert_one_line(code, out, err, "holds 3 episode(s) this command would not run",  # the quick split's 3
                    'Realm-P11-v0 {"instance": "ft06"} x spt, seed 0', "Rerun that run's command to resume it, use another --out")
    assert (tmp_path / "episodes.jsonl").read_text() == before
    code, _, err = run_cli(capsys, "run", "--env", "Realm-P11-v0", "--policy", "spt", "mwkr", "--episodes", "2",
                           "--quiet", "--out", str(tmp_path))
    assert code == 0 and "resumed 3 of 12 episodes" in err, err


def test_a_second_run_into_a_busy_out_is_refused(capsys, tmp_path):
    with EpisodeStore(tmp_path).locked():  # a run in progress (flock: any other open file is refused)
        code, out, err = run_cli(capsys, *P11, "--out", str(tmp_path))
    assert_one_line(code, out, err, f"another run is writing {tmp_path} (process {os.getpid()})",
                    "wait for it to finish, or use another --out")
    code, _, err = run_cli(capsys, *P11, "--out", str(tmp_path))  # the lock went with it
    assert code == 0, err


# ---------------------------------------------------------------------------------- episodes.jsonl
@pytest.mark.parametrize("command", ["run", "report"])
@pytest.mark.parametrize("last", [False, True], ids=["middle", "last line"])
def test_a_wrong_typed_value_names_the_file_and_the_line(capsys, tmp_path, command, last):
    code, _, err = run_cli(capsys, *P11, "--episodes", "2", "--out", str(tmp_path))
    assert code == 0, err
    path = tmp_path / "episodes.jsonl"
    lines = path.read_text().splitlines()
    bad = 1 if last else 0
    record = json.loads(lines[bad])
    record["steps"] = "many"
    lines[bad] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    argv = ["report", str(tmp_path)] if command == "report" else [*P11, "--episodes", "2", "--out", str(tmp_path)]
    assert_one_line(*run_cli(capsys, *argv), f"{path} line {bad + 1} is corrupt: field 'steps' should be a whole "
                    "number, got \"many\"")


# ---------------------------------------------------------------------------------- slow resets
class SlowResetLamps(LampsEnv):
    def reset(self, *, seed=None, options=None):
        time.sleep(0.3)
        return super().reset(seed=seed, options=options)


def test_a_slow_reset_says_what_it_waits_on(capsys, monkeypatch):
    gym.register("SlowResetLamps-v0", entry_point=SlowResetLamps)
    monkeypatch.setattr(episode_runner, "SLOW_RESET_NOTICE_S", 0.1)
    try:
        report = Benchmark(["SlowResetLamps-v0"], seeds=[3], max_steps=2).run(
            {"first": lambda env: (lambda obs, info: 0)}, progress=False)
    finally:
        gym.registry.pop("SlowResetLamps-v0", None)
    assert report.n_errors == 0
    err = capsys.readouterr().err
    assert "SlowResetLamps-v0 x first, seed 3: reset still running after 0.1 s (drawing an instance" in err
