"""Where the parts of REALM P10 (the global GPU supply chain) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits, numbered

P10_SPLITS = Splits(
    dev=numbered("p10", small=(0, 3, 6), medium=(0, 3, 6), large=(0, 3), late=(0,)),
    test=numbered("p10", small=(1, 2, 4, 5), medium=(1, 2, 4, 5), large=(1, 2, 4, 5), late=(1, 2)),
    quick=numbered("p10", small=(0, 3), medium=(0,)),
    description=("p10_<size>_<k> is generate_p10(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P10 = ProblemSpec(
    problem="P10", title="global supply chain", package=__package__,
    env="env:SupplyChainEnv", names="formats:shipped_p10_names", load="formats:load_p10",
    generate="generator:generate_p10", check="checker:check", reference="references:reference_p10", viewer="render:VIEWER",
    upstream="formats:from_upstream_p10", upstream_keys=("suppliers", "facilities", "delivery_deadlines"),
    upstream_marks=("delivery_deadlines",),
    heuristics=(NamedHeuristic(
        "p10_greedy", "heuristics:greedy_action",
        "pushes units through the stages, then orders the scarcest component from the cheapest timely supplier",
        style="action"),),
    multiagent=True, disruptions=True, splits=P10_SPLITS, docs="docs/supply_chain.md", tests="tests/supply_chain",
    name_fields=("components[].name", "suppliers[].supplier_id", "suppliers[].location", "facilities[].location"),
    kept_names=("assembly", "testing", "packaging", "machine_breakdown", "resource_shortage"),
)

SPECS = (P10,)
