"""Episodes as Ray tasks: on this machine (``ray.init()`` starts a local cluster) or on an
existing cluster (``address``, e.g. ``"auto"`` on a node where ``ray start`` ran).

Workers import crab_gym themselves (the task function is found by its module name). The
:class:`~crab_gym.evaluation.episode_runner.EpisodeContext` goes into the object store once; each
task carries only its spec. Ray reruns a task whose worker died once
(``max_retries=WORKER_DEATH_RETRIES``); after that the episode is recorded as failed.
``workers`` caps how many tasks are in flight (default: the cluster's CPUs).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from crab_gym.evaluation.episode import EpisodeResult, EpisodeSpec
from crab_gym.evaluation.episode_runner import EpisodeContext, run_episode
from crab_gym.evaluation.worker_death import WORKER_DEATH_RETRIES, died_result

RAY_MISSING = 'the ray backend needs ray: pip install "crab_gym[ray]"'


def import_ray() -> Any:
    """``ray``, or an ImportError that names the extra."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(RAY_MISSING) from exc
    return ray


def _ray_episode(spec: dict[str, Any], context: EpisodeContext) -> dict[str, Any]:
    """The Ray task: one episode, as a plain dict."""
    context.register_envs()
    return run_episode(EpisodeSpec.from_dict(spec), context).to_dict()


class RayExecutor:
    """Runs specs as Ray tasks, at most ``workers`` at a time."""

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        self.workers = workers
        self.address = address

    def run(self, specs: Sequence[EpisodeSpec], context: EpisodeContext) -> Iterator[EpisodeResult]:
        ray = import_ray()
        connected_here = not ray.is_initialized()
        if connected_here:
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
        try:
            task = ray.remote(max_retries=WORKER_DEATH_RETRIES, retry_exceptions=False)(_ray_episode)
            context_ref = ray.put(context)
            window = self.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            queue = deque(specs)
            in_flight: dict[Any, EpisodeSpec] = {}
            try:
                while queue or in_flight:
                    while queue and len(in_flight) < window:
                        spec = queue.popleft()
                        in_flight[task.remote(spec.to_dict(), context_ref)] = spec
                    done, _ = ray.wait(list(in_flight), num_returns=1)
                    for ref in done:
                        spec = in_flight.pop(ref)
                        try:
                            yield EpisodeResult.from_dict(ray.get(ref))
                        except ray.exceptions.RayError as exc:  # the worker died on every attempt
                            yield died_result(spec, f"the Ray worker running it died ({type(exc).__name__})")
            finally:
                for ref in in_flight:  # interrupted: do not leave tasks running on the cluster
                    ray.cancel(ref, force=True)
        finally:
            if connected_here:
                ray.shutdown()
