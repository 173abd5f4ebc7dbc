"""The ``crab-gym`` command: list envs, run policies on them, rebuild a run's report, serve a desktop.

``crab-gym run --out DIR`` streams every finished episode to ``DIR/episodes.jsonl``; the same
command run again skips what is there (a killed run resumes), and the reports are always
rebuilt from that file (``crab-gym report DIR`` does only that). ``--workers N`` runs N
episodes at a time: worker processes, or threads of one process for LLM policies (then N
concurrent requests, paced by ``--max-rps``); ``--backend ray`` runs them as Ray tasks.

Exit codes of ``crab-gym run``: 0 every episode ran; 1 some episode raised (it is listed in
the report, and the other episodes still ran); 2 a usage mistake, reported on one line of
stderr before anything runs; 130 interrupted (the episodes finished so far are reported);
141 the reader of the output went away (``crab-gym run | head``: the reports in ``--out``
are written before anything is printed). A missing extra (``serve`` without the ``desktop``
extra) is also one line and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import importlib.util
import json
import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym

from crab_gym._optional import MissingExtraError
from crab_gym.baselines.custom_policy import SB3_PREFIX, CustomPolicyError, check_cases, custom_specs, is_custom
from crab_gym.baselines.llm_agent import MODEL_ENV
from crab_gym.baselines.registry import REALM_IDS, NamedPolicy, policy_specs
from crab_gym.core.keywords import did_you_mean
from crab_gym.datasets.splits import SplitError, select, split_instances, split_names
from crab_gym.envs.desktop.cli import add_serve_parser
from crab_gym.envs.registration import env_specs
from crab_gym.evaluation.benchmark import Benchmark, EnvCase
from crab_gym.evaluation.card import TRACKS
from crab_gym.evaluation.episode_store import FILENAME, EpisodeStore, EpisodeStoreConflict, EpisodeStoreError
from crab_gym.evaluation.llm_report import Prices
from crab_gym.evaluation.ray_executor import RAY_MISSING
from crab_gym.evaluation.report import BenchmarkReport
from crab_gym.evaluation.terminal import rich_available
from crab_gym.mcp.cli import add_mcp_parser
from crab_gym.results.cli import SPLIT, add_results_parser
from crab_gym.results.compare import compare, compare_markdown
from crab_gym.results.table import load_reference
from crab_gym.run_card import RerunError, read_card, rerun_argv, run_card, write_card
from crab_gym.score_cli import add_score_parser
from crab_gym.train_cli import add_train_parser

DEFAULT_ENVS = list(REALM_IDS)
DEFAULT_POLICIES = ["random", "oracle"]
#: The exit code after the output's reader went away (a shell's code for a SIGPIPE death).
BROKEN_PIPE = 141

#: Exceptions that making an env or a policy raises for a bad argument or a missing extra:
#: reported on one line. Anything else is a bug and keeps its traceback.
USER_ERRORS = (TypeError, ValueError, KeyError, LookupError, OSError, ImportError, gym.error.Error)


class UsageError(Exception):
    """A mistake in the command line: one line on stderr, exit code 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage dump): ``crab-gym run: error: ...``."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _message(exc: BaseException) -> str:
    """The user-facing text of an env/policy construction error: gym.make's re-raised
    TypeError is unwrapped to the env's own message, a KeyError loses its quotes."""
    cause = exc.__cause__
    if isinstance(exc, TypeError) and cause is not None and "was raised from the environment creator" in str(exc):
        exc = cause
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return _one_line(exc.args[0])
    return _one_line(str(exc) or type(exc).__name__)


# ====================================================================== list
def cmd_list(args: argparse.Namespace) -> int:
    if args.splits:
        return _list_splits()
    print("envs:")
    for spec in env_specs():
        print(f"  {spec.id:16s} {spec.title}")
    print("\npolicies:")
    for name, pol in policy_specs().items():
        fits = "any env" if pol.env_ids is None else ", ".join(pol.env_ids)
        print(f"  {name:20s} {pol.description} [{fits}]")
    return 0


def _list_splits() -> int:
    """Each REALM id's splits with their sizes (``crab-gym run --split NAME``)."""
    for spec in env_specs():
        names = split_names(spec.id)
        if names:
            counts = ", ".join(f"{name} {len(split_instances(spec.id, name))}" for name in names)
            print(f"{spec.id:16s} {counts}")
    print("\n(a folder of instance files is a split too: crab-gym run --env ID --split DIR)")
    return 0


# ====================================================================== run
def _check_run_args(args: argparse.Namespace) -> dict[str, Any]:
    """Everything that can be checked without making an env; returns the env kwargs."""
    if args.plot and not args.out:
        raise UsageError("--plot writes report.png next to the reports: add --out DIR")
    _check_plot(args)
    if args.out:
        _check_out(args.out)
    if args.address is not None and args.backend != "ray":
        raise UsageError("--address joins a Ray cluster: add --backend ray (and pip install \"crab_gym[ray]\")")
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UsageError(f"--backend ray: {RAY_MISSING}") from None
        if str(args.address or "").startswith("ray://") and importlib.util.find_spec("grpc") is None:
            raise UsageError(f"--address {args.address}: a ray:// address goes through Ray's client, which is not "
                             "installed: pip install \"ray[client]\" (or run on the cluster's head node with "
                             "--address auto)")
    if not args.env_kwargs:
        return {}
    try:
        kwargs = json.loads(args.env_kwargs)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"--env-kwargs is not valid JSON ({exc.msg} at character {exc.pos}): "
            """give a JSON object in single quotes, e.g. --env-kwargs '{"instance": "ft06"}'"""
        ) from None
    if not isinstance(kwargs, dict):
        raise UsageError(
            f"--env-kwargs must be a JSON object (keyword -> value), got a JSON {type(kwargs).__name__}: "
            """e.g. --env-kwargs '{"instance": "ft06"}'"""
        )
    return kwargs


def _check_plot(args: argparse.Namespace) -> None:
    if args.plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise UsageError('--plot needs matplotlib: pip install "crab_gym[viz]" (or drop --plot)') from None


def _check_out(out: str) -> None:
    """``--out`` must be a directory that exists or can be made, and that this user can write."""
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise UsageError(f"--out {out} is a file, not a directory: choose a directory (it is made if missing)")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise UsageError(f"--out {out}: {existing} is a file, so no directory can be made under it")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--out {out}: {existing} is not writable by you: choose a directory you can write")


def _import_env_module(env_id: str) -> None:
    """``module:Id`` names the module that registers ``Id`` (as ``gym.make`` reads it)."""
    if ":" in env_id:
        module = env_id.split(":", 1)[0]
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UsageError(f"cannot import {module!r} for env {env_id!r}: {_message(exc)}") from None


def _check_names(env_ids: Sequence[str], policies: Sequence[str], specs: dict[str, Any]) -> None:
    for env_id in env_ids:
        _import_env_module(env_id)
        if env_id.split(":", 1)[-1] not in gym.registry:
            raise UsageError(
                f"unknown env id {env_id!r}{did_you_mean(env_id, list(gym.registry))}; "
                "`crab-gym list` shows them all"
            )
    unknown = [p for p in policies if p not in specs]
    if unknown:
        hints = "".join(did_you_mean(p, list(specs)) for p in unknown)
        raise UsageError(f"unknown policy {', '.join(map(repr, unknown))}{hints}; available: {', '.join(specs)}")


def _check_fit(env_ids: Sequence[str], policies: Sequence[str], specs: dict[str, Any], *, chosen: bool) -> None:
    """Every policy must fit every env: say which do, and the --policy that would run, instead of
    failing mid-episode. ``chosen``: the user named the policies (else they are the defaults)."""
    misfits = {name: [e for e in env_ids if not specs[name].fits(e)] for name in policies}
    misfits = {name: envs for name, envs in misfits.items() if envs}
    if not misfits:
        return
    fit_all = [p for p, spec in specs.items() if all(spec.fits(e) for e in env_ids)]
    what = "policies that fit it" if len(env_ids) == 1 else "policies that fit every env asked for"
    problems = []
    for name, envs in misfits.items():
        own = f" (it fits {', '.join(specs[name].env_ids)})" if specs[name].env_ids else ""
        problems.append(f"policy {name!r} does not fit {', '.join(envs)}{own}")
    keep = [p for p in policies if p not in misfits] or fit_all[:1]
    hint = f"run with --policy {' '.join(keep)}" if keep else "no named policy fits every env asked for"
    if not chosen:
        hint += f" (--policy defaults to {' '.join(DEFAULT_POLICIES)})"
    elif keep:
        hint += ", or pass --env with envs the policy fits"
    raise UsageError(f"{'; '.join(problems)}; {what}: {', '.join(fit_all) or 'none'}; {hint}")


def _cases(args: argparse.Namespace, kwargs: dict[str, Any]) -> list[EnvCase]:
    """The run's env x instance cases: --split, --instances, --sizes, else each REALM id's quick split."""
    try:
        return select(args.env, split=args.split, instances=args.instances, sizes=args.sizes, env_kwargs=kwargs)
    except SplitError as exc:
        raise UsageError(str(exc)) from None


def _custom_policies(names: Sequence[str]) -> dict[str, Any]:
    """The specs of the --policy names that are your own (``module:factory``, ``sb3:PATH``),
    imported or loaded now, so that a wrong name or file is one line before anything runs."""
    try:
        return custom_specs(n for n in names if is_custom(n))
    except CustomPolicyError as exc:
        raise UsageError(str(exc)) from None


def _check_models(cases: Sequence[EnvCase], policies: dict[str, Any]) -> None:
    """A saved model must fit every instance of the run (its spaces), not just the first."""
    try:
        check_cases(cases, policies)
    except CustomPolicyError as exc:
        raise UsageError(str(exc)) from None


def _preflight(cases: Sequence[EnvCase], policies: dict[str, NamedPolicy]) -> None:
    """Make each env once (on its first case's instance) and build each policy on it, so that a
    wrong keyword or an unconfigured policy is a one-line error before any episode runs."""
    firsts: dict[str, EnvCase] = {}
    for case in cases:
        firsts.setdefault(case.env_id, case)
    for env_id, case in firsts.items():
        kwargs = dict(case.kwargs)
        shown = f" with {json.dumps(kwargs)}" if kwargs else ""
        try:
            env = gym.make(env_id, **kwargs)
        except USER_ERRORS as exc:
            raise UsageError(f"cannot make {env_id}{shown}: {_message(exc)}") from None
        try:
            for name, factory in policies.items():
                try:
                    factory(env)
                except USER_ERRORS as exc:
                    raise UsageError(f"policy {name!r} cannot run on {env_id}: {_message(exc)}") from None
        finally:
            env.close()


def _finish(report: Any, args: argparse.Namespace) -> bool:
    """Write the report (and the plot) when --out is given, then print it, legend included
    (what report.md holds): writing first, so that a reader who stops reading loses nothing.
    False when the reports could not be written (a full disk): said on one line, the episodes
    kept, the table still printed."""
    written = []
    if args.out:
        try:
            paths = report.write(args.out)
            written = [f"wrote {paths['json']} and {paths['markdown']}"]
            if args.plot and report.results:
                written.append(f"wrote {report.plot(Path(args.out) / 'report.png')}")
        except OSError as exc:
            print(f"crab-gym {args.command}: cannot write the reports into {args.out}: {exc.strerror or exc}; "
                  f"the episodes are kept in {Path(args.out) / FILENAME} (`crab-gym report {args.out}` writes the "
                  "reports once there is room)", file=sys.stderr)
            print(_shown_report(report, args))
            return False
    print(_shown_report(report, args))
    for line in written:
        print(line)
    return True


def _shown_report(report: Any, args: argparse.Namespace) -> str:
    """The printed report: on a terminal (with rich) the summary table fitted to the screen and
    a line saying where the legend is (``--legend`` prints it); piped, the Markdown of
    report.md, legend included, as scripts read it."""
    if not (sys.stdout.isatty() and rich_available()):
        return report.to_markdown()
    text = report.to_terminal(color=True)
    return text + "\n" + report.legend_markdown() if args.legend else text


def _backend(args: argparse.Namespace, specs: dict[str, Any]) -> str:
    """ray when asked; else serial for one worker, threads when every policy waits on a
    server (LLM), processes otherwise."""
    if args.backend == "ray":
        return "ray"
    if (args.workers or 1) == 1:
        return "serial"
    return "thread" if all(specs[p].io_bound for p in args.policy) else "process"


def _policy_options(args: argparse.Namespace, specs: dict[str, Any], backend: str) -> dict[str, dict[str, Any]]:
    """Run settings for the I/O-bound policies: --max-rps, split over the processes when each
    has its own limiter (threads of one process share one)."""
    io_bound = [p for p in args.policy if specs[p].io_bound]
    if args.max_rps is None:
        return {}
    if not io_bound:
        raise UsageError("--max-rps paces requests to a model server: it needs an LLM policy (--policy llm)")
    processes = 1 if backend in ("serial", "thread") else args.workers
    if processes is None:
        raise UsageError("--max-rps with --backend ray needs --workers N (the rate is shared out among the N workers)")
    return {p: {"max_rps": args.max_rps / processes} for p in io_bound}


def _run_policies(args: argparse.Namespace, specs: dict[str, Any], options: dict[str, dict[str, Any]]
                  ) -> dict[str, NamedPolicy]:
    """The run's policies by the name its episodes carry: an LLM policy once per model, named
    ``<policy>:<model>`` (so episodes of two models never mix, and the report has a row per model)."""
    llm = [p for p in args.policy if specs[p].io_bound]
    if args.model and not llm:
        raise UsageError("--model names the model of an LLM policy: add --policy llm (or multi-llm)")
    models = list(dict.fromkeys(args.model or ([os.environ[MODEL_ENV]] if os.environ.get(MODEL_ENV) else [])))
    policies: dict[str, NamedPolicy] = {}
    for name in args.policy:
        opts = dict(options.get(name, {}))
        if name in llm and models:
            policies.update({f"{name}:{m}": NamedPolicy(name, {**opts, "model": m}) for m in models})
        elif is_custom(name):  # your own policy: its spec's factory is picklable already
            policies[name] = specs[name].factory
        else:  # no model anywhere: building the agent says how to name one
            policies[name] = NamedPolicy(name, opts)
    return policies


def _baselines(policies: Iterable[str] = ()) -> frozenset[str]:
    """The named policies that are no LLM, and the saved models (``sb3:PATH``) among ``policies``:
    any other policy in a report (an agent an MCP client played, whose tokens nobody counted; your
    ``module:factory``, which may be one) gets a row in the LLM table."""
    models = {p for p in policies if p.startswith(SB3_PREFIX)}
    return frozenset(name for name, spec in policy_specs().items() if not spec.io_bound) | models


def _prices(args: argparse.Namespace) -> Prices:
    """--price-in / --price-out; both or neither (a cost needs the two)."""
    if bool(args.price_in) != bool(args.price_out):
        given, missing = ("--price-in", "--price-out") if args.price_in else ("--price-out", "--price-in")
        raise UsageError(f"{given} needs {missing} too (prices per million tokens; 0 for a local model)")
    try:
        return Prices.parse(args.price_in, args.price_out)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _note(command: str) -> Any:
    return lambda message: print(f"crab-gym {command}: {message}", file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    if args.rerun:
        return _rerun(args)
    kwargs = _check_run_args(args)
    for env_id in args.env:  # "my_module:Realm-P12-v0" may add a family, and with it policies
        _import_env_module(env_id)
    chosen = args.policy is not None
    args.policy = list(args.policy) if chosen else list(DEFAULT_POLICIES)
    specs = {**policy_specs(), **_custom_policies(args.policy)}
    _check_names(args.env, args.policy, specs)
    _check_fit(args.env, args.policy, specs, chosen=chosen)
    backend = _backend(args, specs)
    prices = _prices(args)
    policies = _run_policies(args, specs, _policy_options(args, specs, backend))
    cases = _cases(args, kwargs)
    _check_models(cases, policies)
    _preflight(cases, policies)

    bench = Benchmark(
        cases,
        seeds=range(args.seed, args.seed + args.episodes),
        max_steps=args.max_steps,
        workers=args.workers,
        backend=backend,
        address=args.address,
    )
    card = _card(args, cases, policies, prices)
    if args.out:  # written first: a killed run's `crab-gym report` still has its card
        write_card(args.out, card)
    try:
        report = _run_or_say(bench, policies, args)
        if report is None:
            return 1
    except EpisodeStoreConflict as exc:
        raise UsageError(str(exc)) from None
    except EpisodeStoreError as exc:
        raise UsageError(f"{exc} (fix or remove that line, or use another --out)") from None
    except KeyboardInterrupt as exc:
        partial = getattr(exc, "partial_report", None)
        if partial is not None:
            partial.prices, partial.baselines, partial.card = prices, _baselines(policies), card
            _finish(partial, args)
        print(f"crab-gym run: interrupted after {len(partial.results) if partial else 0} episode(s)", file=sys.stderr)
        return 130
    report.prices, report.baselines, report.card = prices, _baselines(policies), card
    if not _finish(report, args):
        return 1
    if report.n_errors:
        tracebacks = (
            f"their tracebacks are in {Path(args.out) / 'report.json'}" if args.out
            else "add --out DIR to keep their tracebacks in report.json"
        )
        retry = (f"; rerun with --retry-errors to run the {report.n_infra_errors} infrastructure failure(s) again"
                 if args.out and report.n_infra_errors else "")
        print(
            f"crab-gym run: {report.n_errors} of {len(report.results)} episodes raised an error "
            f"(listed under Errors above; {tracebacks}{retry})",
            file=sys.stderr,
        )
        return 1
    return 0


def _run_or_say(bench: Benchmark, policies: dict[str, Any], args: argparse.Namespace) -> Any:
    """``bench.run``; a write that fails (a full disk) is one line and None: the episodes
    finished before it are in episodes.jsonl, and the same command resumes from them."""
    try:
        return bench.run(policies, progress=not args.quiet, out=args.out or None, log=_note("run"),
                         retry_errors=args.retry_errors)
    except OSError as exc:
        if not args.out or exc.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise
        print(f"crab-gym run: cannot write into {args.out}: {exc.strerror}; the episodes finished before it are "
              f"kept in {Path(args.out) / FILENAME}: run the same command again once there is room, it resumes",
              file=sys.stderr)
        return None


def _card(args: argparse.Namespace, cases: Sequence[EnvCase], policies: dict[str, NamedPolicy],
          prices: Prices) -> dict[str, Any]:
    """The run's card (split, instances, seeds, budgets, tracks, model, versions, command)."""
    models = {name: str(p.options["model"]) for name, p in policies.items() if "model" in getattr(p, "options", {})}
    seeds = range(args.seed, args.seed + args.episodes)
    return run_card(getattr(args, "argv", []), cases, seeds, args.max_steps, list(policies), args.track, models,
                    prices).to_json()


def _rerun(args: argparse.Namespace) -> int:
    """``--rerun report.json``: run the command on the report's card again."""
    try:
        argv = rerun_argv(args.rerun, getattr(args, "argv", []))
    except RerunError as exc:
        raise UsageError(str(exc)) from None
    again = build_parser().parse_args(argv)
    again.argv = argv
    print(f"crab-gym run: rerunning `crab-gym {' '.join(argv)}`", file=sys.stderr)
    return cmd_run(again)


# ====================================================================== report
def cmd_report(args: argparse.Namespace) -> int:
    """Rebuild report.json, report.md (and report.png) from DIR/episodes.jsonl."""
    _check_plot(args)
    prices = _prices(args)
    if Path(args.dir).is_file():
        raise UsageError(f"{args.dir} is a file: give the --out directory of a `crab-gym run`")
    store = EpisodeStore(args.dir)
    if not store.exists():
        raise UsageError(f"{Path(args.dir) / FILENAME} does not exist: `crab-gym run ... --out {args.dir}` writes it")
    try:
        results = store.load()
    except EpisodeStoreError as exc:
        raise UsageError(f"{exc} (fix or remove that line)") from None
    for note in store.notes:
        _note("report")(note)
    args.out = args.dir
    report = BenchmarkReport(results, prices=prices, baselines=_baselines(r.policy for r in results),
                             card=read_card(args.dir))
    if not _finish(report, args):
        return 1
    if args.compare:
        _compare(results, args.compare, Path(args.dir))
    return 0


def _compare(results: list[Any], against: str, out: Path) -> None:
    """``--compare reference`` (the shipped table) or ``--compare FILE`` (a results.json)."""
    try:
        reference = load_reference(None if against == "reference" else against)
    except (OSError, ValueError) as exc:
        raise UsageError(f"--compare {against}: {_one_line(str(exc))}") from None
    rows = compare(results, reference)
    lines = compare_markdown(rows, SPLIT)
    (out / "compare.json").write_text(json.dumps(rows, indent=2))
    (out / "compare.md").write_text("\n".join(lines))
    print("\n".join(lines))
    print(f"wrote {out / 'compare.json'} and {out / 'compare.md'}")


# ====================================================================== parser
def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be above 0, got {text}")
    return value


def _whole_number(text: str, least: int, rule: str) -> int:
    """``text`` as an int of at least ``least``; else the argparse error that says ``rule``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"{rule}, got {value}")
    return value


def _seed(text: str) -> int:
    return _whole_number(text, 0, "must be 0 or more (seeds are non-negative)")


def _positive_int(text: str) -> int:
    return _whole_number(text, 1, "must be at least 1")


def build_parser() -> argparse.ArgumentParser:
    """The ``crab-gym`` parser: one sub-command a helper below."""
    parser = _Parser(prog="crab-gym", description="List envs, run baseline policies on them, serve a desktop.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="{list,run,report,score,train,serve,mcp,results}")
    _add_list_parser(sub)
    _add_run_parser(sub)
    _add_report_parser(sub)
    add_score_parser(sub)  # score a plan file: the checker's verdict and the env's metrics
    add_train_parser(sub)  # train a dispatcher (the rl extra is imported when it runs)
    # The serve command imports no extra until it runs (the HTTP stack is the desktop extra).
    add_serve_parser(sub)
    add_mcp_parser(sub)  # the MCP server; the SDK (the mcp extra) is imported when it runs
    add_results_parser(sub)  # the reference results table
    return parser


def _add_list_parser(sub: Any) -> None:
    """``crab-gym list``: ids and policies."""
    p_list = sub.add_parser(
        "list", help="list the env ids and baseline policies", description="List the env ids and the named "
        "baseline policies, with the envs each policy fits."
    )
    p_list.add_argument("--splits", action="store_true",
                        help="list each REALM env's instance splits and their sizes instead")
    p_list.set_defaults(func=cmd_list)


def _add_run_parser(sub: Any) -> None:
    """``crab-gym run``: what to run (envs, policies, episodes), then how (output, workers, backend)."""
    p_run = sub.add_parser(
        "run",
        help="run baseline policies on envs and print a report",
        description="Run each policy on each env for --episodes seeded episodes and print a Markdown "
        "report (means per env x policy). An episode that raises is recorded with its error and the run "
        "goes on; the exit code is then 1. Usage mistakes exit with code 2 before anything runs.",
        epilog="exit codes: 0 every episode ran; 1 some episode raised an error (listed in the report); "
        "2 usage mistake (one line on stderr, nothing ran); 130 interrupted (finished episodes reported).",
    )
    _add_run_selection(p_run)
    _add_run_execution(p_run)
    p_run.set_defaults(func=cmd_run)


def _add_run_selection(p_run: argparse.ArgumentParser) -> None:
    """The options of ``run`` that choose envs, policies, seeds and episode lengths."""
    p_run.add_argument(
        "--env", nargs="+", default=DEFAULT_ENVS, metavar="ID",
        help="env ids to run (default: every REALM env; `crab-gym list` shows them)",
    )
    p_run.add_argument(
        "--env-kwargs", default="", metavar="JSON",
        help='keyword arguments for gym.make as a JSON object, applied to every --env, '
             'e.g. \'{"instance": "ft06"}\' (default: none)',
    )
    p_run.add_argument(
        "--policy", nargs="+", default=None, metavar="NAME",
        help="policy names; each must fit every --env (`crab-gym list` shows which fit; default: random oracle); "
             "also your own: module:factory (an importable factory(env) -> policy) or sb3:FILE.zip (a saved "
             "MaskablePPO / PPO model; sb3:FILE.zip?stochastic samples)",
    )
    p_run.add_argument("--split", default=None, metavar="NAME|DIR",
                       help="the instances to play: a split of each env (dev, test, quick, a size class such as "
                            "small, all; P11 also ft, la, ta, ...: `crab-gym list --splits`) or a folder of "
                            "instance files (default: quick, a few dev instances per REALM env)")
    p_run.add_argument("--instances", nargs="+", default=None, metavar="NAME",
                       help="play these instances (shipped names or files) instead of a split")
    p_run.add_argument("--sizes", nargs="+", default=None, metavar="SIZE",
                       help="keep the instances of these size classes (small medium large; P11: 15x15 ...)")
    p_run.add_argument("--episodes", type=_positive_int, default=3, metavar="N",
                       help="episodes per instance, env and policy, one per seed (default: %(default)s)")
    p_run.add_argument("--seed", type=_seed, default=0,
                       help="seed of the first episode; episode i uses seed+i (default: %(default)s)")
    p_run.add_argument("--max-steps", type=_positive_int, default=10_000, metavar="N",
                       help="cut (truncate) an episode after N steps (multi-llm: rounds); a cut episode has no plan "
                            "and counts 0 on the REALM metrics (default: %(default)s)")
    p_run.add_argument("--track", choices=TRACKS, default="solver-free",
                       help="the evaluation track of your policies, on the report's card: may they call a solver "
                            "(docs/evaluation.md)? The oracle is always solver-allowed (default: %(default)s)")
    p_run.add_argument("--rerun", default=None, metavar="REPORT",
                       help="run again the command on the card of REPORT (a report.json or its --out directory); "
                            "beside it give only --out, --workers, --quiet, --backend, --address, --retry-errors")
    p_run.add_argument("--model", nargs="+", default=None, metavar="NAME",
                       help=f"LLM policies: the model(s) to ask; each runs every episode, as policy "
                            f"<policy>:<model> (one report row per model x env; default: ${MODEL_ENV})")


def _add_run_execution(p_run: argparse.ArgumentParser) -> None:
    """The options of ``run`` that say where the results go and how episodes are spread."""
    p_run.add_argument("--out", default="", metavar="DIR",
                       help="directory for episodes.jsonl (each episode appended as it finishes; "
                            "rerunning the command resumes from it) and report.json / report.md, rebuilt "
                            "from it (written even when episodes failed; default: print only)")
    p_run.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                       help="run N episodes at a time: worker processes, or for LLM policies N concurrent "
                            "requests from one process; with --backend ray, at most N tasks in flight "
                            "(default: 1; Ray: the cluster's CPUs). The report is the same as a serial run's")
    p_run.add_argument("--backend", choices=("local", "ray"), default="local",
                       help="local: this machine (default); ray: episodes as Ray tasks, on a local "
                            "cluster or the one --address names (needs the ray extra)")
    p_run.add_argument("--address", default=None, metavar="ADDR",
                       help="the Ray cluster to join, e.g. auto (on a node where `ray start` ran) or "
                            "ray://HOST:10001 (needs --backend ray; default: start a local cluster)")
    p_run.add_argument("--retry-errors", action="store_true",
                       help="with --out: run again the stored episodes that failed on infrastructure (the env, "
                            "a worker or the model API raised) instead of resuming them; the new record replaces "
                            "the old in the report (default: resume every stored episode)")
    p_run.add_argument("--max-rps", type=_positive_float, default=None, metavar="R",
                       help="LLM policies: at most R requests per second to the model server, over "
                            "all workers (default: no limit)")
    _add_price_options(p_run)
    p_run.add_argument("--legend", action="store_true",
                       help="on a terminal, also print what each report column means (report.md always has it)")
    p_run.add_argument("--plot", action="store_true",
                       help="also write DIR/report.png (needs --out and the viz extra)")
    p_run.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_price_options(parser: argparse.ArgumentParser) -> None:
    """--price-in / --price-out: the LLM table's cost column."""
    for side, tokens in (("in", "prompt"), ("out", "completion")):
        parser.add_argument(f"--price-{side}", nargs="+", default=None, metavar="PRICE",
                            help=f"LLM policies: price of a million {tokens} tokens, for the cost column; "
                                 "PRICE for every model, MODEL=PRICE for one (give both --price-in and --price-out)")


def _add_report_parser(sub: Any) -> None:
    """``crab-gym report``: rebuild a run's report from its episodes."""
    p_report = sub.add_parser(
        "report", help="rebuild a run's report from DIR/episodes.jsonl",
        description="Rebuild report.json and report.md (and report.png with --plot) in DIR from "
        "DIR/episodes.jsonl, and print the table. A torn last line is dropped with a note.",
    )
    p_report.add_argument("dir", metavar="DIR", help="the --out directory of a `crab-gym run`")
    p_report.add_argument("--plot", action="store_true", help="also write DIR/report.png (needs the viz extra)")
    p_report.add_argument("--legend", action="store_true",
                          help="on a terminal, also print what each column means (report.md always has it)")
    p_report.add_argument("--compare", default=None, metavar="reference|FILE",
                          help="compare the run with the shipped reference results (or a results.json), paired "
                               "by instance, with 95 %% intervals of the differences; writes DIR/compare.md")
    _add_price_options(p_report)
    p_report.set_defaults(func=cmd_report)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; returns the exit code (argparse's own exits included)."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # --help (0) or a parse error (2, already printed)
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    args.argv = words  # the command, for the run's card
    try:
        with one_line_warnings():
            code = int(args.func(args) or 0)
        sys.stdout.flush()  # a reader that went away shows here, not in the interpreter's last flush
        return code
    except (UsageError, MissingExtraError) as exc:  # e.g. `serve` without the desktop extra
        print(f"crab-gym {args.command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `crab-gym run | head`: the reader has gone; nothing left to say
        _silence_stdout()
        return BROKEN_PIPE


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """Warnings (a repaired instance file, a short token) as one line each, ``crab-gym:
    warning: ...``: what a user reads, not the source line that raised it."""
    shown = warnings.formatwarning

    def one_line(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> str:
        return f"crab-gym: warning: {_one_line(str(message))}\n"

    warnings.formatwarning = one_line
    try:
        yield
    finally:
        warnings.formatwarning = shown


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is no real file (captured): nothing to flush
        pass


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
