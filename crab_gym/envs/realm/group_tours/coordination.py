"""The P2 coordination metric: how well the guides (the agents) split the groups among them.

Working together, guides must not claim the same group or double-book themselves, and should
share the tours fairly. From a plan ``{"assignments": {guide: [{"group", "start"}]}}``:

* a listing is **in conflict** when its group is listed more than once in the plan (two
  guides claim it, or one guide twice) or its tour overlaps another tour of the same guide;
* a tour is **clean** when it is not in conflict and its group's own constraints hold
  (arrived, fits the caps, inside the guide's availability: the checker's verdict);
* the **fair shares** split the ``G`` groups as evenly as possible over the ``E`` eligible
  guides (those that fit at least one group): ``G mod E`` guides take ``ceil(G / E)``, the
  others ``floor(G / E)``; the larger shares go to the guides with the most clean tours;
* ``balanced`` counts the clean tours that fit inside their guide's fair share.

One guide leading every group alone keeps at most ``solo = ceil(G / E)`` tours within its
share, so the gain from working together is measured from there:

``coordination = max(0, (balanced - solo) / (G - solo)) * (1 - conflicts / listings)``,
0 for a plan with no tours. It is 1 exactly when every group is toured cleanly, no guide
leads more than its fair share and nothing conflicts; one guide leading every group scores
0. With a single eligible guide (or a single group) nothing can be shared: ``None``, not
applicable. The env and the checker report 0 for an infeasible plan (the scoring contract);
:func:`guide_coordination` itself scores any well-formed plan, so that a user can see how
far an infeasible one got. Constraints can make a perfect split impossible, so an optimal
plan may score below 1 (``p2_small_01``: three groups fit only ``guide1``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from crab_gym.envs.realm.group_tours.model import P2Instance


@dataclass(frozen=True)
class GuideCoordination:
    """The parts of the P2 coordination score, so a user can see why a plan scores what it does."""

    score: float | None
    listings: int
    conflicts: int
    clean_tours: dict[str, int]
    fair_shares: dict[str, int]
    balanced: int


def fair_shares(clean_tours: Mapping[str, int], n_groups: int) -> dict[str, int]:
    """The even split of ``n_groups`` over the guides in ``clean_tours`` (the eligible ones),
    the larger shares going to the guides with most clean tours (ties: listed order)."""
    if not clean_tours:
        return {}
    base, extra = divmod(n_groups, len(clean_tours))
    order = sorted(clean_tours, key=lambda gid: -clean_tours[gid])  # stable: ties keep order
    return {gid: base + (1 if rank < extra else 0) for rank, gid in enumerate(order)}


def _conflicting(tours: Sequence[tuple[str, str, float]], duration: int) -> list[bool]:
    """Per listing (guide, group, start): whether it is in conflict (see the module)."""
    claims = Counter(group for _, group, _ in tours)
    flags = [claims[group] > 1 for _, group, _ in tours]
    by_guide: dict[str, list[int]] = {}
    for i, (gid, _, _) in enumerate(tours):
        by_guide.setdefault(gid, []).append(i)
    for rows in by_guide.values():
        rows.sort(key=lambda i: tours[i][2])
        for a, b in zip(rows, rows[1:]):
            if tours[b][2] < tours[a][2] + duration:
                flags[a] = flags[b] = True
    return flags


def guide_coordination(
    instance: P2Instance, plan: Mapping[str, Any], valid_groups: Collection[str]
) -> GuideCoordination:
    """Score a well-formed P2 plan (the checker validates its shape first). ``valid_groups``
    are the groups whose own constraints hold in the checker's verdict."""
    tours = [
        (gid, item["group"], item["start"]) for gid, items in plan["assignments"].items() for item in items
    ]
    conflict = _conflicting(tours, instance.tour_duration)
    eligible = [
        gd.guide_id
        for k, gd in enumerate(instance.guides)
        if any(instance.compatible(g, k) for g in range(len(instance.groups)))
    ]
    clean = dict.fromkeys(eligible, 0)
    for (gid, group, _), bad in zip(tours, conflict):
        if not bad and group in valid_groups and gid in clean:
            clean[gid] += 1
    shares = fair_shares(clean, len(instance.groups))
    balanced = sum(min(clean[gid], shares[gid]) for gid in clean)
    conflicts = sum(conflict)
    n_groups = len(instance.groups)
    solo = max(shares.values(), default=n_groups)
    score: float | None = None
    if n_groups > solo:
        gain = max(0.0, (balanced - solo) / (n_groups - solo))
        score = gain * (1.0 - conflicts / len(tours)) if tours else 0.0
    return GuideCoordination(score, len(tours), conflicts, clean, shares, balanced)


def reported_coordination(parts: GuideCoordination, feasible: bool) -> float | None:
    """What the env and the checker report: the score, 0 for an infeasible plan, ``None``
    where nothing can be shared."""
    if parts.score is None:
        return None
    return parts.score if feasible else 0.0
