"""The template table of docs/desktop.md, generated from the templates themselves.

``python -m crab_gym.envs.desktop.templates.table`` prints it; ``--write`` puts it into
docs/desktop.md between its markers (a test checks that the page holds exactly this table).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import networkx as nx

from crab_gym.envs.desktop.templates.base import TEMPLATES, Template

START = "<!-- template-table:start (generated: python -m crab_gym.envs.desktop.templates.table --write) -->"
END = "<!-- template-table:end -->"


def _sub_goals(tpl: Template) -> str:
    """The evaluator graph's nodes in dependency order, each with the nodes it waits for."""
    task = tpl.instance(0)
    graph = task.graph_structure()
    parts = []
    for node in nx.lexicographical_topological_sort(graph, key=list(task.checks).index):
        before = list(graph.predecessors(node))
        parts.append(f"{node} (after {', '.join(before)})" if before else node)
    return ", ".join(parts)


def template_table() -> str:
    """A Markdown table: template, kind, apps, environments, parameters, sub-goals."""
    rows = ["| template | kind | apps | environments | parameters (from the seed) | sub-goals |",
            "|---|---|---|---|---|---|"]
    for tpl in TEMPLATES.values():
        kind = "infeasible" if tpl.infeasible else ("multi-step" if tpl.instance(0).partial else "single-step")
        rows.append(f"| `{tpl.id}` | {kind} | {', '.join(tpl.apps)} | {', '.join(tpl.envs)} | "
                    f"{', '.join(tpl.params)} | {_sub_goals(tpl)} |")
    return "\n".join(rows)


def page_section() -> str:
    """What docs/desktop.md holds between (and including) its markers."""
    return f"{START}\n{template_table()}\n{END}"


def write_into(path: Path) -> None:
    """Replace the table between the markers of ``path`` with the generated one."""
    text = path.read_text()
    if START not in text or END not in text:
        raise ValueError(f"{path}: the markers {START!r} and {END!r} are missing")
    head, rest = text.split(START, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(head + page_section() + tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="update docs/desktop.md in place")
    parser.add_argument("--page", default=str(Path(__file__).parents[4] / "docs" / "desktop.md"))
    args = parser.parse_args()
    if args.write:
        write_into(Path(args.page))
    else:
        print(template_table())


if __name__ == "__main__":
    main()
