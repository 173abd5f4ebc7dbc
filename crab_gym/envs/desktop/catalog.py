"""Every desktop task by name: the fixed tasks and the templates' seeded instances.

``get_task("rename_files", seed=3)`` is template ``rename_files`` at seed 3;
``get_task("rename_files#3")`` names the same instance; ``get_task("create_file")`` is a
fixed task (a seed given for a fixed task is an error, not silently ignored).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from crab_gym.envs.desktop.taskdata import DesktopTask
from crab_gym.envs.desktop.tasks import fixed_tasks
from crab_gym.envs.desktop.templates import TEMPLATES, Template


def list_tasks() -> list[str]:
    """Ids of the fixed desktop tasks, for ``gym.make("CrabDesktop-v0", task=...)``."""
    return list(fixed_tasks())


def list_templates() -> list[str]:
    """Ids of the task templates (``gym.make("CrabDesktop-v0", task=id, seed=n)``)."""
    return list(TEMPLATES)


def get_template(name: str) -> Template:
    """A template by id; an unknown id gets the known ones."""
    if name not in TEMPLATES:
        raise KeyError(f"unknown desktop task template {name!r}; known: {sorted(TEMPLATES)}")
    return TEMPLATES[name]


def is_template(task: Any) -> bool:
    """Whether ``task`` names a template (``"rename_files"``; not an instance ``"rename_files#3"``)."""
    return isinstance(task, str) and task in TEMPLATES


def get_task(task: str | DesktopTask | Mapping[str, Any], seed: int | None = None) -> DesktopTask:
    """A fixed task or template instance by id, or a :class:`DesktopTask` / task data of your
    own (validated). A template needs ``seed`` (or the ``"id#seed"`` form)."""
    if isinstance(task, DesktopTask):
        task.validate()
        return _no_seed(task, seed)
    if isinstance(task, Mapping):
        return _no_seed(DesktopTask.from_dict(task), seed)
    name, sep, number = str(task).partition("#")
    if sep:
        if not number.isdigit() or seed is not None:
            raise ValueError(f"task {task!r}: write a template instance as 'template#seed' (e.g. 'rename_files#3') "
                             "and give no other seed")
        return get_template(name).instance(int(number))
    if name in TEMPLATES:
        if seed is None:
            raise ValueError(f"task {name!r} is a template: give a seed (gym.make(..., seed=n) or "
                             "reset(options={'task_seed': n}))")
        return TEMPLATES[name].instance(seed)
    fixed = fixed_tasks()
    if name not in fixed:
        raise KeyError(f"unknown desktop task {name!r}; known tasks: {sorted(fixed)}; templates: {sorted(TEMPLATES)}")
    return _no_seed(fixed[name], seed)


def _no_seed(task: DesktopTask, seed: int | None) -> DesktopTask:
    if seed is not None:
        raise ValueError(f"task {task.id!r} is not a template: it takes no seed")
    return task


def all_tasks() -> Sequence[DesktopTask]:
    """Every fixed task."""
    return list(fixed_tasks().values())
