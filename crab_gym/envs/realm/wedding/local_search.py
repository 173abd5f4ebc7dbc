"""A deterministic local search over P5/P8 plans: it checks references and improves them.

A plan is stop codes per vehicle index (the venue drop is ``venue_code``). A move relocates
a stop (to any vehicle and place), swaps two stops, inserts a venue drop or reverses a piece
of a route; one to three moves make a candidate, kept when it scores no worse (feasible
first, then cheaper), with a rare restart from the best. The random draws are seeded and the
budget is a number of candidates, so a run gives the same plan on every machine. The
references use it from the solvers' plans (P5: does any plan beat them?; P8: the plans kept,
re-solved and improved facing the disruptions).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence

Plan = dict[int, list[int]]
#: (breaks a constraint, cost): smaller is better.
Score = tuple[bool, int]


def tidy(plan: Mapping[int, Sequence[int]], venue_code: int) -> Plan:
    """No two venue drops in a row and none at the end (the route ends at the venue anyway)."""
    out: Plan = {}
    for v, route in plan.items():
        stops: list[int] = []
        for s in route:
            if s == venue_code and (not stops or stops[-1] == venue_code):
                continue
            stops.append(s)
        while stops and stops[-1] == venue_code:
            stops.pop()
        out[v] = stops
    return out


def _move(plan: Plan, vehicles: Sequence[int], venue_code: int, rng: random.Random) -> Plan:
    r = {v: list(plan.get(v, [])) for v in vehicles}
    a, kind = rng.choice(vehicles), rng.random()
    if kind < 0.45 and r[a]:
        stop = r[a].pop(rng.randrange(len(r[a])))
        b = rng.choice(vehicles)
        r[b].insert(rng.randrange(len(r[b]) + 1), stop)
    elif kind < 0.7:
        b = rng.choice(vehicles)
        if r[a] and r[b]:
            i, j = rng.randrange(len(r[a])), rng.randrange(len(r[b]))
            r[a][i], r[b][j] = r[b][j], r[a][i]
    elif kind < 0.85:
        r[a].insert(rng.randrange(len(r[a]) + 1), venue_code)
    elif r[a]:
        i = rng.randrange(len(r[a]))
        j = rng.randrange(i, len(r[a]))
        r[a][i : j + 1] = r[a][i : j + 1][::-1]
    return r


def improve(
    plan: Mapping[int, Sequence[int]], evaluate: Callable[[Plan], Score], vehicles: Sequence[int], venue_code: int,
    *, tries: int = 2000, seed: int = 0,
) -> tuple[Plan, Score]:
    """The best plan found from ``plan`` in ``tries`` candidates (``plan`` itself if none is
    better) and its score. ``vehicles``: the vehicle indices that may take stops."""
    if not vehicles:
        start = tidy(plan, venue_code)
        return start, evaluate(start)
    rng = random.Random(seed)
    best = current = tidy(plan, venue_code)
    best_score = current_score = evaluate(best)
    for _ in range(tries):
        cand = _move(current, vehicles, venue_code, rng)
        for _ in range(rng.randrange(3)):
            cand = _move(cand, vehicles, venue_code, rng)
        cand = tidy(cand, venue_code)
        score = evaluate(cand)
        if score <= current_score or (not score[0] and rng.random() < 0.01):
            current, current_score = cand, score
            if score < best_score:
                best, best_score = cand, score
        if rng.random() < 0.002:
            current, current_score = best, best_score
    return best, best_score
