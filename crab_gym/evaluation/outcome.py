"""The three outcomes of an episode, kept apart in the report: finished, agent failure, infrastructure failure.

* ``finished``: the env ended the episode with a complete, feasible plan (the runner's
  ``success``; its optimality is a metric of its own).
* ``agent_failed``: the agent did not get there: its plan is infeasible or incomplete, it
  made invalid actions until an env or the step limit cut it (``truncated``), or **its own
  code raised** (a bug of the policy, a move it cannot make on this instance). It counts in
  every mean, as a failure.
* ``infra_failed``: the episode measured nothing about the agent, because something around
  it raised: making, resetting, stepping or closing the env, solving the reference of the
  metrics, the worker that ran it (``WorkerDied``), or an **infrastructure exception** from
  the policy's side (:func:`is_infrastructure`: the model API failing after its retries,
  ``LLMAgentError``; a timeout; a lost connection; a missing package). It is left out of
  every mean, counted in ``infra_errors``, listed under Errors, and run again by
  ``crab-gym run --retry-errors``.

Why a policy's own exception is the agent's: a policy that raised on the instances it cannot
solve would otherwise leave them out of its means, and score higher by crashing (the scoring
contract: no strategy raises a score without a better plan). Why the model API's failure is
not: the agent never got an answer to act on, and a rerun may well get one. An invalid action
never raises (the env rejects it and says why), so it is always the agent's.

The runner writes the blame into each record (``EpisodeResult.error_kind``: ``"agent"`` or
``"infra"``); a record written before that field (an old ``episodes.jsonl``, an MCP episode
whose env raised) says nothing, and its exception is infrastructure, as every exception was
left out of the means before.
"""

from __future__ import annotations

from typing import Protocol

FINISHED = "finished"
AGENT_FAILED = "agent_failed"
INFRA_FAILED = "infra_failed"
#: The outcomes, in report order.
OUTCOMES = (FINISHED, AGENT_FAILED, INFRA_FAILED)

#: ``EpisodeResult.error_kind``: who raised.
AGENT, INFRA = "agent", "infra"


class InfrastructureError(RuntimeError):
    """Raised by a policy when what failed is the infrastructure it relies on, not its own
    decision (a model endpoint that keeps failing): the episode is an infrastructure failure,
    left out of the means and retried by ``--retry-errors``. Subclass it for such errors."""


#: Exceptions that are infrastructure failures wherever they are raised: besides
#: :class:`InfrastructureError`, the machine's own (a timeout, a lost connection, a missing
#: package or extra, memory).
INFRASTRUCTURE_EXCEPTIONS: tuple[type[BaseException], ...] = (
    InfrastructureError, TimeoutError, ConnectionError, ImportError, MemoryError,
)


class _Record(Protocol):
    error: str | None
    error_kind: str | None
    success: bool


def is_infrastructure(exc: BaseException) -> bool:
    """Whether ``exc`` is an infrastructure failure even when the policy's code raised it."""
    return isinstance(exc, INFRASTRUCTURE_EXCEPTIONS)


def blame(exc: BaseException, *, in_policy: bool) -> str:
    """The ``error_kind`` of an episode that raised ``exc``: the agent's when the policy's code
    raised it and it is no infrastructure exception; else the infrastructure's."""
    return AGENT if in_policy and not is_infrastructure(exc) else INFRA


def is_infra_failure(result: _Record) -> bool:
    """The episode raised and the agent is not to blame (records without a blame included)."""
    return result.error is not None and result.error_kind != AGENT


def outcome(result: _Record) -> str:
    """``finished``, ``agent_failed`` or ``infra_failed`` (see the module docstring)."""
    if is_infra_failure(result):
        return INFRA_FAILED
    return FINISHED if result.success and result.error is None else AGENT_FAILED
