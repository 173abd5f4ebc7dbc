"""Issue 38, item 7: a P7 file with a stock of 10^6 or 10^9 made the oracle's CP-SAT model carry
those numbers (times the shortage ratios' denominators, up to 10^6): the solve took far more
work for the same optimum, and on a large instance ran out of budget with a much worse plan.
The model now bounds the stock by what the need can use (:func:`oracle.useful_stock`)."""

from __future__ import annotations

import itertools

from crab_gym.envs.realm.disaster_relief.formats import load_p7
from crab_gym.envs.realm.disaster_relief.model import RESOURCES, ResourceShortage, lost_units
from crab_gym.envs.realm.disaster_relief.oracle import solve_p7, useful_stock


def _least_stock_for(need: int, fractions: list[float]) -> int:
    """The least stock that still holds ``need`` units after the shortages (by counting)."""
    stock = need
    while True:
        left = stock
        for f in fractions:
            left -= lost_units(left, f)
        if left >= need:
            return stock
        stock += 1


def test_a_stock_beyond_the_need_neither_changes_nor_slows_the_solve():
    inst = load_p7("p7_small_00")  # a 23 % shelter shortage
    need = {k: sum(r.needs.get(k, 0) for r in inst.regions) for k in RESOURCES}
    cuts = {k: [d.fraction for d in inst.disruptions if isinstance(d, ResourceShortage) and d.resource == k]
            for k in RESOURCES}
    enough = inst.model_copy(update={"stock": {k: _least_stock_for(need[k], cuts[k]) for k in RESOURCES}})
    normal = solve_p7(enough)
    assert normal.status == "OPTIMAL"
    for stock in (10**6, 10**9):
        res = solve_p7(inst.model_copy(update={"stock": dict.fromkeys(RESOURCES, stock)}))
        assert res.status == "OPTIMAL" and res.cost == normal.cost
        # before: 2.9 deterministic seconds at 10^6 (0.55 at 10^9) against about 0.2
        assert res.detail["deterministic_time"] <= 2 * normal.detail["deterministic_time"] + 0.1, stock


def test_useful_stock_serves_every_plan_that_ships_at_most_the_need():
    """The proof of :func:`useful_stock`, by counting: for every way of shipping at most the
    need around two shortages, the bounded stock runs out exactly when the full one does."""
    fractions_sets = [[], [0.25], [0.5, 0.34], [1.0, 0.5], [0.34, 1.0], [0.9, 0.9]]
    for need, fractions, have in itertools.product(range(0, 7), fractions_sets, (3, 9, 10**9)):
        bounded = useful_stock(have, need, fractions)
        assert bounded <= have
        for ships in itertools.product(range(need + 1), repeat=len(fractions) + 1):
            if sum(ships) > need:
                continue
            assert _fits(have, ships, fractions) == _fits(bounded, ships, fractions), (need, fractions, have, ships)


def _fits(stock: int, ships: tuple[int, ...], fractions: list[float]) -> bool:
    """Whether shipping ``ships[i]`` before shortage i (the last after all) fits ``stock``."""
    for i, amount in enumerate(ships):
        if amount > stock:
            return False
        stock -= amount
        if i < len(fractions):
            stock -= lost_units(stock, fractions[i])
    return True
