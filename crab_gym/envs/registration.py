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


#: Every env id crab_gym provides.
ENV_SPECS: tuple[EnvSpecEntry, ...] = (
    EnvSpecEntry("Realm-P1-v0", "crab_gym.envs.realm.campus_tour.env:CampusTourEnv"),
    EnvSpecEntry("Realm-P2-v0", "crab_gym.envs.realm.group_tours.env:GroupToursEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry("Realm-P3-v0", "crab_gym.envs.realm.ridesharing.env:RideSharingEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry("Realm-P4-v0", "crab_gym.envs.realm.ridesharing.env_disruptions:RideSharingDisruptionEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry("Realm-P5-v0", "crab_gym.envs.realm.wedding.env:WeddingEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry("Realm-P8-v0", "crab_gym.envs.realm.wedding.env_disruptions:WeddingDisruptionEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry("Realm-P6-v0", "crab_gym.envs.realm.thanksgiving.env:ThanksgivingEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry("Realm-P7-v0", "crab_gym.envs.realm.disaster_relief.env:DisasterReliefEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry("Realm-P9-v0", "crab_gym.envs.realm.thanksgiving.env_delays:ThanksgivingDelaysEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry("Realm-P10-v0", "crab_gym.envs.realm.supply_chain.env:SupplyChainEnv", parallel_entry_point=PARALLEL_ENTRY_POINT),
    EnvSpecEntry(
        "Realm-P11-v0",
        "crab_gym.envs.realm.jobshop.env:JobShopEnv",
        vector_entry_point="crab_gym.envs.realm.jobshop.vector_env:JobShopVectorEnv",
    ),
    EnvSpecEntry(
        "CrabDesktop-v0",
        "crab_gym.envs.desktop.env:CrabDesktopEnv",
        max_episode_steps=200,
        nondeterministic=True,
    ),
)


def register_envs() -> None:
    """Register every id in :data:`ENV_SPECS` (idempotent)."""
    for spec in ENV_SPECS:
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


def env_ids() -> list[str]:
    """The ids registered by crab_gym."""
    return [spec.id for spec in ENV_SPECS]


def realm_ids() -> list[str]:
    """The REALM-Bench ids (``Realm-P1-v0`` ...), in problem order."""
    ids = [spec.id for spec in ENV_SPECS if spec.id.startswith("Realm-P")]
    return sorted(ids, key=lambda i: int(i.split("-")[1][1:]))


def multiagent_ids() -> list[str]:
    """The multi-agent REALM ids (those :func:`parallel_env` accepts), in problem order."""
    multi = {spec.id for spec in ENV_SPECS if spec.parallel_entry_point}
    return [i for i in realm_ids() if i in multi]


def parallel_env(env_id: str, **kwargs: Any) -> Any:
    """A PettingZoo ``ParallelEnv`` for a multi-agent REALM id: one agent per actor (vehicle,
    guide, cook...), joint steps over the single-agent env's own rules. ``kwargs`` go to the
    env (``instance=``, ``render_mode=``...), except ``max_cycles`` (a joint-step limit).
    Needs the ``multiagent`` extra (``pip install "crab_gym[multiagent]"``)."""
    entry = {spec.id: spec for spec in ENV_SPECS}.get(env_id)
    if entry is None or entry.parallel_entry_point is None:
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
