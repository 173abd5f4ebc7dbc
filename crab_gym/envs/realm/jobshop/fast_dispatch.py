"""The job a dispatch names, read without the generic action parsing: the fast path of a
job-shop step (P11 and the J ids), which handles most RL steps in microseconds. Anything it
does not recognise as a well-formed dispatch falls back to the generic path, which validates
and explains."""

from __future__ import annotations

from typing import Any

import numpy as np


def dispatched_job(action: Any, dispatch_index: int) -> int | None:
    """The job of a well-formed ``dispatch`` action space element (``(index, {"job": j})``) or
    tool call (``{"name": "dispatch", "arguments": {"job": j}}``), else None; whether the job
    may be dispatched now is the caller's to check."""
    if type(action) is tuple:
        if len(action) != 2:
            return None
        head = action[0]
        # exactly what OneOf.contains accepts as an index: int or np.int64
        if (type(head) is not int and type(head) is not np.int64) or head != dispatch_index:
            return None
        args = action[1]
    elif type(action) is dict:
        if action.get("name") != "dispatch" or len(action) > 2:
            return None
        args = action.get("arguments")
    else:
        return None
    if type(args) is not dict or len(args) != 1:
        return None
    job = args.get("job")
    if type(job) is not int and not isinstance(job, np.signedinteger):
        return None
    return int(job)
