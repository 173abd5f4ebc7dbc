"""Where the parts of REALM P7 (disaster relief) live: the problem's record in the index."""

from crab_gym.envs.realm.common.problem_spec import NamedHeuristic, ProblemSpec
from crab_gym.envs.realm.common.splits import Splits, numbered

P7_SPLITS = Splits(
    dev=numbered("p7", small=(0, 3, 6), medium=(0, 3, 6), large=(0, 3)),
    test=numbered("p7", small=(1, 2, 4, 5), medium=(1, 2, 4, 5), large=(1, 2, 4, 5)),
    quick=numbered("p7", small=(0, 3), medium=(0,)),
    description=("p7_<size>_<k> is generate_p7(size, seed=k); in each size class"
                 " the 1st, 4th, 7th, ... instance (by k) is dev, the others test; quick: the first dev instances of the smaller classes"),
)

P7 = ProblemSpec(
    problem="P7", title="disaster relief", package=__package__,
    env="env:DisasterReliefEnv", names="formats:shipped_p7_names", load="formats:load_p7",
    generate="generator:generate_p7", check="checker:check", reference="references:reference_p7", viewer="render:VIEWER",
    upstream="formats:from_upstream_p7", upstream_keys=("regions", "resources"),
    upstream_marks=("resources",),
    heuristics=(NamedHeuristic("p7_greedy", "heuristics:GreedyReliefPolicy",
                               "each free vehicle sends the load that earns most severity-weighted need met now"),),
    multiagent=True, disruptions=True, splits=P7_SPLITS, docs="docs/disaster_relief.md", tests="tests/disaster_relief",
    name_fields=("regions[].id", "vehicles[].id"),
    kept_names=("medical_supplies", "food", "water", "shelter", "doctors", "nurses", "logistics", "critical", "urgent",
                "normal", "helicopter", "truck", "boat", "drone", "resource_shortage", "weather_event", "transport_blocked"),
)

SPECS = (P7,)
