"""How each FX stage of a Dynamo graph is obtained (their names: :mod:`fxlab.stage_names`).

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
from typing import Any, Literal
from collections.abc import Callable, Iterator, Sequence

import torch
import torch.fx as fx
from torch._functorch._aot_autograd.schemas import OutputType
from torch._guards import detect_fake_mode
from torch.fx import traceback as fx_traceback
from torch.fx.experimental.proxy_tensor import make_fx

from fxlab.passes.aclgraph.capture_info import STATIC_INPUT

# TorchAir's collective decompositions (``_c10d_functional.all_to_all_single`` into its
# ``npu_define`` all-to-all), added by the compat layer while its operators are defined.
COLLECTIVE_DECOMPOSITIONS: dict[Any, Callable[..., Any]] = {}


def torchair_decompositions() -> dict[Any, Callable[..., Any]]:
    """TorchAir's default decomposition table: only collectives
    (:data:`COLLECTIVE_DECOMPOSITIONS`); aot_autograd's own CompositeImplicitAutograd
    decompositions still apply, exactly as under TorchAir. ``upsample_nearest2d.vec`` is
    kept whole, as TorchAir patches it to be."""
    return dict(COLLECTIVE_DECOMPOSITIONS)


def fake_mode_of(inputs: Sequence[Any]) -> Any:
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
    from torch._functorch.aot_autograd import aot_module_simplified  # lazy: with Dynamo, ~0.7 s; a saved trace's load skips it

    captured: list[fx.GraphModule] = []
    dynamo_inputs = list(example_inputs)

    # Named as aot_autograd's compiler protocol names them: it may pass them by keyword.
    def inference_compiler(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> Callable[..., Any]:
        captured.append(gm)
        context = torch._guards.TracingContext.try_get()
        gm.meta[REGENERATED_OUTPUTS] = regenerated_outputs(getattr(context, "fw_metadata", None))
        mark_static_inputs(gm, static_inputs(dynamo_inputs, example_inputs, getattr(context, "fw_metadata", None)))
        return wrap_compiled(gm) if wrap_compiled is not None else gm

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


def static_inputs(dynamo_inputs: Sequence[Any], aot_inputs: Sequence[Any], metadata: Any) -> set[int]:
    """The inputs of aot's graph TorchAir's backend marks as parameters (fixed addresses its
    ACL graph reads in place, never copies): aot's ``static_input_indices`` (the count of
    inputs aot added, without them), as its ``_mark_static_inputs_attr`` reads them, and the
    Dynamo inputs that are parameters or marked static (``_get_inputs_custom_attr``), which
    are aot's last inputs."""
    rng_inputs = 2 if torch._functorch.config.functionalize_rng_ops else 0
    added = len(aot_inputs) - len(dynamo_inputs)
    indices = set(metadata.static_input_indices if metadata is not None else range(added - rng_inputs))
    for i, value in enumerate(dynamo_inputs):
        if isinstance(value, torch.Tensor) and (hasattr(value, "_dynamo_static_input_type") or isinstance(value, torch.nn.Parameter)):
            indices.add(added + i)
    return {i for i in indices if 0 <= i < len(aot_inputs) and isinstance(aot_inputs[i], torch.Tensor)}


def mark_static_inputs(gm: fx.GraphModule, indices: set[int]) -> None:
    """Mark the placeholders at ``indices`` (:data:`STATIC_INPUT`)."""
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for index in indices:
        if index < len(placeholders):
            placeholders[index].meta[STATIC_INPUT] = True


# Key in a functional graph module's ``meta``: which of its outputs aot_autograd's runtime
# re-makes from an input or another output (see :func:`regenerated_outputs`).
REGENERATED_OUTPUTS = "fxlab.regenerated_outputs"


def regenerated_outputs(metadata: Any) -> dict[int, int | None]:
    """``{graph output index: the graph input it aliases, None for another output}`` for the outputs of aot's inference graph
    that its runtime wrapper does not hand to the caller as the graph computed them: an
    output that is a graph input, or a view of one, is re-made from that input after the
    graph wrote it back; a view of an intermediate, from the base output. The graph's own
    value for such an output is never used. Read from aot's ``ViewAndMutationMeta``."""
    if metadata is None:
        return {}
    of_input = (OutputType.alias_of_input, OutputType.is_input)
    of_output = (
        OutputType.alias_of_intermediate,
        OutputType.alias_of_intermediate_save_as_output,
        OutputType.alias_of_intermediate_base_is_user_output,
    )
    # The graph returns the inputs whose mutation it does not apply itself first.
    offset = metadata.num_mutated_inp_runtime_indices
    found: dict[int, int | None] = {}
    for i, info in enumerate(metadata.output_info):
        if info.output_type in of_input:
            found[offset + i] = info.base_idx
        elif info.output_type in of_output:
            found[offset + i] = None
    return found


def aten_stage(gm: fx.GraphModule, example_inputs: Sequence[Any]) -> fx.GraphModule:
    """Trace ``gm`` to ATen ops in fake mode without functionalization, so in-place ops
    (``add_``, ``copy_``, custom ``(a!)`` ops) are still visible. The graph is run by an
    Interpreter with node meta preserved, so provenance (stack traces, module paths)
    carries over to the ATen nodes, as aot_autograd does for the functional stage."""

    def run(*args: Any) -> Any:
        return fx.Interpreter(gm).run(*args)

    fake_mode = fake_mode_of(example_inputs)
    with _maybe(fake_mode), torch.no_grad(), fx_traceback.preserve_node_meta():
        inputs = [_as_fake(x, fake_mode) for x in example_inputs]
        mode: Literal["real", "fake"] = "real" if fake_mode else "fake"
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
