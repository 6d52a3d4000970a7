"""The names of the stages a trace records for each Dynamo graph, in order.

Every room spells a stage through these constants (the pipeline, the saved trace's file
names, the views, the diffs). A new stage is one more name here, placed in
:data:`FX_STAGES` where it comes in the pipeline (``capture/stages.py`` says how it is made).
"""

from __future__ import annotations

DYNAMO = "dynamo"  # the graph Dynamo captured (torch level)
ATEN = "aten"  # ATen ops before functionalization
FUNCTIONAL = "functional"  # after functionalization: what TorchAir's compiler receives
PRE_GE = "pre_ge"  # after TorchAir's FX passes before conversion (max-autotune)
ACLGRAPH = "aclgraph"  # after TorchAir's aclgraph passes (reduce-overhead, npugraph_ex)
ASCEND_IR = "ascend_ir"  # the GE graph (not an FX graph)

# The FX stages, in pipeline order.
FX_STAGES: tuple[str, ...] = (DYNAMO, ATEN, FUNCTIONAL, PRE_GE, ACLGRAPH)
# Every stage a trace may record.
ALL_STAGES: tuple[str, ...] = (*FX_STAGES, ASCEND_IR)

# The pass lists a graph records, each named for what it makes: the ``pre_ge`` and
# ``aclgraph`` stages (TorchAir's FX passes, the user's among them), and the GE graph
# after conversion (TorchAir's GE-graph passes), in the order they run.
GE_GRAPH_PASSES = "ge_graph"
PASS_LISTS: tuple[str, ...] = (PRE_GE, GE_GRAPH_PASSES, ACLGRAPH)
