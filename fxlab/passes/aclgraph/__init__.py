"""TorchAir's aclgraph path (``reduce-overhead``, and torch_npu's standalone ``npugraph_ex``
backend): the FX passes of its ``optimize_graph_without_runtime``, one per module, the
capture code it generates, and :mod:`~fxlab.passes.aclgraph.pipeline`, which runs them
after ``_optimize_fx`` in TorchAir's order to give the ``aclgraph`` stage."""
