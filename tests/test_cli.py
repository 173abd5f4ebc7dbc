"""``crab-gym``: usage mistakes are one line on stderr with exit code 2; an episode that
raises is reported and the run goes on (exit code 1); counts print as integers; a complete
P11 schedule is a success with completeness 1."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import crab_gym  # noqa: F401
from crab_gym.cli import build_parser, main
from crab_gym.evaluation.benchmark import episode_success


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CRAB_GYM_CACHE_DIR", str(tmp_path / "cache"))


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------------------------- mistakes
MISTAKES = {
    "kwargs not JSON": (
        ["--env-kwargs", "{instance: ft06}"], ["--env-kwargs is not valid JSON", '{"instance": "ft06"}']
    ),
    "kwargs not an object": (["--env-kwargs", '["ft06"]'], ["must be a JSON object", "got a JSON list"]),
    "unknown P11 instance": (
        ["--env", "Realm-P11-v0", "--env-kwargs", '{"instance": "ft6x"}'],
        ["cannot make Realm-P11-v0", "'ft6x'", "did you mean 'ft06'", "list_jssp_instances()"],
    ),
    "unknown P1 instance": (
        ["--env", "Realm-P1-v0", "--env-kwargs", '{"instance": "p1_smal_00"}'],
        ["cannot make Realm-P1-v0", "p1_smal_00", "did you mean 'p1_small_00'", "list_instances('P1')"],
    ),
    "missing instance path": (
        ["--env", "Realm-P3-v0", "--env-kwargs", '{"instance": "/nonexistent/city.json"}'],
        ["/nonexistent/city.json", "no such file", "list_instances('P3')"],
    ),
    "misspelled env keyword": (
        ["--env", "Realm-P2-v0", "--env-kwargs", '{"instanse": "p2_small_00"}'],
        ["unknown keyword 'instanse'", "did you mean 'instance'", "valid keywords: instance, generator"],
    ),
    "policy does not fit the env": (
        ["--env", "Realm-P1-v0", "--policy", "spt"],
        ["policy 'spt' does not fit Realm-P1-v0", "it fits Realm-P11-v0", "random, oracle, p1_insertion"],
    ),
    "policy does not fit every env": (
        ["--policy", "p1_insertion"],
        ["policy 'p1_insertion' does not fit Realm-P2-v0, Realm-P3-v0", "every env asked for: random, oracle"],
    ),
    "plot without out": (["--plot"], ["--plot", "add --out DIR"]),
    "zero episodes": (["--episodes", "0"], ["--episodes", "at least 1, got 0"]),
    "negative episodes": (["--episodes", "-2"], ["--episodes", "at least 1, got -2"]),
    "negative max steps": (["--max-steps", "-1"], ["--max-steps", "at least 1, got -1"]),
    "episodes not a number": (["--episodes", "three"], ["--episodes", "expected a whole number"]),
    "unknown env id": (["--env", "Realm-P12-v0"], ["unknown env id 'Realm-P12-v0'", "crab-gym list"]),
    "unknown policy": (["--policy", "sptt"], ["unknown policy 'sptt'", "did you mean 'spt'", "available:"]),
}


@pytest.mark.parametrize("argv, fragments", MISTAKES.values(), ids=MISTAKES.keys())
def test_usage_mistakes_are_one_line_with_exit_code_2(capsys, argv, fragments):
    code, out, err = run_cli(capsys, "run", "--quiet", *argv)
    assert code == 2
    assert out == ""  # nothing ran
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("crab-gym run: error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_every_option_has_help_text(capsys):
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {"list", "run", "serve"} <= set(subparsers.choices)
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            assert action.help, f"crab-gym {name} {action.option_strings} has no help text"
    assert main(["run", "--help"]) == 0
    text = capsys.readouterr().out
    for option in ("--env-kwargs", "--episodes", "--max-steps", "--out", "--plot", "--quiet", "--seed"):
        assert option in text


def test_list_says_which_envs_each_policy_fits(capsys):
    code, out, _ = run_cli(capsys, "list")
    assert code == 0
    line = next(line for line in out.splitlines() if line.strip().startswith("spt "))
    assert "shortest processing time" in line and "[Realm-P11-v0]" in line
    assert "[any env]" in next(line for line in out.splitlines() if line.strip().startswith("random "))


def test_list_says_what_each_env_is(capsys):
    """Issue 38: the env list showed entry points; it says what each env is."""
    code, out, _ = run_cli(capsys, "list")
    assert code == 0 and "crab_gym.envs" not in out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "job-shop scheduling" in lines["Realm-P11-v0"] and "[vector env]" in lines["Realm-P11-v0"]
    assert "[multi-agent] [disruptions]" in lines["Realm-P4-v0"]
    assert "desktop" in lines["CrabDesktop-v0"]


# ---------------------------------------------------------------------------------- failures mid-run
class FlakyEnv(gym.Env):
    """Three steps per episode; ``step`` raises on odd seeds, ``reset`` can be told to
    raise KeyboardInterrupt on a seed (a user pressing Ctrl-C)."""

    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(2)
    interrupt_seed: int | None = None

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        if seed == self.interrupt_seed:
            raise KeyboardInterrupt
        self.seed_, self.t = seed, 0
        return 0, {}

    def step(self, action):
        self.t += 1
        if self.seed_ % 2 and self.t == 2:
            raise RuntimeError(f"flaky sensor at step {self.t}")
        done = self.t == 3
        return 0, 1.0, done, False, {"completeness": self.t / 3}


@pytest.fixture()
def flaky_id():
    gym.register("FlakyTest-v0", entry_point=FlakyEnv)
    yield "FlakyTest-v0"
    gym.registry.pop("FlakyTest-v0", None)
    FlakyEnv.interrupt_seed = None


def test_an_episode_that_raises_is_reported_and_the_run_goes_on(capsys, tmp_path, flaky_id):
    code, out, err = run_cli(capsys, "run", "--env", flaky_id, "--policy", "random", "--episodes", "4",
                             "--quiet", "--out", str(tmp_path))
    assert code == 1
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "2 of 4 episodes raised an error" in err
    data = json.loads((tmp_path / "report.json").read_text())
    episodes = data["episodes"]
    assert [e["seed"] for e in episodes] == [0, 1, 2, 3]  # every episode ran
    assert [e["error"] for e in episodes] == [None, "RuntimeError: flaky sensor at step 2", None,
                                              "RuntimeError: flaky sensor at step 2"]
    assert episodes[1]["steps"] == 1 and "RuntimeError" in episodes[1]["traceback"]  # measured so far
    assert [e["error_kind"] for e in episodes] == [None, "infra", None, "infra"]  # the env raised
    (row,) = data["summary"]
    assert row["episodes"] == 4 and row["infra_errors"] == 2
    assert row["success"] == 1.0  # the two the env raised in measured nothing: left out of success too
    assert row["steps"] == 3.0 and row["completeness"] == 1.0  # means over the episodes that finished
    assert data["errors"] == [{"env": flaky_id, "split": None, "kwargs": "{}", "policy": "random",
                               "outcome": "infra_failed", "error": "RuntimeError: flaky sensor at step 2",
                               "count": 2, "seeds": [1, 3], "instances": [None, None]}]
    md = (tmp_path / "report.md").read_text()
    assert md.startswith("| env | policy | episodes | infra_errors | truncated | return |")  # no split: as before
    assert f"| {flaky_id} | random | 4 | 2 | 0 | 3.000 [3.00, 3.00] | 1.000 [1.00, 1.00] | 1.000 [1.00, 1.00] | 3 | 0 |" in md
    assert f"- {flaky_id} x random: 2 episode(s) (seed 1, 3): RuntimeError: flaky sensor at step 2" in md
    assert "infrastructure failure(s), left out of the means" in md
    assert "rerun with --retry-errors to run the 2 infrastructure failure(s) again" in err
    assert "Errors" in out and "flaky sensor" in out  # printed too


def test_interrupt_keeps_the_episodes_done_so_far(capsys, tmp_path, flaky_id):
    FlakyEnv.interrupt_seed = 2
    code, out, err = run_cli(capsys, "run", "--env", flaky_id, "--policy", "random", "--episodes", "4",
                             "--quiet", "--out", str(tmp_path))
    assert code == 130 and "interrupted after 2 episode(s)" in err
    data = json.loads((tmp_path / "report.json").read_text())
    assert [e["seed"] for e in data["episodes"]] == [0, 1]


class GatedEnv(FlakyEnv):
    """Three steps per episode; ``step`` raises (an env or server failure) on odd seeds while
    the ``gate`` file does not exist."""

    def __init__(self, gate: str = ""):
        self.gate = gate

    def step(self, action):
        self.t += 1
        if self.seed_ % 2 and not Path(self.gate).exists():
            raise ConnectionError("the simulator server is down")
        return 0, 1.0, self.t == 3, False, {"completeness": self.t / 3}


def test_retry_errors_reruns_the_infrastructure_failures(capsys, tmp_path):
    gym.register("GatedTest-v0", entry_point=GatedEnv)
    gate, out = tmp_path / "gate", tmp_path / "out"
    argv = ["run", "--env", "GatedTest-v0", "--env-kwargs", json.dumps({"gate": str(gate)}), "--policy", "random",
            "--episodes", "4", "--quiet", "--out", str(out)]
    try:
        code, _, err = run_cli(capsys, *argv)
        assert code == 1 and "rerun with --retry-errors to run the 2 infrastructure failure(s) again" in err
        gate.touch()  # the server is back
        code, _, err = run_cli(capsys, *argv)  # resuming keeps the stored failures
        assert code == 1 and "resumed 4 of 4 episodes" in err
        code, out_text, err = run_cli(capsys, *argv, "--retry-errors")
        assert code == 0, err
        assert "retrying 2 episode(s) that failed on infrastructure" in err and "running the other 2" in err
    finally:
        gym.registry.pop("GatedTest-v0", None)
    data = json.loads((out / "report.json").read_text())
    assert [e["error"] for e in data["episodes"]] == [None] * 4 and data["errors"] == []
    assert data["summary"][0]["infra_errors"] == 0 and data["summary"][0]["success"] == 1.0
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 6  # the retries appended
    assert "**Errors**" not in out_text


def test_success_means_a_complete_feasible_plan():
    assert episode_success(True, 1.0, {"optimality": 0.4, "constraint_satisfaction": 1.0})
    assert episode_success(np.bool_(True), 1.0, {})  # envs without REALM metrics
    assert not episode_success(False, 1.0, {})  # truncated / cut by the step limit
    assert not episode_success(True, 0.75, {})  # a sub-goal missed
    assert not episode_success(True, 1.0, {"constraint_satisfaction": 0.9})  # infeasible


# ---------------------------------------------------------------------------------- P11 meaning
def test_a_complete_p11_schedule_is_a_success_with_completeness_one(capsys, tmp_path):
    code, out, err = run_cli(capsys, "run", "--env", "Realm-P11-v0", "--env-kwargs", '{"instance": "ft06"}',
                             "--policy", "spt", "--episodes", "2", "--quiet", "--out", str(tmp_path))
    assert code == 0, err
    (row,) = json.loads((tmp_path / "report.json").read_text())["summary"]
    assert row["success"] == 1.0 and row["completeness"] == 1.0
    assert row["optimality"] < 1.0  # SPT is complete but worse than the reference
    assert row["optimality"] == pytest.approx(row["reference_makespan"] / row["makespan"])
    line = next(line for line in out.splitlines() if line.startswith("| Realm-P11-v0 | spt |"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    header = [c.strip() for c in out.splitlines()[0].strip("|").split("|")]
    values = dict(zip(header, cells))
    assert values["kwargs"] == '{"instance": "ft06"}'
    assert values["episodes"] == "2" and values["infra_errors"] == "0" and values["steps"] == "36"  # integers
    assert values["success"] == "1.000 [1.00, 1.00]" and values["completeness"] == "1.000 [1.00, 1.00]"
    md = (tmp_path / "report.md").read_text()
    assert "- `success`: share of episodes that reached a complete, feasible plan" in md
    assert "- `completeness`: mean share of the env's sub-goals passed" in md


def test_warnings_print_as_one_line_without_source():
    """Issue 38: a repair warning printed as a raw Python warning with its source line."""
    import subprocess
    import sys

    code = ("import warnings\n"
            "from crab_gym.cli import one_line_warnings\n"
            "with one_line_warnings():\n"
            "    warnings.warn(\"p1.json: field 'windows[2]': repaired\\n  (the end before the start)\")\n"
            "warnings.warn('after')\n")
    err = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr
    lines = err.splitlines()
    assert lines[0] == "crab-gym: warning: p1.json: field 'windows[2]': repaired (the end before the start)"
    assert "UserWarning: after" in lines[1]  # put back after the command


def test_a_ray_client_address_without_the_client_is_one_line(capsys):
    """Issue 38: ``--address ray://...`` without ``ray[client]`` gave a 33-line traceback."""
    import importlib.util

    if importlib.util.find_spec("ray") is None or importlib.util.find_spec("grpc") is not None:
        pytest.skip("needs ray without its client")
    code, _, err = run_cli(capsys, "run", "--env", "Realm-P1-v0", "--backend", "ray", "--address",
                           "ray://127.0.0.1:10001")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert 'pip install "ray[client]"' in err and "--address auto" in err
