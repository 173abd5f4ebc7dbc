"""What the reference results are: every REALM id on its ``test`` split, played by doing
nothing (where it applies), random play (5 seeds), every registered heuristic and the oracle.

Random play needs seeds to say how much luck moves it; the other baselines are deterministic
on a given instance and seed, so one seed each shows them (the instances make the set). The
run is one :class:`~crab_gym.evaluation.benchmark.Benchmark`, so ``--workers``, resuming a killed
run and the report all work as they do for ``crab-gym run``.
"""

from __future__ import annotations

from collections.abc import Sequence

from crab_gym.baselines.registry import NamedPolicy, policy_specs
from crab_gym.datasets.splits import select
from crab_gym.envs.registration import realm_ids
from crab_gym.evaluation.benchmark import Benchmark

#: The split the reference results are given on.
SPLIT = "test"
#: Seeds of random play.
RANDOM_SEEDS = (0, 1, 2, 3, 4)
#: The one seed of the deterministic baselines.
FIXED_SEEDS = (0,)
#: Policies that are not baselines (a model server is needed) and never enter the table.
NOT_BASELINES = ("llm", "multi-llm")


def reference_policies(env_ids: Sequence[str]) -> list[str]:
    """The policies of the table, in row order: do_nothing, random, the heuristics, the shipped
    trained policy, oracle."""
    specs = policy_specs()
    names = [n for n, s in specs.items() if n not in NOT_BASELINES and not s.io_bound
             and any(s.fits(e) for e in env_ids)]
    first, last = ["do_nothing", "random"], ["trained", "oracle"]
    return ([n for n in first if n in names] + [n for n in names if n not in first + last]
            + [n for n in last if n in names])


def reference_benchmark(env_ids: Sequence[str] | None = None, *, split: str = SPLIT, workers: int | None = None,
                        max_steps: int = 100_000) -> tuple[Benchmark, dict[str, NamedPolicy]]:
    """The reference run (every REALM id unless ``env_ids``): the benchmark and its policies."""
    ids = list(env_ids) if env_ids else list(realm_ids())
    names = reference_policies(ids)
    specs = policy_specs()
    bench = Benchmark(
        select(ids, split=split), seeds=RANDOM_SEEDS, max_steps=max_steps, workers=workers,
        policy_seeds={name: FIXED_SEEDS for name in names if name != "random"},
        pairs=lambda env_id, policy: specs[policy].fits(env_id),
    )
    return bench, {name: NamedPolicy(name) for name in names}
