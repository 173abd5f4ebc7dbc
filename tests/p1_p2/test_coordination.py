"""P2 coordination on a hand-made instance: a fair, conflict-free plan scores 1; one guide
doing everything, double claims, overlaps, invalid tours and an empty plan score less, with
every value worked out by hand below."""

from __future__ import annotations

import pytest

from crab_gym.envs.realm.group_tours.checker import check_p2
from crab_gym.envs.realm.group_tours.coordination import fair_shares, guide_coordination
from crab_gym.envs.realm.group_tours.env import GroupToursEnv
from crab_gym.envs.realm.group_tours.formats import load_p2, shipped_p2_names
from crab_gym.envs.realm.group_tours.model import P2Instance
from crab_gym.envs.realm.group_tours.references import reference_p2

# Four groups of 10 arriving at 9:00, two guides free 9:00-17:00 who fit them all: the fair
# split is 2 tours each. One tour lasts 60 minutes.
INSTANCE = P2Instance(
    name="hand_p2",
    groups=[{"group_id": f"g{i}", "size": 10, "arrival": 540, "preferred": 540} for i in (1, 2, 3, 4)],
    guides=[{"guide_id": gid, "available_from": 540, "available_to": 1020, "max_group_size": 20} for gid in ("a", "b")],
    tour_duration=60,
    max_group_size=20,
)


def tour(group: str, start: int) -> dict:
    return {"group": group, "start": start}


GOOD = {"assignments": {"a": [tour("g1", 540), tour("g2", 600)], "b": [tour("g3", 540), tour("g4", 600)]}}
ONE_GUIDE = {"assignments": {"a": [tour("g1", 540), tour("g2", 600), tour("g3", 660), tour("g4", 720)], "b": []}}
# g2 claimed by both guides; a's g1 (540-600) and g2 (570-630) overlap
CONFLICTS = {
    "assignments": {
        "a": [tour("g1", 540), tour("g2", 570)],
        "b": [tour("g2", 540), tour("g3", 600), tour("g4", 660)],
    }
}
EARLY = {"assignments": {"a": [tour("g1", 500), tour("g2", 600)], "b": [tour("g3", 540), tour("g4", 600)]}}
EMPTY = {"assignments": {"a": [], "b": []}}


def score(plan: dict) -> float:
    return check_p2(INSTANCE, plan, None).metrics["coordination"]


def test_fair_conflict_free_plan_scores_one():
    # 4 clean tours, 2 + 2 within the shares 2 + 2, no conflict: 4/4 x (1 - 0/4)
    assert score(GOOD) == 1.0


def test_one_guide_doing_everything_scores_its_fair_share():
    # a leads 4 clean tours but only 2 fit its share; b leads none: (2 + 0)/4 x 1
    assert score(ONE_GUIDE) == 0.5
    assert check_p2(INSTANCE, ONE_GUIDE, None).feasible  # a feasible plan can fail coordination


def test_double_claims_and_overlaps_count_as_conflicts():
    parts = guide_coordination(INSTANCE, CONFLICTS, valid_groups={"g1", "g3", "g4"})
    # conflicts: both listings of g2, and a's g1 (overlaps a's g2): 3 of 5 listings
    assert (parts.listings, parts.conflicts) == (5, 3)
    # clean: b's g3 and g4; shares 2 and 2 (b first, it has more): balanced 2
    assert parts.clean_tours == {"a": 0, "b": 2} and parts.fair_shares == {"b": 2, "a": 2}
    assert parts.balanced == 2
    assert parts.score == pytest.approx(2 / 4 * (1 - 3 / 5))  # 0.2
    assert score(CONFLICTS) == pytest.approx(0.2)


def test_an_invalid_tour_keeps_an_infeasible_plan_below_one():
    # g1 starts 40 minutes before it arrives: 3 clean tours, all within shares, no conflict
    assert not check_p2(INSTANCE, EARLY, None).feasible
    assert score(EARLY) == 0.75


def test_an_empty_plan_scores_zero():
    assert score(EMPTY) == 0.0


def test_fair_shares_give_the_larger_shares_to_the_busiest_guides():
    # 4 groups over 3 guides: one share of 2, two of 1; the 2 goes to the guide with 3 tours
    assert fair_shares({"a": 1, "b": 3, "c": 0}, 4) == {"b": 2, "a": 1, "c": 1}
    # 6 groups over 2 guides: 3 each whatever they lead
    assert fair_shares({"a": 4, "b": 2}, 6) == {"a": 3, "b": 3}


def test_guides_that_fit_no_group_are_not_asked_for_a_share():
    # a third guide whose cap (5) fits no group: the split is still 2 + 2 over a and b
    data = INSTANCE.model_dump()
    data["guides"].append({"guide_id": "c", "available_from": 540, "available_to": 1020, "max_group_size": 5})
    inst = P2Instance.model_validate(data)
    parts = guide_coordination(inst, {"assignments": {**GOOD["assignments"], "c": []}}, {"g1", "g2", "g3", "g4"})
    assert parts.fair_shares == {"a": 2, "b": 2} and parts.score == 1.0


@pytest.mark.parametrize(("plan", "expected"), [(GOOD, 1.0), (ONE_GUIDE, 0.5), (EARLY, 0.75)])
def test_the_env_reports_the_same_coordination(plan, expected):
    env = GroupToursEnv(INSTANCE, reference=0)
    env.reset(seed=0)
    *_, info = env.submit_plan(plan)
    assert info["valid"] and info["metrics"]["coordination"] == expected


def test_shipped_optima_score_three_quarters_or_more():
    # the optimum trades balance for waiting now and then, or cannot split evenly
    scores = {
        name: check_p2(inst, reference_p2(inst).plan, None).metrics["coordination"]
        for name in shipped_p2_names()
        for inst in [load_p2(name)]
    }
    assert min(scores.values()) == 0.75 and scores["p2_small_01"] == 0.75
    assert scores["p2_medium_01"] == pytest.approx(11 / 12)
    assert sum(s == 1.0 for s in scores.values()) == 16
