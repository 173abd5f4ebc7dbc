"""The CRAB vocabulary: Action, Evaluator, GraphEvaluator, Environment, Task, Benchmark."""

from crab_gym.core.action import Action, ActionArgumentError, CompositionError, action
from crab_gym.core.benchmark import Benchmark, BenchmarkReport, EpisodeResult
from crab_gym.core.environment import Environment, LocalBackend
from crab_gym.core.evaluator import Evaluator, evaluator
from crab_gym.core.graph import GraphEvaluator
from crab_gym.core.spaces import ActionCodec, UnsupportedParameterError
from crab_gym.core.task import Task

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
