"""The layering rule of ../shared/DESIGN.md, checked on every import of every module (AST,
function-level imports included).

Floors, lowest first (:data:`FLOORS`): a module imports only from its own floor or lower ones --
**no import runs from a lower floor to a higher one** -- and the import graph of crab_gym's
modules has **no cycle**.

     0 helpers                  _optional, _deprecated (import nothing of crab_gym)
     1 runner                   evaluation: episodes, executors, store, reports (any gym env)
     2 vocabulary               core: Action, Evaluator, GraphEvaluator, Environment, Task, spaces;
                                its package names the runner's Benchmark
     3 env base                 envs.base, envs.canvas
     4 realm common             envs.realm.common
     5 envs                     envs.realm.<family> (never another family), envs.desktop
     6 problem index            envs.realm (package), envs.realm.index (reads the families' spec
                                modules by name, as Gymnasium reads entry points)
     7 registry                 envs (package), envs.registration, crab_gym (package)
     8 views                    wrappers (protocols, no family), multiagent
     9 baselines                may import families, wrappers and the id registry
    10 datasets
    11 tools                    checks (contract, scoring, probes, joint contract: they drive envs
                                with the baselines and shipped instances), mcp, results, run_card,
                                score_cli, train_cli
    12 command                  cli

Within a floor, :data:`EXACT` and :data:`PREFIXES` say which packages a module may import.
A module moved in issue 37 keeps its old path for one release as a shim (:data:`SHIMS`): it
imports only its new package and ``crab_gym._deprecated``, it sits on its target's floor, and
nothing in the code base imports it.

A function-level import is allowed only for an optional heavy third-party package (or the
standard library), never for crab_gym itself: it would hide a cycle.
"""

from __future__ import annotations

import ast
import itertools
import sys
from pathlib import Path

import networkx as nx
import pytest

from tests.moved_paths import SHIMS

PACKAGE = Path(__file__).resolve().parents[1] / "crab_gym"
FAMILIES = sorted(p.name for p in (PACKAGE / "envs" / "realm").iterdir()
                  if p.is_dir() and p.name not in ("common", "__pycache__"))

#: Optional or heavy third-party packages a function may import lazily.
LAZY_THIRD_PARTY = {
    "matplotlib", "torch", "stable_baselines3", "sb3_contrib", "openai", "pyautogui", "mss", "PIL",
    "fastapi", "uvicorn", "httpx", "minari", "Xlib", "job_shop_lib", "pyarrow", "ray", "JSSEnv",
    "pettingzoo", "tqdm", "rich",
}

#: The floors, lowest first: floor name -> the modules on it (a prefix covers a package's modules).
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("helpers", ("crab_gym._optional", "crab_gym._deprecated")),
    ("runner", ("crab_gym.evaluation",)),
    ("vocabulary", ("crab_gym.core",)),
    ("env base", ("crab_gym.envs.base", "crab_gym.envs.canvas")),
    ("realm common", ("crab_gym.envs.realm.common",)),
    ("envs", (*(f"crab_gym.envs.realm.{family}" for family in FAMILIES), "crab_gym.envs.desktop")),
    ("problem index", ("crab_gym.envs.realm.index",)),
    ("registry", ("crab_gym.envs.registration",)),
    ("views", ("crab_gym.wrappers", "crab_gym.multiagent")),
    ("baselines", ("crab_gym.baselines",)),
    ("datasets", ("crab_gym.datasets",)),
    ("tools", ("crab_gym.checks", "crab_gym.mcp", "crab_gym.results", "crab_gym.run_card", "crab_gym.score_cli",
               "crab_gym.train_cli")),
    ("command", ("crab_gym.cli",)),
)
#: Package ``__init__`` modules whose floor is not their subpackages' (a prefix would cover those).
FLOOR_OF_PACKAGE = {"crab_gym.envs.realm": "problem index", "crab_gym.envs": "registry", "crab_gym": "registry"}
FLOOR_NAMES = [name for name, _ in FLOORS]

RUNNER = ("crab_gym.evaluation",)
VOCABULARY = ("crab_gym.core",)
BASE = (*VOCABULARY, *RUNNER)
ENV_BASE = (*BASE, "crab_gym.envs.base", "crab_gym.envs.canvas")
COMMON = (*ENV_BASE, "crab_gym.envs.realm.common")
BELOW_TOOLS = (*COMMON, "crab_gym.envs.realm", "crab_gym.envs.desktop", "crab_gym.envs.registration", "crab_gym.wrappers",
               "crab_gym.multiagent", "crab_gym.baselines", "crab_gym.datasets", "crab_gym._optional")


#: Modules with a rule of their own: module -> the prefixes it may import from (None: anything).
EXACT: dict[str, tuple[str, ...] | None] = {
    "crab_gym.core": BASE,  # the vocabulary names the runner's Benchmark
    "crab_gym.envs.base": BASE,
    "crab_gym.envs.canvas": BASE,
    "crab_gym.envs.realm.index": COMMON,
    "crab_gym.envs.registration": (*COMMON, "crab_gym.envs.realm.index"),
    "crab_gym.envs": (),
    "crab_gym.envs.realm": (),
    "crab_gym._optional": (),
    "crab_gym._deprecated": (),
    "crab_gym": ("crab_gym.envs.registration",),
    # an old path (tests/moved_paths.py) imports its new package and the warning, nothing else
    **{old: ("crab_gym._deprecated", new.rsplit(".", 1)[0]) for old, new in SHIMS.items()},
}

#: Packages, by prefix (the first that matches): prefix -> the prefixes its modules may import from.
PREFIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("crab_gym.evaluation", RUNNER),
    ("crab_gym.core", VOCABULARY),
    ("crab_gym.envs.realm.common", COMMON),
    *((f"crab_gym.envs.realm.{family}", (*COMMON, f"crab_gym.envs.realm.{family}")) for family in FAMILIES),
    ("crab_gym.envs.desktop", (*ENV_BASE, "crab_gym.envs.desktop", "crab_gym._optional")),
    ("crab_gym.wrappers", (*COMMON, "crab_gym.wrappers", "crab_gym._optional")),
    ("crab_gym.multiagent", (*COMMON, "crab_gym.multiagent")),
    ("crab_gym.baselines", (*COMMON, "crab_gym.envs.realm", "crab_gym.envs.desktop", "crab_gym.envs.registration",
                            "crab_gym.wrappers", "crab_gym.multiagent", "crab_gym.baselines", "crab_gym._optional")),
    ("crab_gym.checks", (*BELOW_TOOLS, "crab_gym.checks")),
)


def _allowed(module: str) -> tuple[str, ...] | None:
    """Prefixes ``module`` may import from (None: anything; datasets and the tools are the top)."""
    if module in EXACT:
        return EXACT[module]
    return next((allowed for prefix, allowed in PREFIXES if module.startswith(prefix)), None)


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def floor_of(module: str) -> int | None:
    """The floor a module sits on (a shim: its target's); None if :data:`FLOORS` forgot it."""
    module = SHIMS.get(module, module)
    if module in FLOOR_OF_PACKAGE:
        return FLOOR_NAMES.index(FLOOR_OF_PACKAGE[module])
    matches = [(len(prefix), level) for level, (_, prefixes) in enumerate(FLOORS)
               for prefix in prefixes if _within(module, prefix)]
    return max(matches)[1] if matches else None


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


def _crab_gym_imports() -> list[tuple[str, str, int]]:
    """(importer, imported module, line) for every import of a crab_gym module by a crab_gym module."""
    return [(_module_name(path), imported, line) for path in MODULES for imported, line, _ in _imports(path)
            if imported.split(".")[0] == "crab_gym" and _is_module(imported)]


def test_every_module_sits_on_a_floor():
    assert [m for m in map(_module_name, MODULES) if floor_of(m) is None] == []


def test_the_floors_are_the_documented_order():
    """The order a reader of this file's docstring and of DESIGN.md relies on."""
    assert FLOOR_NAMES == ["helpers", "runner", "vocabulary", "env base", "realm common", "envs", "problem index",
                           "registry", "views", "baselines", "datasets", "tools", "command"]
    assert floor_of("crab_gym.evaluation.episode_runner") < floor_of("crab_gym.core.action") \
        < floor_of("crab_gym.envs.base") < floor_of("crab_gym.envs.realm.common.env") \
        < floor_of("crab_gym.envs.realm.jobshop.env") < floor_of("crab_gym.baselines.random_policy") \
        < floor_of("crab_gym.checks.scoring") < floor_of("crab_gym.cli")


def test_no_import_runs_from_a_lower_floor_to_a_higher_one():
    upward = [f"{importer} (floor {FLOOR_NAMES[floor_of(importer)]}) line {line} imports {imported} "
              f"(floor {FLOOR_NAMES[floor_of(imported)]})"
              for importer, imported, line in _crab_gym_imports() if floor_of(imported) > floor_of(importer)]
    assert upward == [], "\n".join(upward)


def test_no_import_cycle_between_crab_gym_modules():
    """A cycle makes import order matter (a half-initialised module) and hides which module is
    lower; packages count as their ``__init__`` (importing a submodule runs it, but that is no
    import of ours)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(map(_module_name, MODULES))
    graph.add_edges_from((importer, imported) for importer, imported, _ in _crab_gym_imports() if importer != imported)
    cycles = list(itertools.islice(nx.simple_cycles(graph), 5))
    assert cycles == [], "\n".join(" -> ".join([*cycle, cycle[0]]) for cycle in cycles)


def test_the_code_base_imports_no_deprecated_path():
    """The shims are for users: the package, its tests, benchmarks and scripts use the new paths."""
    root = PACKAGE.parent
    files = [*MODULES, *(path for folder in ("tests", "benchmarks", "scripts") for path in (root / folder).rglob("*.py"))]
    found = [f"{path.relative_to(root)}:{line} imports {imported}" for path in files
             for imported, line, _ in _imports(path) if imported in SHIMS and _module_name_or_none(path) != imported]
    assert found == [], "\n".join(found)


def _module_name_or_none(path: Path) -> str | None:
    return _module_name(path) if path.is_relative_to(PACKAGE) else None


@pytest.mark.parametrize("old", sorted(SHIMS))
def test_a_shim_is_only_an_alias(old):
    """Each old path is a file of imports and the warning (no code of its own to drift)."""
    path = PACKAGE.parent / (old.replace(".", "/") + ".py")
    assert path.is_file()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = {type(node).__name__ for node in tree.body}
    assert kinds <= {"Expr", "Import", "ImportFrom", "Assign", "If"}, kinds
    assert any(isinstance(node, ast.ImportFrom) and node.module == SHIMS[old] for node in tree.body)
