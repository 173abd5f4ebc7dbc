"""Print the test files of the lowest-versions CI pass: the core and the runner, every problem's oracle tests
and native vector env tests (read from the problem index, so a new problem is in the pass
without an edit to ``.ci/run``), and the suite-wide contract checks."""

from __future__ import annotations

from pathlib import Path

from crab_gym.envs.realm.index import problem_specs

ROOT = Path(__file__).resolve().parents[1]

#: Not keyed by problem: the core, the runner (tests/evaluation) and the contract every env keeps.
ALWAYS = ("tests/core", "tests/evaluation", "tests/test_invalid_elements.py", "tests/test_suite_contract.py")


def lowest_versions_tests() -> list[str]:
    """The paths, relative to the repository root, each once, in problem order."""
    paths: list[str] = [ALWAYS[0]]
    for spec in problem_specs():
        folder = ROOT / spec.tests
        found = sorted(folder.glob("test_oracle*.py"))
        if spec.vector_env is not None:
            found += sorted(folder.glob("test_vector_env*.py"))
        paths += [str(p.relative_to(ROOT)) for p in found if str(p.relative_to(ROOT)) not in paths]
    return paths + list(ALWAYS[1:])


if __name__ == "__main__":
    print(" ".join(lowest_versions_tests()))
