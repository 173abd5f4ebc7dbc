"""What happens to an episode whose worker dies: one retry, then a failed record.

Shared by the process and Ray executors so that both backends report a death the same way.
"""

from __future__ import annotations

from crab_gym.evaluation.episode import EpisodeResult, EpisodeSpec
from crab_gym.evaluation.outcome import INFRA

#: How many times an episode whose worker died is run again before it is recorded as failed.
WORKER_DEATH_RETRIES = 1


def died_result(spec: EpisodeSpec, cause: str) -> EpisodeResult:
    """The record of an episode whose worker died on every attempt."""
    result = EpisodeResult.for_spec(spec)
    result.error = f"WorkerDied: {cause} ({WORKER_DEATH_RETRIES + 1} attempts)"
    result.error_kind = INFRA  # a lost worker measured nothing about the agent
    return result
