"""The CRAB vocabulary: Action, Evaluator, GraphEvaluator, Environment, Task, Benchmark.

Benchmark is named here and built in :mod:`crab_gym.evaluation`, the runner, which sits below
the vocabulary (it plays any Gymnasium env and imports nothing else of crab_gym).
"""

from crab_gym.core.action import Action, ActionArgumentError, CompositionError, action
from crab_gym.core.environment import Environment, LocalBackend
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.core.graph import GraphEvaluator
from crab_gym.core.spaces import ActionCodec, UnsupportedParameterError
from crab_gym.core.task import Task
from crab_gym.evaluation.benchmark import Benchmark, BenchmarkReport, EpisodeResult

__all__ = [
    "Action",
    "Benchmark",
    "BenchmarkReport",
    "EpisodeResult",
    "ActionArgumentError",
    "ActionCodec",
    "CompositionError",
    "Environment",
    "Evaluator",
    "GraphEvaluator",
    "LocalBackend",
    "Task",
    "UnsupportedParameterError",
    "action",
    "evaluator",
]
