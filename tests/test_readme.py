"""The README's examples run and print exactly what the README says they print."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from crab_gym.core import ActionArgumentError

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


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


def run_block(block: str, ns: dict) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, "README.md", "exec"), ns)
    return out.getvalue().splitlines()


def test_examples_print_the_documented_output(namespace):
    blocks = python_blocks()
    assert len(blocks) >= 2
    for block in blocks[:2]:
        expected = documented_output(block)
        assert expected, "every README example documents its output"
        assert run_block(block, namespace) == expected


def test_documented_error_for_bad_arguments(namespace):
    run_block(python_blocks()[0], namespace)
    with pytest.raises(ActionArgumentError) as info:
        namespace["env"].take("brew", {"kind": "oolong"})
    assert str(info.value) in README.read_text()


def test_environment_example_runs():
    blocks = python_blocks()
    env_block = next(b for b in blocks if 'gym.make("Realm-P3-v0"' in b and "render()" in b)
    printed = run_block(env_block, {"__name__": "readme_example"})
    assert printed[0].startswith("p3_small_01: clock 07:00; served 0/4")
    assert any("pickup:p1" in line for line in printed)


def test_datasets_example_runs():
    block = next(b for b in python_blocks() if "from crab_gym.datasets import" in b)
    ns: dict = {"__name__": "readme_example"}
    run_block(block, ns)
    assert ns["names"] and all(n.startswith("p3_") for n in ns["names"])
    assert ns["inst"].name == ns["names"][0]
    assert ns["fresh"].name and ns["fresh"] == ns["generate_instance"]("P1", "small", seed=7)


# ---------------------------------------------------------------------------------- install (issue 28, item 1)
CI = Path(__file__).resolve().parents[1] / ".ci" / "run"


def setup_commands() -> list[list[str]]:
    """The bash blocks of the README's Set up section, each as its pip commands."""
    text = README.read_text()
    section = text[text.index("## Set up"):text.index("**Tested versions.**")]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    return [[line.split("#")[0].strip() for line in b.splitlines() if line.startswith("pip install")] for b in blocks]


def test_the_readme_gives_a_cpu_install_and_a_gpu_install():
    cpu, gpu = setup_commands()
    assert cpu == ['pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu',
                   'pip install -e ".[all]"']
    assert gpu == ['pip install -e ".[all]"']


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
    text = README.read_text()
    assert "| `crab-gym` | CLI: `list`, `run`, `report`" in text
    pyproject = (ROOT / "pyproject.toml").read_text()
    dev = re.search(r"^dev = \[(.*)\]$", pyproject, flags=re.M).group(1)
    assert "pre-commit" in dev and "pre-commit install" in text
