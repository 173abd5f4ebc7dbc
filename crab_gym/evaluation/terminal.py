"""The report as a terminal shows it: the summary table fitted to the screen's width.

``report.md`` (and a piped ``crab-gym run``) keep the Markdown tables and their legend: that is
what people paste and diff. On a terminal the same rows are drawn with rich (when installed)
at the screen's width, ``n/a`` dimmed apart from a real ``0.000``, and the 15-line legend is
left to ``--legend`` so that it does not push the table off the screen.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable, Mapping, Sequence
from typing import Any

#: Short headers for the terminal (report.md and the legend keep the full names).
HEADERS = {"constraint_satisfaction": "constraints", "completeness": "complete", "coordination": "coord",
           "adaptation": "adapt", "episodes": "eps", "instances": "inst", "llm_tokens": "tokens",
           "llm_requests": "requests", "llm_latency_s": "latency_s", "resource_usage": "resources",
           "planning_quality": "planning"}
#: One line under the table on a terminal, instead of the legend.
LEGEND_HINT = "what each column means: --legend; across seeds and the run card: report.md"


def rich_available() -> bool:
    """Whether rich can draw the table (it comes with the ``all`` install; optional)."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def terminal_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str],
                   cell: Callable[[Mapping[str, Any], str], str], width: int | None = None,
                   title: str | None = None, color: bool = False) -> str:
    """``rows`` as a rich table at most ``width`` characters wide (the terminal's by default):
    long cells fold inside their column rather than wrapping the whole line; ``color`` adds
    the terminal's styles (bold headers, dimmed ``n/a``)."""
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    width = width or shutil.get_terminal_size((120, 40)).columns
    columns = fitted_columns(columns, width)
    table = Table(title=title, box=box.SIMPLE_HEAD, show_lines=False, pad_edge=False, expand=False,
                  header_style="bold")
    for name in columns:
        table.add_column(HEADERS.get(name, name), overflow="fold", no_wrap=False)
    for row in rows:
        values = (cell(row, name) for name in columns)  # n/a (does not apply) dimmed apart from a real 0
        table.add_row(*(Text(v, style="dim italic") if v == "n/a" else Text(v) for v in values))
    buffer = io.StringIO()
    Console(file=buffer, width=width, force_terminal=color, color_system="standard" if color else None,
            soft_wrap=False).print(table)
    return buffer.getvalue()


#: Columns a narrow terminal drops first, in this order (report.md keeps every one).
DROPPABLE = ("time_s", "steps", "kwargs", "split", "instances", "completeness", "episodes", "llm_latency_s",
             "planning_quality")


def fitted_columns(columns: Sequence[str], width: int) -> list[str]:
    """``columns`` less the :data:`DROPPABLE` ones, in order, until each column can show its
    header and a value of 6 characters in ``width``."""
    kept = list(columns)

    def needed() -> int:
        return sum(max(len(HEADERS.get(c, c)), 6) + 2 for c in kept)

    for name in DROPPABLE:
        if needed() <= width:
            break
        if name in kept:
            kept.remove(name)
    return kept
