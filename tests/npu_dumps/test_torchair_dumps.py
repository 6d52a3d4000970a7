"""TorchAir's own graph dumps, written by TorchAir's own ``dump_graph`` from the GE graph its
own converters built, read back: an op's FX node is the one TorchAir's converter stamped
(``_fx_tensor_name``, on the outputs a converter returns, not on the helper ops it makes
on the way: Consts, Casts), and the one fxlab's record of TorchAir's conversion gives."""

from __future__ import annotations

from unittest import mock

import pytest
import torch

import fxlab.compat.bridge as bridge
from tests.functional_graphs import functional_graph
from fxlab.npu_dumps.read import read_dumps
from tests.conftest import torchair_session

pytestmark = pytest.mark.filterwarnings("ignore:Failed to import torchair")


def _model(x, w, b):
    h = torch.nn.functional.linear(x, w, b)
    return torch.nn.functional.silu(h) * 0.5 + x.sum()


@pytest.fixture(scope="module")
def converted(torchair_path, tmp_path_factory):
    """TorchAir's GE graph (its own proto, as its converters left it) and fxlab's IR of it."""
    folder = tmp_path_factory.mktemp("torchair_dump")
    for loaded in torchair_session(torchair_path):
        with mock.patch.object(bridge, "graph_from_graph_def", wraps=bridge.graph_from_graph_def) as spy:
            gm = functional_graph(_model, torch.randn(2, 4), torch.randn(3, 4), torch.randn(3))
            result = bridge.run_torchair_conversion(gm, "graph_1", loaded)
        proto = spy.call_args_list[0].args[0]  # TorchAir's own GraphDef, as its converters left it
        dump_graph = loaded.module("_ge_concrete_graph.utils").dump_graph
        for ext in ("txt", "pbtxt"):
            dump_graph(str(folder / f"dynamo_optimized_graph_1_rank_0_pid_1.{ext}"), proto)
        yield folder, result


def test_txt_and_pbtxt_dumps_name_each_ops_fx_node(converted):
    folder, result = converted
    dumps = read_dumps([folder])
    txt, pbtxt = sorted(dumps.torchair, key=lambda g: g.format)[::-1]
    assert (txt.format, pbtxt.format) == ("torchair_txt", "torchair_pbtxt")
    expected = {op.name: [op.fx_node] for op in result.graph.ops if op.fx_node and op.type not in ("Data", "NetOutput")}
    assert len(expected) >= 5
    for graph in (txt, pbtxt):
        got = {name: op.fx_nodes for name, op in graph.ops.items() if op.fx_nodes}
        assert got == {name: expected[name] for name in got}, graph.format
        assert sorted({n for nodes in got.values() for n in nodes}) == sorted({n for nodes in expected.values() for n in nodes})
        assert len(got) < len(expected)  # the helper ops carry no _fx_tensor_name
        assert {name: op.type for name, op in graph.ops.items()} == {op.name: op.type for op in result.graph.ops}


PY_DUMP = """\
arg0_1_0 = ge.Data(index=0, dtype=0, shape=[3, 16], node_name="arg0_1")

# File "/models/a,b "q"/model.py", line 11, in forward    h = torch.relu(x)        ^^^^^^^^^^^^^
## FX Code: relu: torch.float32[3, 16]cpu = torch.ops.aten.relu.default(arg0_1: torch.float32[3, 16]cpu)
Relu_0 = ge.Relu(arg0_1_0, node_name="Relu")

# File <frozen runpy>, line 88
## FX Code: abs_1: torch.float32[3, 16]cpu = torch.ops.aten.abs.default(relu: torch.float32[3, 16]cpu)
Abs_0 = ge.Abs(Relu_0, node_name="Abs")

# File "not a frame header written as TorchAir writes one
## FX Code: neg: torch.float32[3, 16]cpu = torch.ops.aten.neg.default(abs_1: torch.float32[3, 16]cpu)
Neg_0 = ge.Neg(Abs_0, node_name="Neg")
"""


def test_a_py_dumps_source_path_is_read_to_its_line_number_commas_and_quotes_included():
    from fxlab.npu_dumps.torchair_dumps import read_torchair_py

    graph = read_torchair_py("dynamo_optimized_graph_0_rank_0_pid_1.py", PY_DUMP)
    assert graph.ops["Relu"].source == ['/models/a,b "q"/model.py:11']
    assert graph.ops["Abs"].source == ["<frozen runpy>:88"]
    # a frame it cannot place leaves the op without a line, not with the line above it
    assert graph.ops["Neg"].source == [] and graph.ops["Neg"].fx_nodes == ["neg"]
