"""Benchmark: run policies over envs for seeded episodes and report returns, sub-goals and
REALM metrics.

A run is a list of :class:`~crab_gym.evaluation.episode.EpisodeSpec` (env x kwargs x policy x
episode index; episode ``i`` has seed ``seeds[i]``, the same for every env and policy, so
policies meet the same instances). An executor runs them (in this thread, in worker
processes, in threads for I/O-bound policies, or on Ray); the report sorts them by spec, so
it does not depend on the backend or on the order in which episodes finish.

With ``out``, each finished episode is appended to ``out/episodes.jsonl`` at once (flushed
and fsynced): a rerun skips the episodes already there, and the report is rebuilt from that
file. A run holds the directory's lock while it runs (a second run into it is refused), and a
directory holding episodes that the run would not run (written with other envs, policies,
seeds or step caps) is refused too, so that two runs never mix in one report; a run that only
adds episodes (more seeds, another policy) to a directory extends it. The runner (not the
env) measures wall-clock time, so envs stay deterministic.

An episode that raises never loses the others: it is recorded with its error (blamed on the
agent or the infrastructure, :mod:`crab_gym.evaluation.outcome`) and the run goes on; a rerun with
``retry_errors`` runs the infrastructure failures again. A Ctrl-C still stops the run; the :class:`KeyboardInterrupt` then carries the
episodes finished so far as ``partial_report``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import closing, nullcontext
from pathlib import Path
from typing import Any

from crab_gym.evaluation.episode import EnvCase, EpisodeResult, EpisodeSpec, canonical_json, episode_success
from crab_gym.evaluation.episode_runner import EpisodeContext, Policy, PolicyFactory
from crab_gym.evaluation.episode_store import EpisodeStore, EpisodeStoreConflict
from crab_gym.evaluation.executors import check_picklable, make_executor
from crab_gym.evaluation.outcome import is_infra_failure
from crab_gym.evaluation.progress import EpisodeProgress
from crab_gym.evaluation.report import (
    COUNT_COLUMNS,
    LEGEND,
    REALM_METRICS,
    RUNNER_COLUMNS,
    WALL_CLOCK_FIELDS,
    BenchmarkReport,
    strip_wall_clock,
)

BACKENDS = ("auto", "serial", "process", "thread", "ray")


class Benchmark:
    """Runs policies over env ids (with kwargs) for seeded episodes.

    Args:
        envs: env ids, ``(env_id, kwargs)`` pairs, or :class:`EnvCase` s (an instance of a
            split, with its labels: ``crab_gym.datasets.splits.select(ids, split="test")``).
        seeds: one episode per seed, per env and policy (episode ``i`` uses ``seeds[i]``).
        max_steps: a step cap per episode (truncation), on top of any registered limit.
        workers: episodes run at the same time (processes, threads or Ray tasks); None: one,
            or for Ray the cluster's CPUs.
        backend: ``auto`` (serial for one worker, else processes), ``serial``, ``process``,
            ``thread`` (I/O-bound policies such as LLM agents) or ``ray``.
        address: the Ray cluster to join (``"auto"``, ``"ray://host:10001"``); None starts a
            local one.
        policy_seeds: seeds for some policies instead of ``seeds`` (a deterministic baseline
            needs one per instance where random play needs five).
        pairs: ``pairs(env_id, policy) -> bool``: which policies play which envs (None: all);
            a run over many problems gives each its own heuristics.
    """

    def __init__(
        self,
        envs: Sequence[str | tuple[str, Mapping[str, Any]] | EnvCase],
        seeds: Sequence[int] = (0,),
        max_steps: int = 10_000,
        *,
        workers: int | None = None,
        backend: str = "auto",
        address: str | None = None,
        policy_seeds: Mapping[str, Sequence[int]] | None = None,
        pairs: Callable[[str, str], bool] | None = None,
    ) -> None:
        if max_steps < 1:
            raise ValueError(f"max_steps must be at least 1, got {max_steps}")
        if workers is not None and workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")
        if address is not None and backend != "ray":
            raise ValueError("address joins a Ray cluster: it needs backend='ray'")
        self.cases = [_as_case(e) for e in envs]
        self.seeds = list(seeds)
        self.max_steps = max_steps
        self.workers = workers
        self.backend = backend
        self.address = address
        self.policy_seeds = {name: list(seeds) for name, seeds in (policy_seeds or {}).items()}
        self.pairs = pairs

    def specs(self, policies: Sequence[str], policy_kwargs: Mapping[str, Mapping[str, Any]] | None = None
              ) -> list[EpisodeSpec]:
        """Every episode of the run, in plan order."""
        kwargs = policy_kwargs or {}
        return [
            EpisodeSpec(case.env_id, dict(case.kwargs), policy, index, seed, self.max_steps,
                        dict(kwargs.get(policy, {})), case.split, case.instance, case.size)
            for case in self.cases
            for policy in policies
            if self.pairs is None or self.pairs(case.env_id, policy)
            for index, seed in enumerate(self.policy_seeds.get(policy, self.seeds))
        ]

    @property
    def envs(self) -> list[tuple[str, dict[str, Any]]]:
        """The ``(env_id, kwargs)`` of every case, in order."""
        return [(case.env_id, dict(case.kwargs)) for case in self.cases]

    def run(
        self,
        policies: Mapping[str, PolicyFactory],
        *,
        progress: bool = True,
        out: str | Path | None = None,
        policy_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
        log: Callable[[str], None] | None = None,
        retry_errors: bool = False,
    ) -> BenchmarkReport:
        """Run every policy on every env for every seed; return the report.

        An exception in an episode (making the env, building the policy, resetting or
        stepping) is recorded in that episode's result and the run goes on. On
        KeyboardInterrupt the exception is re-raised with ``partial_report`` attached.

        Args:
            policies: name -> factory(env). Process and Ray workers need picklable factories
                (named policies from the baselines registry, or module-level functions).
            progress: show one progress bar over all episodes.
            out: a directory: stream episodes to ``episodes.jsonl`` there and resume from it.
            policy_kwargs: name -> keyword arguments of that policy's factory (part of the
                episodes' identity).
            log: receives notes for the user (episodes resumed, a torn line dropped).
            retry_errors: with ``out``, run again the stored episodes that failed on
                infrastructure (:mod:`crab_gym.evaluation.outcome`) instead of resuming them; each
                new record is appended and replaces the old one in the report.
        """
        plan = self.specs(list(policies), policy_kwargs)
        store = EpisodeStore(out) if out is not None else None
        say = log or (lambda _message: None)
        with store.locked() if store is not None else nullcontext():
            stored = _stored_for_plan(store, plan) if store is not None else []
            kept = [r for r in stored if not (retry_errors and is_infra_failure(r))]
            stored_keys = {r.spec.key for r in kept}
            pending = [spec for spec in plan if spec.key not in stored_keys]
            resumed = len(plan) - len(pending)
            for note in store.notes if store is not None else []:
                say(note)
            if len(kept) < len(stored):
                say(f"retrying {len(stored) - len(kept)} episode(s) that failed on infrastructure")
            if resumed:
                say(f"resumed {resumed} of {len(plan)} episodes from {store.path}; running the other {len(pending)}")
            finished = self._execute(policies, pending, store, EpisodeProgress(len(plan), resumed, enabled=progress),
                                     resumed)
            return self._report(store, finished, resumed)

    def _execute(self, policies: Mapping[str, PolicyFactory], pending: list[EpisodeSpec], store: EpisodeStore | None,
                 bar: EpisodeProgress, resumed: int) -> list[EpisodeResult]:
        """Run ``pending`` on the chosen backend, streaming each result to the store."""
        context = EpisodeContext.for_envs(policies, [env_id for env_id, _ in self.envs])
        backend = self._backend()
        if backend in ("process", "ray") and pending:
            check_picklable(context)
        executor = make_executor(backend, self.workers, self.address)
        finished: list[EpisodeResult] = []
        try:
            if store is not None:
                store.open()
            with closing(executor.run(pending, context)) as results:
                for result in results:
                    if store is not None:
                        store.append(result)
                    finished.append(result)
                    bar.update(result)
        except KeyboardInterrupt as exc:
            exc.partial_report = self._report(store, finished, resumed)  # type: ignore[attr-defined]
            raise
        finally:
            bar.close()
            if store is not None:
                store.close()
        return finished

    def _backend(self) -> str:
        if self.backend != "auto":
            return self.backend
        return "serial" if (self.workers or 1) == 1 else "process"

    @staticmethod
    def _report(store: EpisodeStore | None, finished: list[EpisodeResult], resumed: int) -> BenchmarkReport:
        """The report of the run: from ``episodes.jsonl`` when there is one, else from memory."""
        results = store.load() if store is not None else finished
        return BenchmarkReport(results, resumed=resumed)


def _as_case(env: str | tuple[str, Mapping[str, Any]] | EnvCase) -> EnvCase:
    if isinstance(env, EnvCase):
        return env
    if isinstance(env, str):
        return EnvCase(env, {})
    return EnvCase(env[0], dict(env[1]))


def _stored_for_plan(store: EpisodeStore, plan: Sequence[EpisodeSpec]) -> list[EpisodeResult]:
    """The stored episodes, refused when some are not in ``plan``: they came from a run with
    other arguments, and a report rebuilt from the file would mix the two runs."""
    stored = store.load()
    planned = {spec.key for spec in plan}
    foreign = [r for r in stored if r.spec.key not in planned]
    if foreign:
        first = foreign[0]
        raise EpisodeStoreConflict(
            f"{store.path} holds {len(foreign)} episode(s) this command would not run (e.g. {first.env_id} "
            f"{canonical_json(first.env_kwargs)} x {first.policy}, seed {first.seed}, max_steps {first.max_steps}): "
            f"it belongs to a run with other arguments. Rerun that run's command to resume it, "
            f"use another --out, or remove {store.directory} to start over")
    return stored


__all__ = [
    "BACKENDS",
    "COUNT_COLUMNS",
    "LEGEND",
    "REALM_METRICS",
    "RUNNER_COLUMNS",
    "WALL_CLOCK_FIELDS",
    "Benchmark",
    "BenchmarkReport",
    "EnvCase",
    "EpisodeResult",
    "EpisodeSpec",
    "Policy",
    "PolicyFactory",
    "episode_success",
    "strip_wall_clock",
]
