"""What every REALM env shares through RealmEnv: the reference API (the shipped plan scores 1,
a given value replaces the oracle's) and the Gymnasium-style class docstring; on P1 and P2."""

import gymnasium as gym
import pytest

from crab_gym.envs.realm.campus_tour.env import CampusTourEnv
from crab_gym.envs.realm.campus_tour.formats import shipped_p1_names
from crab_gym.envs.realm.common.references import Reference
from crab_gym.envs.realm.group_tours.env import GroupToursEnv
from crab_gym.envs.realm.group_tours.formats import shipped_p2_names
from tests.realm_helpers import P1_ID, P2_ID


@pytest.mark.parametrize("env_id, names", [(P1_ID, shipped_p1_names()), (P2_ID, shipped_p2_names())])
def test_reference_plan_is_the_submit_plan_arguments_that_score_one(env_id, names):
    for name in names:
        env = gym.make(env_id, instance=name)
        env.reset(seed=0)
        ref = env.unwrapped.reference
        assert isinstance(ref, Reference) and ref.source == "shipped" and ref.feasible
        # what OraclePolicy submits: the plan as it is, through the step API
        *_, term, _, info = env.step({"name": "submit_plan", "arguments": ref.plan})
        m = info["metrics"]
        assert term and info["valid"] and m["optimality"] == 1.0 and m["planning_quality"] == 1.0
        assert m["reference"] == ref.value and m["reference_status"] == ref.status


@pytest.mark.parametrize("env_id", [P1_ID, P2_ID])
def test_a_given_reference_replaces_the_oracle(env_id):
    env = gym.make(env_id, reference=7)
    env.reset(seed=0)
    ref = env.unwrapped.reference
    assert (ref.value, ref.status, ref.source, ref.plan) == (7.0, "GIVEN", "argument", None)
    env.reset(seed=1, options={"instance": env.unwrapped.instance})
    assert env.unwrapped.reference.value == 7.0  # every instance of the env


@pytest.mark.parametrize("cls", [CampusTourEnv, GroupToursEnv])
def test_class_docstring_has_the_gymnasium_sections(cls):
    doc = cls.__doc__
    sections = ["Description", "Action Space", "Observation Space", "Rewards", "Starting State",
                "Episode End", "Arguments", "Version History"]
    positions = [doc.index(f"## {name}\n") for name in sections]
    assert positions == sorted(positions)
    env = cls()
    for key in env.observation_space:  # every observation key is in the table
        assert f"| `{key}` |" in doc, key
    for name in env.actions:
        assert f"| `{name}` |" in doc, name
    for arg in ("instance", "generator", "reference", "render_mode", "optimality_weight"):
        assert f"`{arg}`" in doc, arg
    assert not env.task_description.startswith("#") and "REALM-Bench" in env.task_description
