"""view_as_real / view_as_complex converters (complex RoPE)."""
from __future__ import annotations

import torch

from tests.passes.converters.lowering import lower, types


def test_view_as_complex_gathers_real_and_imaginary_parts():
    graph = lower(lambda x: torch.view_as_complex(x) * 2, torch.randn(3, 2))
    assert types(graph)[:7] == ["Const", "Const", "GatherV2", "Const", "Const", "GatherV2", "Complex"]
    assert all(op.attr_value("negative_index_support") for op in graph.ops_of_type("GatherV2"))


def test_view_as_real_packs_on_a_new_last_axis():
    graph = lower(lambda x: torch.view_as_real(x * 2), torch.randn(3, dtype=torch.complex64))
    assert types(graph)[-3:] == ["Real", "Imag", "Pack"] and graph.ops_of_type("Pack")[0].attr_value("axis") == -1
