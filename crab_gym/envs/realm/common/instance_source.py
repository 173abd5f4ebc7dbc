"""Where a REALM env's instances come from: its ``instance`` argument (a shipped name, a file,
a mapping or an instance object) or its ``generator`` argument, which draws a fresh instance
on every reset.

Every env declares one :class:`InstanceSource` (``instance_source``); its constructor starts
with ``self._generator, inst = self.instance_source.start(instance, generator)`` and the base
(:class:`~crab_gym.envs.realm.common.env.RealmEnv`) loads and draws through it at reset, so
``instance=`` reaches the problem's ``load`` role in the same few calls in every family and
both arguments are checked and explained in the same words.

``generator`` is the family's options (a dict of counts, ...; :class:`SizedGenerator` checks
and draws them) or, as in Jumanji and rl4co, the user's own generator: any callable
``generator(rng) -> instance`` (a function, or an object with ``__call__``), given a
``numpy.random.Generator`` seeded from the env's ``np_random``. What it returns is loaded
like ``instance=`` (an instance object, a mapping, a name or a path).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from crab_gym.envs.realm.common.env import InstanceKind, check_option_keys, draw_seed
from crab_gym.envs.realm.common.instance_files import InstanceFiles
from crab_gym.envs.realm.common.shipping import SHIPPED_COUNTS


class FamilyGenerator(Protocol):
    """A family's ``generator`` options: checked (``options``) and drawn (``draw``)."""

    def options(self, generator: Any) -> Any | None:
        """The checked ``generator`` argument (None: no generator); raises TypeError or
        ValueError naming what is accepted."""

    def draw(self, options: Any, rng: np.random.Generator | int) -> Any:
        """An instance of ``options``: ``rng`` is the env's ``np_random`` at a reset, the seed 0
        for the env's first instance."""


@dataclass(frozen=True)
class SizedGenerator:
    """A family's seeded generator as an env's ``generator`` argument: a dict of counts and a
    size class (``{"n_targets": 5, "size": "small"}``), or an int for the first count.

    Attributes:
        generate: ``generate(size, seed, name=None, **counts)`` -> an instance.
        example: the counts of an example ``generator`` dict, in the order the error messages
            list them. Every count is required and an int >= 1.
        prefix: drawn instances are named ``<prefix>_generated_<seed>`` (``"p3"``).
        shorthand: what an int ``generator`` counts, in words (``"targets"``: ``generator=5``
            means ``{"n_targets": 5}``); ``""`` when only a dict is accepted.
    """

    generate: Callable[..., Any]
    example: Mapping[str, int]
    prefix: str
    shorthand: str = ""

    @property
    def keys(self) -> tuple[str, ...]:
        """The keys a ``generator`` dict may have."""
        return (*self.example, "size")

    def options(self, generator: Any) -> dict[str, Any] | None:
        """The checked ``generator`` argument as a dict with every key (None: no generator).

        Raises:
            TypeError: ``generator`` is neither a dict nor (with a shorthand) an int.
            ValueError: an unknown key, or a count missing or below 1.
        """
        if generator is None:
            return None
        counts = list(self.example)
        if isinstance(generator, Mapping):
            check_option_keys("generator option", generator, self.keys)
            opts = {"size": "small", **generator}
        elif self.shorthand and isinstance(generator, (int, np.integer)) and not isinstance(generator, bool):
            opts = {"size": "small", counts[0]: int(generator)}
        else:
            number = f"the number of {self.shorthand} (an int), " if self.shorthand else ""
            example = json.dumps({**self.example, "size": "small"})
            raise TypeError(
                f"generator must be {number}a dict like {example} (keys: {', '.join(self.keys)}) "
                f"or a callable (rng) -> instance; got {type(generator).__name__} {generator!r}"
            )
        for key in counts:
            if key not in opts or int(opts[key]) < 1:
                raise ValueError(f"generator needs {key} >= 1, got {opts}")
            opts[key] = int(opts[key])
        return opts

    def draw(self, options: Mapping[str, Any], rng: np.random.Generator | int) -> Any:
        """The instance of ``options``: for the seed 0, the one ``generate(size, seed=0)`` gives
        (the env's first); from the env's ``np_random``, a fresh seed's, named after it."""
        counts = {k: options[k] for k in self.example}
        if isinstance(rng, int):
            return self.generate(options["size"], rng, name=None, **counts)
        seed = draw_seed(rng)
        return self.generate(options["size"], seed, name=f"{self.prefix}_generated_{seed}", **counts)


def files_kind(files: InstanceFiles, examples: tuple[str, ...] = ()) -> InstanceKind:
    """What ``instance`` accepts in a family whose shipped instances are
    :class:`InstanceFiles`; ``examples`` (default: the first of each size class but the last,
    and the last one shipped: ``p1_small_00, p1_medium_00, p1_large_05``) are shown when it is
    wrong."""
    problem = files.problem
    prefix, sizes = problem.lower(), list(SHIPPED_COUNTS)
    examples = examples or (
        *(f"{prefix}_{size}_00" for size in sizes[:-1]),
        f"{prefix}_{sizes[-1]}_{SHIPPED_COUNTS[sizes[-1]] - 1:02d}",
    )
    return InstanceKind(
        problem=problem,
        types=(files.model,),
        names=files.names,
        list_all=f"crab_gym.datasets.list_instances({problem!r})",
        examples=examples,
        files=f"a path to a JSON file (crab_gym's {problem} format or an upstream REALM-Bench {problem} file)",
    )


@dataclass(frozen=True)
class InstanceSource:
    """An env's ``instance`` and ``generator`` arguments, checked, loaded and drawn.

    Attributes:
        kind: what ``instance`` accepts (checked, and explained when wrong).
        loader: the problem's ``load`` role (``load(spec) -> instance``, the one its ProblemSpec
            names and ``crab_gym.datasets.load_instance`` calls).
        generator: the family's ``generator`` options (a :class:`FamilyGenerator`).
        default: the instance an env given ``instance=None`` starts with.
    """

    kind: InstanceKind
    loader: Callable[[Any], Any]
    generator: FamilyGenerator
    default: Any = None

    def start(self, instance: Any, generator: Any) -> tuple[Any, Any]:
        """The env's generator (the checked options or the user's callable; None: none) and
        its first instance: the generator's draw with seed 0 when there is a generator
        (``instance`` is then ignored), else ``instance`` loaded."""
        options = self.options(generator)
        if options is not None:
            return options, self.draw(options, 0)
        return None, self.load(self.default if instance is None else instance)

    def options(self, generator: Any) -> Any | None:
        """The checked ``generator`` argument: the user's callable as it is, else the family's
        options (None: no generator)."""
        if callable(generator):
            return generator
        return self.generator.options(generator)

    def load(self, spec: Any) -> Any:
        """The instance ``spec`` names (checked: a wrong one is explained)."""
        return self.kind.load(spec, self.loader)

    def draw(self, options: Any, rng: np.random.Generator | int) -> Any:
        """A fresh instance from the generator, seeded by the env's ``np_random`` (or the seed
        0 for the first instance). A user's callable is given its own ``numpy`` generator,
        seeded from ``rng``, and what it returns is loaded as ``instance=`` would be."""
        if callable(options):
            seed = rng if isinstance(rng, int) else draw_seed(rng)
            return self.load(options(np.random.default_rng(seed)))
        return self.generator.draw(options, rng)
