"""Printing a trace's views: every stage of every graph (with the passes that made it and
the user's patterns), the Ascend IR and the conversion table, then the summary (``fxlab
trace``, and each rank of ``fxlab trace --nproc``)."""

from __future__ import annotations

from typing import Any

from fxlab.cli import console
from fxlab.stage_names import ACLGRAPH, GE_GRAPH_PASSES, PRE_GE


def print_views(trace: Any, summary_only: bool = False, out: Any = None, with_summary: bool = True) -> None:
    # lazy: the views import torch (through the trace's types): imported when a command
    # prints, not when the command line starts.
    from fxlab.viz import trace_views
    from fxlab.viz.pass_views import passes_view, patterns_view, torchair_aclgraph_line

    out = out or console.out()
    # Every view lays its lines out within the console's width (panels and tables do), so
    # rich's cropping of each printed line would change nothing; it costs a third of the
    # printing of a large graph.
    if not summary_only:
        for graph in trace.graphs:
            for stage in graph.stages.values():
                out.print(trace_views.stage_view(graph, stage), crop=False)
                if graph.pass_records(stage.name):
                    out.print(passes_view(graph, stage.name), crop=False)
                if stage.name in (PRE_GE, ACLGRAPH) and graph.patterns:
                    out.print(patterns_view(graph), crop=False)
                line = torchair_aclgraph_line(graph) if stage.name == ACLGRAPH else None
                if line is not None:
                    out.print(line, crop=False)
            if graph.ir is not None:
                out.print(trace_views.ir_view(graph), crop=False)
                if graph.pass_records(GE_GRAPH_PASSES):
                    out.print(passes_view(graph, GE_GRAPH_PASSES), crop=False)
                out.print(trace_views.conversion_view(graph), crop=False)
    if with_summary:
        out.print(trace_views.summary_view(trace), crop=False)
