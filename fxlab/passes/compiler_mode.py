"""The dispatch state TorchAir's compiler runs in, for passes that follow it.

TorchAir's backend hands the Dynamo graph to ``aot_module_simplified``, which calls the
compiler (its ``_NpuFxCompiler``) with the graph inputs' fake mode entered, and with the
Python dispatcher on when that mode has a shape environment (always under Dynamo). Every
pass TorchAir runs there (``_optimize_fx``, ``optimize_graph_without_runtime``, the GE
conversion) runs in that state, and some depend on it: torch's re-inplacing replays a view
on fake tensors of its own fake mode, which fails under another active fake mode, so
``reinplace_inplaceable_ops`` never drops a ``{view}_scatter`` that inverts a view of a
graph intermediate (it writes the scatter in place as ``view`` + ``copy_`` instead).
fxlab's passes run in the same state to give TorchAir's graph.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from torch._dispatch.python import enable_python_dispatcher
from torch._guards import detect_fake_mode


@contextlib.contextmanager
def compiler_dispatch_state(inputs: Sequence[Any]) -> Iterator[Any]:
    """aot_autograd's state around the compiler for a graph whose inputs are ``inputs``
    (their fake values); yields the fake mode entered (None when there is none)."""
    mode = detect_fake_mode(list(inputs))
    if mode is None:
        yield None
        return
    python_dispatcher = enable_python_dispatcher() if mode.shape_env is not None else contextlib.nullcontext()
    with mode, python_dispatcher:
        yield mode
