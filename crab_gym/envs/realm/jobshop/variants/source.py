"""Where a J env's instances come from: its ``instance`` argument (a shipped name such as
``j3_small_00``, a file in crab_gym's or upstream REALM-Bench's form, an instance) or a seeded
``generator`` that draws a fresh instance on every reset: one
:class:`~crab_gym.envs.realm.common.instance_source.InstanceSource` per J id (:data:`SOURCES`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.env import InstanceKind, draw_seed
from crab_gym.envs.realm.common.instance_source import InstanceSource
from crab_gym.envs.realm.jobshop.variants.formats import list_instances, load_j2, load_j3, load_j4
from crab_gym.envs.realm.jobshop.variants.generator import GENERATORS, generator_options
from crab_gym.envs.realm.jobshop.variants.model import ShopInstance

#: Each J id's ``load`` role.
_LOADERS = {"J2": load_j2, "J3": load_j3, "J4": load_j4}


def instance_kind(problem: str) -> InstanceKind:
    """What ``instance`` accepts, to check it and explain a wrong one."""
    names = list_instances(problem)
    low = problem.lower()
    return InstanceKind(problem=problem, types=(ShopInstance,), names=lambda: list_instances(problem),
                        list_all=f"crab_gym.datasets.list_instances({problem!r})",
                        examples=tuple(n for n in (f"{low}_small_00", f"{low}_medium_00", names[-1]) if n in names),
                        files=f"a path to a JSON file (crab_gym's {problem} form or an upstream REALM-Bench {problem} file)")


@dataclass(frozen=True)
class ShopGenerator:
    """The ``generator`` options of a J env: a dict with a ``size`` and optional ``n_jobs`` /
    ``n_machines``.

    Attributes:
        generate: the problem's ``generate`` role (``generate_j2`` ...).
        prefix: drawn instances are named ``<prefix>_generated_<seed>`` (``"j2"``).
    """

    generate: Callable[..., ShopInstance]
    prefix: str

    def options(self, generator: Any) -> dict[str, Any] | None:
        """The checked ``generator`` argument (:func:`~.generator.generator_options`)."""
        return generator_options(generator)

    def draw(self, options: Mapping[str, Any], rng: np.random.Generator | int) -> ShopInstance:
        """The generator's instance for the seed 0 (the env's first) or for a fresh seed from
        the env's ``np_random``, named after its seed."""
        seed = rng if isinstance(rng, int) else draw_seed(rng)
        return self.generate(options["size"], seed, name=f"{self.prefix}_generated_{seed}",
                             n_jobs=options.get("n_jobs"), n_machines=options.get("n_machines"))


#: Each J id's source; an env given ``instance=None`` starts with the first shipped instance.
SOURCES = {
    problem: InstanceSource(instance_kind(problem), _LOADERS[problem], ShopGenerator(GENERATORS[problem], problem.lower()),
                            default=list_instances(problem)[0])
    for problem in ("J2", "J3", "J4")
}
