"""What a task template is, the registry the template modules fill, and their helpers.

A :class:`Template` turns a seed into a :class:`~crab_gym.envs.desktop.taskdata.DesktopTask`:
its builder draws the parameters (file and folder names, text, numbers, window layout,
settings values) from a :class:`Draw` and returns the task data with a scripted solution.
The same template and seed always give the same task; different seeds give different ones.
The check names (the evaluator graph's nodes) are the same for every seed of a template.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from crab_gym.envs.desktop.actions import ENV_NAME
from crab_gym.envs.desktop.taskdata import DesktopTask, call

ADJECTIVES = ("amber", "brisk", "calm", "dusty", "eager", "fuzzy", "gentle", "hollow", "icy", "jolly",
              "keen", "lucky", "mellow", "noble", "odd", "plain", "quiet", "rapid", "shiny", "tidy",
              "urban", "vivid", "warm", "young", "zesty", "bold", "crisp", "deep", "early", "fresh")
NOUNS = ("apple", "badger", "cactus", "delta", "ember", "falcon", "garden", "harbor", "island", "jungle",
         "kettle", "lantern", "meadow", "nectar", "orbit", "pepper", "quartz", "river", "saddle", "tiger",
         "umbra", "violet", "walnut", "yarrow", "zephyr", "beacon", "canyon", "dragon", "forest", "glacier")
EXTENSIONS = ("txt", "log", "csv", "md", "tmp", "bak", "json", "ini")

#: Where the setups place the apps (fractions of the screen), so a part of each stays visible.
TERMINAL_RECT = {"x": 0.0, "y": 0.0, "width": 0.55, "height": 0.6}
EDITOR_RECT = {"x": 0.45, "y": 0.3, "width": 0.55, "height": 0.7}
MOUSEPAD_VIEW = "org.xfce.mousepad.preferences.view"
MOUSEPAD_WINDOW = "org.xfce.mousepad.preferences.window"
DONE = call("complete")


class Draw:
    """Parameter draws from one seeded generator (a template's only source of variety)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def pick(self, options: Sequence[Any]) -> Any:
        return options[int(self.rng.integers(len(options)))]

    def sample(self, options: Sequence[Any], k: int) -> list[Any]:
        """``k`` distinct options, in random order."""
        return [options[i] for i in self.rng.choice(len(options), size=k, replace=False)]

    def int(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        return int(self.rng.integers(low, high + 1))

    def words(self, k: int) -> list[str]:
        """``k`` distinct "adjective-noun" names."""
        names: list[str] = []
        while len(names) < k:
            name = f"{self.pick(ADJECTIVES)}-{self.pick(NOUNS)}"
            if name not in names:
                names.append(name)
        return names

    def word(self) -> str:
        return self.words(1)[0]

    def file(self, ext: str | None = None) -> str:
        return f"{self.word()}.{ext or self.pick(EXTENSIONS)}"

    def files(self, k: int, ext: str) -> list[str]:
        return [f"{w}.{ext}" for w in self.words(k)]

    def sentence(self, n: int = 4) -> str:
        """A few lower-case words joined by spaces (safe inside single quotes)."""
        return " ".join(self.pick(NOUNS + ADJECTIVES) for _ in range(n))

    def lines(self, n: int) -> list[str]:
        return [self.sentence(3) for _ in range(n)]


@dataclass(frozen=True)
class Template:
    """A family of tasks drawn from a seed (see the module docstring)."""

    id: str
    summary: str
    apps: tuple[str, ...]
    params: tuple[str, ...]
    build: Callable[[Draw], dict[str, Any]]
    envs: tuple[str, ...] = (ENV_NAME,)
    infeasible: bool = False
    tags: tuple[str, ...] = ()

    def instance(self, seed: int) -> DesktopTask:
        """The task this template makes from ``seed`` (validated)."""
        seed = int(seed)
        if seed < 0:
            raise ValueError(f"template '{self.id}': task_seed must be >= 0, got {seed}")
        rng = np.random.default_rng([zlib.crc32(self.id.encode()), seed])
        data = dict(self.build(Draw(rng)))
        data.update(id=f"{self.id}#{seed}", envs=self.envs, infeasible=self.infeasible, template=self.id,
                    seed=seed, tags=tuple(dict.fromkeys((*self.tags, *self.apps))))
        return DesktopTask.from_dict(data)


#: Every template by id, filled by the :func:`template` decorator in the template modules.
TEMPLATES: dict[str, Template] = {}


def template(id: str, summary: str, *, apps: Sequence[str], params: Sequence[str],
             envs: Sequence[str] = (ENV_NAME,), infeasible: bool = False,
             tags: Sequence[str] = ()) -> Callable[[Callable[[Draw], dict[str, Any]]], Callable[[Draw], dict[str, Any]]]:
    """Register a template builder under ``id``."""

    def register(build: Callable[[Draw], dict[str, Any]]) -> Callable[[Draw], dict[str, Any]]:
        if id in TEMPLATES:
            raise ValueError(f"template id '{id}' is defined twice")
        TEMPLATES[id] = Template(id, summary, tuple(apps), tuple(params), build, tuple(envs), infeasible,
                                 tuple(tags))
        return build

    return register


# --------------------------------------------------------------------------- step helpers
def terminal(**rect: float) -> dict[str, Any]:
    """Setup: open the terminal (at ``rect``, default :data:`TERMINAL_RECT`) and focus it."""
    return call("launch_app", app="terminal", **(rect or TERMINAL_RECT))


def editor(file: str = "", **rect: float) -> dict[str, Any]:
    """Setup: open the editor on a work-dir file (at ``rect``, default :data:`EDITOR_RECT`)."""
    return call("launch_app", app="editor", file=file, **(rect or EDITOR_RECT))


def write(path: str, text: str, **extra: Any) -> dict[str, Any]:
    """Setup: a file in the work directory."""
    return call("write_file", path=path, text=text, **extra)


def type_(text: str) -> dict[str, Any]:
    """Solution: type text into the focused window."""
    return call("write_text", text=text)


def run(*commands: str) -> list[dict[str, Any]]:
    """Solution: type each shell command into the focused terminal, one step each."""
    return [type_(c + "\n") for c in commands]


def wait(seconds: float) -> dict[str, Any]:
    return call("wait", seconds=seconds)


def text_of(lines: Sequence[str]) -> str:
    """File text of lines, each ended by a newline."""
    return "".join(f"{line}\n" for line in lines)
