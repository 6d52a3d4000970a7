"""Pure-Python stand-ins for TorchAir's native extension modules.

TorchAir ships ``core/_torchair.so`` and friends, which link against CANN's Graph
Engine. On a CPU machine they cannot load, yet TorchAir's converters only need a few of
their functions: the operator prototype registry (``get_registered_ir_def``), the
CANN-compatibility check, and Graph Engine start/stop calls that do nothing before
compilation. The modules here answer those calls in Python; anything that would compile
or run a graph raises :class:`NativePartStoodIn`, because fxlab stops before GE does.

:data:`STANDINS` maps each TorchAir module name to the stand-in module that replaces it.
"""

from __future__ import annotations

STANDINS: dict[str, str] = {
    "torchair.core._torchair": "fxlab.compat.native_standins.torchair_core",
    "torchair.core._npu_graph_executor": "fxlab.compat.native_standins.graph_executor",
    "torchair.core._npu_utils": "fxlab.compat.native_standins.graph_executor",
    "torchair.core._abi_compat_ge_apis": "fxlab.compat.native_standins.graph_executor",
}


class NativePartStoodIn(RuntimeError):
    """A TorchAir call that needs CANN's Graph Engine or an NPU was reached."""
