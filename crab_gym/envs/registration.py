"""Registration of the suite's env ids with Gymnasium (string entry points: lazy imports).

``import crab_gym`` registers every id; ``gym.make("crab_gym:Realm-P11-v0")`` imports the
package first, so it works without an explicit import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym


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


#: Every env id crab_gym provides.
ENV_SPECS: tuple[EnvSpecEntry, ...] = (
    EnvSpecEntry("Realm-P1-v0", "crab_gym.envs.realm.campus_tour.env:CampusTourEnv"),
    EnvSpecEntry("Realm-P2-v0", "crab_gym.envs.realm.group_tours.env:GroupToursEnv"),
    EnvSpecEntry("Realm-P3-v0", "crab_gym.envs.realm.ridesharing.env:RideSharingEnv"),
    EnvSpecEntry("Realm-P4-v0", "crab_gym.envs.realm.ridesharing.env_disruptions:RideSharingDisruptionEnv"),
    EnvSpecEntry("Realm-P5-v0", "crab_gym.envs.realm.wedding.env:WeddingEnv"),
    EnvSpecEntry("Realm-P8-v0", "crab_gym.envs.realm.wedding.env_disruptions:WeddingDisruptionEnv"),
    EnvSpecEntry("Realm-P6-v0", "crab_gym.envs.realm.thanksgiving.env:ThanksgivingEnv"),
    EnvSpecEntry("Realm-P7-v0", "crab_gym.envs.realm.disaster_relief.env:DisasterReliefEnv"),
    EnvSpecEntry("Realm-P9-v0", "crab_gym.envs.realm.thanksgiving.env_delays:ThanksgivingDelaysEnv"),
    EnvSpecEntry("Realm-P10-v0", "crab_gym.envs.realm.supply_chain.env:SupplyChainEnv"),
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
