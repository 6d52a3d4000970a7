"""The user's line of an FX node: the last frame of its stack trace, cached in its meta."""
from __future__ import annotations

import torch
import torch.fx as fx

from fxlab.source_lines import NO_FRAME, SOURCE_KEY, last_frame, node_source, parse_source

TRACE = """  File "/lib/torch/nn/module.py", line 1700, in _call_impl
    return forward_call(*args, **kwargs)
  File "/home/me/model.py", line 21, in forward
    y = x + 1
"""


def test_the_last_frame_with_its_code() -> None:
    assert last_frame(TRACE) == ("/home/me/model.py", 21, "y = x + 1")
    assert last_frame('  File "/m.py", line 3, in f') == ("/m.py", 3, None)
    assert last_frame("no frames here") == NO_FRAME
    assert last_frame('  File "/m.py", line three') == NO_FRAME


def test_a_nodes_source_is_parsed_once_and_read_from_its_meta_after() -> None:
    graph = fx.Graph()
    node = graph.call_function(torch.relu, (graph.placeholder("x"),))
    assert node_source(node) is None  # no stack trace
    node.meta["stack_trace"] = TRACE
    assert parse_source(node) == node_source(node) == "/home/me/model.py:21"
    node.meta[SOURCE_KEY] = "/cached.py:1"
    assert node_source(node) == "/cached.py:1" and parse_source(node) == "/home/me/model.py:21"
