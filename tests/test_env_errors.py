"""Constructor mistakes on every REALM env say what *is* accepted: misspelled keywords,
``instance`` of a wrong type or an unknown name, unknown ``generator`` options."""

from __future__ import annotations

import importlib
import inspect
import re

import gymnasium as gym
import pytest

import crab_gym  # noqa: F401
from crab_gym.envs.realm.common.errors import InstanceFormatError
from crab_gym.envs.registration import realm_ids

REALM_IDS = realm_ids()

#: A near miss of each env's default instance, and the name it should suggest.
NEAR_MISS = {
    "Realm-P1-v0": ("p1_smal_00", "p1_small_00"),
    "Realm-P2-v0": ("p2_smll_00", "p2_small_00"),
    "Realm-P3-v0": ("p3_smal_01", "p3_small_01"),
    "Realm-P4-v0": ("p4_small-01", "p4_small_01"),
    "Realm-P5-v0": ("p5_smal_00", "p5_small_00"),
    "Realm-P8-v0": ("p8_small-00", "p8_small_00"),
    "Realm-P6-v0": ("p6_smal_00", "p6_small_00"),
    "Realm-P9-v0": ("p9_small-00", "p9_small_00"),
    "Realm-P10-v0": ("p10_smal_00", "p10_small_00"),
    "Realm-P7-v0": ("p7_smal_00", "p7_small_00"),
    "Realm-P11-v0": ("ft6x", "ft06"),
    **{f"Realm-J{k}-v0": (f"j{k}_smal_00", f"j{k}_small_00") for k in (2, 3, 4)},
}

#: Envs with a ``generator`` argument, and its valid keys.
GENERATOR_KEYS = {
    "Realm-P1-v0": ["n_targets", "size"],
    "Realm-P2-v0": ["n_groups", "n_guides", "size"],
    **dict.fromkeys(("Realm-P3-v0", "Realm-P4-v0"), ["n_requests", "n_vehicles", "n_locations", "size"]),
    **dict.fromkeys(("Realm-P5-v0", "Realm-P8-v0"), ["n_guests", "n_errands", "n_vehicles", "size"]),
    **dict.fromkeys(("Realm-P6-v0", "Realm-P9-v0"), ["n_members", "n_tasks", "n_cars", "size"]),
    "Realm-P10-v0": ["n_components", "n_suppliers", "n_days", "size"],
    "Realm-P7-v0": ["n_regions", "n_vehicles", "size"],
    "Realm-P11-v0": ["n_jobs", "n_machines", "low", "high", "construction"],
    **dict.fromkeys(("Realm-J2-v0", "Realm-J3-v0", "Realm-J4-v0"), ["n_jobs", "n_machines", "size"]),
}


def env_class(env_id: str) -> type:
    module, name = gym.spec(env_id).entry_point.split(":")
    return getattr(importlib.import_module(module), name)


def keywords(env_id: str) -> list[str]:
    return [p for p in inspect.signature(env_class(env_id)).parameters if p != "self"]


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_misspelled_keyword_lists_the_valid_ones_and_the_nearest(env_id):
    with pytest.raises(TypeError) as err:
        gym.make(env_id, instanse="x")
    message = str(err.value)
    assert f"({env_id}): unknown keyword 'instanse' (did you mean 'instance'?)" in message
    valid = message.split("valid keywords: ")[1].split(" was raised")[0]
    assert valid.split(", ") == keywords(env_id)  # every keyword, in signature order
    assert "render_mode" in valid and "optimality_weight" in valid


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_several_unknown_keywords_and_extra_positionals(env_id):
    with pytest.raises(TypeError, match=r"unknown keywords 'colour', 'speed'; valid keywords: instance, "):
        gym.make(env_id, colour="red", speed=3)
    with pytest.raises(TypeError, match=r"takes 1 positional argument\(s\) \(instance\); pass the others by keyword"):
        env_class(env_id)(None, "ansi")


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_signature_is_kept_for_introspection(env_id):
    params = inspect.signature(env_class(env_id)).parameters
    assert list(params)[:1] == ["instance"] and "render_mode" in params


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_instance_of_a_wrong_type_says_what_instance_accepts(env_id):
    with pytest.raises(TypeError) as err:
        gym.make(env_id, instance=42)
    message = str(err.value)
    assert message.startswith("instance must be a shipped ")
    assert "got int 42" in message and "a path to " in message
    # a few names, and a real call that lists them all
    few, count, call, problem = re.search(
        r"instance name \(([^;]+), \.\.\.; all (\d+): ([\w.]+)\('([PJ]\d+)'\)\)", message
    ).groups()
    module, func = call.rsplit(".", 1)
    names = getattr(importlib.import_module(module), func)(problem)
    assert len(names) == int(count) > 0
    assert set(few.split(", ")) <= set(names)
    # the same check guards reset(options={"instance": ...})
    env = gym.make(env_id)
    with pytest.raises(TypeError, match="instance must be a shipped"):
        env.unwrapped._load_instance(3.5) if hasattr(env.unwrapped, "_load_instance") else env.unwrapped._load(3.5)


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_unknown_instance_name_suggests_the_nearest_shipped_one(env_id):
    wrong, right = NEAR_MISS[env_id]
    with pytest.raises((InstanceFormatError, KeyError)) as err:
        gym.make(env_id, instance=wrong)
    message = err.value.args[0] if isinstance(err.value, KeyError) else str(err.value)
    assert wrong in message and f"did you mean {right!r}" in message
    assert "list every name with crab_gym.datasets.list_instances(" in message


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_missing_instance_file_names_the_path(env_id, tmp_path):
    path = tmp_path / "nowhere" / "instance.json"
    with pytest.raises((InstanceFormatError, FileNotFoundError)) as err:
        gym.make(env_id, instance=str(path))
    assert str(path) in str(err.value)


@pytest.mark.parametrize("env_id", REALM_IDS)
def test_unknown_generator_options_list_the_valid_keys(env_id):
    if env_id not in GENERATOR_KEYS:  # P3/P4 draw no instances: `generator` itself is unknown
        with pytest.raises(TypeError, match=r"unknown keyword 'generator'; valid keywords: instance, render_mode"):
            gym.make(env_id, generator={"sise": "small"})
        return
    valid = GENERATOR_KEYS[env_id]
    with pytest.raises(ValueError) as err:
        gym.make(env_id, generator={"sise": "small", **({"n_jobs": 3} if "n_jobs" in valid else {})})
    message = str(err.value)
    assert message.startswith("unknown generator option 'sise'")
    assert message.endswith("valid keys: " + ", ".join(valid))
    if "size" in valid:
        assert "(did you mean 'size'?)" in message
    with pytest.raises(TypeError, match=r"generator must be .*got str 'small'"):
        gym.make(env_id, generator="small")
