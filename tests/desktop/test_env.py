"""CrabDesktop-v0 as a Gymnasium env: API conformance, spaces, rendering, invalid actions."""

from __future__ import annotations

import os

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from crab_gym.envs.desktop.env import TEXT_CHARSET, sanitize
from crab_gym.envs.desktop.keys import KEYBOARD_KEYS


def test_registered_as_nondeterministic():
    spec = gym.spec("CrabDesktop-v0")
    assert spec.nondeterministic is True
    assert spec.entry_point == "crab_gym.envs.desktop.env:CrabDesktopEnv"


def test_check_env_with_render_checks(attach_kwargs):
    env = gym.make("CrabDesktop-v0", task="focus_terminal", render_mode="rgb_array", **attach_kwargs)
    try:
        check_env(env.unwrapped)  # also makes one env per render mode, and closes twice
        env.reset(seed=1)
        frame = env.render()
        assert frame.shape == (640, 1024, 3) and frame.dtype == np.uint8
    finally:
        env.close()


def test_observation_has_screenshot_and_window_text(desktop_env):
    obs, info = desktop_env.reset(options={"task": "focus_terminal"})
    assert obs in desktop_env.observation_space
    assert obs["screenshot"].shape == (100, 160, 3)
    assert obs["screenshot"].std() > 0  # windows are drawn, not a blank frame
    assert obs["active_window"].endswith("- Mousepad")
    assert obs["windows"].splitlines() == ["Terminal", "Untitled 1 - Mousepad"]
    assert "focus" in desktop_env.unwrapped.instruction.lower()
    obs, *_ = desktop_env.step({"name": "click", "arguments": {"x": 0.2, "y": 0.3}})
    assert obs["active_window"] == "Terminal"


def test_text_observations_stay_in_their_charset():
    text = sanitize("caf\u00e9 \u2014 notes\ttab\u0007", 256)
    assert text == "caf? ? notes tab "
    assert set(text) <= set(TEXT_CHARSET)
    assert len(sanitize("x" * 1000, 256)) == 256


def test_actions_and_tools(desktop_env):
    env = desktop_env.unwrapped
    names = [t["function"]["name"] for t in env.tools()]
    assert names == ["click", "double_click", "right_click", "move_to", "drag_to", "mouse_scroll",
                     "key_press", "hotkey", "write_text", "wait", "complete", "declare_infeasible"]
    click = env.tools("anthropic")[0]["input_schema"]["properties"]["x"]
    assert (click["minimum"], click["maximum"]) == (0.0, 1.0)
    key_enum = env.tools()[6]["function"]["parameters"]["properties"]["key"]["enum"]
    assert tuple(key_enum) == KEYBOARD_KEYS


def test_key_names_are_pyautogui_keys(shared_display):
    from crab_gym.envs.desktop.x11 import _PYAUTOGUI_LOCK, _pyautogui_for

    with _PYAUTOGUI_LOCK:
        pyautogui = _pyautogui_for(shared_display.display, shared_display.xauthority)
    assert tuple(pyautogui.KEYBOARD_KEYS) == KEYBOARD_KEYS


def test_invalid_actions_change_nothing_and_say_why(desktop_env):
    desktop_env.reset(options={"task": "create_file"})
    pointer = desktop_env.unwrapped.machine.desktop.pointer()
    _, reward, terminated, _, info = desktop_env.step({"name": "click", "arguments": {"x": 1.5, "y": 0.2}})
    assert not info["valid"] and "'x'" in info["error"] and reward == 0.0 and not terminated
    _, _, _, _, info = desktop_env.step({"name": "key_press", "arguments": {"key": "volumeup"}})
    assert not info["valid"] and "no key" in info["error"]
    _, _, _, _, info = desktop_env.step({"name": "launch_app", "arguments": {"app": "terminal"}})
    assert not info["valid"]  # setup actions are not the agent's
    assert desktop_env.unwrapped.machine.desktop.pointer() == pointer


def test_coordinates_are_fractions_of_the_screen(desktop_env):
    desktop_env.reset(options={"task": "create_file"})
    desk = desktop_env.unwrapped.machine.desktop
    desktop_env.step({"name": "move_to", "arguments": {"x": 0.5, "y": 0.25}})
    assert desk.pointer() == (round(0.5 * 1023), round(0.25 * 639))
    desktop_env.step({"name": "move_to", "arguments": {"x": 1.0, "y": 1.0}})
    assert desk.pointer() == (1023, 639)
    # a space element works as well as a tool call
    element = desktop_env.unwrapped.codec.encode({"name": "move_to", "arguments": {"x": 0.0, "y": 0.0}})
    desktop_env.step(element)
    assert desk.pointer() == (0, 0)


def test_own_display_started_and_stopped(tmp_path):
    env = gym.make("CrabDesktop-v0", task="terminal_title", screen_size=(400, 300), obs_size=(40, 30),
                   render_mode="rgb_array", workdir=str(tmp_path / "work"))
    assert env.unwrapped.machine is None  # nothing starts before reset
    obs, _ = env.reset()
    machine = env.unwrapped.machine
    xvfb = machine.desktop._server_procs[0]
    assert obs["screenshot"].shape == (30, 40, 3)
    assert env.render().shape == (300, 400, 3)
    assert machine.workdir == (tmp_path / "work").resolve()
    env.close()
    assert xvfb.poll() is not None  # the display is gone
    assert (tmp_path / "work").exists()  # a given workdir is kept
    env.close()


def test_workdir_must_be_empty_or_ours(tmp_path, attach_kwargs):
    (tmp_path / "precious.txt").write_text("do not delete")
    env = gym.make("CrabDesktop-v0", workdir=str(tmp_path), **attach_kwargs)
    with pytest.raises(ValueError, match="not empty"):
        env.reset()
    env.close()
    assert (tmp_path / "precious.txt").read_text() == "do not delete"


def test_missing_system_package_names_it(monkeypatch):
    from crab_gym.envs.desktop import x11

    real_which = x11.shutil.which
    monkeypatch.setattr(x11.shutil, "which", lambda p: None if p == "Xvfb" else real_which(p))
    with pytest.raises(x11.MissingSystemPackageError) as err:
        x11.XDesktop.start()
    assert err.value.package == "xvfb"
    assert "apt-get install -y --no-install-recommends xvfb" in str(err.value)
    assert "install_desktop_deps.sh" in str(err.value)


def test_attached_display_survives_env_close(shared_display, attach_kwargs):
    env = gym.make("CrabDesktop-v0", task="create_file", **attach_kwargs)
    env.reset()
    launched = {p.pid for p in env.unwrapped.machine.desktop._apps}
    assert any(w.pid in launched for w in shared_display.windows())
    env.close()
    assert not any(w.pid in launched for w in shared_display.windows())  # its apps are gone
    assert shared_display.screenshot().shape == (640, 1024, 3)  # the display still runs
    assert os.path.exists(shared_display.xauthority)


def test_install_script_installs_every_system_package():
    from pathlib import Path

    from crab_gym.envs.desktop.x11 import ALL_APT_PACKAGES, APT_PACKAGES

    script = (Path(__file__).parents[2] / "scripts" / "install_desktop_deps.sh").read_text()
    assert "apt-get update" in script and "DEBIAN_FRONTEND=noninteractive" in script
    assert set(APT_PACKAGES.values()) <= set(ALL_APT_PACKAGES)
    for package in ALL_APT_PACKAGES:
        assert f" {package}" in script, package


def test_input_follows_each_display_even_when_a_number_is_reused():
    from crab_gym.envs.desktop.x11 import XDesktop

    first = XDesktop.start(320, 200)
    first.move_to(1.0, 1.0)
    assert first.pointer() == (319, 199)
    first.close()
    second = XDesktop.start(400, 300)  # Xvfb may well hand out the same number again
    try:
        second.move_to(0.5, 0.5)
        assert second.pointer() == (200, 150)
    finally:
        second.close()
