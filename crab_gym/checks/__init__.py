"""The checks a user runs on an env: its contract, its scoring contract, and (the
``multiagent`` extra) the joint contract of a multi-agent view.

They sit on top of the suite: they drive envs with its baselines and shipped instances, so
nothing in the library imports them. ``python -m crab_gym.checks`` runs them from the shell.

* :mod:`~crab_gym.checks.contract`: :func:`check_contract`, any env, thousands of mixed steps;
* :mod:`~crab_gym.checks.scoring`: the scoring contract's promises 1-6, honest plans built to
  break them; :mod:`~crab_gym.checks.scoring_probes`: promise 7, the adversary;
* :mod:`~crab_gym.checks.joint_contract`: ``check_joint_contract`` (import it from there: it
  needs PettingZoo).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from crab_gym.checks.contract import (
    ContractError,
    ContractReport,
    check_contract,
    registered_env_ids,
    same,
    state_snapshot,
)
from crab_gym.checks.scoring import ScoringReport
from crab_gym.checks.scoring import check_scoring as check_honest_roles
from crab_gym.checks.scoring_probes import check_adversarial

__all__ = [
    "ContractError", "ContractReport", "ScoringReport", "check_adversarial", "check_contract",
    "check_honest_roles", "check_scoring", "registered_env_ids", "same", "state_snapshot",
]


def check_scoring(env_id: str, *, adversarial: bool = False, probe_options: Mapping[str, Any] | None = None,
                  **options: Any) -> ScoringReport:
    """The scoring contract of ``env_id``: promises 1-6 with plans built to break them
    (:func:`crab_gym.checks.scoring.check_scoring`, whose ``options`` it takes), and with
    ``adversarial=True`` promise 7 too: the adversarial probes
    (:func:`crab_gym.checks.scoring_probes.check_adversarial`, with ``probe_options``) on the
    same instances (default: the shipped small and medium ones), their findings in the report."""
    report = check_honest_roles(env_id, **options)
    if adversarial:
        probes = dict(probe_options or {})
        if options.get("instances") is not None:
            probes.setdefault("instances", options["instances"])
        probes.setdefault("make_kwargs", options.get("make_kwargs"))
        report.absorb(check_adversarial(env_id, **probes))
    return report


