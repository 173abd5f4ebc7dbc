"""CrabDesktop-v0: a real X desktop as a Gymnasium env (see docs/desktop.md).

Importing this package starts nothing and imports no optional extra: the display, pyautogui
and the HTTP stack are loaded when an env first resets or the server starts.
"""

from crab_gym.envs.desktop.catalog import all_tasks, get_task, get_template, list_tasks, list_templates
from crab_gym.envs.desktop.taskdata import DesktopTask

__all__ = ["DesktopTask", "all_tasks", "get_task", "get_template", "list_tasks", "list_templates"]
