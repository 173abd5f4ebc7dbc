"""Where a J env's instances come from: its ``instance`` argument (a shipped name such as
``j3_small_00``, a file in crab_gym's or upstream REALM-Bench's form, an instance) or a seeded
``generator`` that draws a fresh instance on every reset; the calls of
:class:`~crab_gym.envs.realm.common.instance_source.InstanceSource` (``start``, ``load``, ``draw``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.env import InstanceKind, draw_seed
from crab_gym.envs.realm.jobshop.variants.formats import list_instances, load
from crab_gym.envs.realm.jobshop.variants.generator import GENERATORS, generator_options
from crab_gym.envs.realm.jobshop.variants.model import ShopInstance


def instance_kind(problem: str) -> InstanceKind:
    """What ``instance`` accepts, to check it and explain a wrong one."""
    names = list_instances(problem)
    low = problem.lower()
    return InstanceKind(problem=problem, types=(ShopInstance,), names=lambda: list_instances(problem),
                        list_all=f"crab_gym.datasets.list_instances({problem!r})",
                        examples=tuple(n for n in (f"{low}_small_00", f"{low}_medium_00", names[-1]) if n in names),
                        files=f"a path to a JSON file (crab_gym's {problem} form or an upstream REALM-Bench {problem} file)")


@dataclass(frozen=True)
class ShopSource:
    """The ``instance`` and ``generator`` arguments of the env of ``problem`` (J2, J3 or J4)."""

    problem: str

    def start(self, instance: Any, generator: Any) -> tuple[dict[str, Any] | None, ShopInstance]:
        """The checked generator options (None: none) and the first instance: the generator's
        draw with seed 0 when there is one, else ``instance`` (None: the first shipped one)."""
        options = generator_options(generator)
        if options:
            return options, self.generated(options, 0)
        return None, self.load(instance)

    def load(self, spec: Any) -> ShopInstance:
        """The instance ``spec`` names (checked: a wrong one is explained)."""
        if spec is None:
            spec = list_instances(self.problem)[0]
        return instance_kind(self.problem).load(spec, lambda s: load(s, self.problem))

    def draw(self, options: Mapping[str, Any], rng: np.random.Generator) -> ShopInstance:
        """A fresh instance from the generator, seeded by the env's ``np_random``."""
        return self.generated(options, draw_seed(rng))

    def generated(self, options: Mapping[str, Any], seed: int) -> ShopInstance:
        """The generator's instance for ``seed``, named after it."""
        return GENERATORS[self.problem](options["size"], seed, name=f"{self.problem.lower()}_generated_{seed}",
                                        n_jobs=options.get("n_jobs"), n_machines=options.get("n_machines"))


#: Each J id's source.
SOURCES = {problem: ShopSource(problem) for problem in ("J2", "J3", "J4")}
