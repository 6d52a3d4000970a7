"""_fft_c2c: TorchAir's permute / FFT / normalise / permute-back sequence, against eager."""
from __future__ import annotations

import torch

from tests.functional_graphs import functional_graph
from fxlab.ir.execute import execute
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from tests.passes.converters.lowering import types

TO_FLOAT = ["Real", "Imag", "Pack"]
TO_COMPLEX = ["Const", "Const", "SplitV", "Squeeze", "Squeeze", "Cast", "Cast", "Complex"]


def _run(fn, x):
    graph = convert_to_ascend_ir(functional_graph(fn, x), "g").graph
    return graph, execute(graph, [x.clone()])[0]


def test_fft_over_one_dim_moves_it_last_and_back():
    x = torch.randn(3, 4, 5, dtype=torch.complex64)
    graph, out = _run(lambda t: torch.fft.fft(t, dim=1, norm="ortho"), x)
    torch.testing.assert_close(out, torch.fft.fft(x, dim=1, norm="ortho"))
    normalise = ["Shape", "Const", "Gather", "Const", "Mul", "Cast", "Sqrt", "RealDiv"]
    assert types(graph) == TO_FLOAT + ["Permute"] + TO_COMPLEX + ["FFT"] + normalise + TO_FLOAT + ["Permute"] + TO_COMPLEX
    assert [op.attr_value("order") for op in graph.ops_of_type("Permute")] == [(0, 2, 1), (0, 2, 1)]


def test_fft2_over_two_dims_and_its_size_computed_even_unused():
    x = torch.randn(3, 4, 5, dtype=torch.complex64)
    graph, out = _run(lambda t: torch.fft.fft2(t, dim=(0, 2)), x)
    torch.testing.assert_close(out, torch.fft.fft2(x, dim=(0, 2)), rtol=1e-4, atol=1e-4)
    assert "FFT2D" in types(graph) and [op.attr_value("order") for op in graph.ops_of_type("Permute")] == [(1, 0, 2), (1, 0, 2)]
    # No normalisation, yet TorchAir multiplies the two sizes and casts the count.
    assert types(graph)[types(graph).index("FFT2D") + 1:][:8] == ["Shape", "Const", "Gather", "Const", "Mul", "Const", "Gather", "Mul"]


def test_inverse_fft_is_converted_as_torchairs_forward_fft():
    x = torch.randn(8, dtype=torch.complex64)
    graph, out = _run(lambda t: torch.fft.ifft(t), x)
    # TorchAir ignores `forward`: the graph computes fft(x) / n, not ifft(x).
    torch.testing.assert_close(out, torch.fft.fft(x) / 8)
    assert not torch.allclose(out, torch.fft.ifft(x))
