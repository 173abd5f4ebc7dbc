"""The Ray backend on a local Ray (2 CPUs): the serial report, and a dead worker's episode
retried once then recorded as failed. Skipped only when ray is not installed."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

from crab_gym.baselines.registry import named_policies  # noqa: E402
from crab_gym.evaluation.benchmark import Benchmark  # noqa: E402
from tests.evaluation import scale_envs  # noqa: E402,F401 - registers CrashingLamps-v0

FT06 = ("Realm-P11-v0", {"instance": "ft06"})


@pytest.fixture(scope="module")
def local_ray(tmp_path_factory):
    cache = tmp_path_factory.mktemp("ray_cache")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"CRAB_GYM_CACHE_DIR": str(cache)}})
    yield
    ray.shutdown()


def test_ray_gives_the_serial_report(local_ray):
    names = named_policies(["random", "spt", "oracle"])
    serial = Benchmark([FT06], seeds=[0, 1]).run(names, progress=False)
    on_ray = Benchmark([FT06], seeds=[0, 1], workers=2, backend="ray").run(names, progress=False)
    assert on_ray.comparable() == serial.comparable()
    assert [(r.policy, r.seed) for r in on_ray.results] == [
        ("oracle", 0), ("oracle", 1), ("random", 0), ("random", 1), ("spt", 0), ("spt", 1)]
    assert {r.error for r in on_ray.results} == {None}


def test_a_dead_ray_worker_gets_one_retry_then_the_episode_is_failed(local_ray, tmp_path):
    marker = tmp_path / "attempts.txt"
    env = ("CrashingLamps-v0", {"crash_seed": 1, "marker": str(marker)})
    report = Benchmark([env], seeds=[0, 1, 2], workers=2, backend="ray").run(
        {"first": scale_envs.first_legal}, progress=False)
    assert len(marker.read_text().splitlines()) == 2  # first attempt and one retry
    errors = {r.seed: r.error for r in report.results}
    assert errors[0] is None and errors[2] is None
    assert errors[1].startswith("WorkerDied: the Ray worker running it died (")
