"""How each FX stage of a Dynamo graph is obtained (DESIGN.md, "The pipeline: stages").

``aten``: the ATen ops before functionalization. Recorded from aot_autograd's own trace
(:mod:`fxlab.capture.aten_recorder`); :func:`aten_stage` traces the Dynamo graph with
``make_fx`` in fake mode, no functionalization, where the recorder cannot.
``functional``: what ``aot_module_simplified`` hands TorchAir's inference compiler, with
TorchAir's choices (its decomposition table, ``keep_inference_input_mutations=True``).
``pre_ge``: ``functional`` after TorchAir's passes before conversion
(:mod:`fxlab.passes.pre_ge`); the ``ascend_ir`` stage converts it (``max-autotune``).
``aclgraph``: ``functional`` after TorchAir's aclgraph passes
(:mod:`fxlab.passes.aclgraph.pipeline`): what ``reduce-overhead`` / ``npugraph_ex``
capture.
"""

from __future__ import annotations

import contextlib
from typing import Any
from collections.abc import Callable, Iterator, Sequence

import torch
import torch.fx as fx


STAGES = ("dynamo", "aten", "functional", "pre_ge", "aclgraph")  # FX stages of every mode


def torchair_decompositions() -> dict[Any, Callable[..., Any]]:
    """TorchAir's default decomposition table: only collectives (which need NPU process
    groups and never appear in a CPU trace), so the table is empty here; aot_autograd's
    own CompositeImplicitAutograd decompositions still apply, exactly as under TorchAir.
    ``upsample_nearest2d.vec`` is kept whole, as TorchAir patches it to be."""
    return {}


def fake_mode_of(inputs: Sequence[Any]) -> Any:
    from torch._guards import detect_fake_mode

    return detect_fake_mode(inputs)


def functional_stage(
    gm: fx.GraphModule,
    example_inputs: Sequence[Any],
    decompositions: dict[Any, Callable[..., Any]] | None = None,
    wrap_compiled: Callable[[fx.GraphModule], Callable[..., Any]] | None = None,
) -> tuple[fx.GraphModule, Callable[..., Any]]:
    """Run ``aot_module_simplified`` as TorchAir's backend does; return the functional
    inference graph its compiler receives and the compiled callable (which runs that
    graph eagerly; the graph itself applies input mutations with trailing ``copy_``).
    ``wrap_compiled`` may wrap the graph module aot will call (to observe its inputs)."""
    from torch._functorch.aot_autograd import aot_module_simplified

    captured: list[fx.GraphModule] = []

    def inference_compiler(fw: fx.GraphModule, fw_inputs: Sequence[Any]) -> Callable[..., Any]:
        captured.append(fw)
        return wrap_compiled(fw) if wrap_compiled is not None else fw

    compiled = aot_module_simplified(
        gm,
        list(example_inputs),
        fw_compiler=inference_compiler,
        decompositions=torchair_decompositions() if decompositions is None else decompositions,
        keep_inference_input_mutations=True,
    )
    if not captured:
        raise RuntimeError("aot_autograd produced no inference graph")
    return captured[-1], compiled


def aten_stage(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> fx.GraphModule:
    """Trace ``gm`` to ATen ops in fake mode without functionalization, so in-place ops
    (``add_``, ``copy_``, custom ``(a!)`` ops) are still visible. The graph is run by an
    Interpreter with node meta preserved, so provenance (stack traces, module paths)
    carries over to the ATen nodes, as aot_autograd does for the functional stage."""
    from torch.fx import traceback as fx_traceback
    from torch.fx.experimental.proxy_tensor import make_fx

    def run(*args: Any) -> Any:
        return fx.Interpreter(gm).run(*args)

    fake_mode = fake_mode_of(example_inputs)
    with _maybe(fake_mode), torch.no_grad(), fx_traceback.preserve_node_meta():
        inputs = [_as_fake(x, fake_mode) for x in example_inputs]
        mode = "real" if fake_mode else "fake"
        return make_fx(run, decomposition_table=torchair_decompositions(), tracing_mode=mode)(*inputs)


def _as_fake(x: Any, fake_mode: Any) -> Any:
    if fake_mode is None or not isinstance(x, torch.Tensor) or isinstance(x, torch._subclasses.FakeTensor):
        return x
    return fake_mode.from_tensor(x)


@contextlib.contextmanager
def _maybe(ctx: Any) -> Iterator[None]:
    if ctx is None:
        yield
    else:
        with ctx:
            yield


def functional_graph(fn: Callable[..., Any], *inputs: torch.Tensor) -> fx.GraphModule:
    """The ``functional`` stage of a plain function or module, without Dynamo: traced
    with ``make_fx`` to a graph module first. For tests and quick experiments."""
    from torch.fx.experimental.proxy_tensor import make_fx

    def as_tuple(*args: Any) -> tuple[Any, ...]:
        out = fn(*args)  # aot_autograd wants tuple outputs
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    with torch.no_grad():
        gm = make_fx(as_tuple, tracing_mode="fake")(*inputs)
        fake_mode = fake_mode_of([n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"])
        fake_inputs = [fake_mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in inputs] if fake_mode else list(inputs)
        with _maybe(fake_mode):
            functional, _ = functional_stage(gm, fake_inputs)
    return functional
