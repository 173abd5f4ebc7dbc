"""Who owns which move: a REALM env's flat actions split among its agents.

A multi-agent REALM env names, in ``agent_arguments``, the action arguments that name an
actor (``vehicle``, ``guide``, ``cook``...). Every flat action (``codec.flat_to_call`` order)
whose arguments hold one of them belongs to that agent; the others (``wait``, ``next_day``)
belong to no agent and run only when every agent passes. Each agent's own choices are
``noop`` (index 0) followed by its flat actions, in flat order. No rule of any problem is
written here: legality always comes from the env's own mask and checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

#: The local index of the pass move of every agent.
NOOP = 0


@dataclass(frozen=True)
class AgentBinding:
    """The agents of one env and the flat actions each of them owns.

    Attributes:
        agents: agent names in their fixed order (the order of first appearance in the flat
            actions); this is also the order in which a joint step applies their moves.
        own_flat: per agent, its flat action indices (local index ``k + 1`` -> ``own_flat[k]``).
        owner: per flat index, the agent's position in ``agents``, or -1 (no agent owns it).
    """

    agents: tuple[str, ...]
    own_flat: tuple[np.ndarray, ...]
    owner: np.ndarray
    #: per agent, the index (into ``agent_arguments``) of the argument that names it: its role
    roles: tuple[int, ...] = ()
    #: per agent, its row among the agents of its role, in the order the env's actions list
    #: them -- the instance's order, which is also the row of its state in the observation's
    #: arrays of that role (``v2`` -> row 1 of ``vehicle_*``; ``mom`` -> row 0 of ``member_*``)
    rows: tuple[int, ...] = ()

    @classmethod
    def of(cls, env: Any) -> AgentBinding:
        """The binding of ``env`` (a REALM env with non-empty ``agent_arguments``)."""
        arguments = tuple(getattr(env, "agent_arguments", ()))
        if not arguments:
            raise ValueError(f"{type(env).__name__} is a single-agent problem (it names no agent_arguments)")
        codec = env.codec
        names: list[str] = []
        role_of: dict[str, int] = {}
        owner_names: list[str | None] = []
        for index in range(codec.n_flat):
            call_args = codec.flat_to_call(index)["arguments"]
            role = next((r for r, a in enumerate(arguments) if a in call_args), None)
            name = None if role is None else str(call_args[arguments[role]])
            if name is not None and name not in names:
                names.append(name)
                role_of[name] = role
            owner_names.append(name)
        if not names:
            raise ValueError(f"{type(env).__name__}: no flat action has an argument among {arguments}")
        position = {n: k for k, n in enumerate(names)}
        owner = np.array([-1 if n is None else position[n] for n in owner_names], dtype=np.int64)
        own_flat = tuple(np.flatnonzero(owner == k) for k in range(len(names)))
        roles = tuple(role_of[n] for n in names)
        rows = tuple(sum(1 for m in names[:k] if role_of[m] == roles[k]) for k in range(len(names)))
        return cls(tuple(names), own_flat, owner, roles, rows)

    def n_choices(self, agent: int) -> int:
        """How many local choices agent ``agent`` has (``noop`` included)."""
        return 1 + len(self.own_flat[agent])

    def local_mask(self, agent: int, flat_mask: np.ndarray) -> np.ndarray:
        """Agent ``agent``'s legal local choices (int8) from the env's flat mask: ``noop`` is
        always legal, then its own flat actions as the env masks them."""
        own = np.asarray(flat_mask, dtype=bool)[self.own_flat[agent]]
        return np.concatenate([[True], own]).astype(np.int8)

    def flat_index(self, agent: int, choice: int) -> int:
        """The flat action of local choice ``choice`` (>= 1) of agent ``agent``."""
        return int(self.own_flat[agent][choice - 1])

    def local_choice(self, flat: int) -> tuple[int, int]:
        """(agent position, local choice) of flat action ``flat``; agent -1 if no agent owns it."""
        agent = int(self.owner[flat])
        if agent < 0:
            return -1, NOOP
        return agent, 1 + int(np.searchsorted(self.own_flat[agent], flat))
