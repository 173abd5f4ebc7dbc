"""The seeded P2 generator: feasible multi-group tour instances of three size classes.

A hidden schedule places every group's tour on some guide first, and preferences are drawn
before those starts, so each drawn instance is feasible by construction and contended; the
shipped instances are ``generate_p2(size, seed=k)`` (see :mod:`.build`).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from crab_gym.envs.realm.group_tours.model import P2Group, P2Guide, P2Instance

Size = Literal["small", "medium", "large"]

#: (groups low, groups high, guides low, guides high) per size class.
SIZE_COUNTS: dict[str, tuple[int, int, int, int]] = {
    "small": (4, 6, 2, 3),
    "medium": (10, 14, 3, 4),
    "large": (22, 30, 5, 7),
}


def generate_p2(
    size: Size = "small",
    seed: int = 0,
    name: str | None = None,
    n_groups: int | None = None,
    n_guides: int | None = None,
) -> P2Instance:
    """Draw a feasible multi-group tour instance; the same seed gives the same instance.

    ``n_groups`` / ``n_guides`` override the counts drawn for the size class (an env that
    draws a new instance per episode keeps its spaces and ids).

    Feasibility holds by construction: a hidden schedule places every group's tour on some
    guide first (inside the guide's availability, one tour at a time, within its size cap);
    each group then prefers a start up to 1.5 tours before its hidden start and arrives up
    to 30 minutes before that, so guides are contended and some waiting is unavoidable.
    """
    if size not in SIZE_COUNTS:
        raise ValueError(f"size must be one of {sorted(SIZE_COUNTS)}, got {size!r}")
    rng = np.random.default_rng([2, seed, list(SIZE_COUNTS).index(size)])
    g_lo, g_hi, k_lo, k_hi = SIZE_COUNTS[size]
    n_groups_drawn = int(rng.integers(g_lo, g_hi + 1))
    n_guides_drawn = int(rng.integers(k_lo, k_hi + 1))
    if n_groups is not None and n_groups < 1 or n_guides is not None and n_guides < 1:
        raise ValueError("n_groups and n_guides must be at least 1")
    n_groups = int(n_groups) if n_groups is not None else n_groups_drawn
    n_guides = int(n_guides) if n_guides is not None else n_guides_drawn
    duration = int(rng.choice([45, 60, 75, 90]))
    caps = [int(rng.choice([12, 15, 20, 25])) for _ in range(n_guides)]
    global_cap = max(caps)
    shifts = [(9 * 60, 17 * 60), (8 * 60, 13 * 60), (12 * 60, 18 * 60), (10 * 60, 16 * 60)]
    avail = [shifts[0]] + [shifts[int(rng.integers(0, len(shifts)))] for _ in range(n_guides - 1)]

    hidden = _hidden_schedule(rng, n_groups, n_guides, duration, avail)
    groups = _groups(rng, hidden, caps, duration)
    guides = [
        P2Guide(guide_id=f"guide{k + 1}", available_from=a, available_to=b, max_group_size=caps[k])
        for k, (a, b) in enumerate(avail)
    ]
    return P2Instance(
        name=name or f"p2_{size}_seed{seed}",
        description=(
            f"Campus tours ({size}): {n_groups} visitor groups, {n_guides} guides, "
            f"{duration}-minute tours."
        ),
        groups=groups,
        guides=guides,
        tour_duration=duration,
        max_group_size=global_cap,
        size=size,
    )


def _hidden_schedule(
    rng: np.random.Generator, n_groups: int, n_guides: int, duration: int, avail: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """(guide, start) per group: guides take tours almost back to back, in random turns.

    When every guide is full, the earliest-free guide's day is lengthened (``avail`` changes).
    """
    free = [a for a, _ in avail]
    hidden: list[tuple[int, int]] = []  # (guide, start) per group
    for _ in range(n_groups):
        for k in rng.permutation(n_guides):
            start = free[k] + 5 * int(rng.integers(0, 3))
            if start + duration <= avail[k][1]:
                break
        else:  # every guide is full: lengthen the earliest-free guide's day
            k = int(np.argmin(free))
            start = free[k]
            avail[k] = (avail[k][0], start + duration)
        hidden.append((int(k), int(start)))
        free[k] = start + duration
    return hidden


def _groups(
    rng: np.random.Generator, hidden: list[tuple[int, int]], caps: list[int], duration: int
) -> list[P2Group]:
    """The groups: preferences cluster before the hidden starts, so some waiting is unavoidable."""
    groups = []
    for g, (k, start) in enumerate(hidden):
        preferred = max(7 * 60 + 30, start - 5 * int(rng.integers(0, (3 * duration) // 10 + 1)))
        arrival = max(7 * 60, preferred - 5 * int(rng.integers(0, 7)))
        groups.append(
            P2Group(
                group_id=f"group{g + 1}",
                size=int(rng.integers(4, caps[k] + 1)),
                arrival=arrival,
                preferred=preferred,
            )
        )
    return groups
