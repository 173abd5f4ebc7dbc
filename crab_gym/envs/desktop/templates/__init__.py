"""Parameterised desktop task templates: each turns a seed into a checked task.

``gym.make("CrabDesktop-v0", task="rename_files", seed=3)`` plays the task template
``rename_files`` makes from seed 3. Importing this package registers every template module.
"""

from crab_gym.envs.desktop.templates import clipboard, cross, editor, files, infeasible, settings, windows
from crab_gym.envs.desktop.templates.base import TEMPLATES, Draw, Template, template

MODULES = (files, editor, windows, settings, clipboard, infeasible, cross)

# List the templates module by module (files first, cross-environment last), each module's
# in the order it defines them.
_RANK = {module.__name__: i for i, module in enumerate(MODULES)}
_ORDERED = sorted(TEMPLATES.values(), key=lambda t: _RANK[t.build.__module__])
TEMPLATES.clear()
TEMPLATES.update((t.id, t) for t in _ORDERED)

__all__ = ["MODULES", "TEMPLATES", "Draw", "Template", "template"]
