"""The layering rule of ../shared/DESIGN.md, checked on every import of every module (AST,
function-level imports included).

    core                       imports nothing else of crab_gym
    envs.base, envs.canvas     core
    envs.realm.common          core, envs.base, envs.canvas
    envs.realm.<family>        those, and itself -- never another family or a higher layer
    envs.realm.index           envs.realm.common (it reads the families' spec modules by name,
                               as Gymnasium reads entry points: records of dotted paths)
    envs.desktop               core, envs.base, envs.canvas, itself
    wrappers                   core, envs.base, envs.realm.common (protocols), itself
    multiagent                 core, envs.base, envs.realm.common (protocols), itself
                               (its testing module: also envs.testing and the id registry)
    baselines                  may import families, wrappers and the id registry
    datasets, cli              on top
    envs.testing,              on top too: the contract and scoring checks drive envs with the
      envs.scoring_check       suite's baselines and shipped instances; nothing imports them
                               but tests and multiagent.testing

A function-level import is allowed only for an optional heavy third-party package (or the
standard library), never for crab_gym itself: it would hide a cycle.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from tests.moved_paths import SHIMS

PACKAGE = Path(__file__).resolve().parents[1] / "crab_gym"
FAMILIES = sorted(p.name for p in (PACKAGE / "envs" / "realm").iterdir()
                  if p.is_dir() and p.name not in ("common", "__pycache__"))

#: Optional or heavy third-party packages a function may import lazily.
LAZY_THIRD_PARTY = {
    "matplotlib", "torch", "stable_baselines3", "sb3_contrib", "openai", "pyautogui", "mss", "PIL",
    "fastapi", "uvicorn", "httpx", "minari", "Xlib", "job_shop_lib", "pyarrow", "ray", "JSSEnv",
    "pettingzoo", "tqdm",
}

RUNNER = ("crab_gym.evaluation",)
BASE = ("crab_gym.core", *RUNNER)
ENV_BASE = (*BASE, "crab_gym.envs.base", "crab_gym.envs.canvas")
COMMON = (*ENV_BASE, "crab_gym.envs.realm.common")


#: Modules with a rule of their own: module -> the prefixes it may import from (None: anything).
EXACT: dict[str, tuple[str, ...] | None] = {
    "crab_gym.envs.base": BASE,
    "crab_gym.envs.canvas": BASE,
    "crab_gym.envs.realm.index": COMMON,
    "crab_gym.envs.registration": (*COMMON, "crab_gym.envs.realm.index"),
    "crab_gym.envs": (),
    "crab_gym.envs.realm": (),
    "crab_gym._optional": (),
    "crab_gym._deprecated": (),
    # an old path (tests/moved_paths.py) imports its new package and the warning, nothing else
    **{old: ("crab_gym._deprecated", new.rsplit(".", 1)[0]) for old, new in SHIMS.items()},
    "crab_gym": ("crab_gym.envs.registration",),
}

#: Packages, by prefix (the first that matches): prefix -> the prefixes its modules may import from.
PREFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("crab_gym.evaluation", RUNNER),
    ("crab_gym.core", BASE),
    ("crab_gym.envs.realm.common", COMMON),
    *((f"crab_gym.envs.realm.{family}", (*COMMON, f"crab_gym.envs.realm.{family}")) for family in FAMILIES),
    ("crab_gym.envs.desktop", (*ENV_BASE, "crab_gym.envs.desktop", "crab_gym._optional")),
    ("crab_gym.wrappers", (*COMMON, "crab_gym.wrappers", "crab_gym._optional")),
    ("crab_gym.multiagent", (*COMMON, "crab_gym.multiagent")),
    ("crab_gym.baselines", (*COMMON, "crab_gym.envs.realm", "crab_gym.envs.desktop", "crab_gym.envs.registration",
                            "crab_gym.wrappers", "crab_gym.multiagent", "crab_gym.baselines", "crab_gym._optional")),
)


def _allowed(module: str) -> tuple[str, ...] | None:
    """Prefixes ``module`` may import from (None: anything; datasets and cli are the top)."""
    if module in EXACT:
        return EXACT[module]
    return next((allowed for prefix, allowed in PREFIXES if module.startswith(prefix)), None)


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    base = PACKAGE.parent / dotted.replace(".", "/")
    return base.is_dir() or base.with_suffix(".py").is_file()


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, inside a function) for every import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.append((child.module, child.lineno, in_function))
                # `from crab_gym.x import y` may import the submodule y
                found.extend((f"{child.module}.{a.name}", child.lineno, in_function) for a in child.names
                             if _is_module(f"{child.module}.{a.name}"))
            elif isinstance(child, ast.Call) and getattr(child.func, "attr", "") == "import_module":
                arg = child.args[0] if child.args else None
                if isinstance(arg, ast.Constant) and str(arg.value).startswith("crab_gym"):
                    found.append((str(arg.value), child.lineno, True))
            visit(child, nested)

    visit(tree, False)
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_the_families_are_packages():
    assert {"campus_tour", "group_tours", "ridesharing", "jobshop"} <= set(FAMILIES)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_imports_respect_the_layers(path):
    module = _module_name(path)
    allowed = _allowed(module)
    problems = []
    for imported, line, in_function in _imports(path):
        top = imported.split(".")[0]
        if top != "crab_gym":
            if in_function and top not in LAZY_THIRD_PARTY and top not in sys.stdlib_module_names:
                problems.append(f"line {line}: function-level import of {imported} (not an optional heavy package)")
            continue
        if in_function:
            problems.append(f"line {line}: function-level import of {imported} hides a dependency")
        if allowed is not None and imported != module and not any(
            imported == p or imported.startswith(p + ".") for p in allowed
        ):
            problems.append(f"line {line}: {module} may not import {imported}")
    assert not problems, "\n".join(problems)
