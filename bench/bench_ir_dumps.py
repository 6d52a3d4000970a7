"""Benchmark: Ascend IR conversion and dumps (issue 4, "Speed").

Goals: conversion >= 100k FX nodes/s; all four dumps of a graph together within 2x its
conversion time. Two graphs are measured:

- ``converted``: the functional graph of a stack of RMSNorm + Linear + SiLU + Linear +
  residual layers, converted by fxlab's pass (nodes without a converter yet become
  placeholder ops; the count is printed).
- ``built``: the GE graph TorchAir emits for the same layers, built with GraphBuilder
  directly (every op converted, with scope attrs and provenance), so the dump figures do
  not depend on which converters exist.

Times are the best of ``--repeat`` runs, in CPU time of this process (steadier than
wall time on a shared machine). Run: ``python bench/bench_ir_dumps.py [--layers 32]``.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import torch
import torch.nn.functional as F

from fxlab.ir import ge
from fxlab.ir.builder import GraphBuilder, building
from fxlab.ir.dump_py import graph_to_py
from fxlab.ir.dumps import graph_to_json_text, write_ir_dumps
from fxlab.ir.ge_proto import encode_model_def
from fxlab.ir.model import DataType, IrGraph
from fxlab.ir.op_shapes import op_shapes
from fxlab.ir.pbtxt import graph_to_pbtxt


def _layer(x: torch.Tensor, w1: torch.Tensor, b1: torch.Tensor, w2: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * g
    return x + F.linear(F.silu(F.linear(h, w1, b1)), w2)


def decoder_like_functional_graph(layers: int, hidden: int = 16) -> Any:
    from fxlab.capture.stages import functional_graph

    def model(x: torch.Tensor, *weights: torch.Tensor) -> torch.Tensor:
        for i in range(layers):
            x = _layer(x, *weights[4 * i : 4 * i + 4])
        return x

    weights: list[torch.Tensor] = []
    for _ in range(layers):
        weights += [torch.randn(4 * hidden, hidden), torch.randn(4 * hidden), torch.randn(hidden, 4 * hidden), torch.ones(hidden)]
    return functional_graph(model, torch.randn(2, 8, hidden), *weights)


def _linear(b: GraphBuilder, x: ge.Tensor, w: ge.Tensor, node: str, line: int, rows: int, cols: int, bias: ge.Tensor | None) -> ge.Tensor:
    with b.converting(f"t_{node}", f"model.py:{line}"):
        wt = ge.op1("Transpose", {"x": w, "perm": ge.const([1, 0])}, shapes=[(w.shape[1], w.shape[0])])
    with b.converting(node, f"model.py:{line}"):
        attrs = {"transpose_x1": False, "transpose_x2": False, "offset_x": 0}
        y = ge.op1("MatMulV2", {"x1": x, "x2": wt, "bias": None, "offset_w": None}, attrs, shapes=[(rows, cols)])
        if bias is not None:
            y = ge.op1("Add", {"x1": y, "x2": bias}, shapes=[(rows, cols)])
    return y


def _built_layer(b: GraphBuilder, x: ge.Tensor, weights: list[ge.Tensor], i: int, hidden: int) -> ge.Tensor:
    w1, b1, w2, g = weights
    tokens, shape = 16, (2, 8, hidden)

    def node(name: str, line: int, op_type: str, inputs: dict[str, Any], attrs: dict[str, Any] | None = None, out_shape: tuple[int, ...] = shape) -> ge.Tensor:
        with b.converting(f"{name}_{i}", f"model.py:{line}"):
            tensors = {k: v if isinstance(v, ge.Tensor) else ge.const(v) for k, v in inputs.items()}
            return ge.op1(op_type, tensors, attrs, shapes=[out_shape])

    if i % 4 == 0:
        b.push_scope(["_super_kernel_scope", "_super_kernel_options"], [f"sk{i}", "stream-fusion=1"])
    p = node("pow", 30, "Pow", {"x1": x, "x2": 2.0})
    m = node("mean", 30, "ReduceMean", {"x": p, "axes": [-1]}, {"keep_dims": True, "noop_with_empty_axes": True}, (2, 8, 1))
    r = node("rsqrt", 30, "Rsqrt", {"x": node("add", 30, "Add", {"x1": m, "x2": 1e-6}, None, (2, 8, 1))}, None, (2, 8, 1))
    h = node("mul", 30, "Mul", {"x1": node("mul_a", 30, "Mul", {"x1": x, "x2": r}), "x2": g})
    v = node("view", 31, "Reshape", {"x": h, "shape": [tokens, hidden]}, {"axis": 0, "num_axes": -1}, (tokens, hidden))
    y = _linear(b, v, w1, f"addmm_{i}", 31, tokens, 4 * hidden, b1)
    s = node("silu", 31, "Swish", {"x": y}, {"scale": 1.0}, (tokens, 4 * hidden))
    y2 = _linear(b, s, w2, f"mm_{i}", 31, tokens, hidden, None)
    y3 = node("view_o", 31, "Reshape", {"x": y2, "shape": list(shape)}, {"axis": 0, "num_axes": -1})
    out = node("add_res", 31, "Add", {"x1": x, "x2": y3})
    if i % 4 == 3:
        b.pop_scope()
    return out


def built_decoder_like_graph(layers: int, hidden: int = 16) -> IrGraph:
    b = GraphBuilder("decoder")
    with building(b):
        def data(name: str, index: int, shape: tuple[int, ...]) -> ge.Tensor:
            with b.converting(name, None):
                (t,) = b.add_op("Data", (), {"index": index}, ("y",), dtypes=DataType.DT_FLOAT, shapes=[shape], name=name)
            b.graph.inputs.append(name)
            return t

        x = data("arg0_1", 0, (2, 8, hidden))
        for i in range(layers):
            shapes = [(4 * hidden, hidden), (4 * hidden,), (hidden, 4 * hidden), (hidden,)]
            weights = [data(f"arg{1 + 4 * i + k}_1", 1 + 4 * i + k, s) for k, s in enumerate(shapes)]
            x = _built_layer(b, x, weights, i, hidden)
        with b.converting("output", None):
            b.add_op("NetOutput", {"x0": x}, None, (), name="NetOutput")
        b.graph.outputs.append(x.tensor)
    return b.graph


def _best(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.process_time()
        result = fn()
        best = min(best, time.process_time() - start)
    return best, result


def _report_dumps(label: str, graph: IrGraph, repeat: int, baseline: float | None, fx_graph: Any = None) -> None:
    """``fx_graph``: the graph ``graph`` was converted from, for the py dump's FX code
    comments (as a trace writes them)."""
    ops = len(graph.ops)
    seconds, shapes = _best(lambda: op_shapes(graph), repeat)
    print(f"  {label:9s} {'shapes':6s} {seconds * 1e3:8.1f} ms  {ops / seconds:10,.0f} ops/s  ({len(shapes.first)} shapes, shared by the four writers)")
    writers = {
        "json": lambda: graph_to_json_text(graph, shapes),
        "pb": lambda: encode_model_def(graph, shapes),
        "pbtxt": lambda: graph_to_pbtxt(graph, shapes),
        "py": lambda: graph_to_py(graph, fx_graph, shapes),
    }
    total = seconds
    for name, fn in writers.items():
        seconds, out = _best(fn, repeat)
        total += seconds
        print(f"  {label:9s} {name:6s} {seconds * 1e3:8.1f} ms  {ops / seconds:10,.0f} ops/s  {len(out) / 1e6:6.1f} MB")
    with tempfile.TemporaryDirectory() as tmp:
        files, _ = _best(lambda: write_ir_dumps(graph, Path(tmp), fx_graph=fx_graph), repeat)
    ratio = f", {files / baseline:.2f}x conversion" if baseline else ""
    print(f"  {label:9s} shapes + all four rendered {total * 1e3:.1f} ms; write_ir_dumps (with files) {files * 1e3:.1f} ms{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    from fxlab.passes.convert_to_ascend_ir import Status, convert_to_ascend_ir

    gm = decoder_like_functional_graph(args.layers)
    fx_nodes = len(gm.graph.nodes)
    seconds, result = _best(lambda: convert_to_ascend_ir(gm, "decoder"), args.repeat)
    placeholders = sum(n.status in (Status.UNSUPPORTED, Status.RAISED) for n in result.nodes)
    print(f"converted: {args.layers} layers, {fx_nodes} FX nodes -> {len(result.graph.ops)} GE ops "
          f"({placeholders} nodes without a converter yet) in {seconds * 1e3:.1f} ms: {fx_nodes / seconds:,.0f} FX nodes/s")
    _report_dumps("converted", result.graph, args.repeat, seconds, gm)

    graph = built_decoder_like_graph(args.layers)
    print(f"built: {args.layers} layers, {len(graph.ops)} GE ops (TorchAir's op pattern, all converted)")
    _report_dumps("built", graph, args.repeat, None)


if __name__ == "__main__":
    main()
