"""Where episodes run: in this thread, in threads, in worker processes (or on Ray, see
:mod:`crab_gym.evaluation.ray_executor`). Each executor yields results as episodes finish; the
benchmark sorts them by spec, so completion order never reaches a report.

Worker processes are started with ``spawn``: a worker imports crab_gym itself and gets the
:class:`~crab_gym.evaluation.episode_runner.EpisodeContext` once, then one small spec per episode.
A worker that dies (killed, segfault, ``os._exit``) has its episode retried once on a fresh
worker; if that dies too, the episode is recorded as failed and the run goes on. A driver that
dies (``kill -9``) takes its workers with it: each watches its parent and exits at once,
quietly, even in the middle of an episode (nobody is left to receive it; a rerun resumes).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import signal
import threading
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from crab_gym.evaluation.cpu_turn import CpuTurn
from crab_gym.evaluation.episode import EpisodeResult, EpisodeSpec
from crab_gym.evaluation.episode_runner import EnvPool, EpisodeContext, run_episode
from crab_gym.evaluation.ray_executor import RayExecutor
from crab_gym.evaluation.worker_death import WORKER_DEATH_RETRIES, died_result


class Executor(Protocol):
    """Runs specs and yields their results in completion order."""

    def run(self, specs: Sequence[EpisodeSpec], context: EpisodeContext) -> Iterator[EpisodeResult]: ...


def check_picklable(context: EpisodeContext) -> None:
    """Process and Ray workers receive the context pickled: say what to do when it is not."""
    for name, factory in context.policies.items():
        try:
            pickle.dumps(factory)
        except Exception as exc:  # noqa: BLE001 - lambdas, closures, local classes
            raise TypeError(
                f"policy {name!r} cannot be sent to worker processes ({type(exc).__name__}: {exc}); "
                "use a named policy (crab_gym.baselines.registry.named_policies) or a module-level "
                "factory, or run with workers=1"
            ) from None


class SerialExecutor:
    """One episode after another, in this thread."""

    def run(self, specs: Sequence[EpisodeSpec], context: EpisodeContext) -> Iterator[EpisodeResult]:
        pool = EnvPool()  # one env per (id, kwargs), reset for each episode
        try:
            for spec in specs:
                yield run_episode(spec, context, pool=pool)
        finally:
            pool.close()


class ThreadExecutor:
    """Episodes as threads of this process, for policies that mostly wait on I/O (LLM
    endpoints): their requests overlap, while a :class:`CpuTurn` lets one thread at a time
    run env code."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(self, specs: Sequence[EpisodeSpec], context: EpisodeContext) -> Iterator[EpisodeResult]:
        turn, envs = CpuTurn(), EnvPool()  # an env serves one episode at a time
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="crab-episode")
        try:
            futures = [pool.submit(run_episode, spec, context, turn, envs) for spec in specs]
            for future in as_completed(futures):
                yield future.result()
        finally:  # on an interrupt, episodes not started are dropped; running ones finish
            pool.shutdown(wait=True, cancel_futures=True)
            envs.close()


@dataclass
class _Worker:
    process: Any
    conn: Connection
    spec: EpisodeSpec | None = None


class ProcessExecutor:
    """Episodes in ``workers`` spawned processes, each fed one spec at a time."""

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(self, specs: Sequence[EpisodeSpec], context: EpisodeContext) -> Iterator[EpisodeResult]:
        check_picklable(context)
        queue = deque(specs)
        deaths: dict[str, int] = {}
        workers = [self._start(context) for _ in range(min(self.workers, len(queue)))]
        clean_exit = False
        try:
            for worker in workers:
                self._feed(worker, queue)
            while any(w.spec is not None for w in workers):
                busy = [w for w in workers if w.spec is not None]
                wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
                for i, worker in enumerate(workers):
                    if worker.spec is None:
                        continue
                    spec = worker.spec
                    message = self._receive(worker)
                    if message is not None:
                        yield EpisodeResult.from_dict(message)
                        self._feed(worker, queue)
                    elif not worker.process.is_alive():
                        code = worker.process.exitcode
                        worker.conn.close()
                        deaths[spec.key] = deaths.get(spec.key, 0) + 1
                        if deaths[spec.key] <= WORKER_DEATH_RETRIES:
                            queue.appendleft(spec)
                        else:
                            yield died_result(spec, f"the worker process running it exited with code {code}")
                        workers[i] = self._start(context)
                        self._feed(workers[i], queue)
            clean_exit = True
        finally:
            self._stop(workers, graceful=clean_exit)

    @staticmethod
    def _start(context: EpisodeContext) -> _Worker:
        parent, child = mp.get_context("spawn").Pipe()
        process = mp.get_context("spawn").Process(target=_worker_main, args=(child, context), daemon=True,
                                                  name="crab-episode-worker")
        process.start()
        child.close()
        return _Worker(process, parent)

    @staticmethod
    def _feed(worker: _Worker, queue: deque[EpisodeSpec]) -> None:
        worker.spec = queue.popleft() if queue else None
        if worker.spec is not None:
            worker.conn.send(worker.spec.to_dict())

    @staticmethod
    def _receive(worker: _Worker) -> dict[str, Any] | None:
        """The worker's result if it sent one; None while it runs or once it died."""
        try:
            if worker.conn.poll():
                return worker.conn.recv()
        except (EOFError, OSError):
            worker.process.join(timeout=5)
        return None

    @staticmethod
    def _stop(workers: list[_Worker], *, graceful: bool) -> None:
        for worker in workers:
            if graceful:
                try:
                    worker.conn.send(None)
                except (OSError, ValueError):
                    pass
            else:
                worker.process.terminate()
        for worker in workers:
            worker.process.join(timeout=10)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.conn.close()


def _worker_main(conn: Connection, context: EpisodeContext) -> None:
    """A worker process: run each spec it is sent until it is sent None."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's to handle
    _exit_with_parent()
    context.register_envs()
    pool = EnvPool()  # this worker's envs, one per (id, kwargs), reset for each episode
    try:
        while True:
            message = conn.recv()
            if message is None:
                return
            conn.send(run_episode(EpisodeSpec.from_dict(message), context, pool=pool).to_dict())
    except (EOFError, OSError):  # the driver went away (BrokenPipeError, reset): nobody to tell
        return
    finally:
        pool.close()


def _exit_with_parent() -> None:
    """End this worker the moment its parent process dies (a ``kill -9`` of the driver), instead
    of finishing an episode nobody will receive."""
    parent = mp.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, daemon=True, name="crab-parent-watch").start()


def make_executor(backend: str, workers: int | None, address: str | None = None) -> Executor:
    """The executor for ``backend`` (``serial``, ``thread``, ``process`` or ``ray``)."""
    if backend == "serial":
        return SerialExecutor()
    if backend == "thread":
        return ThreadExecutor(workers or 1)
    if backend == "process":
        return ProcessExecutor(workers or 1)
    if backend == "ray":
        return RayExecutor(workers, address)
    raise ValueError(f"unknown backend {backend!r}: expected serial, thread, process or ray")
