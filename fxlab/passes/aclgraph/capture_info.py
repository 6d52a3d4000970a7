"""What TorchAir's aclgraph passes learn about a graph for the capture code they generate:
the events they created, the user streams and where their regions start and end, and
the graph inputs (filled by :mod:`~fxlab.passes.aclgraph.pipeline` as TorchAir's
converter walk fills its ``AclGraphCacheInfo``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Key in a placeholder's meta: a graph input at a fixed address (a parameter or buffer),
# which TorchAir's backend marks ``_torchair_is_parameter`` and its ACL graph reads in
# place instead of copying (set by fxlab.capture.stages as TorchAir's backend decides it).
STATIC_INPUT = "fxlab.static_input"


@dataclass
class CaptureInfo:
    graph_name: str  # TorchAir's "graph_<n>", n counting compiled graphs from 1
    namespace: str = "air"  # the scope / event operators' namespace: air (TorchAir) or npugraph_ex
    tagged_event_names: list[str] = field(default_factory=list)
    user_stream_labels: list[str] = field(default_factory=list)  # a set in TorchAir; kept in first-seen order
    user_stream_info: dict[str, dict[str, int]] = field(default_factory=dict)
    stream_enter_nodes: dict[str, str] = field(default_factory=dict)  # scope_enter node name -> stream label
    stream_exit_nodes: list[str] = field(default_factory=list)
    mutated_user_inputs: list[str] = field(default_factory=list)
    input_names: list[str] = field(default_factory=list)
    meta_inputs: list[Any] = field(default_factory=list)
    read_inputs: list[bool] = field(default_factory=list)  # by input: read by a node, other than as a length the replay updates
    user_inputs: dict[str, int] = field(default_factory=dict)  # placeholder -> index, non-parameters
    parameter_inputs: list[int] = field(default_factory=list)
    userinput_ref_with_output: dict[int, list[int]] = field(default_factory=dict)
    ops_update_rulers: dict[str, dict[Any, list[tuple[str, Any]]]] = field(default_factory=dict)  # what the replay updates, by op
    updated_ops_param: dict[str, list[Any]] = field(default_factory=dict)

    def add_stream_label(self, label: str) -> None:
        if label not in self.user_stream_labels:
            self.user_stream_labels.append(label)

    def add_event(self, tag: str) -> None:
        self.tagged_event_names.append(tag)
