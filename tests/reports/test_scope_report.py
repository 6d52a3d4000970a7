"""scope_report: options, segments, core limits and warnings on purpose-built models."""
from __future__ import annotations

import types

import pytest
import torch

from fxlab import scope
from tests.functional_graphs import functional_graph
from fxlab.ir import ge
from fxlab.ir.model import Attr, AttrKind, IrGraph, IrOp
from fxlab.passes.converters.registry import CONVERTERS, ConverterRegistry, register_converter
from fxlab.passes.convert_to_ascend_ir import convert_to_ascend_ir
from fxlab.reports.scope_report import (
    GlobalCoreLimit,
    GraphInput,
    build_scope_report,
    global_limit_of,
    parse_super_kernel_options,
)
from fxlab.socs import soc_by_name

A2 = soc_by_name("Ascend910B1")


def findings_of(report, code: str) -> list:
    """The report's findings of one code."""
    return [f for f in report.findings if f.code == code]


@torch.library.custom_op("fxlab_test::hcom_broadcast", mutates_args=())
def hcom_broadcast(x: torch.Tensor) -> torch.Tensor:
    return x.clone()


@hcom_broadcast.register_fake
def _(x):
    return torch.empty_like(x)


def _registry() -> ConverterRegistry:
    registry = ConverterRegistry()
    registry.register(CONVERTERS.get(torch.ops.aten.add.Tensor))

    @register_converter(torch.ops.fxlab_test.hcom_broadcast.default, registry=registry)
    def convert_broadcast(x, *, meta_outputs=None):
        """hcom_broadcast(Tensor x) -> Tensor"""
        return ge.op1("HcomBroadcast", {"x": x})

    return registry


def report_of(fn, *inputs, soc=A2, global_limit=None):
    gm = functional_graph(fn, *inputs)
    ir = convert_to_ascend_ir(gm, registry=_registry()).graph
    return build_scope_report([GraphInput(0, gm, ir)], soc, global_limit)


def xy():
    return torch.randn(4), torch.randn(4)


def timeline(report, index=0):
    return [
        (item.to_json()["kind"], item.ops and [o.fx_node for o in item.ops]) if hasattr(item, "ops") else ("break", item.kind, item.op.fx_node)
        for item in report.super_kernels[index].timeline
    ]


# -- options -------------------------------------------------------------------------------
def test_valid_options_are_parsed() -> None:
    text = "feed-sync-all=1:stream-fusion=0:strict-scope-check=abort:dcci-before-kernel-start=GroupedMatmul,MoeGatingTopK:debug-aic-num=12:debug-aiv-num=24"
    options = parse_super_kernel_options(text, A2)
    assert options.errors == []
    assert options.values == {
        "feed-sync-all": "1",
        "stream-fusion": "0",
        "strict-scope-check": "abort",
        "dcci-before-kernel-start": "GroupedMatmul,MoeGatingTopK",
        "debug-aic-num": "12",
        "debug-aiv-num": "24",
    }
    assert parse_super_kernel_options("").values == {} and parse_super_kernel_options("").errors == []


@pytest.mark.parametrize(
    "text, error",
    [
        ("stream-fusion", "'stream-fusion' is not key=value"),
        ("=1", "'=1' misses its key"),
        ("feed-sync-all=", "misses its value"),
        ("a=b=c", "more than one '='"),
        ("fuse-everything=1", "unknown option 'fuse-everything'"),
        ("stream-fusion=2", "stream-fusion=2: must be one of 0, 1"),
        ("strict-scope-check=strict", "must be one of bypass, abort"),
        ("feed-sync-all=1:feed-sync-all=0", "given twice"),
        ("dcci-after-kernel-end=Add;Mul", "comma-separated list of GE op types"),
        ("debug-aic-num=-1", "non-negative integer"),
        ("debug-aic-num=25", "above the maximum of Ascend910B1 (24)"),
        ("debug-aic-num=8:debug-aiv-num=24", "ratios 1:0, 0:1, 1:1 and 1:2"),
        ("debug-aic-num=0:debug-aiv-num=0", "ratios"),
        ("debug-aiv-num=0", "launches no cores"),
        ("split-mode=65", "[1, 64]"),
    ],
)
def test_malformed_options(text: str, error: str) -> None:
    errors = parse_super_kernel_options(text, A2).errors
    assert len(errors) == 1 and error in errors[0], errors


@pytest.mark.parametrize("aic, aiv", [("12", "0"), ("0", "12"), ("12", "12"), ("12", "24")])
def test_supported_debug_core_ratios(aic: str, aiv: str) -> None:
    assert parse_super_kernel_options(f"debug-aic-num={aic}:debug-aiv-num={aiv}", A2).errors == []


# -- segments ------------------------------------------------------------------------------
def test_an_op_outside_the_scope_between_its_ops_splits_it() -> None:
    def fn(x, y):
        with scope.super_kernel("sk"):
            a = x + y
        b = a + 1.0
        with scope.super_kernel("sk"):
            c = b + y
        return c

    report = report_of(fn, *xy())
    (sk,) = report.super_kernels
    assert [o.fx_node for o in sk.ops] == ["add", "add_2"]
    # the Const of `a + 1.0` is skipped (GE ignores non-compute ops); its Add cuts
    assert timeline(report) == [("segment", ["add"]), ("break", "outside", "add_1"), ("segment", ["add_2"])]
    (split,) = findings_of(report, "scope-split")
    assert split.severity == "warning" and "splits into 2 SuperKernel(s)" in split.message


def test_an_unfusable_op_inside_the_scope_splits_it_and_says_why() -> None:
    def fn(x, y):
        with scope.super_kernel("sk", "stream-fusion=1"):
            a = x + y
            b = torch.ops.fxlab_test.hcom_broadcast(a)
            c = b + y
        return c

    report = report_of(fn, *xy())
    assert timeline(report) == [("segment", ["add"]), ("break", "unfusable", "hcom_broadcast"), ("segment", ["add_1"])]
    brk = report.super_kernels[0].breaks[0]
    assert brk.op.type == "HcomBroadcast" and "AllReduce, ReduceScatter, AllGather and AlltoAll" in brk.reason
    assert "HcomBroadcast cannot be fused" in findings_of(report, "scope-split")[0].message


def test_another_scope_between_the_ops_splits_both_ways() -> None:
    def fn(x, y):
        with scope.super_kernel("a"):
            p = x + y
            with scope.super_kernel("b"):
                q = p + y
            r = q + y
        return r

    report = report_of(fn, *xy())
    assert [sk.name for sk in report.super_kernels] == ["a", "b"]
    assert timeline(report, 0) == [("segment", ["add"]), ("break", "other_scope", "add_1"), ("segment", ["add_2"])]
    assert timeline(report, 1) == [("segment", ["add_1"])]


@pytest.mark.parametrize("check, severity, text", [("abort", "error", "fails the compile"), ("bypass", "warning", "does not fuse this scope")])
def test_strict_scope_check_changes_what_a_split_means(check: str, severity: str, text: str) -> None:
    def fn(x, y):
        with scope.super_kernel("sk", f"strict-scope-check={check}"):
            b = torch.ops.fxlab_test.hcom_broadcast(x + y)
            return b + y

    (split,) = findings_of(report_of(fn, *xy()), "scope-split")
    assert split.severity == severity and text in split.message


def test_bad_options_of_a_scope_are_errors() -> None:
    def fn(x, y):
        with scope.super_kernel("sk", "stream-fusion:a=b=c"):
            return x + y

    report = report_of(fn, *xy())
    assert [f.message for f in findings_of(report, "bad-option")] == [
        "SuperKernel scope 'sk': 'stream-fusion' is not key=value (CANN ignores it)",
        "SuperKernel scope 'sk': 'a=b=c' has more than one '='; write one key=value per ':'-separated part",
    ]


# -- graph breaks, balance, dynamic shapes -------------------------------------------------
def dynamo_graphs(fn, *inputs, dynamic=False):
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm

    torch._dynamo.reset()
    torch.compile(fn, backend=backend, dynamic=dynamic)(*inputs)
    return graphs


def test_a_graph_break_inside_a_scope_is_reported_graph_by_graph() -> None:
    def fn(x, y):
        with scope.super_kernel("sk"):
            a = x + y
            torch._dynamo.graph_break()
            b = a * 2
        return b

    # Dynamo cannot resume inside the `with`: fn runs eagerly, and the scope's __enter__ and
    # __exit__ are compiled alone, a marker each.
    graphs = dynamo_graphs(fn, *xy())
    assert [[str(n.target) for n in gm.graph.nodes if n.op == "call_function"] for gm in graphs] == [["air.scope_enter"], ["air.scope_exit"]]
    report = build_scope_report([GraphInput(i, gm, None) for i, gm in enumerate(graphs)])
    opened, closed = findings_of(report, "unbalanced-scope")
    assert (opened.graph, closed.graph) == (0, 1)
    assert opened.message.startswith("super_kernel('sk') opened at ") and "has no scope_exit in graph 0" in opened.message
    assert "has no scope_enter before it in graph 1" in closed.message
    assert "still open" not in opened.message + closed.message  # no scope carries over from one graph to the next
    (broken,) = findings_of(report, "graph-break-in-scope")
    assert broken.severity == "error" and "(graph(s) 0, 1)" in broken.message and "in no graph" in broken.message


def test_super_kernel_in_a_dynamic_graph_is_warned() -> None:
    def fn(x, y):
        with scope.super_kernel("sk"):
            return x + y

    (gm,) = dynamo_graphs(fn, torch.randn(5), torch.randn(5), dynamic=True)
    ir = IrGraph("g", ops=[IrOp("Add", "Add", attrs={"_super_kernel_scope": Attr(AttrKind.STR, "sk")})])
    report = build_scope_report([GraphInput(0, gm, ir)])
    assert report.graphs[0].dynamic
    (warning,) = findings_of(report, "dynamic-shapes")
    assert "static graphs only" in warning.message
    static = build_scope_report([GraphInput(0, dynamo_graphs(fn, *xy())[0], ir)])
    assert not findings_of(static, "dynamic-shapes")


# -- core limits ---------------------------------------------------------------------------
def limited(aicore, vectorcore):
    def fn(x, y):
        with scope.super_kernel("sk", "debug-aic-num=16"):
            a = x + y
            with scope.limit_core_num(aicore, vectorcore):
                b = a + y
        return b + x

    return fn


def test_op_level_limit_wins_over_the_global_one() -> None:
    report = report_of(limited(8, 16), *xy(), global_limit=GlobalCoreLimit(20, 40, "--aicore-num"))
    assert [(r.op.fx_node, r.op_level, r.aicore, r.vectorcore, r.winner) for r in report.core_limits] == [("add_1", ("8", "16"), "8", "16", "op-level")]
    assert report.ops_under_global_limit == 2  # add and add_2 run with 20|40
    (debug,) = findings_of(report, "debug-core-num")
    assert "debug-aic-num=16 exceeds the limit_core_num of ops inside (8)" in debug.message
    assert not findings_of(report, "bad-core-limit")


@pytest.mark.parametrize(
    "aicore, vectorcore, problem",
    [
        (0, 16, "AI Core count 0 is not allowed"),
        (-2, 16, "AI Core count -2 is negative"),
        (2.5, 16, "AI Core count '2.5' is not an integer"),
        (25, 16, "AI Core count 25 is above the maximum of Ascend910B1 (24)"),
        (8, 49, "Vector Core count 49 is above the maximum"),
        (8, 0, "Vector Core count 0 is not allowed"),
    ],
)
def test_bad_op_level_core_counts(aicore, vectorcore, problem: str) -> None:
    report = report_of(limited(aicore, vectorcore), *xy())
    (bad,) = findings_of(report, "bad-core-limit")
    assert bad.severity == "error" and problem in bad.message and bad.where == "Add_1"


def test_bad_global_limit_is_an_error() -> None:
    report = report_of(lambda x, y: x + y, *xy(), global_limit=GlobalCoreLimit(30, 48, "config.ge_config.aicore_num"))
    (bad,) = findings_of(report, "bad-core-limit")
    assert "global aicore_num (config.ge_config.aicore_num): AI Core count 30 is above" in bad.message


def test_global_limit_is_read_from_a_compiler_config_in_the_model_module() -> None:
    config = types.SimpleNamespace(ge_config=types.SimpleNamespace(aicore_num="24|48"))
    assert global_limit_of(types.SimpleNamespace(compiler_config=config)) == ("24|48", "compiler_config.ge_config.aicore_num in the model file")
    assert global_limit_of(types.SimpleNamespace(cfg=config, other=1)) == ("24|48", "cfg.ge_config.aicore_num in the model file")
    unset = types.SimpleNamespace(ge_config=types.SimpleNamespace(aicore_num=None))
    assert global_limit_of(types.SimpleNamespace(config=unset)) is None
