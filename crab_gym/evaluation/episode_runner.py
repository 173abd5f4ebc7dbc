"""Play one episode from its spec, in whatever process or thread runs it.

:class:`EpisodeContext` is what a worker receives once (the policy factories and the env
registrations the driver knows); after that, each episode needs only its
:class:`~crab_gym.evaluation.episode.EpisodeSpec`. Factories must be picklable for process and Ray
workers: the baselines registry's named factories are (they rebuild the policy by name).

An :class:`EnvPool` (one per worker: the serial run, each process worker, the thread pool)
keeps the env of an episode that ended cleanly and hands it to the next episode of the same
id and keyword arguments, which resets it: ``gym.make`` per episode cost 9 % of a cold P7 run
(each make loads the instance and builds spaces and evaluators again). The records are the
ones a fresh env gives (a test compares them); an episode that raised closes its env.

A ``reset`` that takes more than :data:`SLOW_RESET_NOTICE_S` seconds (an env with
``generator=`` draws a fresh instance and solves its reference at every reset) says so once on
stderr, naming the env and the seed, so that a run that seems stuck says what it waits on.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import traceback as tb
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

from crab_gym.evaluation.cpu_turn import CpuTurn
from crab_gym.evaluation.episode import EpisodeResult, EpisodeSpec, episode_success
from crab_gym.evaluation.outcome import INFRA, blame
from crab_gym.evaluation.unfinished import no_plan_metrics

#: Seconds a reset may take before the runner says on stderr what it waits on.
SLOW_RESET_NOTICE_S = 5.0


class Policy(Protocol):
    """Anything that maps an observation (and info) to an action for ``env.step``."""

    def __call__(self, observation: Any, info: dict[str, Any]) -> Any: ...


#: A policy factory receives the (wrapped) env it will act in.
PolicyFactory = Callable[..., Policy]


@dataclass
class PlayedEpisode:
    """What a policy that plays whole episodes itself reports (a team of LLMs, one per actor,
    driving the multi-agent form of the env): ``policy.play_episode(env, seed=, max_steps=)``
    resets and plays ``env`` and returns this; ``info`` is the last info (``metrics`` inside)."""

    episode_return: float
    steps: int
    invalid_actions: int
    completeness: float
    terminated: bool
    truncated: bool
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class EpisodeContext:
    """Everything an episode needs besides its spec; set up once per worker.

    Attributes:
        policies: policy name -> factory(env[, **policy_kwargs]).
        env_specs: registrations to replay in a fresh process (ids the driver registered at
            run time, which ``import crab_gym`` in a worker would not).
    """

    policies: Mapping[str, PolicyFactory]
    env_specs: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def for_envs(cls, policies: Mapping[str, PolicyFactory], env_ids: list[str]) -> EpisodeContext:
        """A context carrying the driver's registration of each of ``env_ids``."""
        specs = {e: gym.registry[e] for e in env_ids if e in gym.registry}
        return cls(dict(policies), specs)

    def register_envs(self) -> None:
        """Make the driver's env ids known in this process (a no-op where they already are)."""
        # the REALM ids are already there: importing this module imported crab_gym
        for env_id, spec in self.env_specs.items():
            if env_id not in gym.registry:
                gym.registry[env_id] = spec


class EnvPool:
    """Idle envs by (env id, keyword arguments), for the next episode that asks for the same.

    An env is taken out while an episode uses it (one user at a time, so threads may share a
    pool) and put back only after a clean episode. Keyword arguments that JSON cannot spell
    (objects passed by a caller in this process) never share an env, nor do envs made with
    ``generator=``: they draw a new instance at every reset, so reuse saves nothing, and a
    reused Realm-J4-v0 generator env scored adaptation 1.0 where a fresh one scored 0.80."""

    def __init__(self) -> None:
        self._idle: dict[str, list[gym.Env]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(env_id: str, env_kwargs: Mapping[str, Any]) -> str | None:
        if "generator" in env_kwargs:
            return None
        try:
            return json.dumps([env_id, dict(env_kwargs)], sort_keys=True)
        except (TypeError, ValueError):
            return None

    def acquire(self, env_id: str, env_kwargs: Mapping[str, Any]) -> gym.Env:
        """An idle env made with these arguments, else a new ``gym.make``."""
        key = self._key(env_id, env_kwargs)
        with self._lock:
            idle = self._idle.get(key, []) if key is not None else []
            env = idle.pop() if idle else None
        return env if env is not None else gym.make(env_id, **env_kwargs)

    def release(self, env_id: str, env_kwargs: Mapping[str, Any], env: gym.Env) -> bool:
        """Keep ``env`` for the next episode; False (the caller closes it) if it cannot be shared."""
        key = self._key(env_id, env_kwargs)
        if key is None:
            return False
        with self._lock:
            self._idle.setdefault(key, []).append(env)
        return True

    def close(self) -> None:
        """Close every idle env (a failing close loses nothing: every episode is recorded)."""
        with self._lock:
            envs = [env for idle in self._idle.values() for env in idle]
            self._idle.clear()
        for env in envs:
            try:
                env.close()
            except Exception:  # noqa: BLE001, S110 - the episodes are done and recorded
                pass


def run_episode(spec: EpisodeSpec, context: EpisodeContext, turn: CpuTurn | None = None,
                pool: EnvPool | None = None) -> EpisodeResult:
    """One episode; any exception becomes the result's ``error`` (the run goes on), blamed
    on the agent or the infrastructure (``error_kind``, :func:`crab_gym.evaluation.outcome.blame`). With a
    ``pool`` the env comes from it and goes back to it after a clean episode."""
    with turn.held() if turn is not None else nullcontext():
        return _guarded_episode(spec, context, pool)


class _PolicyCalls:
    """Whose code runs now, for the blame of an exception (:mod:`crab_gym.evaluation.outcome`): the
    policy's (building it, ``reset``, ``seed``, choosing an action, ``play_episode``) or the
    rest (the env, the metrics, the runner). ``active`` is set around the policy's calls and
    cleared only when they return, so an exception leaves it standing."""

    def __init__(self) -> None:
        self.active = False

    def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        self.active = True
        out = fn(*args, **kwargs)
        self.active = False
        return out


def _guarded_episode(spec: EpisodeSpec, context: EpisodeContext, pool: EnvPool | None) -> EpisodeResult:
    tally = EpisodeResult.for_spec(spec)
    start = time.perf_counter()
    env: gym.Env | None = None
    policy: Any = None
    calls = _PolicyCalls()
    try:
        env = pool.acquire(spec.env_id, spec.env_kwargs) if pool is not None else gym.make(spec.env_id, **spec.env_kwargs)
        factory = context.policies[spec.policy]
        policy = calls.run(factory, env, **spec.policy_kwargs)
        _play(env, policy, tally, spec.max_steps, calls)
    except Exception as exc:  # noqa: BLE001 - recorded, and the run goes on
        tally.error = f"{type(exc).__name__}: {exc}"
        tally.error_kind = blame(exc, in_policy=calls.active)
        tally.traceback = tb.format_exc()
        tally.success = False
    finally:
        kept = env is not None and pool is not None and tally.error is None and pool.release(
            spec.env_id, spec.env_kwargs, env)
        if env is not None and not kept:
            _close(env, tally)
        usage = getattr(policy, "usage", None)
        if isinstance(usage, Mapping):  # resource use the policy measured (LLM tokens, latency)
            tally.usage = dict(usage)
        tally.wall_time_s = time.perf_counter() - start
    return tally


def _close(env: gym.Env, tally: EpisodeResult) -> None:
    """Close ``env``; a failing close is the episode's error (unless it already has one)."""
    try:
        env.close()
    except Exception as exc:  # noqa: BLE001 - a failing close must not lose the episode
        if tally.error is None:
            tally.error = f"{type(exc).__name__} while closing the env: {exc}"
            tally.error_kind = INFRA
            tally.traceback = tb.format_exc()
            tally.success = False


@contextmanager
def _announce_if_slow(tally: EpisodeResult) -> Iterator[None]:
    """Say once on stderr that a reset is still running after SLOW_RESET_NOTICE_S seconds."""
    kwargs = f" {tally.env_kwargs}" if tally.env_kwargs else ""

    def notice() -> None:
        print(f"crab_gym: {tally.env_id}{kwargs} x {tally.policy}, seed {tally.seed}: reset still running after "
              f"{SLOW_RESET_NOTICE_S:g} s (drawing an instance and solving its reference; a generator= env "
              "does this at every reset)", file=sys.stderr, flush=True)

    timer = threading.Timer(SLOW_RESET_NOTICE_S, notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _play(env: gym.Env, policy: Policy, tally: EpisodeResult, max_steps: int, calls: _PolicyCalls) -> None:
    """Play one episode, keeping ``tally`` up to date after every step (so that an
    exception leaves what was measured so far); ``calls`` runs the policy's code."""
    if callable(getattr(policy, "play_episode", None)):
        _play_whole(env, policy, tally, max_steps, calls)
        return
    with _announce_if_slow(tally):
        obs, info = env.reset(seed=tally.seed)
    if hasattr(policy, "reset"):
        calls.run(policy.reset, env)
    if hasattr(policy, "seed"):  # a stochastic policy draws its own stream per episode seed
        calls.run(policy.seed, tally.seed)
    terminated = truncated = False
    fired = _fired(None, info)
    while not (terminated or truncated):
        action = calls.run(policy, obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        tally.episode_return += float(reward)
        tally.steps += 1
        tally.invalid_actions += int(info.get("valid", True) is False)
        tally.completeness = float(info.get("completeness", 0.0))
        fired = _fired(fired, info)
        if tally.steps >= max_steps and not terminated:
            truncated = True
    tally.terminated, tally.truncated = bool(terminated), bool(truncated)
    settle_episode(env, tally, info, fired)
    tally.success = episode_success(tally.terminated, tally.completeness, tally.metrics)


def _fired(count: int | None, info: Mapping[str, Any]) -> int | None:
    """Disruptions fired so far: ``count`` plus those this ``info`` reports (the disruption
    protocol reports each once in ``info["disruptions"]``); None while the env reports none."""
    fired = info.get("disruptions")
    if not isinstance(fired, list):
        return count
    return (count or 0) + len(fired)


def _play_whole(env: gym.Env, policy: Any, tally: EpisodeResult, max_steps: int, calls: _PolicyCalls) -> None:
    """A policy that plays the whole episode itself (:class:`PlayedEpisode`); same tally. What
    raises inside ``play_episode`` is the policy's (it steps the env itself), unless it is an
    infrastructure exception."""
    played: PlayedEpisode = calls.run(policy.play_episode, env, seed=tally.seed, max_steps=max_steps)
    tally.episode_return, tally.steps = float(played.episode_return), int(played.steps)
    tally.invalid_actions, tally.completeness = int(played.invalid_actions), float(played.completeness)
    tally.terminated, tally.truncated = bool(played.terminated), bool(played.truncated)
    settle_episode(env, tally, played.info, None)
    tally.success = episode_success(tally.terminated, tally.completeness, tally.metrics)


def settle_episode(env: gym.Env, tally: EpisodeResult, info: Mapping[str, Any],
                   disruptions_fired: int | None) -> None:
    """Fill in ``tally``'s metrics (:func:`episode_metrics`) and add to its return what the env
    settled after the episode (:func:`deferred_return`), so that the return agrees with the
    optimality reported beside it."""
    tally.metrics = episode_metrics(env, info, tally.terminated, disruptions_fired)
    tally.deferred_return = deferred_return(env) if tally.terminated else 0.0
    tally.episode_return += tally.deferred_return


@runtime_checkable
class DefersScoring(Protocol):
    """An env that keeps solves out of ``step()`` (every REALM env): after an episode it ends,
    ``finish_metrics()`` runs them and gives the complete metrics, and ``deferred_reward()``
    the part of the return the last reward withheld."""

    def finish_metrics(self) -> dict[str, Any]: ...
    def deferred_reward(self) -> float: ...


def deferred_return(env: gym.Env) -> float:
    """The part of a finished episode's return its env withheld from the last reward (a
    reference solved after the episode): ``env.unwrapped.deferred_reward()``, 0 for an env
    that defers nothing."""
    base = env.unwrapped
    return float(base.deferred_reward()) if isinstance(base, DefersScoring) else 0.0


def episode_metrics(env: gym.Env, info: Mapping[str, Any], terminated: bool,
                    disruptions_fired: int | None) -> dict[str, Any]:
    """The episode's record of metrics: :func:`finished_metrics` of an episode the env ended;
    of one it did not end (cut by a step or time limit), no plan: a REALM env's (one with
    ``finish_metrics``) score metrics that apply are 0 (:func:`~crab_gym.evaluation.unfinished.no_plan_metrics`;
    ``disruptions_fired``: how many disruptions struck before the cut, None if unknown)."""
    if terminated:
        return finished_metrics(env, info)
    metrics = dict(info.get("metrics", {}) or {})
    base = env.unwrapped
    if isinstance(base, DefersScoring):
        return no_plan_metrics(metrics, disruptions_fired)
    return metrics


def finished_metrics(env: gym.Env, info: Mapping[str, Any]) -> dict[str, Any]:
    """The episode's metrics from its last ``info``, with the work an env deferred out of
    ``step()`` done now: an env leaves its adaptation re-solve (``adaptation_pending``) and the
    solve of a reference nobody shipped or cached (``optimality_pending``: a generated
    instance) to the runner, and gives them through ``finish_metrics()``."""
    metrics = dict(info.get("metrics", {}) or {})
    if not (metrics.get("adaptation_pending") or metrics.get("optimality_pending")):
        return metrics
    base = env.unwrapped
    return dict(base.finish_metrics()) if isinstance(base, DefersScoring) else metrics
