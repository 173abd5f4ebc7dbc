"""The module paths issue 37 moved: old path -> new module. Each old path is a shim for one
release (a DeprecationWarning, then the new module's objects); the layering test gives a shim its
target's floor, and checks that nothing in the code base imports one."""

from __future__ import annotations

#: Old module path -> the module it moved to (issue 37); the old path is a warning shim.
SHIMS: dict[str, str] = {
    **{f"crab_gym.core.{name}": f"crab_gym.evaluation.{name}" for name in (
        "benchmark", "card", "cpu_turn", "episode", "episode_runner", "episode_store", "executors", "llm_report",
        "outcome", "progress", "ray_executor", "report", "report_rows", "stats", "unfinished", "worker_death")},
    "crab_gym.envs.testing": "crab_gym.checks.contract",
    "crab_gym.envs.scoring_check": "crab_gym.checks.scoring",
    "crab_gym.envs.scoring_probes": "crab_gym.checks.scoring_probes",
    "crab_gym.multiagent.testing": "crab_gym.checks.joint_contract",
}
