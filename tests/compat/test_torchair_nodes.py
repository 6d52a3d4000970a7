"""fxlab.compat.torchair_nodes: what a node whose TorchAir converter raised is recorded with."""
from __future__ import annotations

import sys
from typing import Any

import pytest
import torch
import torch.fx as fx

from fxlab.compat.torchair_nodes import _raised_message


def _node(target) -> fx.Node:
    graph = fx.Graph()
    x = graph.placeholder("x")
    return graph.call_function(target, (x,))


def test_a_refused_op_with_a_known_rewrite_names_it():
    message = _raised_message(_node(torch.ops.aten.index_copy.default), NotImplementedError("ge_converter is not implemented!"))
    assert message.startswith("TorchAir's converter for aten.index_copy.default raised at node index_copy_default: NotImplementedError: ge_converter is not implemented!")
    assert message.endswith(". Fix: on Ascend, write the KV cache with torch_npu.scatter_update_(cache, positions, new, axis), "
                            "torch_npu.npu_scatter_nd_update_(cache, indices, new) or a slice assignment (cache[:, :, start:end] = new), which TorchAir converts")


def test_another_error_of_that_op_gets_no_rewrite():
    message = _raised_message(_node(torch.ops.aten.index_copy.default), ValueError("bad shape"))
    assert message == "TorchAir's converter for aten.index_copy.default raised at node index_copy_default: ValueError: bad shape"


# -- a custom in-place op given two views of one tensor ----------------------------------------

from tests.functional_graphs import functional_graph  # noqa: E402
from fxlab.compat.bridge import run_torchair_conversion  # noqa: E402
from fxlab.compat.native_standins.prototypes import register_prototype, unregister_prototype  # noqa: E402
from fxlab.passes.conversion_result import Status  # noqa: E402
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir  # noqa: E402
from tests.compat.torchair_compile import torchair_compile_error  # noqa: E402
from tests.conftest import torchair_session  # noqa: E402

_LIB = torch.library.Library("fxlab_nodes_test", "DEF")  # noqa: TOR901 - an op only these tests use
_LIB.define("scale_pair(Tensor(a!) q, Tensor(b!) k, Tensor factor) -> ()")
_LIB.impl("scale_pair", lambda q, k, factor: (q.mul_(factor), k.mul_(factor)) and None, "CompositeExplicitAutograd")
torch.library.register_fake("fxlab_nodes_test::scale_pair", lambda q, k, factor: None, lib=_LIB)


def _scale_views(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    query, key, value = (x + 1).split(4, dim=-1)
    torch.ops.fxlab_nodes_test.scale_pair(query, key, factor)
    return query * key - value


def _scale_copies(x: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    query, key, value = (x + 1).split(4, dim=-1)
    query, key = query.clone(), key.clone()
    torch.ops.fxlab_nodes_test.scale_pair(query, key, factor)
    return query * key - value


@pytest.fixture(scope="module")
def torchair(torchair_path):
    yield from torchair_session(torchair_path)


@pytest.fixture
def scale_pair_in_cann():
    """ScalePair's Ascend IR prototype, as the NPU machine's CANN would register it, so
    TorchAir's auto converter converts the op."""
    names = [{"name": n, "param_type": "required"} for n in ("q", "k")]
    register_prototype({"op": "ScalePair", "input_desc": [*names, {"name": "factor", "param_type": "required"}], "output_desc": names})
    yield
    unregister_prototype("ScalePair")


def test_torchairs_own_backend_fails_on_mutated_views_of_one_base(torchair, scale_pair_in_cann):
    inputs = (torch.randn(3, 12), torch.randn(3, 1))
    error = torchair_compile_error(torchair, _scale_views, *inputs)
    assert isinstance(error, AssertionError)
    assert "The length of ge_outputs must be equal to meta_outputs" in str(error)
    assert "While executing %auto_functionalized_v2" in str(error)
    assert torchair_compile_error(torchair, _scale_copies, *inputs) is None  # the fix compiles


def test_bridge_refuses_the_node_as_the_builtin_conversion_does_and_walks_on(torchair, scale_pair_in_cann):
    gm = functional_graph(_scale_views, torch.randn(3, 12), torch.randn(3, 1))
    theirs = run_torchair_conversion(gm, "g", torchair)
    ours = convert_to_ascend_ir(functional_graph(_scale_views, torch.randn(3, 12), torch.randn(3, 1)), "g")
    (record,) = [r for r in theirs.nodes if r.node == "auto_functionalized_v2"]
    (builtin,) = [r for r in ours.nodes if r.node == "auto_functionalized_v2"]
    assert record.status is builtin.status is Status.REFUSED
    assert record.message == builtin.message
    assert record.message.startswith("TorchAir fails on fxlab_nodes_test.scale_pair.default here: its mutated arguments q and k")
    assert [r.status for r in theirs.nodes if r.node in ("mul", "sub")] == [Status.CONVERTED, Status.CONVERTED]


# -- a comparison of sizes: TorchAir's walk fails on it; the node is recorded, the walk goes on ---
def _checked_rows(x: torch.Tensor) -> torch.Tensor:
    torch._check(x.shape[0] >= 4)
    return x * 2


def _rows_unbacked() -> torch.Tensor:
    x = torch.randn(6, 3)
    torch._dynamo.decorators.mark_unbacked(x, 0)
    return x


def test_torchairs_own_backend_fails_on_a_size_comparison(torchair):
    error = torchair_compile_error(torchair, _checked_rows, _rows_unbacked())
    assert isinstance(error, TypeError)
    assert str(error).startswith("'>=' not supported between instances of 'ValuePack' and 'int'")
    assert "While executing %ge : " in str(error) and "target=operator.ge" in str(error)


def test_bridge_records_the_comparison_as_the_builtin_conversion_does_and_walks_on(torchair):
    from tests.passes.test_torchair_refusals import _functional_with_unbacked_rows

    gm = _functional_with_unbacked_rows()
    theirs = run_torchair_conversion(gm, "g", torchair)
    ours = convert_to_ascend_ir(_functional_with_unbacked_rows(), "g")
    (record,) = [r for r in theirs.nodes if r.node == "ge"]
    (builtin,) = [r for r in ours.nodes if r.node == "ge"]
    assert (record.target, record.status, record.message) == (builtin.target, builtin.status, builtin.message)
    assert record.target == "operator.ge" and record.status is Status.REFUSED
    assert [r.status for r in theirs.nodes if r.node == "mul"] == [Status.CONVERTED]
    assert theirs.partial and ours.partial


def test_a_plugin_converter_that_raised_inside_torchair_is_named_not_torchairs_frame(tmp_path):
    from fxlab.capture.loader import load_python_file

    # Apart from the plugin's folder, which loading the plugin makes importable for good.
    torchair_file = tmp_path / "site" / "torchair" / "ge" / "ge_custom.py"  # where TorchAir's custom_op raises
    torchair_file.parent.mkdir(parents=True)
    torchair_file.write_text("def custom_op(op_type):\n    raise RuntimeError(f'No AscendIR {op_type} was found to be registered.')\n")
    plugin = tmp_path / "plugins" / "my_plugin.py"
    plugin.parent.mkdir()
    plugin.write_text("import ge_custom\n\n\ndef convert_mine(x):\n    return ge_custom.custom_op('Mine')\n")
    sys.path.insert(0, str(torchair_file.parent))
    try:
        convert = load_python_file(plugin, role="plugin").convert_mine
        with pytest.raises(RuntimeError) as info:
            convert(None)
    finally:
        sys.path.remove(str(torchair_file.parent))
        sys.modules.pop("ge_custom", None)
    message = _raised_message(_node(torch.ops.aten.index_copy.default), info.value)
    assert f" in convert_mine at {plugin}:5 (`return ge_custom.custom_op('Mine')`): RuntimeError: No AscendIR Mine" in message
    assert message.endswith("[in TorchAir's ge/ge_custom.py:2]")


# -- torch.cond: TorchAir's walk fails on it; the node is recorded, the walk goes on -------------
def _branching(x: torch.Tensor) -> torch.Tensor:
    y = x.relu()
    return torch.cond(y.sum() > 0, lambda t: t * 2, lambda t: t - 1, (y,)) + 1


def test_torchairs_own_backend_fails_on_torch_cond(torchair):
    error = torchair_compile_error(torchair, _branching, torch.randn(3, 4))
    assert isinstance(error, RuntimeError) and str(error).startswith("Failed to auto-generated converter for cond to AscendIR")


def test_a_torch_cond_is_recorded_as_the_node_torchair_fails_on_and_the_walk_goes_on(torchair):
    # cond gives one tensor in a tuple of one: the placeholder standing in for it is that
    # tensor (the walk failed as a whole: TypeError: 'Tensor' object is not iterable), and
    # the op its failed step had made is dropped.
    theirs = run_torchair_conversion(functional_graph(_branching, torch.randn(3, 4)), "g", torchair)
    (cond,) = [r for r in theirs.nodes if r.node == "cond"]
    assert cond.status is Status.RAISED and "TorchAir's walk over the graph for cond raised at node cond" in cond.message
    assert [r.status for r in theirs.nodes if r.node in ("relu", "add")] == [Status.CONVERTED, Status.CONVERTED]
    assert "cond" not in theirs.graph.types and theirs.partial


# -- std over the last dim: the graph TorchAir's own backend builds ------------------------------
def _ge_ops_torchairs_backend_builds(torchair, fn, *inputs) -> list[str]:
    """The op types of the GE graph TorchAir's backend builds for ``fn``, entered through
    torch.compile (its run of the graph then needs an NPU and is not awaited)."""
    import gc

    def graphs() -> list[Any]:
        return [obj for obj in gc.get_objects() if type(obj).__name__ == "GeConcreteGraph"]

    before = {id(graph) for graph in graphs()}
    assert torchair_compile_error(torchair, fn, *inputs) is None
    (built,) = [graph for graph in graphs() if id(graph) not in before]
    return [op.type for op in built.graph._proto.op]


def test_torchairs_backend_expands_the_mean_of_std_over_dim_minus_one_without_its_dim(torchair):
    wrong = _ge_ops_torchairs_backend_builds(torchair, lambda x: x.std(-1) * 2, torch.randn(4, 128))
    fixed = _ge_ops_torchairs_backend_builds(torchair, lambda x: x.std(x.dim() - 1) * 2, torch.randn(4, 128))
    steps = ("ReduceMean", "Unsqueeze", "Expand", "ReduceStdWithMean")
    assert [t for t in wrong if t in steps] == ["ReduceMean", "Expand", "ReduceStdWithMean"]
    assert [t for t in fixed if t in steps] == ["ReduceMean", "Unsqueeze", "Expand", "ReduceStdWithMean"]
