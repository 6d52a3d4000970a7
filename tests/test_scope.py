"""fxlab.scope: the markers trace like TorchAir's, survive every stage, and conversion
gives each GE op exactly TorchAir's scope attrs."""
from __future__ import annotations

import pytest
import torch

from fxlab import scope
from fxlab.capture.stages import aten_stage
from tests.functional_graphs import functional_graph
from fxlab.ir.model import AttrKind
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.passes.pre_ge import pre_ge_graph

SK = ("_super_kernel_scope", "_super_kernel_options")
CORES = ("_op_aicore_num", "_op_vectorcore_num")
SCOPE_KEYS = (*SK, *CORES, "_op_exec_never_timeout", "_user_stream_label", "_user_stream_priority", "_enable_inner_parallel")


def scope_attrs_by_op(fn, *inputs):
    """[(op name, op type, {scope attr: value})] of the converted graph, in order."""
    ir = convert_to_ascend_ir(functional_graph(fn, *inputs)).graph
    return [(op.name, op.type, {k: op.attrs[k].value for k in SCOPE_KEYS if k in op.attrs}) for op in ir.ops]


def markers(gm: torch.fx.GraphModule) -> list[tuple[str, tuple]]:
    return [(str(n.target), tuple(n.args)) for n in gm.graph.nodes if "scope_" in str(n.target)]


def two() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(2, 3), torch.randn(2, 3)


def sk_and_limit(x, y):
    with scope.super_kernel("sk1", "stream-fusion=1"):
        a = x + y
        with scope.limit_core_num(8, 16):
            b = a + 2.5
    return b + a


EXPECTED_MARKERS = [
    ("air.scope_enter.default", (list(SK), ["sk1", "stream-fusion=1"])),
    ("air.scope_enter.default", (list(CORES), ["8", "16"])),
    ("air.scope_exit.default", ()),
    ("air.scope_exit.default", ()),
]


def test_markers_trace_under_dynamo_with_the_exact_arguments() -> None:
    graphs = []

    def backend(gm, inputs):
        graphs.append(gm)
        return gm

    torch._dynamo.reset()
    out = torch.compile(sk_and_limit, backend=backend, fullgraph=True)(*two())
    assert out.shape == (2, 3) and len(graphs) == 1
    found = [(t, a) for t, a in markers(graphs[0])]
    assert [(t + ".default", a) for t, a in found] == EXPECTED_MARKERS


def test_markers_survive_aten_functional_and_pre_ge_stages() -> None:
    functional = functional_graph(sk_and_limit, *two())
    assert markers(functional) == EXPECTED_MARKERS
    assert markers(pre_ge_graph(functional).gm) == EXPECTED_MARKERS
    from torch.fx.experimental.proxy_tensor import make_fx

    traced = make_fx(lambda x, y: (sk_and_limit(x, y),))(*two())
    assert markers(aten_stage(traced, list(two()))) == EXPECTED_MARKERS


def test_markers_are_side_effect_ops_and_not_dead_code() -> None:
    from torch.fx.node import _side_effectful_functions

    assert torch.ops.air.scope_enter.default in _side_effectful_functions
    assert torch.ops.air.scope_exit.default in _side_effectful_functions
    gm = functional_graph(sk_and_limit, *two())
    gm.graph.eliminate_dead_code()
    assert len(markers(gm)) == 4


def test_existing_air_ops_are_reused_not_redefined() -> None:
    before = torch.ops.air.scope_enter.default
    scope._define_marker("scope_enter", scope.SCOPE_ENTER_SCHEMA, scope._eager_enter)  # would raise if redefined
    assert torch.ops.air.scope_enter.default is before
    assert str(before._schema) == "air::scope_enter(str[] keys, str[] values, bool need_execute=False) -> ()"
    assert str(torch.ops.air.scope_exit.default._schema) == "air::scope_exit(bool need_execute=False) -> ()"


def test_need_execute_pushes_and_pops_eagerly() -> None:
    torch.ops.air.scope_enter(["_op_aicore_num"], ["4"], need_execute=True)
    assert scope.active_scope_stack() == [{"_op_aicore_num": "4"}]
    torch.ops.air.scope_exit(need_execute=True)
    assert scope.active_scope_stack() == []
    torch.ops.air.scope_enter(["k"], ["v"])  # graph-mode default: no eager effect
    assert scope.active_scope_stack() == []


def test_marker_arguments_as_torchair_writes_them() -> None:
    assert scope.super_kernel(None).attrs == [("_super_kernel_scope", ""), ("_super_kernel_options", "")]
    assert scope.limit_core_num(2, 0).attrs == [("_op_aicore_num", "2"), ("_op_vectorcore_num", "0")]
    assert scope.op_never_timeout().attrs == [("_op_exec_never_timeout", "True")]
    assert scope.npu_stream_switch("s1", 3).attrs == [
        ("_user_stream_label", "s1"),
        ("_user_stream_priority", "3"),
        ("_enable_inner_parallel", "True"),
    ]
    with pytest.raises(TypeError, match="bool"):
        scope.op_never_timeout(1)


# -- conversion: the attrs of every GE op --------------------------------------------------
def test_nested_super_kernel_and_core_limit_attrs_op_by_op() -> None:
    sk = {"_super_kernel_scope": "sk1", "_super_kernel_options": "stream-fusion=1"}
    assert scope_attrs_by_op(sk_and_limit, *two()) == [
        ("arg0_1", "Data", {}),
        ("arg1_1", "Data", {}),
        ("Add", "Add", sk),
        # the helper Const of `a + 2.5` carries the scope attrs too, as in TorchAir
        ("Const", "Const", {**sk, "_op_aicore_num": "8", "_op_vectorcore_num": "16"}),
        ("Add_1", "Add", {**sk, "_op_aicore_num": "8", "_op_vectorcore_num": "16"}),
        ("Add_2", "Add", {}),
        ("NetOutput", "NetOutput", {}),
    ]


def test_inner_super_kernel_overrides_outer_and_helpers_follow() -> None:
    def fn(x, y, i):
        with scope.super_kernel("outer", "feed-sync-all=1"):
            a = x + y
            with scope.super_kernel("inner"):
                b = torch.add(a, y, alpha=2)  # a helper op or two for alpha
                c = i + b  # int + float: a Cast before the Add
        return c

    outer = {"_super_kernel_scope": "outer", "_super_kernel_options": "feed-sync-all=1"}
    inner = {"_super_kernel_scope": "inner", "_super_kernel_options": ""}
    ir = convert_to_ascend_ir(functional_graph(fn, *two(), torch.ones(2, 3, dtype=torch.int32))).graph
    by_node: dict[str, list] = {}
    for op in ir.ops:
        by_node.setdefault(op.fx_node, []).append((op.type, {k: op.attrs[k].value for k in SK if k in op.attrs}))
    assert by_node["add"] == [("Add", outer)]
    assert len(by_node["add_1"]) >= 2 and all(attrs == inner for _, attrs in by_node["add_1"])
    assert [t for t, _ in by_node["add_2"]] == ["Cast", "Add"]
    assert all(attrs == inner for _, attrs in by_node["add_2"])


def test_none_hole_removes_super_kernel_attrs_but_keeps_core_limits() -> None:
    def fn(x, y):
        with scope.super_kernel("sk", "stream-fusion=0"), scope.limit_core_num(4, 8):
            a = x + y
            with scope.super_kernel(None):
                b = a + y
            with scope.super_kernel(""):
                with scope.limit_core_num(2, 2):
                    c = b + 1.0
            d = c + a
        return d

    sk = {"_super_kernel_scope": "sk", "_super_kernel_options": "stream-fusion=0"}
    cores = {"_op_aicore_num": "4", "_op_vectorcore_num": "8"}
    inner_cores = {"_op_aicore_num": "2", "_op_vectorcore_num": "2"}
    ops = scope_attrs_by_op(fn, *two())
    assert [(n, a) for n, _, a in ops if n not in ("arg0_1", "arg1_1", "NetOutput")] == [
        ("Add", {**sk, **cores}),
        ("Add_1", cores),
        ("Const", inner_cores),
        ("Add_2", inner_cores),
        ("Add_3", {**sk, **cores}),
    ]


def test_overlapping_scopes_pop_the_innermost_frame_like_torchair() -> None:
    def fn(x, y):
        sk = scope.super_kernel("sk")
        limit = scope.limit_core_num(6, 12)
        sk.__enter__()
        a = x + y
        limit.__enter__()
        b = a + y
        sk.__exit__(None, None, None)  # pops the innermost frame: the core limit
        c = b + y
        limit.__exit__(None, None, None)  # pops the SuperKernel frame
        return c + a

    sk = {"_super_kernel_scope": "sk", "_super_kernel_options": ""}
    ops = scope_attrs_by_op(fn, *two())
    assert [a for _, t, a in ops if t == "Add"] == [
        sk,
        {**sk, "_op_aicore_num": "6", "_op_vectorcore_num": "12"},
        sk,
        {},
    ]


def test_bool_and_string_attr_kinds_as_torchair_writes_them() -> None:
    def fn(x, y):
        with scope.op_never_timeout(True), scope.npu_stream_switch("s1", 2, False), scope.limit_core_num(3, 6):
            return x + y

    ir = convert_to_ascend_ir(functional_graph(fn, *two())).graph
    (add,) = ir.ops_of_type("Add")
    kinds = {k: (a.kind, a.value) for k, a in add.attrs.items() if k.startswith("_") and k in SCOPE_KEYS}
    assert kinds == {
        "_op_exec_never_timeout": (AttrKind.BOOL, True),
        "_enable_inner_parallel": (AttrKind.BOOL, False),
        "_user_stream_label": (AttrKind.STR, "s1"),
        "_user_stream_priority": (AttrKind.STR, "2"),
        "_op_aicore_num": (AttrKind.STR, "3"),
        "_op_vectorcore_num": (AttrKind.STR, "6"),
    }
