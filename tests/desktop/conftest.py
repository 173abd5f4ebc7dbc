"""Shared fixtures for the desktop tests: one Xvfb display for the whole session.

Starting a display costs ~0.3 s and each env on it gets its own work directory, so the
tests share one display (envs *attach* to it) except where a test is about starting and
stopping a display itself.
"""

from __future__ import annotations

import importlib.util
import shutil

import gymnasium as gym
import pytest

# find_spec, not import: pyautogui connects to $DISPLAY when imported.
_NO_EXTRA = [m for m in ("pyautogui", "mss", "fastapi", "uvicorn", "httpx", "PIL", "Xlib")
             if importlib.util.find_spec(m) is None]
if _NO_EXTRA:
    pytest.skip(f"needs the desktop extra ({_NO_EXTRA} missing): pip install 'crab_gym[desktop]'",
                allow_module_level=True)

_MISSING = [p for p in ("Xvfb", "xauth", "openbox", "xdotool", "wmctrl", "xterm", "mousepad", "xclip", "gsettings")
            if shutil.which(p) is None]
if _MISSING:
    pytest.skip(f"desktop system packages missing ({_MISSING}): run scripts/install_desktop_deps.sh",
                allow_module_level=True)

import crab_gym  # noqa: E402,F401  - registers the ids
from crab_gym.envs.desktop.x11 import XDesktop  # noqa: E402

if "CrabDesktop-v0" not in gym.registry:  # pragma: no cover - registration is the lead's
    gym.register("CrabDesktop-v0", entry_point="crab_gym.envs.desktop.env:CrabDesktopEnv",
                 max_episode_steps=200, nondeterministic=True)


@pytest.fixture(scope="session")
def shared_display():
    """A private Xvfb + openbox display shared by every test that attaches to it."""
    desk = XDesktop.start(1024, 640)
    yield desk
    desk.close()


@pytest.fixture(scope="session")
def attach_kwargs(shared_display):
    """gym.make keyword arguments that attach an env to the shared display."""
    return {"display": shared_display.display, "xauthority": shared_display.xauthority}


@pytest.fixture(scope="module")
def desktop_env(attach_kwargs):
    """One env on the shared display, reused across a module's tests (tasks switch on reset)."""
    env = gym.make("CrabDesktop-v0", **attach_kwargs)
    yield env
    env.close()


def _run_steps(env, steps):
    """Step through tool calls; returns (total reward, last info, terminated)."""
    total, info, terminated = 0.0, {}, False
    for call in steps:
        _, reward, terminated, truncated, info = env.step(call)
        assert info["valid"], info["error"]
        total += reward
        if terminated or truncated:
            break
    return total, info, terminated


@pytest.fixture
def run_steps():
    """The step-through helper, as a fixture (test modules here are not a package)."""
    return _run_steps
