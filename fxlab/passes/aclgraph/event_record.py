"""TorchAir's ``apply_event_record``: ``torchair.ops.wait(tensors)`` waits for events
recorded where those tensors are made.

A ``wait`` node (``air::wait`` / ``npugraph_ex::wait``) lists the tensors whose producers
another stream must wait for. For each listed tensor that is not already a ``record``,
TorchAir puts a ``record()`` right after the tensor's producer (one per producer, shared by
every ``wait`` naming it) and makes the ``wait`` list the ``record`` nodes instead: the
generated capture code turns each into ``event.record(stream)`` / ``event.wait(stream)``.
"""

from __future__ import annotations

import torch
import torch.fx as fx

import fxlab.npu_streams  # noqa: F401 - defines record / wait where TorchAir has not
from fxlab.passes.infra import PassResult


def apply_event_record(gm: fx.GraphModule, namespace: str = "air") -> PassResult[fx.GraphModule]:
    wait_name, record_name = f"{namespace}.wait.default", f"{namespace}.record.default"
    record_op = getattr(torch.ops, namespace).record.default
    records: dict[fx.Node, fx.Node] = {}
    changed = []
    for node in list(gm.graph.nodes):
        if str(node.target) != wait_name:
            continue
        waited = []
        for tensor in node.args[0]:
            if str(tensor.target) == record_name:
                waited.append(tensor)
                continue
            if tensor not in records:
                with gm.graph.inserting_after(tensor):
                    records[tensor] = gm.graph.call_function(record_op, args=())
            waited.append(records[tensor])
        if waited != list(node.args[0]):
            changed.append(node.name)
        node.args = (waited,)
    if records:
        gm.graph.lint()
    notes = [f"{record.name} records an event after {tensor.name}" for tensor, record in records.items()]
    return PassResult(gm, bool(records), changed_nodes=changed, notes=notes)
