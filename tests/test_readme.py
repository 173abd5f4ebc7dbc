"""The README's examples, and those of the pages its sections moved to (issue 37), run and print
exactly what the page says they print; the README's install and test commands are what CI runs."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from crab_gym.core import ActionArgumentError

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"   # the vocabulary example and the public API
ENVIRONMENTS = ROOT / "docs" / "environments.md"   # the env table's example and crab_gym.datasets
INSTALL = ROOT / "docs" / "install.md"             # install details, tested versions, development


def python_blocks(page: Path = README) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)


def documented_output(block: str) -> list[str]:
    """Lines written as ``# <output>`` right after a print (the README's convention)."""
    lines = block.splitlines()
    out = []
    for prev, line in zip(lines, lines[1:]):
        if line.startswith("# ") and (prev.lstrip().startswith("print(") or prev.startswith("# ") or "print(" in prev):
            out.append(line[2:])
    return out


@pytest.fixture(scope="module")
def namespace() -> dict:
    ns: dict = {"__name__": "readme_example"}
    return ns


def run_block(block: str, ns: dict, page: Path = README) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, page.name, "exec"), ns)
    return out.getvalue().splitlines()


def test_the_quickstart_step_loop_prints_the_documented_output():
    """The README's first example: a masked step loop on P11 ft06, with its makespan and optimality."""
    block = python_blocks()[0]
    assert 'gym.make("Realm-P11-v0"' in block and "action_masks()" in block
    expected = documented_output(block)
    assert expected == ["{'name': 'dispatch', 'arguments': {'job': 5}}", "71 55 0.775"]
    assert run_block(block, {"__name__": "readme_example"}) == expected


def test_the_quickstart_comes_first():
    """The quickstart (install, then the step loop) opens the README, before any reference material."""
    text = README.read_text()
    headings = re.findall(r"^(#{2,3}) (.+)$", text, flags=re.M)
    assert headings[:3] == [("##", "Quickstart"), ("###", "Install"), ("###", "A masked step loop")]
    assert text.index("```python") > text.index("## Quickstart")
    for piece in ("MaskablePPO", "crab-gym train", "LLMAgent", "mcpServers", "crab-gym run --env Realm-P11-v0 --split"):
        assert text.index(piece) < text.index("## Environments"), piece


def test_examples_print_the_documented_output(namespace):
    blocks = python_blocks(ARCHITECTURE)
    assert len(blocks) >= 2
    for block in blocks[:2]:
        expected = documented_output(block)
        assert expected, "every vocabulary example documents its output"
        assert run_block(block, namespace, ARCHITECTURE) == expected


def test_documented_error_for_bad_arguments(namespace):
    run_block(python_blocks(ARCHITECTURE)[0], namespace, ARCHITECTURE)
    with pytest.raises(ActionArgumentError) as info:
        namespace["env"].take("brew", {"kind": "oolong"})
    assert str(info.value) in ARCHITECTURE.read_text()


def test_environment_example_runs():
    blocks = python_blocks(ENVIRONMENTS)
    env_block = next(b for b in blocks if 'gym.make("Realm-P3-v0"' in b and "render()" in b)
    printed = run_block(env_block, {"__name__": "readme_example"}, ENVIRONMENTS)
    assert printed[0].startswith("p3_small_01: clock 07:00; served 0/4")
    assert any("pickup:p1" in line for line in printed)


def test_datasets_example_runs():
    block = next(b for b in python_blocks(ENVIRONMENTS) if "from crab_gym.datasets import" in b)
    ns: dict = {"__name__": "readme_example"}
    run_block(block, ns, ENVIRONMENTS)
    assert ns["names"] and all(n.startswith("p3_") for n in ns["names"])
    assert ns["inst"].name == ns["names"][0]
    assert ns["fresh"].name and ns["fresh"] == ns["generate_instance"]("P1", "small", seed=7)


# ---------------------------------------------------------------------------------- install (issue 28, item 1)
CI = Path(__file__).resolve().parents[1] / ".ci" / "run"


def section(page: Path, heading: str) -> str:
    """The text under the heading line ``heading`` (e.g. ``### Install``), up to the next heading
    of the same or a higher level (a ``#`` line inside a fenced block is no heading)."""
    level = len(heading.split()[0])
    lines = page.read_text().splitlines()
    start = lines.index(heading) + 1
    fenced = False
    for end in range(start, len(lines)):
        fenced ^= lines[end].startswith("```")
        hashes = len(lines[end]) - len(lines[end].lstrip("#"))
        if not fenced and 0 < hashes <= level and lines[end][hashes:hashes + 1] == " ":
            return "\n".join(lines[start:end])
    return "\n".join(lines[start:])


def bash_lines(page: Path, heading: str) -> list[list[str]]:
    """The lines of each bash block under a heading."""
    return [b.splitlines() for b in re.findall(r"```bash\n(.*?)```", section(page, heading), flags=re.S)]


def setup_commands(page: Path = README, heading: str = "### Install") -> list[list[str]]:
    """The pip commands of each bash block of a page's install section that has any."""
    commands = [[line.split("#")[0].strip() for line in b if line.startswith("pip install")]
                for b in bash_lines(page, heading)]
    return [c for c in commands if c]


def test_the_readme_gives_a_cpu_install_a_gpu_install_and_a_minimal_one():
    cpu, gpu, minimal = setup_commands()
    assert cpu == ['pip install --retries 1 torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu',
                   'pip install -e ".[all]"']
    assert gpu == ['pip install -e ".[all]"']
    assert minimal == ["pip install -e ."]
    assert setup_commands(INSTALL, "## Install") == setup_commands()  # the install page repeats them word for word


def test_the_readme_s_test_command_is_what_ci_runs():
    """The README states the test command, and .ci/run runs exactly it after the README's install."""
    commands = [line for b in bash_lines(README, "### Install") for line in b if "pytest" in line]
    assert commands == ["python -m pytest -q"]
    assert f"\nrun_pytest {commands[0]}\n" in CI.read_text()


def test_ci_installs_the_readme_s_cpu_commands():
    """.ci/run runs the README's CPU-only torch line word for word, and then the package."""
    ci = CI.read_text()
    torch_line = setup_commands()[0][0]
    assert f"python -m {torch_line}\n" in ci
    assert re.search(r'python -m pip install [^\n]*-e "\.\[all\]"', ci)
    assert "python -m pip install torch==2.13.0\n" not in ci  # a stock machine gets CUDA from that


# ---------------------------------------------------------------------------------- tested versions (item 8)
def test_the_lowest_tested_column_is_what_ci_pins():
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_tested_versions", ROOT / "scripts" / "check_tested_versions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pins = dict(line.split("==") for line in (ROOT / ".ci" / "lowest.txt").read_text().splitlines()
                if line and not line.startswith("#"))
    lowest = {dist: low for dists, low, _ in module.table() for dist in dists if low != "-"}
    assert lowest == pins
    assert {d for dists, _, new in module.table() for d in dists if new != "-"} >= set(pins) | {"torch", "pydantic"}


def test_the_command_table_and_the_dev_extra_are_complete():
    assert "| `crab-gym` | CLI: `list`, `run`, `report`" in ARCHITECTURE.read_text()
    text = INSTALL.read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    dev = re.search(r"^dev = \[(.*)\]$", pyproject, flags=re.M).group(1)
    assert "pre-commit" in dev and "pre-commit install" in text
