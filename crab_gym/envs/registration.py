"""Registration of the suite's env ids with Gymnasium (string entry points: lazy imports).

``import crab_gym`` registers every id; ``gym.make("crab_gym:Realm-P11-v0")`` imports the
package first, so it works without an explicit import. :func:`parallel_env` gives the
PettingZoo view of a multi-agent id (the ``multiagent`` extra), loaded the same lazy way.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

import crab_gym.envs.realm.index as index
from crab_gym.core.keywords import did_you_mean
from crab_gym.envs.realm.common.problem_spec import ProblemSpec
from crab_gym.envs.realm.index import problem_specs

#: The PettingZoo view of every multi-agent REALM id.
PARALLEL_ENTRY_POINT = "crab_gym.multiagent.parallel:RealmParallelEnv"


@dataclass(frozen=True)
class EnvSpecEntry:
    """One id of the suite."""

    id: str
    entry_point: str
    max_episode_steps: int | None = None
    nondeterministic: bool = False
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: A native vector env (``gym.make_vec(id, num_envs=N)`` uses it), or None.
    vector_entry_point: str | None = None
    #: The PettingZoo ``ParallelEnv`` of a multi-agent problem (:func:`parallel_env`), or None.
    parallel_entry_point: str | None = None
    #: What the env is, in a few words (``crab-gym list``).
    title: str = ""


#: The ids that are not REALM problems (the REALM ids come from the problem index).
OTHER_SPECS: tuple[EnvSpecEntry, ...] = (
    EnvSpecEntry(
        "CrabDesktop-v0",
        "crab_gym.envs.desktop.env:CrabDesktopEnv",
        max_episode_steps=200,
        nondeterministic=True,
        title="a real X desktop, driven with pyautogui",
    ),
)


def _realm_entry(problem: ProblemSpec) -> EnvSpecEntry:
    """A REALM problem's registration, read from its record in the index."""
    return EnvSpecEntry(
        problem.env_id,
        problem.entry_point("env") or "",
        vector_entry_point=problem.entry_point("vector_env"),
        parallel_entry_point=PARALLEL_ENTRY_POINT if problem.multiagent else None,
        title=problem.title + "".join(
            f" [{tag}]" for tag, on in (("multi-agent", problem.multiagent), ("disruptions", problem.disruptions),
                                        ("vector env", problem.vector_env is not None)) if on),
    )


def env_specs() -> tuple[EnvSpecEntry, ...]:
    """Every env id crab_gym provides: the index's REALM problems, then the desktop."""
    return tuple(_realm_entry(p) for p in problem_specs()) + OTHER_SPECS


def register_envs() -> None:
    """Register every id of :func:`env_specs` (idempotent)."""
    for spec in env_specs():
        if spec.id in gym.registry:
            continue
        gym.register(
            id=spec.id,
            entry_point=spec.entry_point,
            max_episode_steps=spec.max_episode_steps,
            nondeterministic=spec.nondeterministic,
            kwargs=dict(spec.kwargs),
            vector_entry_point=spec.vector_entry_point,
        )


def add_family(module: str) -> tuple[ProblemSpec, ...]:
    """Add a problem family's spec module (``"my_pkg.my_family.spec"``) to the problem index
    and register its ids: ``gym.make("Realm-P12-v0")`` then works. Idempotent."""
    specs = index.add_family(module)
    register_envs()
    return specs


def remove_family(module: str) -> None:
    """Undo :func:`add_family`: the family leaves the index and its ids leave Gymnasium's registry."""
    ids = [spec.env_id for spec in problem_specs() if spec in getattr(importlib.import_module(module), "SPECS", ())]
    index.remove_family(module)
    for env_id in ids:
        gym.registry.pop(env_id, None)


def env_ids() -> list[str]:
    """The ids registered by crab_gym."""
    return [spec.id for spec in env_specs()]


def realm_ids() -> list[str]:
    """The REALM-Bench ids (``Realm-P1-v0`` ...), in problem order."""
    return [spec.env_id for spec in problem_specs()]


def multiagent_ids() -> list[str]:
    """The multi-agent REALM ids (those :func:`parallel_env` accepts), in problem order."""
    multi = {spec.id for spec in env_specs() if spec.parallel_entry_point}
    return [i for i in realm_ids() if i in multi]


def parallel_env(env_id: str, **kwargs: Any) -> Any:
    """A PettingZoo ``ParallelEnv`` for a multi-agent REALM id: one agent per actor (vehicle,
    guide, cook...), joint steps over the single-agent env's own rules. ``kwargs`` go to the
    env (``instance=``, ``render_mode=``...), except ``max_cycles`` (a joint-step limit).
    Needs the ``multiagent`` extra (``pip install "crab_gym[multiagent]"``)."""
    entries = {spec.id: spec for spec in env_specs()}
    entry = entries.get(env_id)
    if entry is None:
        raise ValueError(f"unknown env id {env_id!r}{did_you_mean(env_id, multiagent_ids())}; "
                         f"multi-agent ids: {', '.join(multiagent_ids())}")
    if entry.parallel_entry_point is None:
        raise ValueError(f"{env_id!r} has no multi-agent view; multi-agent ids: {', '.join(multiagent_ids())}")
    module_name, _, attr = entry.parallel_entry_point.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != "pettingzoo":
            raise
        raise ModuleNotFoundError(
            'crab_gym.parallel_env needs PettingZoo: pip install "crab_gym[multiagent]"', name="pettingzoo"
        ) from exc
    return getattr(module, attr)(env_id, **kwargs)
