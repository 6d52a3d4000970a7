"""TorchAir's own backend entered as a user enters it: ``torch.compile(fn,
backend=torchair.get_npu_backend(compiler_config=config))``, on CPU with its native parts
stood in. What its compile of the first call raises is the claim a test proves; a compile
that returns is stopped there (running the compiled graph needs an NPU)."""
from __future__ import annotations

from typing import Any, Callable

import torch

from fxlab.compat.native_standins.torch_npu_runtime import DEFAULT_SOC, torch_npu_present


def torchair_compile_error(torchair: Any, fn: Callable[..., Any], *inputs: Any, config: Any = None) -> BaseException | None:
    """The exception TorchAir's compiler raised compiling ``fn``'s graph, unwrapped from
    its error-code wrapper; ``None`` when it compiled every graph."""
    compiler = torchair.module("npu_fx_compiler")._NpuFxCompiler
    compile_graph = compiler._get_compiled_gm
    raised: list[BaseException] = []
    after_compile: BaseException | None = None
    compiled: list[bool] = []

    def recording(self: Any, gm: Any, example_inputs: Any) -> Any:
        try:
            result = compile_graph(self, gm, example_inputs)
        except Exception as exc:
            raised.append(exc)
            raise
        compiled.append(True)
        return result

    compiler._get_compiled_gm = recording
    try:
        with torch_npu_present(DEFAULT_SOC):
            backend = torchair.package.get_npu_backend(compiler_config=config or torchair.package.CompilerConfig())
            torch._dynamo.reset()
            try:
                torch.compile(fn, backend=backend)(*inputs)
            except Exception as exc:  # noqa: BLE001 - the compile's own exception is recorded; running needs an NPU
                after_compile = exc
    finally:
        compiler._get_compiled_gm = compile_graph
        torch._dynamo.reset()
    if raised:
        return raised[0]
    assert compiled, f"TorchAir's compiler was never called: {after_compile!r}"
    return None
