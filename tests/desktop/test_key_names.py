"""An unknown key name is answered with the nearest names, not all ~190 of them."""

from __future__ import annotations

import pytest

from crab_gym.core import ActionArgumentError
from crab_gym.envs.desktop.actions import MACHINE_ACTIONS
from crab_gym.envs.desktop.keys import KEYBOARD_KEYS, suggest_keys


def _error(action: str, arguments: dict) -> ActionArgumentError:
    with pytest.raises(ActionArgumentError) as info:
        MACHINE_ACTIONS[action].validate(arguments)
    return info.value


@pytest.mark.parametrize(("given", "meant"), [("entr", "enter"), ("Enter", "enter"), ("escap", "escape"),
                                              ("backspce", "backspace"), ("page_down", "pagedown")])
def test_unknown_key_suggests_the_nearest_names(given, meant):
    err = _error("key_press", {"key": given})
    assert err.parameter == "key"
    message = str(err)
    assert f"did you mean '{meant}'" in message
    assert "KEYBOARD_KEYS" in message and "key_press" in message  # where the full list is
    assert "volumemute" not in message and "browserfavorites" not in message  # not the whole list
    assert len(message) < 400


def test_suggestions_are_few_and_real_keys():
    assert suggest_keys("entr") == ["enter"]
    near = suggest_keys("shft")
    assert "shift" in near and len(near) <= 3 and set(near) <= set(KEYBOARD_KEYS)
    assert suggest_keys("xyzzyq") == []


def test_hotkey_names_the_bad_key_and_a_combination_points_to_hotkey():
    err = _error("hotkey", {"keys": ["ctrl", "sift"]})
    assert err.parameter == "keys.1" and "did you mean 'shift'" in str(err)
    assert "hotkey(keys=['ctrl', 's'])" in str(_error("key_press", {"key": "ctrl+s"}))
    assert "no key name is close" in str(_error("key_press", {"key": "xyzzyq"}))
    assert "must be a key name" in str(_error("key_press", {"key": 3}))


def test_schema_still_lists_every_key():
    schema = MACHINE_ACTIONS["key_press"].to_schema()["parameters"]["properties"]["key"]
    assert schema["enum"] == list(KEYBOARD_KEYS)
    assert MACHINE_ACTIONS["key_press"].validate({"key": "enter"}) == {"key": "enter"}


def test_env_reports_the_suggestion_in_info(desktop_env):
    desktop_env.reset(seed=0)
    _, reward, _, _, info = desktop_env.step({"name": "key_press", "arguments": {"key": "entr"}})
    assert info["valid"] is False and reward == 0.0
    assert "did you mean 'enter'" in info["error"] and "volumemute" not in info["error"]
