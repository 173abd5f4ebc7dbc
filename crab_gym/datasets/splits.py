"""Choose the instances a benchmark run plays: a split, named instances, size classes, a folder.

>>> from crab_gym.datasets.splits import select
>>> [case.instance for case in select(["Realm-P1-v0"])]  # the quick split, the default
['p1_small_00', 'p1_small_03', 'p1_medium_00']
>>> len(select(["Realm-P1-v0"], split="test"))
12

A split is one of the problem's declared lists (``dev``, ``test``, ``quick``, and named sets
such as P11's ``ta``), a size class (``small``, ``medium``, ``large``: every shipped instance
of that size), ``all``, or a folder of the user's own instance files (ours or upstream
REALM-Bench ones; every ``*.json`` and job-shop ``*.txt`` in it). ``sizes`` keeps the
instances of those size classes. Each :class:`~crab_gym.evaluation.episode.EnvCase` carries the
``instance=`` keyword of ``gym.make`` and the labels every episode record keeps (split,
instance, size).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crab_gym.envs.realm.common.problem_spec import ProblemSpec
from crab_gym.envs.realm.common.splits import SIZE_CLASSES, size_in_name
from crab_gym.envs.realm.index import problem_specs
from crab_gym.evaluation.episode import EnvCase

#: The split a run plays when it names none.
DEFAULT_SPLIT = "quick"
#: The files a folder split reads (instance files; anything else in the folder is left alone).
INSTANCE_SUFFIXES = (".json", ".txt", ".jsp", ".jss")
#: Keywords of ``gym.make`` that choose the instance themselves: no split applies to them.
INSTANCE_KEYWORDS = ("instance", "generator")


class SplitError(ValueError):
    """A split, instance or size that the env does not have: the message says what it has."""


def realm_spec(env_id: str) -> ProblemSpec | None:
    """The problem record of a REALM id (``Realm-P3-v0``, ``module:Realm-P3-v0``), else None."""
    bare = env_id.split(":", 1)[-1]
    return next((s for s in problem_specs() if s.env_id == bare), None)


def split_names(env_id: str) -> list[str]:
    """The split names ``env_id`` answers to (folders aside): declared lists, size classes, all."""
    spec = realm_spec(env_id)
    if spec is None:
        return []
    sizes = [c for c in SIZE_CLASSES if any(size_in_name(n) == c for n in spec.part("names")())]
    return [*(spec.splits.named() if spec.splits else ()), *sizes, "all"]


def split_instances(env_id: str, split: str) -> list[str]:
    """The instance names of a named split of ``env_id`` (not a folder), in order."""
    spec = _realm(env_id, f"split {split!r}")
    names = list(spec.part("names")())
    declared = spec.splits.named() if spec.splits else {}
    if split in declared:
        return list(declared[split])
    if split == "all":
        return names
    if split in SIZE_CLASSES and any(size_in_name(n) == split for n in names):
        return [n for n in names if size_in_name(n) == split]
    raise SplitError(f"{env_id} has no split {split!r}: choose one of {', '.join(split_names(env_id))}, "
                     "or give a folder of instance files")


def select(
    env_ids: Sequence[str],
    *,
    split: str | None = None,
    instances: Sequence[str] | None = None,
    sizes: Sequence[str] | None = None,
    env_kwargs: Mapping[str, Any] | None = None,
) -> list[EnvCase]:
    """The cases (env x instance) a run plays.

    Args:
        env_ids: the env ids; a REALM id without a selection plays its ``quick`` split, any
            other env (the desktop, a user's registered id) its one default case.
        split: a split name (:func:`split_names`) or a folder of instance files.
        instances: instance names or files, instead of a split (labelled split ``custom``).
        sizes: keep only instances of these size classes (``small``, ``15x15``).
        env_kwargs: more keywords of ``gym.make`` for every case; one that picks the instance
            itself (``instance``, ``generator``) excludes a selection.
    """
    kwargs = dict(env_kwargs or {})
    chosen = [k for k in INSTANCE_KEYWORDS if k in kwargs]
    if chosen and (split or instances or sizes):
        raise SplitError(f"env keyword {chosen[0]!r} already picks the instance: drop it, or drop the split, "
                         "instances and sizes")
    if split and instances:
        raise SplitError("give a split or instances, not both")
    cases: list[EnvCase] = []
    for env_id in env_ids:
        if chosen or (realm_spec(env_id) is None and not (split or instances or sizes)):
            cases.append(EnvCase(env_id, kwargs))
            continue
        cases.extend(_cases(env_id, split, instances, sizes, kwargs))
    return cases


def _cases(env_id: str, split: str | None, instances: Sequence[str] | None, sizes: Sequence[str] | None,
           kwargs: dict[str, Any]) -> list[EnvCase]:
    """The cases of one env: the split's (or the named) instances, kept to ``sizes``."""
    if instances:
        label, names = "custom", [_instance_name(env_id, n) for n in instances]
    elif split and _is_folder(split):
        label, names = str(split), _folder_files(Path(split))
    else:
        label = split or default_split(env_id)
        names = split_instances(env_id, label) if split or not sizes else split_instances(env_id, "all")
        if sizes and not split:
            label = "all"
    cases = [EnvCase(env_id, {**kwargs, "instance": name}, split=label, instance=_label(name),
                     size=instance_size(env_id, name)) for name in names]
    if sizes:
        kept = [c for c in cases if c.size in set(sizes)]
        if not kept:
            have = sorted({str(c.size) for c in cases})
            raise SplitError(f"{env_id} split {label!r} has no instance of size {', '.join(sizes)}: "
                             f"its sizes are {', '.join(have)}")
        cases = kept
        label = f"{label}[{'+'.join(sizes)}]"
        cases = [EnvCase(c.env_id, c.kwargs, split=label, instance=c.instance, size=c.size) for c in cases]
    return cases


def instance_size(env_id: str, name: str) -> str | None:
    """An instance's size class: from a shipped name (``p1_small_03`` -> ``small``), else from
    the instance (a job shop's ``jobs x machines``, a generated instance's ``size``)."""
    from_name = size_in_name(Path(name).stem)
    if from_name is not None:
        return from_name
    spec = realm_spec(env_id)
    if spec is None:
        return None
    instance = spec.part("load")(name)
    jobs, machines = getattr(instance, "n_jobs", None), getattr(instance, "n_machines", None)
    if jobs is not None and machines is not None:
        return f"{jobs}x{machines}"
    size = getattr(instance, "size", None)
    return str(size) if size is not None else None


def default_split(env_id: str) -> str:
    """What a run plays when it names nothing: the quick split, or every shipped instance of a
    problem that declares no splits (a new family's first days)."""
    spec = realm_spec(env_id)
    return DEFAULT_SPLIT if spec is not None and spec.splits is not None else "all"


def _realm(env_id: str, what: str) -> ProblemSpec:
    spec = realm_spec(env_id)
    if spec is None:
        raise SplitError(f"{env_id} is no REALM problem, so it has no {what}: "
                         "run it without --split/--sizes, or give --instances FILE...")
    return spec


def _instance_name(env_id: str, name: str) -> str:
    """A named instance as given; an unknown name that is no file is a :class:`SplitError`."""
    if Path(name).is_file():
        return name
    spec = realm_spec(env_id)
    if spec is not None and name not in spec.part("names")():
        raise SplitError(f"{env_id} has no instance {name!r} (and no file of that name exists); "
                         f"`crab_gym.datasets.list_instances({spec.problem!r})` lists them")
    return name


def _is_folder(split: str) -> bool:
    return Path(split).expanduser().is_dir()


def _folder_files(folder: Path) -> list[str]:
    files = sorted(str(p) for p in folder.expanduser().iterdir()
                   if p.is_file() and p.suffix.lower() in INSTANCE_SUFFIXES and p.name != "references.json")
    if not files:
        raise SplitError(f"folder {folder} holds no instance files ({', '.join(INSTANCE_SUFFIXES)})")
    return files


def _label(name: str) -> str:
    """The name a record keeps: a shipped name as it is, a file by its stem."""
    path = Path(name)
    return path.stem if path.suffix.lower() in INSTANCE_SUFFIXES else name


__all__ = ["DEFAULT_SPLIT", "SplitError", "default_split", "instance_size", "select", "split_instances", "split_names"]
