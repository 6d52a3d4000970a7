"""The names of the stages a trace records for each Dynamo graph, in order.

Every room spells a stage through these constants (the pipeline, the saved trace's file
names, the views, the diffs). A new stage is one more name here, placed in
:data:`FX_STAGES` where it comes in the pipeline (``capture/stages.py`` says how it is made).
"""

from __future__ import annotations

DYNAMO = "dynamo"  # the graph Dynamo captured (torch level)
ATEN = "aten"  # ATen ops before functionalization
FUNCTIONAL = "functional"  # after functionalization: what TorchAir's compiler receives
REINPLACED = "reinplaced"  # the functional graph re-inplaced
PRE_GE = "pre_ge"  # after TorchAir's FX passes before conversion
ASCEND_IR = "ascend_ir"  # the GE graph (not an FX graph)

# The FX stages, in pipeline order.
FX_STAGES: tuple[str, ...] = (DYNAMO, ATEN, FUNCTIONAL, REINPLACED, PRE_GE)
# Every stage a trace may record.
ALL_STAGES: tuple[str, ...] = (*FX_STAGES, ASCEND_IR)
