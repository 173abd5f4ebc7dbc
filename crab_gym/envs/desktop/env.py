"""``CrabDesktop-v0``: a real X desktop as a Gymnasium env, judged by evaluator graphs.

The agent acts with CRAB's desktop Actions (coordinates are floats in [0, 1] of the screen);
a task's evaluator graph checks the machine's real state after every step. The return of an
episode is the task's completeness in [0, 1] (``progress_weight=1``, no optimality term: a
desktop task has no reference cost), and the episode ends when the agent calls ``complete``
or, by default, when every sub-goal has passed.

The desktop is a private Xvfb display started on the first ``reset`` (nothing runs before),
an existing display (``display=":0"``), or a remote machine (``remote_url=..., token=...``).
"""

from __future__ import annotations

import contextlib
import string
import time
from collections.abc import Mapping
from typing import Any

import networkx as nx
import numpy as np
from gymnasium import spaces

from crab_gym.core import Action, Environment, LocalBackend, evaluator
from crab_gym.core.keywords import checked_keywords
from crab_gym.envs.base import CrabEnv
from crab_gym.envs.desktop.actions import AGENT_ACTIONS, MACHINE_ACTIONS
from crab_gym.envs.desktop.keys import KEYBOARD_KEYS
from crab_gym.envs.desktop.machine import DesktopMachine
from crab_gym.envs.desktop.remote import RemoteBackend
from crab_gym.envs.desktop.tasks import DesktopTask, get_task, list_tasks

#: Characters of the text observations; anything else is shown as "?".
TEXT_CHARSET = string.digits + string.ascii_letters + string.punctuation + " \n"
MAX_TITLE = 256
MAX_WINDOWS_TEXT = 4096


def sanitize(text: str, max_length: int) -> str:
    """Map text into the observation's charset (newlines only between window titles)."""
    allowed = set(TEXT_CHARSET) - {"\n"}
    return "".join(c if c in allowed else ("?" if c.isprintable() else " ") for c in text)[:max_length]


def _forwarding(machine_action: Action) -> Action:
    """The gym-level twin of a machine action: same schema, runs on the env's desktop."""
    name = machine_action.name

    def entry(env: CrabDesktopEnv, **values: Any) -> Any:
        return env._agent_action(name, values)

    return Action(name, entry, machine_action.parameters, description=machine_action.description,
                  returns=machine_action.returns, kept_params=("env",), required_kept=("env",),
                  env_name=machine_action.env_name)


#: The agent's actions, in action-space order.
DESKTOP_ACTIONS: tuple[Action, ...] = tuple(_forwarding(a) for a in AGENT_ACTIONS)


def _check_evaluator(node: str, step: Mapping[str, Any]) -> Any:
    """A closed evaluator that runs one probe action on the env's desktop."""
    probe, arguments = step["name"], dict(step.get("arguments", {}))

    @evaluator(name=node, description=f"{probe}({arguments})")
    def check(env: Any) -> bool:
        return bool(env.environment.take(probe, arguments, record=False))

    return check


class CrabDesktopEnv(CrabEnv):
    """A real desktop as a Gymnasium env.

    Args:
        task: a task id from :func:`crab_gym.envs.desktop.list_tasks`, a
            :class:`~crab_gym.envs.desktop.tasks.DesktopTask`, or task data (a dict).
            ``reset(options={"task": ...})`` switches task without restarting the desktop.
        render_mode: ``"rgb_array"`` (the screen at ``render_size``) or None.
        remote_url: drive a ``crab-gym serve`` machine instead of a local display.
        token: the server's bearer token (default ``$CRAB_GYM_TOKEN``).
        display: attach to this existing X display (e.g. ``":0"``) instead of starting Xvfb.
        xauthority: cookie file of that display (default ``$XAUTHORITY``).
        screen_size: ``(width, height)`` of a started display.
        obs_size: ``(width, height)`` of the screenshot observation (small for RL).
        render_size: ``(width, height)`` of rendered frames (default: the screen's size).
        workdir: where the tasks' files live (default: a fresh temporary directory).
        settle: seconds to let applications react after an input action, before checking.
        terminate_on_success: end the episode once every sub-goal has passed.
        complete_grace: after ``complete``, up to this many seconds in which the final check
            is repeated until every sub-goal passes (apps finish saving asynchronously).
        invalid_action_penalty: subtracted from the reward of an invalid action.
        timeout: seconds for one request to a remote machine.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    @checked_keywords("CrabDesktopEnv (CrabDesktop-v0)")
    def __init__(
        self,
        task: str | DesktopTask | Mapping[str, Any] | None = None,
        *,
        render_mode: str | None = None,
        remote_url: str | None = None,
        token: str | None = None,
        display: str | None = None,
        xauthority: str | None = None,
        screen_size: tuple[int, int] = (1024, 640),
        obs_size: tuple[int, int] = (160, 100),
        render_size: tuple[int, int] | None = None,
        workdir: str | None = None,
        settle: float = 0.1,
        terminate_on_success: bool = True,
        complete_grace: float = 1.0,
        invalid_action_penalty: float = 0.0,
        timeout: float = 30.0,
    ) -> None:
        super().__init__(DESKTOP_ACTIONS, render_mode=render_mode, invalid_action_penalty=invalid_action_penalty,
                         progress_weight=1.0, optimality_weight=0.0)
        self.task = get_task(task if task is not None else list_tasks()[0])
        obs_w, obs_h = (int(v) for v in obs_size)
        if not (16 <= obs_w <= 4096 and 16 <= obs_h <= 4096):
            raise ValueError(f"obs_size must be within 16..4096 pixels, got {obs_size}")
        self.obs_size = (obs_w, obs_h)
        self.render_size = tuple(render_size) if render_size is not None else None
        self.settle = float(settle)
        self.terminate_on_success = bool(terminate_on_success)
        self.complete_grace = float(complete_grace)
        self._steps_to_complete: int | None = None
        self.observation_space = spaces.Dict({
            "screenshot": spaces.Box(0, 255, (obs_h, obs_w, 3), dtype=np.uint8),
            "active_window": spaces.Text(MAX_TITLE, charset=TEXT_CHARSET),
            "windows": spaces.Text(MAX_WINDOWS_TEXT, charset=TEXT_CHARSET),
        })
        self._remote = (remote_url, token, timeout) if remote_url else None
        self._local = {"display": display, "xauthority": xauthority, "screen_size": tuple(screen_size),
                       "workdir": workdir}
        self.machine: Any = None  # the DesktopMachine (local mode)
        self.environment: Environment | None = None
        self.machine_info: dict[str, Any] = {}
        self.instruction = ""
        self._completed = False
        self._taken: list[dict[str, Any]] = []
        self._key_mask: np.ndarray | None = None  # built once the desktop runs

    # ------------------------------------------------------------------ desktop lifecycle
    def _ensure_desktop(self) -> Environment:
        """Start or connect to the desktop on first use (construction starts nothing)."""
        if self.environment is None:
            actions = list(MACHINE_ACTIONS.values())
            if self._remote is not None:
                url, token, timeout = self._remote
                backend = RemoteBackend(url, token, timeout=timeout)
                self.environment = Environment("desktop", actions, backend=backend)
                self.machine_info = backend.info()
            else:
                self.machine = DesktopMachine(**self._local)
                self.environment = Environment("desktop", actions, backend=LocalBackend(self.machine))
                self.machine_info = self.machine.info()
        return self.environment

    def close(self) -> None:
        """Stop what this env started (apps; a display it started). Safe to call twice."""
        if self.machine is not None:
            self.machine.close()
        elif self.environment is not None and hasattr(self.environment.backend, "close"):
            with contextlib.suppress(Exception):
                self.environment.backend.close()
        self.machine = None
        self.environment = None
        self._key_mask = None
        super().close()

    # ------------------------------------------------------------------ CrabEnv hooks
    def _reset_state(self, options: dict[str, Any] | None) -> None:
        if options and options.get("task") is not None:
            self.task = get_task(options["task"])
        env = self._ensure_desktop()
        env.history.clear()
        env.take("reset_desktop")
        for step in self.task.setup:
            env.take(step["name"], step.get("arguments", {}))
        self.instruction = self.task.describe(str(self.machine_info.get("workdir", "")))
        self._completed = False
        self._steps_to_complete: int | None = None
        self._taken = []

    def _build_graph(self) -> nx.DiGraph:
        nodes = {name: _check_evaluator(name, step) for name, step in self.task.checks.items()}
        graph = nx.DiGraph()
        graph.add_nodes_from(nodes.values())
        graph.add_edges_from((nodes[a], nodes[b]) for a, b in self.task.edges)
        return graph

    def _get_obs(self) -> dict[str, Any]:
        env = self._ensure_desktop()
        width, height = self.obs_size
        shot = env.take("screenshot", {"width": width, "height": height}, record=False)
        titles = env.take("window_titles", record=False)
        return {
            "screenshot": np.asarray(shot, dtype=np.uint8).reshape(height, width, 3),
            "active_window": sanitize(env.take("active_window_title", record=False), MAX_TITLE),
            "windows": "\n".join(sanitize(t, MAX_TITLE) for t in titles)[:MAX_WINDOWS_TEXT],
        }

    def _is_terminated(self) -> bool:
        """``complete`` was called, or every sub-goal passed (with ``terminate_on_success``)."""
        return self._completed or (self.terminate_on_success and self.graph.is_complete)

    def _action_mask(self) -> np.ndarray:
        """Every finite choice, less ``key_press`` of keys this display's keyboard lacks."""
        if self._key_mask is None:
            pressable = set(self._ensure_desktop().take("pressable_keys", record=False))
            mask = np.ones(self.codec.n_flat, dtype=bool)
            offset = self.codec.flat_offsets["key_press"]
            for i, key in enumerate(KEYBOARD_KEYS):
                mask[offset + i] = key in pressable
            self._key_mask = mask
        return self._key_mask.copy()

    def _final_info(self) -> tuple[dict[str, Any], dict[str, Any]]:
        graph = self.graph
        metrics = {
            "completeness": graph.completeness,
            "success": bool(graph.is_complete),
            "steps": self._episode_steps,
            "steps_to_complete": self._steps_to_complete,
        }
        return metrics, {"task": self.task.id, "actions": list(self._taken)}

    def _extra_info(self) -> dict[str, Any]:
        return {"task": self.task.id}

    def _check_progress(self, name: str, values: dict[str, Any]) -> list[str]:
        """The sub-goal check; after ``complete`` it is repeated for ``complete_grace``
        seconds, because apps finish work asynchronously (a save, a command still running)
        and a half-written file must not be judged."""
        passed = [node.name for node in self.graph.step(self)]
        if name == "complete" and self.complete_grace > 0:
            deadline = time.monotonic() + self.complete_grace
            while not self.graph.is_complete and time.monotonic() < deadline:
                time.sleep(0.1)
                passed += [node.name for node in self.graph.step(self)]
        if self._steps_to_complete is None and self.graph.is_complete:
            self._steps_to_complete = self._episode_steps
        return passed

    # ------------------------------------------------------------------ running actions
    def _agent_action(self, name: str, values: dict[str, Any]) -> Any:
        """Run one validated agent action on the desktop (called by the forwarding Actions)."""
        arguments = MACHINE_ACTIONS[name].to_json_arguments(values)
        if name == "complete":
            self._completed = True
            self._taken.append({"name": name, "arguments": arguments})
            time.sleep(self.settle)  # let the last input land before the final check
            return True
        result = self._ensure_desktop().take(name, arguments)  # may reject: nothing happened
        self._taken.append({"name": name, "arguments": arguments})
        if name != "wait" and self.settle > 0:
            time.sleep(self.settle)
        return result

    # ------------------------------------------------------------------ rendering
    def render(self) -> np.ndarray | None:
        """The screen as an RGB array (``render_mode="rgb_array"``)."""
        if self.render_mode != "rgb_array":
            return None
        env = self._ensure_desktop()
        width, height = self.render_size or (self.machine_info["width"], self.machine_info["height"])
        shot = env.take("screenshot", {"width": int(width), "height": int(height)}, record=False)
        return np.asarray(shot, dtype=np.uint8)

