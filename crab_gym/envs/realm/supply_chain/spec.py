"""Where the parts of REALM P10 (the global GPU supply chain) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits

P10_SPLITS = Splits(
    dev=(
        "p10_large_00", "p10_large_03", "p10_late_00", "p10_medium_00", "p10_medium_03",
        "p10_medium_06", "p10_small_00", "p10_small_03", "p10_small_06",
    ),
    test=(
        "p10_large_01", "p10_large_02", "p10_large_04", "p10_large_05", "p10_late_01",
        "p10_late_02", "p10_medium_01", "p10_medium_02", "p10_medium_04", "p10_medium_05",
        "p10_small_01", "p10_small_02", "p10_small_04", "p10_small_05",
    ),
    quick=(
        "p10_small_00", "p10_medium_00", "p10_small_03",
    ),
    description=("p10_<size>_<k> is generate_p10(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P10 = ProblemSpec(
    problem="P10", title="global supply chain", package=__package__,
    env="env:SupplyChainEnv", names="formats:shipped_p10_names", load="formats:load_p10",
    generate="generator:generate_p10", check="check:check", reference="references:reference_p10", viewer="render:VIEWER",
    upstream="formats:from_upstream_p10", upstream_keys=("suppliers", "facilities", "delivery_deadlines"),
    upstream_marks=("delivery_deadlines",),
    heuristics=(NamedHeuristic(
        "p10_greedy", "heuristics:greedy_action",
        "pushes units through the stages, then orders the scarcest component from the cheapest timely supplier",
        style="action"),),
    multiagent=True, disruptions=True, splits=P10_SPLITS, docs="docs/supply_chain.md", tests="tests/supply_chain",
)

SPECS = (P10,)
