"""Where P11's instances come from: the ``instance`` argument (a library name such as
``ft06``, an instance file, an instance) or a seeded ``generator`` of random instances that
draws a fresh one on every reset. The env and the native vector env read the same source,
:data:`SOURCE`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.env import InstanceKind, check_option_keys, draw_seed
from crab_gym.envs.realm.common.instance_source import InstanceSource
from crab_gym.envs.realm.jobshop.constructed import BOUND_TIGHT, draw_constructed
from crab_gym.envs.realm.jobshop.generator import random_instance
from crab_gym.envs.realm.jobshop.library import list_jssp_instances, load_jssp_instance
from crab_gym.envs.realm.jobshop.model import JSSPInstance

#: Keys of a ``generator`` dict (``n_jobs`` and ``n_machines`` are required).
GENERATOR_KEYS = ("n_jobs", "n_machines", "low", "high", "construction")


def generator_options(generator: Any) -> dict[str, int] | None:
    """The checked ``generator`` argument as a dict with every key (None: no generator)."""
    if generator is None:
        return None
    construction = None
    if isinstance(generator, dict):
        check_option_keys("generator option", generator, GENERATOR_KEYS)
        missing = [k for k in ("n_jobs", "n_machines") if k not in generator]
        if missing:
            raise ValueError(f"generator needs {' and '.join(missing)} (keys: {', '.join(GENERATOR_KEYS)})")
        opts = {"low": 1, "high": 99, **generator}
        construction = opts.pop("construction", None)
        if construction not in (None, BOUND_TIGHT):
            raise ValueError(f"generator construction must be {BOUND_TIGHT!r} or absent, got {construction!r}")
    elif isinstance(generator, (tuple, list)) and len(generator) == 2:
        n_jobs, n_machines = generator
        opts = {"n_jobs": n_jobs, "n_machines": n_machines, "low": 1, "high": 99}
    else:
        raise TypeError(
            'generator must be (n_jobs, n_machines), a dict like {"n_jobs": 6, "n_machines": 6} '
            f"(keys: {', '.join(GENERATOR_KEYS)}) or a callable (rng) -> instance; "
            f"got {type(generator).__name__} {generator!r}"
        )
    opts = {k: int(v) for k, v in opts.items()}
    if opts["n_jobs"] < 1 or opts["n_machines"] < 1 or not 0 <= opts["low"] <= opts["high"]:
        raise ValueError(f"invalid generator options {opts}")
    return opts if construction is None else {**opts, "construction": construction}


@dataclass(frozen=True)
class JobShopGenerator:
    """The ``generator`` options of a job-shop env: ``(n_jobs, n_machines)`` or a dict, drawn
    with Taillard's scheme (or bound-tight, optimum known by construction)."""

    def options(self, generator: Any) -> dict[str, int] | None:
        """The checked ``generator`` argument (:func:`generator_options`)."""
        return generator_options(generator)

    def draw(self, options: dict[str, int], rng: np.random.Generator | int) -> JSSPInstance:
        """A random instance of the options' size, from ``rng`` (the env's ``np_random``)."""
        if options.get("construction") == BOUND_TIGHT:  # optimum known by construction: no solver
            return draw_constructed(options, rng if isinstance(rng, int) else draw_seed(rng))
        return random_instance(options["n_jobs"], options["n_machines"], rng, low=options["low"], high=options["high"])


#: Where a job-shop env's instances come from (``instance=``, ``generator=``).
SOURCE = InstanceSource(
    InstanceKind(
        problem="JSSP",
        types=(JSSPInstance,),
        names=list_jssp_instances,
        list_all="crab_gym.datasets.list_instances('P11')",
        examples=("ft06", "la01", "ta01"),
        files="a path to an instance file (standard, Taillard or JSON form)",
        mappings=False,
    ),
    load_jssp_instance,
    JobShopGenerator(),
)
