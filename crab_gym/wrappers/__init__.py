"""Wrappers: disruption injection, LLM-agent adapter, trajectory logging, SB3 action masking,
renaming against memorisation (``ObfuscatedNames``, the REALM envs' ``obfuscate=`` keyword)."""

from crab_gym.envs.realm.common.obfuscation import ObfuscatedNames
from crab_gym.wrappers.discrete import DiscreteActions
from crab_gym.wrappers.disruption import DisruptionWrapper, RandomDisruptions
from crab_gym.wrappers.llm_adapter import LLMAdapter
from crab_gym.wrappers.minari_export import UnflattenableStepError, export_minari
from crab_gym.wrappers.tool_call_parsing import ToolCallParseError, parse_tool_call
from crab_gym.wrappers.trajectory import (
    ReplayReport,
    TornRecordWarning,
    Trajectory,
    TrajectoryLogger,
    read_trajectories,
    repair_torn_tail,
    replay,
)

__all__ = [
    "DiscreteActions",
    "DisruptionWrapper",
    "LLMAdapter",
    "ObfuscatedNames",
    "RandomDisruptions",
    "ReplayReport",
    "ToolCallParseError",
    "TornRecordWarning",
    "Trajectory",
    "TrajectoryLogger",
    "UnflattenableStepError",
    "export_minari",
    "parse_tool_call",
    "read_trajectories",
    "repair_torn_tail",
    "replay",
]
