"""CrabDesktop-v0: a real X desktop as a Gymnasium env (see docs/desktop.md).

Importing this package starts nothing and imports no optional extra: the display, pyautogui
and the HTTP stack are loaded when an env first resets or the server starts.
"""

from crab_gym.envs.desktop.tasks import DesktopTask, all_tasks, get_task, list_tasks

__all__ = ["DesktopTask", "all_tasks", "get_task", "list_tasks"]
