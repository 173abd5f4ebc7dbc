"""Where a REALM env's instances come from: its ``instance`` argument (a shipped name, a file,
a mapping or an instance object) or a seeded ``generator`` that draws a fresh instance on
every reset.

A family whose shipped instances are files ``<prefix>_<size>_<k>.json``
(:class:`~crab_gym.envs.realm.common.instance_files.InstanceFiles`) and whose generator is
``generate(size, seed, name=None, **counts)`` declares one :class:`InstanceSource`. Its env's
constructor and its instance hooks (``_load_instance``, ``_draw_instance``) then take one
line each, and every family checks and explains the two arguments in the same words.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from crab_gym.envs.realm.common.env import InstanceKind, check_option_keys, draw_seed
from crab_gym.envs.realm.common.instance_files import InstanceFiles
from crab_gym.envs.realm.common.shipping import SHIPPED_COUNTS


@dataclass(frozen=True)
class SizedGenerator:
    """A family's seeded generator as an env's ``generator`` argument: a dict of counts and a
    size class (``{"n_targets": 5, "size": "small"}``), or an int for the first count.

    Attributes:
        generate: ``generate(size, seed, name=None, **counts)`` -> an instance.
        example: the counts of an example ``generator`` dict, in the order the error messages
            list them. Every count is required and an int >= 1.
        shorthand: what an int ``generator`` counts, in words (``"targets"``: ``generator=5``
            means ``{"n_targets": 5}``); ``""`` when only a dict is accepted.
    """

    generate: Callable[..., Any]
    example: Mapping[str, int]
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
            number = f"the number of {self.shorthand} (an int) or " if self.shorthand else ""
            example = json.dumps({**self.example, "size": "small"})
            raise TypeError(
                f"generator must be {number}a dict like {example} (keys: {', '.join(self.keys)}); "
                f"got {type(generator).__name__} {generator!r}"
            )
        for key in counts:
            if key not in opts or int(opts[key]) < 1:
                raise ValueError(f"generator needs {key} >= 1, got {opts}")
            opts[key] = int(opts[key])
        return opts

    def __call__(self, options: Mapping[str, Any], seed: int, name: str | None = None) -> Any:
        """The instance the checked ``options`` give with ``seed``."""
        counts = {k: options[k] for k in self.example}
        return self.generate(options["size"], seed, name=name, **counts)


@dataclass(frozen=True)
class InstanceSource:
    """An env's ``instance`` and ``generator`` arguments, checked, loaded and drawn.

    Attributes:
        files: the problem's instance files (shipped names, loader of JSON and upstream files).
        generator: the problem's seeded generator.
        examples: shipped names shown when ``instance`` is wrong; by default the first of each
            size class but the last, and the last one shipped (``p1_small_00, p1_medium_00,
            p1_large_05``).
    """

    files: InstanceFiles
    generator: SizedGenerator
    examples: tuple[str, ...] = ()

    @cached_property
    def kind(self) -> InstanceKind:
        """What ``instance`` accepts, to check it and to explain a wrong one."""
        problem = self.files.problem
        prefix, sizes = problem.lower(), list(SHIPPED_COUNTS)
        examples = self.examples or (
            *(f"{prefix}_{size}_00" for size in sizes[:-1]),
            f"{prefix}_{sizes[-1]}_{SHIPPED_COUNTS[sizes[-1]] - 1:02d}",
        )
        return InstanceKind(
            problem=problem,
            types=(self.files.model,),
            names=self.files.names,
            list_all=f"crab_gym.datasets.list_instances({problem!r})",
            examples=examples,
            files=f"a path to a JSON file (crab_gym's {problem} format or an upstream REALM-Bench {problem} file)",
        )

    def start(self, instance: Any, generator: Any) -> tuple[dict[str, Any] | None, Any]:
        """The env's generator options (None: no generator) and its first instance: the
        generator's draw with seed 0 when there is a generator (``instance`` is then
        ignored), else ``instance`` loaded."""
        options = self.generator.options(generator)
        if options is not None:
            return options, self.generator(options, 0)
        return None, self.load(instance)

    def load(self, spec: Any) -> Any:
        """The instance ``spec`` names (checked: a wrong one is explained)."""
        return self.kind.load(spec, self.files.load)

    def draw(self, options: Mapping[str, Any], rng: np.random.Generator) -> Any:
        """A fresh instance from the generator, seeded by the env's ``np_random``."""
        seed = draw_seed(rng)
        return self.generator(options, seed, name=f"{self.files.problem.lower()}_generated_{seed}")


@dataclass(frozen=True)
class KindSource:
    """An env's ``instance`` and ``generator`` arguments for a family whose instances load
    through its own loader (not :class:`InstanceFiles`): the same three calls as
    :class:`InstanceSource` (``start``, ``load``, ``draw``), so every env wires its instances
    one way. Drawn instances are named ``<prefix>_generated_<seed>`` (the first one too).

    Attributes:
        kind: what ``instance`` accepts (checked, and explained when wrong).
        loader: ``loader(spec) -> instance`` for what ``kind`` accepts.
        generator: the family's seeded generator.
        prefix: the drawn instances' name prefix (``"p3"``).
    """

    kind: InstanceKind
    loader: Callable[[Any], Any]
    generator: SizedGenerator
    prefix: str

    def start(self, instance: Any, generator: Any) -> tuple[dict[str, Any] | None, Any]:
        """The env's generator options (None: no generator) and its first instance: the
        generator's draw with seed 0 when there is a generator, else ``instance`` loaded."""
        options = self.generator.options(generator)
        if options is not None:
            return options, self.generated(options, 0)
        return None, self.load(instance)

    def load(self, spec: Any) -> Any:
        """The instance ``spec`` names (checked: a wrong one is explained)."""
        return self.kind.load(spec, self.loader)

    def draw(self, options: Mapping[str, Any], rng: np.random.Generator) -> Any:
        """A fresh instance from the generator, seeded by the env's ``np_random``."""
        return self.generated(options, draw_seed(rng))

    def generated(self, options: Mapping[str, Any], seed: int) -> Any:
        """The generator's instance for ``seed``, named after it."""
        return self.generator(options, seed, name=f"{self.prefix}_generated_{seed}")
