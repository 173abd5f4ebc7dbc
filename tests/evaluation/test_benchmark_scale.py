"""Evaluation at scale: parallel runs give the serial report, episodes stream to
episodes.jsonl and a rerun resumes from it, a dead worker costs one retry then one failure.

"The same report" means equal except the wall-clock values (``time_s``, ``llm_latency_s``, ``latency_s`` and
per episode ``wall_time_s``): :meth:`BenchmarkReport.comparable` drops exactly those.
"""

from __future__ import annotations

import json
import random

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.baselines.registry import named_policies
from crab_gym.evaluation.benchmark import Benchmark, BenchmarkReport
from crab_gym.evaluation.episode import EpisodeResult, EpisodeSpec
from crab_gym.evaluation.episode_store import EpisodeStore, EpisodeStoreError
from crab_gym.evaluation.progress import EpisodeProgress
from crab_gym.evaluation.report import WALL_CLOCK_FIELDS, strip_wall_clock
from tests.evaluation import scale_envs  # noqa: F401 - registers SlowLamps-v0 and CrashingLamps-v0

FT06 = ("Realm-P11-v0", {"instance": "ft06"})


@pytest.fixture()
def lamps_id():
    """Registered at run time with a string entry point: workers get the registration."""
    gym.register("ScaleLamps-v0", entry_point="tests.core.toy_env:LampsEnv")
    yield "ScaleLamps-v0"
    gym.registry.pop("ScaleLamps-v0", None)


def run(envs, seeds, names=("random",), **kwargs):
    run_kwargs = {k: kwargs.pop(k) for k in ("out", "log") if k in kwargs}
    return Benchmark(envs, seeds=seeds, max_steps=200, **kwargs).run(
        named_policies(list(names)), progress=False, **run_kwargs)


# ---------------------------------------------------------------------------------- seeds and order
def test_each_seed_is_fixed_by_env_policy_and_index():
    bench = Benchmark(["Realm-P11-v0", "Realm-P2-v0"], seeds=[7, 3, 11])
    specs = bench.specs(["spt", "random"])
    assert len(specs) == 12 and len({s.key for s in specs}) == 12
    assert {(s.env_id, s.policy, s.index): s.seed for s in specs} == {
        (e, p, i): [7, 3, 11][i] for e in ("Realm-P11-v0", "Realm-P2-v0") for p in ("spt", "random") for i in range(3)
    }
    # the report order is by spec: P2 before P11 (natural order), then policy, then index
    ordered = sorted(specs, key=lambda s: s.sort_key)
    assert [(s.env_id, s.policy, s.index) for s in ordered[:4]] == [
        ("Realm-P2-v0", "random", 0), ("Realm-P2-v0", "random", 1), ("Realm-P2-v0", "random", 2),
        ("Realm-P2-v0", "spt", 0)]
    assert EpisodeSpec.from_dict(json.loads(specs[0].key)) == specs[0]  # the key is the JSON spec


def test_completion_order_never_reaches_the_report(lamps_id):
    report = run([lamps_id], [0, 1, 2, 3], ("random", "oracle"))
    shuffled = list(report.results)
    random.Random(5).shuffle(shuffled)
    assert BenchmarkReport(shuffled).to_json() == report.to_json()


def test_processes_and_threads_give_the_serial_report(lamps_id):
    envs, seeds, names = [lamps_id, FT06], [0, 1, 2], ("random", "oracle")
    serial = run(envs, seeds, names).comparable()
    assert run(envs, seeds, names, workers=2).comparable() == serial  # spawned processes
    assert run(envs, seeds, names, workers=3, backend="thread").comparable() == serial
    assert [(e["env_id"], e["policy"], e["seed"]) for e in serial["episodes"][:4]] == [
        ("Realm-P11-v0", "oracle", 0), ("Realm-P11-v0", "oracle", 1), ("Realm-P11-v0", "oracle", 2),
        ("Realm-P11-v0", "random", 0)]
    # errors are part of the report too: the oracle has no plan for the toy env, on every backend
    assert {(e["env_id"], e["policy"]) for e in serial["episodes"] if e["error"]} == {("ScaleLamps-v0", "oracle")}
    assert len(serial["episodes"]) == 12


def test_comparable_drops_exactly_the_wall_clock_values(lamps_id):
    data = run([lamps_id], [0]).to_json()
    data["episodes"][0]["usage"] = {"total_tokens": 7, "latency_s": 1.5}
    stripped = strip_wall_clock(data)
    assert "time_s" in data["summary"][0] and "time_s" not in stripped["summary"][0]
    assert stripped["episodes"][0]["usage"] == {"total_tokens": 7}
    assert "wall_time_s" not in stripped["episodes"][0]
    kept = set(data["episodes"][0]) - set(stripped["episodes"][0])
    assert kept == {"wall_time_s"} and set(WALL_CLOCK_FIELDS) == {"time_s", "llm_latency_s", "latency_s", "wall_time_s", "wall_s"}
    assert stripped["columns"] == data["columns"]  # the legend keeps describing every column


def test_a_dead_worker_gets_one_retry_then_the_episode_is_failed(tmp_path):
    marker = tmp_path / "attempts.txt"
    env = ("CrashingLamps-v0", {"crash_seed": 1, "marker": str(marker)})
    report = Benchmark([env], seeds=[0, 1, 2], workers=2).run({"first": scale_envs.first_legal}, progress=False)
    assert len(marker.read_text().splitlines()) == 2  # first attempt and one retry
    errors = {r.seed: r.error for r in report.results}
    assert errors[0] is None and errors[2] is None
    assert errors[1].startswith("WorkerDied: the worker process running it exited with code 3 (2 attempts)")
    (row,) = report.summary()
    assert row["episodes"] == 3 and row["infra_errors"] == 1  # a lost worker: an infrastructure failure
    assert report.results[1].outcome == "infra_failed"  # left out of every mean, success included
    assert row["success"] == (report.results[0].success + report.results[2].success) / 2


def test_workers_need_named_policies(lamps_id):
    bench = Benchmark([lamps_id], seeds=[0], workers=2)
    with pytest.raises(TypeError, match="named_policies"):
        bench.run({"mine": lambda env: None}, progress=False)
    with pytest.raises(ValueError, match="backend='ray'"):
        Benchmark([lamps_id], address="auto")


# ---------------------------------------------------------------------------------- resume
def test_a_rerun_resumes_and_gives_the_uninterrupted_report(lamps_id, tmp_path):
    notes: list[str] = []
    first = run([lamps_id], [0, 1], ("random", "oracle"), out=tmp_path, log=notes.append)
    assert first.resumed == 0 and notes == []
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 4
    again = run([lamps_id], [0, 1, 2, 3], ("random", "oracle"), out=tmp_path, log=notes.append)
    assert again.resumed == 4
    assert notes == [f"resumed 4 of 8 episodes from {tmp_path / 'episodes.jsonl'}; running the other 4"]
    assert len((tmp_path / "episodes.jsonl").read_text().splitlines()) == 8
    uninterrupted = run([lamps_id], [0, 1, 2, 3], ("random", "oracle"))
    assert again.comparable() == uninterrupted.comparable()
    # nothing left to run: everything resumed, the same report
    last = run([lamps_id], [0, 1, 2, 3], ("random", "oracle"), out=tmp_path)
    assert last.resumed == 8 and last.comparable() == uninterrupted.comparable()


# ---------------------------------------------------------------------------------- the store
def _result(seed: int) -> EpisodeResult:
    return EpisodeResult.for_spec(EpisodeSpec("E-v0", {}, "p", seed, seed, 10))


def test_a_torn_last_line_is_dropped_with_a_note_and_cut_before_appending(tmp_path):
    with EpisodeStore(tmp_path) as store:
        store.extend([_result(0), _result(1)])
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(path.read_bytes() + b'{"env_id": "E-v0", "se')  # killed mid-write
    store = EpisodeStore(tmp_path)
    assert [r.seed for r in store.load()] == [0, 1]
    assert store.notes == [f"{path} line 3: dropped a torn last line (22 bytes; an interrupted write)"]
    with store:
        store.append(_result(2))
    assert [r.seed for r in EpisodeStore(tmp_path).load()] == [0, 1, 2]
    assert len(path.read_text().splitlines()) == 3


def test_a_complete_last_line_without_its_newline_is_kept(tmp_path):
    with EpisodeStore(tmp_path) as store:
        store.append(_result(0))
    path = tmp_path / "episodes.jsonl"
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    with EpisodeStore(tmp_path) as store:
        store.append(_result(1))
    assert [r.seed for r in EpisodeStore(tmp_path).load()] == [0, 1]


def test_a_corrupt_line_in_the_middle_is_an_error_naming_file_and_line(tmp_path):
    with EpisodeStore(tmp_path) as store:
        store.extend([_result(0), _result(1)])
    path = tmp_path / "episodes.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "garbage{", lines[1]]) + "\n")
    with pytest.raises(EpisodeStoreError, match=r"episodes.jsonl line 2 is corrupt: not JSON"):
        EpisodeStore(tmp_path).load()
    path.write_text("\n".join([lines[0], "[1, 2]", lines[1]]) + "\n")
    with pytest.raises(EpisodeStoreError, match=r"line 2 is corrupt: expected a JSON object, got list"):
        EpisodeStore(tmp_path).load()


def test_a_duplicate_episode_counts_once(tmp_path):
    with EpisodeStore(tmp_path) as store:
        store.extend([_result(0), _result(0), _result(1)])
    assert [r.seed for r in EpisodeStore(tmp_path).load()] == [0, 1]


# ---------------------------------------------------------------------------------- progress
def test_one_bar_counts_done_failed_and_resumed():
    bar = EpisodeProgress(10, resumed=3, enabled=True)
    ok, failed = _result(0), _result(1)
    failed.error = "RuntimeError: boom"
    bar.update(ok)
    bar.update(failed)
    assert (bar.done, bar.failed, bar.resumed, bar.bar.n, bar.bar.total) == (2, 1, 3, 5, 10)
    assert bar.bar.postfix == "done=2, failed=1, resumed=3"
    bar.close()
