"""Printing a trace's views: every stage of every graph, the Ascend IR and the conversion
table, then the summary (``fxlab trace``, and each rank of ``fxlab trace --nproc``)."""

from __future__ import annotations

from typing import Any

from fxlab.cli import console
from fxlab.stage_names import PRE_GE


def print_views(trace: Any, trace_views: Any, summary_only: bool, out: Any = None, with_summary: bool = True) -> None:
    out = out or console.out()
    # Every view lays its lines out within the console's width (panels and tables do), so
    # rich's cropping of each printed line would change nothing; it costs a third of the
    # printing of a large graph.
    if not summary_only:
        for graph in trace.graphs:
            for stage in graph.stages.values():
                out.print(trace_views.stage_view(graph, stage), crop=False)
                if stage.name == PRE_GE and graph.pre_ge_passes:
                    out.print(trace_views.pre_ge_passes_view(graph), crop=False)
            if graph.ir is not None:
                out.print(trace_views.ir_view(graph), crop=False)
                out.print(trace_views.conversion_view(graph), crop=False)
    if with_summary:
        out.print(trace_views.summary_view(trace), crop=False)
