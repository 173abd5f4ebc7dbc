"""P2 coordination on a hand-made instance: a fair, conflict-free plan scores 1; one guide
doing everything scores 0 (what one actor achieves alone); double claims, overlaps and an
empty plan score less than 1, an infeasible plan 0, with every value worked out by hand
below (``solo = ceil(G / E) = 2`` here: four groups, two guides)."""

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
    # 4 clean tours, 2 + 2 within the shares 2 + 2, no conflict: (4 - 2)/(4 - 2) x (1 - 0/4)
    assert score(GOOD) == 1.0


def test_one_guide_doing_everything_scores_zero():
    # a leads 4 clean tours but only 2 fit its share; b leads none: balanced 2 = solo: 0
    assert score(ONE_GUIDE) == 0.0
    assert check_p2(INSTANCE, ONE_GUIDE, None).feasible  # a feasible plan can fail coordination


def test_double_claims_and_overlaps_count_as_conflicts():
    parts = guide_coordination(INSTANCE, CONFLICTS, valid_groups={"g1", "g3", "g4"})
    # conflicts: both listings of g2, and a's g1 (overlaps a's g2): 3 of 5 listings
    assert (parts.listings, parts.conflicts) == (5, 3)
    # clean: b's g3 and g4; shares 2 and 2 (b first, it has more): balanced 2
    assert parts.clean_tours == {"a": 0, "b": 2} and parts.fair_shares == {"b": 2, "a": 2}
    assert parts.balanced == 2
    assert parts.score == 0.0  # balanced 2 = solo: nothing gained, whatever the conflicts
    assert score(CONFLICTS) == 0.0


def test_an_infeasible_plan_scores_zero():
    # g1 starts 40 minutes before it arrives: 3 clean tours, all within shares, no conflict;
    # the split itself scores (3 - 2)/(4 - 2) = 0.5, but the plan is infeasible: reported 0
    assert not check_p2(INSTANCE, EARLY, None).feasible
    assert guide_coordination(INSTANCE, EARLY, {"g2", "g3", "g4"}).score == 0.5
    assert score(EARLY) == 0.0


def test_a_single_eligible_guide_has_no_coordination():
    # b fits no group (cap 5): one guide does everything by necessity, nothing to share
    data = INSTANCE.model_dump()
    data["guides"][1]["max_group_size"] = 5
    inst = P2Instance.model_validate(data)
    plan = {"assignments": {"a": ONE_GUIDE["assignments"]["a"], "b": []}}
    assert check_p2(inst, plan, None).metrics["coordination"] is None


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


@pytest.mark.parametrize(("plan", "expected"), [(GOOD, 1.0), (ONE_GUIDE, 0.0), (EARLY, 0.0)])
def test_the_env_reports_the_same_coordination(plan, expected):
    env = GroupToursEnv(INSTANCE, reference=0)
    env.reset(seed=0)
    *_, info = env.submit_plan(plan)
    assert info["valid"] and info["metrics"]["coordination"] == expected


def test_shipped_optima_score_half_or_more():
    # the optimum trades balance for waiting now and then, or cannot split evenly
    scores = {
        name: check_p2(inst, reference_p2(inst).plan, None).metrics["coordination"]
        for name in shipped_p2_names()
        for inst in [load_p2(name)]
    }
    # p2_small_01: 3 of 4 balanced, solo 2: (3 - 2)/(4 - 2); p2_medium_01: 11 of 12, solo 4
    assert min(scores.values()) == 0.5 and scores["p2_small_01"] == 0.5
    assert scores["p2_medium_01"] == pytest.approx((11 - 4) / (12 - 4))
    assert sum(s == 1.0 for s in scores.values()) == 16
