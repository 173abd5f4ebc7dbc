"""The shipped contract test on the real desktop: mixed legal, masked, malformed and
out-of-space actions; nothing escapes step() and nothing out of the space runs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from crab_gym.checks.contract import check_contract, state_snapshot


def test_desktop_keeps_the_contract(attach_kwargs):
    env = gym.make("CrabDesktop-v0", settle=0.0, **attach_kwargs)
    try:
        report = check_contract(env, steps=300, seed=3, determinism_steps=0)
    finally:
        env.close()
    report.raise_if_failed()
    assert report.exceptions == 0
    assert report.out_of_space_tried > 20
    assert report.legal_steps > 80


def test_out_of_space_text_and_coordinates_are_refused(desktop_env):
    desktop_env.reset(seed=0)
    codec = desktop_env.unwrapped.codec
    write_text, click = codec.index["write_text"], codec.index["click"]
    for action, fragment in [
        ((write_text, {"text": 2**64}), "text: expected a string"),
        ((click, {"x": np.array([0.5]), "y": np.array([0.1, 0.9])}), "y: expected shape (1,)"),
        ((click, {"x": np.array([np.nan]), "y": np.array([0.5])}), "x: [nan] is outside"),
    ]:
        before = state_snapshot(desktop_env)
        info = desktop_env.step(action)[4]
        assert info["valid"] is False
        assert fragment in info["error"], info["error"]
        assert state_snapshot(desktop_env) == before


def test_the_key_mask_matches_what_the_display_can_press(desktop_env):
    desktop_env.reset(seed=0)
    base = desktop_env.unwrapped
    mask = base.action_masks()
    offset = base.codec.flat_offsets["key_press"]
    pressable = set(base.environment.take("pressable_keys", record=False))
    keys = base.codec.action("key_press").to_schema()["parameters"]["properties"]["key"]["enum"]
    assert "enter" in pressable and mask[offset + keys.index("enter")]
    missing = [k for k in keys if k not in pressable]
    assert missing, "Xvfb's keyboard lacks some pyautogui names (e.g. media keys)"
    for key in missing:
        assert not mask[offset + keys.index(key)]
        info = desktop_env.step({"name": "key_press", "arguments": {"key": key}})[4]
        assert info["valid"] is False and "has no key" in info["error"]
