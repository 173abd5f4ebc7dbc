"""The PettingZoo view of every multi-agent REALM id: PettingZoo's own API and seed tests, the
joint-action contract fuzz, and the joint-step rules (conflicts, passing, invalid choices)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest

import crab_gym
from crab_gym.checks.joint_contract import check_joint_contract
from crab_gym.multiagent import INFO_KEYS, NOOP, RealmParallelEnv, aec_env

pettingzoo_test = pytest.importorskip("pettingzoo.test")  # (the conftest skips the folder without it)

MULTI = crab_gym.multiagent_ids()


def test_the_multi_agent_ids_are_the_problems_with_several_actors() -> None:
    assert MULTI == [f"Realm-P{k}-v0" for k in (2, 3, 4, 5, 6, 7, 8, 9, 10)]
    for single in ("Realm-P1-v0", "Realm-P11-v0", "CrabDesktop-v0"):
        with pytest.raises(ValueError, match="no multi-agent view; multi-agent ids: Realm-P2-v0"):
            crab_gym.parallel_env(single)
    with pytest.raises(ValueError, match="unknown env id 'Realm-P99-v0'.*; multi-agent ids: Realm-P2-v0"):
        crab_gym.parallel_env("Realm-P99-v0")  # not an id at all: said so (issue 38)


@pytest.mark.parametrize("env_id", MULTI)
def test_pettingzoo_parallel_api_and_seed_tests(env_id: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PettingZoo reports API slips as warnings
        pettingzoo_test.parallel_api_test(crab_gym.parallel_env(env_id), num_cycles=300)
    pettingzoo_test.parallel_seed_test(lambda: crab_gym.parallel_env(env_id), num_cycles=200)


@pytest.mark.parametrize("env_id", ["Realm-P3-v0", "Realm-P6-v0"])
def test_the_aec_form_passes_pettingzoo_api_test(env_id: str) -> None:
    pettingzoo_test.api_test(aec_env(env_id), num_cycles=200)


@pytest.mark.parametrize("env_id", MULTI)
def test_joint_action_contract(env_id: str) -> None:
    report = check_joint_contract(env_id, steps=120, seed=3)
    report.raise_if_failed()
    assert report.legal_steps > 50 and report.invalid_tried > 5 and report.out_of_space_tried > 5


def test_agents_are_the_actors_with_their_own_moves() -> None:
    env = crab_gym.parallel_env("Realm-P6-v0")
    assert env.possible_agents == ["car1", "car2", "mom", "dad", "sister"]
    names = {a: {c["name"] for c in env.choices(a)[1:]} for a in env.possible_agents}
    assert names["car1"] == {"send_car"} and names["mom"] == {"start_task"}
    assert all(c["arguments"]["cook"] == "mom" for c in env.choices("mom")[1:])
    obs, infos = env.reset(seed=0)
    assert [obs[a]["agent_id"] for a in env.agents] == [0, 1, 2, 3, 4]
    assert all(obs[a]["action_mask"][NOOP] == 1 for a in env.agents)
    assert all(tuple(infos[a]) == INFO_KEYS for a in env.agents)
    assert env.state_space.contains(env.state())


def test_two_vehicles_claiming_one_passenger_the_first_in_agent_order_wins() -> None:
    env = RealmParallelEnv("Realm-P3-v0", instance="p3_small_01")
    obs, _ = env.reset(seed=0)
    pick = {a: [k for k, c in enumerate(env.choices(a)) if c and c["arguments"].get("stop") == "pickup:p1"][0]
            for a in ("v1", "v2")}
    assert obs["v1"]["action_mask"][pick["v1"]] and obs["v2"]["action_mask"][pick["v2"]]
    penalty = env.env.invalid_action_penalty
    obs, rewards, terms, truncs, infos = env.step({"v1": pick["v1"], "v2": pick["v2"]})
    assert infos["v1"]["valid"] and not infos["v1"]["conflict"]
    assert not infos["v2"]["valid"] and infos["v2"]["conflict"]
    assert infos["v2"]["reason"].startswith("conflict lost to v1")
    assert obs["v1"]["request_vehicle"][0] == 1  # p1 rides with v1
    assert rewards["v1"] == rewards["v2"] == pytest.approx(infos["v1"]["reward_share"] - penalty)
    assert infos["v2"]["reward_share"] == -penalty
    assert env.last_joint_moves == [{"name": "dispatch", "arguments": {"vehicle": "v1", "stop": "pickup:p1"}}]


def test_when_every_vehicle_passes_nothing_happens() -> None:
    env = RealmParallelEnv("Realm-P3-v0")
    obs, _ = env.reset(seed=0)
    after, rewards, terms, truncs, infos = env.step({a: NOOP for a in env.agents})
    assert rewards == {"v1": 0.0, "v2": 0.0} and not any(terms.values()) and not any(truncs.values())
    assert all(np.array_equal(after["v1"][k], obs["v1"][k]) for k in obs["v1"])
    assert env.last_joint_moves == []


def test_when_every_cook_and_car_passes_the_clock_moves_on() -> None:
    env = RealmParallelEnv("Realm-P6-v0")
    obs, _ = env.reset(seed=0)
    _, _, _, _, infos = env.step({})  # an agent left out passes; nothing is under way yet to wait for
    assert infos["mom"]["move"] is None and env.last_joint_moves == []
    turkey = next(k for k, c in enumerate(env.choices("mom")) if c and c["arguments"]["task"] == "turkey")
    obs, _, _, _, _ = env.step({"mom": turkey})
    clock = float(obs["mom"]["clock"][0])
    after, _, _, _, infos = env.step({})
    assert infos["mom"]["move"] == {"joint_pass": "wait"}
    assert env.last_joint_moves == [{"name": "wait", "arguments": {}}]
    assert float(after["mom"]["clock"][0]) > clock


def test_when_every_guide_passes_the_tours_so_far_are_the_plan() -> None:
    env = RealmParallelEnv("Realm-P2-v0")
    obs, _ = env.reset(seed=0)
    first = int(np.flatnonzero(obs["guide1"]["action_mask"][1:])[0]) + 1
    env.step({"guide1": first, "guide2": NOOP})
    _, _, terms, _, infos = env.step({"guide1": NOOP, "guide2": NOOP})
    assert all(terms.values()) and not env.agents
    metrics = infos["guide1"]["metrics"]
    assert metrics == infos["guide2"]["metrics"]
    n_groups = len(env.env.instance.groups)
    assert metrics["planning_quality"] == pytest.approx(1 / n_groups)
    assert sum(len(tours) for tours in infos["guide2"]["solution"]["assignments"].values()) == 1
    with pytest.raises(gym.error.ResetNeeded):
        env.step({})


@pytest.mark.parametrize("bad", [10, -1, 2.0, "1", True, None, np.array([1])])
def test_a_choice_outside_the_space_is_refused_and_the_others_still_move(bad) -> None:
    env = RealmParallelEnv("Realm-P3-v0")
    obs, _ = env.reset(seed=0)
    legal = int(np.flatnonzero(obs["v2"]["action_mask"][1:])[0]) + 1
    penalty = env.env.invalid_action_penalty
    _, rewards, _, _, infos = env.step({"v1": bad, "v2": legal})
    assert not infos["v1"]["valid"] and "not in v1's action space" in infos["v1"]["reason"]
    assert infos["v2"]["valid"] and len(env.last_joint_moves) == 1
    assert infos["v1"]["reward_share"] == -penalty
    assert rewards["v1"] == pytest.approx(infos["v2"]["reward_share"] - penalty)


def test_max_cycles_truncates_every_agent() -> None:
    env = crab_gym.parallel_env("Realm-P3-v0", max_cycles=2)
    env.reset(seed=0)
    env.step({})
    _, _, terms, truncs, infos = env.step({})
    assert truncs == {"v1": True, "v2": True} and not any(terms.values()) and not env.agents
    assert infos["v1"]["metrics"] == {}


#: Per multi-agent id and role, the observation arrays whose rows hold each actor's own state.
ROLE_STATE = {
    "Realm-P2-v0": {"guide": ("guide_load",)},
    "Realm-P3-v0": {"vehicle": ("vehicle_free_at", "vehicle_location", "vehicle_load", "vehicle_parked")},
    "Realm-P4-v0": {"vehicle": ("vehicle_free_at", "vehicle_location", "vehicle_load", "vehicle_parked")},
    "Realm-P5-v0": {"vehicle": ("vehicle_free_at", "vehicle_place", "vehicle_load", "vehicle_finished")},
    "Realm-P6-v0": {"car": ("car_free_at", "car_at_airport"), "cook": ("member_busy_until",)},
    "Realm-P7-v0": {"vehicle": ("vehicle_free_at", "vehicle_retired")},
    "Realm-P8-v0": {"vehicle": ("vehicle_free_at", "vehicle_place", "vehicle_load", "vehicle_finished")},
    "Realm-P9-v0": {"car": ("car_free_at", "car_at_airport"), "cook": ("member_busy_until",)},
    "Realm-P10-v0": {"supplier": ("supplier_left",), "facility": ("facility_left", "made_today")},
}


def test_role_state_covers_every_multi_agent_id() -> None:
    assert sorted(ROLE_STATE) == sorted(MULTI)


@pytest.mark.parametrize("env_id", MULTI)
def test_an_agent_s_row_is_its_own_state(env_id: str) -> None:
    """An agent moving alone changes its own row (``agent_row``) of its role's arrays."""
    env = crab_gym.parallel_env(env_id)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    tested: set[str] = set()
    for _ in range(300):
        if not env.agents:
            obs, _ = env.reset(seed=len(tested))
        ready = [a for a in env.agents if a not in tested and obs[a]["action_mask"][1:].any()]
        if not ready:  # let the others play on until an untested agent can move
            obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents})
            continue
        agent = ready[0]
        role, row = env.role(agent)
        assert (obs[agent]["agent_role"], obs[agent]["agent_row"]) == (env.env.agent_arguments.index(role), row)
        before = {key: np.array(obs[agent][key]) for key in ROLE_STATE[env_id][role]}
        move = int(np.flatnonzero(obs[agent]["action_mask"][1:])[0]) + 1
        obs, _, _, _, infos = env.step({agent: move})
        assert infos[agent]["valid"], infos[agent]["reason"]
        after = obs[agent] if agent in obs else env.state()
        changed = {r for key in before for r in range(len(before[key]))
                   if not np.array_equal(before[key][r], after[key][r])}
        assert row in changed, f"{agent}'s move changed rows {sorted(changed)} of {list(before)}, not its row {row}"
        tested.add(agent)
        if tested == set(env.possible_agents):
            break
    roles = {env.role(a)[0] for a in tested}
    assert roles == set(ROLE_STATE[env_id]), f"untested roles: {set(ROLE_STATE[env_id]) - roles}"


# ---------------------------------------------------------------------------------- issue 28, item 7
def test_a_closed_parallel_env_is_freed() -> None:
    """The spaces were cached with functools.cache on the methods, which kept every env alive."""
    import gc
    import weakref

    refs = []
    for _ in range(3):
        env = RealmParallelEnv("Realm-P3-v0", instance="p3_small_01")
        obs, _ = env.reset(seed=0)
        env.step({a: 0 for a in env.agents})
        assert env.action_space("v1") is env.action_space("v1")  # one object per agent, still
        assert env.observation_space("v1") is env.observation_space("v1")
        env.close()
        refs.append(weakref.ref(env))
        del env, obs
    gc.collect()
    assert [r() for r in refs] == [None, None, None]


@pytest.mark.parametrize(("actions", "fragment"), [
    ({"v3": 1}, "step() got action(s) for 'v3'"),
    ({"V1": 1, "v2": 0}, "for 'V1' (did you mean 'v1'?), which are not live agents; live agents: v1, v2"),
])
def test_a_misspelt_agent_is_an_error_naming_the_live_agents(actions, fragment) -> None:
    env = RealmParallelEnv("Realm-P3-v0", instance="p3_small_01")
    env.reset(seed=0)
    before = env.env.describe() if hasattr(env.env, "describe") else None
    with pytest.raises(ValueError) as info:
        env.step(actions)
    assert fragment in str(info.value) and "live agents: v1, v2" in str(info.value)
    assert env.last_joint_moves == [] and env.agents == ["v1", "v2"]
    if before is not None:
        assert env.env.describe() == before


def test_only_misspelt_keys_in_p2_do_not_submit_empty_tours() -> None:
    env = RealmParallelEnv("Realm-P2-v0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="live agents: guide"):
        env.step({"guid1": 0})
    assert env.agents  # the episode did not end


@pytest.mark.parametrize("bad", [[1, 2], None, 3, "v1"])
def test_a_joint_action_that_is_not_a_dict_is_a_type_error(bad) -> None:
    env = RealmParallelEnv("Realm-P3-v0", instance="p3_small_01")
    env.reset(seed=0)
    with pytest.raises(TypeError, match=r"step\(\) takes a dict \{agent: action\} for the live agents \(v1, v2\)"):
        env.step(bad)


def test_an_unknown_agent_s_space_names_the_agents() -> None:
    env = RealmParallelEnv("Realm-P3-v0", instance="p3_small_01")
    with pytest.raises(KeyError, match="no agent 'v9'; agents: v1, v2"):
        env.action_space("v9")
