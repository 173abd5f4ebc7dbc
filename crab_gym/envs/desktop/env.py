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
from crab_gym.envs.desktop.actions import EPISODE_PROBES, MACHINE_ACTIONS
from crab_gym.envs.desktop.catalog import get_task, is_template, list_tasks
from crab_gym.envs.desktop.keys import KEYBOARD_KEYS
from crab_gym.envs.desktop.machine import DesktopMachine
from crab_gym.envs.desktop.remote import RemoteBackend
from crab_gym.envs.desktop.taskdata import DesktopTask, agent_action_names

#: Characters of the text observations; anything else is shown as "?".
TEXT_CHARSET = string.digits + string.ascii_letters + string.punctuation + " \n"
MAX_TITLE = 256
MAX_WINDOWS_TEXT = 4096


def sanitize(text: str, max_length: int) -> str:
    """Map text into the observation's charset (newlines only between window titles)."""
    allowed = set(TEXT_CHARSET) - {"\n"}
    return "".join(c if c in allowed else ("?" if c.isprintable() else " ") for c in text)[:max_length]


def _forwarding(name: str, env_name: str | None, machine_action: Action) -> Action:
    """The gym-level twin of a machine action: same schema, runs on one of the env's desktops
    (``env_name``; None for the episode actions ``complete`` and ``declare_infeasible``)."""

    def entry(env: CrabDesktopEnv, **values: Any) -> Any:
        return env._agent_action(name, values)

    return Action(name, entry, machine_action.parameters, description=machine_action.description,
                  returns=machine_action.returns, kept_params=("env",), required_kept=("env",),
                  env_name=env_name or machine_action.env_name)


def desktop_actions(envs: tuple[str, ...]) -> tuple[Action, ...]:
    """The agent's actions for a task over ``envs``, in action-space order."""
    return tuple(_forwarding(name, env, act) for name, (env, act) in agent_action_names(envs).items())


#: The agent's actions on one desktop, in action-space order.
DESKTOP_ACTIONS: tuple[Action, ...] = desktop_actions(("desktop",))
_EPISODE_PROBES = {a.name: a for a in EPISODE_PROBES}


def _check_evaluator(node: str, step: Mapping[str, Any], where: str) -> Any:
    """A closed evaluator that runs one probe on the env's desktop ``where`` (or, for an
    episode probe such as ``declared_infeasible``, on the gym env itself)."""
    probe, arguments = step["name"], dict(step.get("arguments", {}))

    @evaluator(name=node, description=f"{probe}({arguments})")
    def check(env: Any) -> bool:
        if probe in _EPISODE_PROBES:
            return bool(_EPISODE_PROBES[probe](**arguments, env=env))
        return bool(env.environments[where].take(probe, arguments, record=False))

    return check


def _screen_space(obs_w: int, obs_h: int) -> spaces.Dict:
    return spaces.Dict({
        "screenshot": spaces.Box(0, 255, (obs_h, obs_w, 3), dtype=np.uint8),
        "active_window": spaces.Text(MAX_TITLE, charset=TEXT_CHARSET),
        "windows": spaces.Text(MAX_WINDOWS_TEXT, charset=TEXT_CHARSET),
    })


class CrabDesktopEnv(CrabEnv):
    """A real desktop (or several) as a Gymnasium env.

    Args:
        task: a fixed task id (:func:`crab_gym.envs.desktop.list_tasks`), a template id
            (:func:`~crab_gym.envs.desktop.list_templates`; the instance comes from ``seed``),
            a template instance ``"rename_files#3"``, a
            :class:`~crab_gym.envs.desktop.taskdata.DesktopTask`, or task data (a dict).
            ``reset(options={"task": ..., "task_seed": n})`` switches task without restarting
            the desktop (to a task over the same environments).
        render_mode: ``"rgb_array"`` (the screen at ``render_size``; the screens side by side
            for a task over several machines) or None.
        seed: the task seed of a template (default: drawn from the reset seed, so every
            reset without one plays another instance).
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

    A task over several environments (``task.envs``, e.g. ``("pc1", "pc2")``) starts one
    private display per environment; its actions are named ``pc1__click`` ... (each names
    its environment), and the observation is ``{env: {screenshot, active_window, windows}}``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    @checked_keywords("CrabDesktopEnv (CrabDesktop-v0)")
    def __init__(
        self,
        task: str | DesktopTask | Mapping[str, Any] | None = None,
        *,
        render_mode: str | None = None,
        seed: int | None = None,
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
        self._task_spec = task if task is not None else list_tasks()[0]
        self._task_seed = None if seed is None else int(seed)
        self.task = self._resolve_task(self._task_spec, self._task_seed if self._task_seed is not None else 0,
                                       explicit=seed is not None)
        self.envs: tuple[str, ...] = self.task.envs
        self._agent_names = agent_action_names(self.envs)
        super().__init__(desktop_actions(self.envs), render_mode=render_mode,
                         invalid_action_penalty=invalid_action_penalty, progress_weight=1.0, optimality_weight=0.0)
        obs_w, obs_h = (int(v) for v in obs_size)
        if not (16 <= obs_w <= 4096 and 16 <= obs_h <= 4096):
            raise ValueError(f"obs_size must be within 16..4096 pixels, got {obs_size}")
        if len(self.envs) > 1 and (remote_url or display or workdir):
            raise ValueError(f"task '{self.task.id}' runs on {len(self.envs)} machines {list(self.envs)}: each gets "
                             "its own private display and work directory (remote_url, display and workdir are for "
                             "one-machine tasks)")
        self.obs_size = (obs_w, obs_h)
        self.render_size = tuple(render_size) if render_size is not None else None
        self.settle = float(settle)
        self.terminate_on_success = bool(terminate_on_success)
        self.complete_grace = float(complete_grace)
        self._steps_to_complete: int | None = None
        screen = _screen_space(obs_w, obs_h)
        self.observation_space = screen if len(self.envs) == 1 else spaces.Dict({e: screen for e in self.envs})
        self._remote = (remote_url, token, timeout) if remote_url else None
        self._local = {"display": display, "xauthority": xauthority, "screen_size": tuple(screen_size),
                       "workdir": workdir}
        self.machines: dict[str, DesktopMachine] = {}  # local mode, by environment name
        self.environments: dict[str, Environment] = {}
        self.machine_infos: dict[str, dict[str, Any]] = {}
        self.instruction = ""
        self._completed = False
        self.declared_reason: str | None = None
        self._taken: list[dict[str, Any]] = []
        self._key_mask: np.ndarray | None = None  # built once the desktop runs

    # ------------------------------------------------------------------ one-machine views
    @property
    def machine(self) -> DesktopMachine | None:
        """The (first) local machine, or None before the first reset / in remote mode."""
        return self.machines.get(self.envs[0])

    @property
    def environment(self) -> Environment | None:
        """The (first) environment the actions run in, or None before the first reset."""
        return self.environments.get(self.envs[0])

    @property
    def task_description(self) -> str:
        """The task in words with each machine's work directory filled in (what the LLM
        adapter puts in its prompt; the raw description before the first reset)."""
        return self.instruction or self.task.description

    @property
    def machine_info(self) -> dict[str, Any]:
        return self.machine_infos.get(self.envs[0], {})

    # ------------------------------------------------------------------ tasks
    def _resolve_task(self, spec: Any, seed: int | None, *, explicit: bool) -> DesktopTask:
        """The task a spec names: a template gets ``seed``; anything else must get none."""
        if is_template(spec):
            return get_task(spec, seed=seed)
        if explicit and seed is not None:
            raise ValueError(f"task {spec!r} is not a template: it takes no seed / task_seed")
        return get_task(spec)

    def _next_task(self, options: Mapping[str, Any]) -> DesktopTask:
        """The task of a new episode: ``options["task"]`` or the constructor's, with
        ``options["task_seed"]``, the constructor's seed, or a seed drawn from the reset seed."""
        spec = options["task"] if options.get("task") is not None else self._task_spec
        seed = options.get("task_seed")
        explicit = seed is not None
        if seed is None and is_template(spec):
            same = options.get("task") is None or options["task"] == self._task_spec
            seed = self._task_seed if (same and self._task_seed is not None) else int(self.np_random.integers(2**31))
        task = self._resolve_task(spec, None if seed is None else int(seed), explicit=explicit)
        if task.envs != self.envs:
            raise ValueError(f"task '{task.id}' runs on {list(task.envs)}, but this env was made for "
                             f"{list(self.envs)}: make a new env for it")
        return task

    # ------------------------------------------------------------------ desktop lifecycle
    def _ensure_desktop(self) -> Environment:
        """Start or connect to the desktop(s) on first use (construction starts nothing)."""
        if not self.environments:
            try:
                for name in self.envs:
                    self._start_machine(name)
            except BaseException:
                self.close()
                raise
        return self.environments[self.envs[0]]

    def _start_machine(self, name: str) -> None:
        actions = list(MACHINE_ACTIONS.values())
        if self._remote is not None:
            url, token, timeout = self._remote
            backend = RemoteBackend(url, token, timeout=timeout)
            self.environments[name] = Environment(name, actions, backend=backend)
            self.machine_infos[name] = backend.info()
        else:
            machine = self.machines[name] = DesktopMachine(**self._local)
            self.environments[name] = Environment(name, actions, backend=LocalBackend(machine))
            self.machine_infos[name] = machine.info()

    def close(self) -> None:
        """Stop what this env started (apps; the displays it started). Safe to call twice."""
        for machine in self.machines.values():
            machine.close()
        if not self.machines:
            for environment in self.environments.values():
                if hasattr(environment.backend, "close"):
                    with contextlib.suppress(Exception):
                        environment.backend.close()
        self.machines = {}
        self.environments = {}
        self._key_mask = None
        super().close()

    # ------------------------------------------------------------------ CrabEnv hooks
    def _reset_state(self, options: dict[str, Any] | None) -> None:
        self.task = self._next_task(options or {})
        self._ensure_desktop()
        for environment in self.environments.values():
            environment.history.clear()
            environment.take("reset_desktop")
        for step in self.task.setup:
            self.environments[self.task.env_of(step)].take(step["name"], step.get("arguments", {}))
        self.instruction = self.task.describe({e: str(i.get("workdir", "")) for e, i in self.machine_infos.items()})
        self._completed = False
        self.declared_reason = None
        self._steps_to_complete = None
        self._taken = []

    def _build_graph(self) -> nx.DiGraph:
        nodes = {name: _check_evaluator(name, step, self.task.env_of(step)) for name, step in self.task.checks.items()}
        graph = nx.DiGraph()
        graph.add_nodes_from(nodes.values())
        graph.add_edges_from((nodes[a], nodes[b]) for a, b in self.task.edges)
        return graph

    def _screen_obs(self, environment: Environment) -> dict[str, Any]:
        width, height = self.obs_size
        shot = environment.take("screenshot", {"width": width, "height": height}, record=False)
        titles = environment.take("window_titles", record=False)
        return {
            "screenshot": np.asarray(shot, dtype=np.uint8).reshape(height, width, 3),
            "active_window": sanitize(environment.take("active_window_title", record=False), MAX_TITLE),
            "windows": "\n".join(sanitize(t, MAX_TITLE) for t in titles)[:MAX_WINDOWS_TEXT],
        }

    def _get_obs(self) -> dict[str, Any]:
        self._ensure_desktop()
        if len(self.envs) == 1:
            return self._screen_obs(self.environments[self.envs[0]])
        return {name: self._screen_obs(self.environments[name]) for name in self.envs}

    def _is_terminated(self) -> bool:
        """``complete`` or ``declare_infeasible`` was called, or every sub-goal passed
        (with ``terminate_on_success``)."""
        return self._completed or (self.terminate_on_success and self.graph.is_complete)

    def _action_mask(self) -> np.ndarray:
        """Every finite choice, less ``key_press`` of keys a display's keyboard lacks."""
        if self._key_mask is None:
            self._ensure_desktop()
            mask = np.ones(self.codec.n_flat, dtype=bool)
            for name, (env_name, act) in self._agent_names.items():
                if act.name != "key_press":
                    continue
                pressable = set(self.environments[env_name].take("pressable_keys", record=False))
                offset = self.codec.flat_offsets[name]
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
            "declared_infeasible": self.declared_reason is not None,
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
                time.sleep(0.05)
                passed += [node.name for node in self.graph.step(self)]
        if self._steps_to_complete is None and self.graph.is_complete:
            self._steps_to_complete = self._episode_steps
        return passed

    # ------------------------------------------------------------------ running actions
    def _agent_action(self, name: str, values: dict[str, Any]) -> Any:
        """Run one validated agent action (called by the forwarding Actions)."""
        env_name, act = self._agent_names[name]
        arguments = MACHINE_ACTIONS[act.name].to_json_arguments(values)
        if env_name is None:  # complete / declare_infeasible: the episode ends
            self._completed = True
            if act.name == "declare_infeasible":
                self.declared_reason = str(arguments["reason"])
            self._taken.append({"name": name, "arguments": arguments})
            time.sleep(self.settle)  # let the last input land before the final check
            return True
        self._ensure_desktop()
        result = self.environments[env_name].take(act.name, arguments)  # may reject: nothing happened
        self._taken.append({"name": name, "arguments": arguments})
        if act.name != "wait" and self.settle > 0:
            time.sleep(self.settle)
        return result

    # ------------------------------------------------------------------ rendering
    def render(self) -> np.ndarray | None:
        """The screen as an RGB array (``render_mode="rgb_array"``); several machines' screens
        side by side, separated by a dark bar."""
        if self.render_mode != "rgb_array":
            return None
        self._ensure_desktop()
        frames = []
        for name in self.envs:
            info = self.machine_infos[name]
            width, height = self.render_size or (info["width"], info["height"])
            shot = self.environments[name].take("screenshot", {"width": int(width), "height": int(height)},
                                                record=False)
            frames.append(np.asarray(shot, dtype=np.uint8))
        if len(frames) == 1:
            return frames[0]
        bar = np.full((frames[0].shape[0], 8, 3), 32, dtype=np.uint8)
        return np.concatenate([x for f in frames for x in (f, bar)][:-1], axis=1)
