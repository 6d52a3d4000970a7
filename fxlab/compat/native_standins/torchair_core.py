"""Stand-in for TorchAir's ``torchair.core._torchair`` native module (CPU, no CANN).

The Graph Engine start/stop calls do nothing (fxlab stops before GE compiles); the
prototype registry answers from :mod:`fxlab.compat.native_standins.prototypes`; the
CANN compatibility check passes every op (there is no CANN to disagree); calls that
would compile, run or export a graph raise ``NativePartStoodIn``.
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Sequence
from typing import Any

from fxlab.compat.native_standins import NativePartStoodIn
from fxlab.compat.native_standins.prototypes import IrPrototype, custom_op_prototype

# Set by ``InitializeGraphEngine``: the options TorchAir would hand to GE.
ge_options: dict[str, str] = {}


class TorchDataType(enum.IntEnum):
    BOOL = 0
    UINT8 = 1
    INT8 = 2
    INT16 = 3
    UINT16 = 4
    INT32 = 5
    UINT32 = 6
    INT64 = 7
    UINT64 = 8
    BF16 = 9
    FLOAT16 = 10
    FLOAT32 = 11
    FLOAT64 = 12
    COMPLEX64 = 13
    COMPLEX128 = 14


def InitializeGraphEngine(options: dict[str, str]) -> None:  # noqa: N802 - native API name
    ge_options.update(options)


def FinalizeGraphEngine() -> None:  # noqa: N802
    ge_options.clear()


def StupidRepeat(word: str, times: int) -> str:  # noqa: N802
    return word * times


def SetDebugLogPath(path: str) -> None:  # noqa: N802
    return None


def InitDeviceStdoutChannel(device_id: int) -> None:  # noqa: N802
    return None


def GetSocName() -> str:  # noqa: N802
    return ""


def check_cann_compat(op_type: str, optional_inputs: Sequence[str], optional_attrs: Sequence[str]) -> str:
    """Empty string = compatible. Without CANN every op is taken as supported."""
    return ""


def get_registered_ir_def(op_type: str) -> tuple[str, list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """``(status, inputs, outputs, attrs)`` as GE's registry would answer; ``ERROR`` when
    neither a custom op's prototype (registered here or with the custom-op kit) nor
    TorchAir's ``REG_OP`` text knows the op."""
    proto = custom_op_prototype(op_type) or _prototype_from_torchair_docs(op_type)
    if proto is None:
        return "ERROR", [], [], []
    return "SUCCESS", list(proto.inputs), list(proto.outputs), list(proto.attrs)


def _prototype_from_torchair_docs(op_type: str) -> IrPrototype | None:
    raw_ops = sys.modules.get("torchair._ge_concrete_graph.auto_generated_ge_raw_ops")
    fn = getattr(raw_ops, op_type, None) if raw_ops is not None else None
    doc = getattr(fn, "__doc__", None)
    return IrPrototype.from_reg_op(op_type, doc) if doc else None


def _stood_in(what: str) -> NativePartStoodIn:
    return NativePartStoodIn(
        f"{what} needs CANN's Graph Engine, which fxlab stands in for on this machine; "
        "fxlab stops after TorchAir's conversion, before GE compiles or runs the graph"
    )


class TorchNpuGraphBase:
    """Base of TorchAir's GE graph runner; loading, compiling and running need GE."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args

    def load(self, *args: Any, **kwargs: Any) -> None:
        raise _stood_in("loading a graph into GE")

    def compile(self, *args: Any, **kwargs: Any) -> None:
        raise _stood_in("compiling a GE graph")

    def auto_tune(self, *args: Any, **kwargs: Any) -> None:
        raise _stood_in("tuning a GE graph")

    def run(self, *args: Any, **kwargs: Any) -> None:
        raise _stood_in("running a GE graph")


def export(serialized_graph: bytes, options: dict[str, str]) -> None:
    raise _stood_in("exporting an .air model")


def as_torch_tensors(*args: Any) -> Any:
    raise _stood_in("wrapping device memory as tensors")


def AclmdlSetDump(*args: Any) -> None:  # noqa: N802
    raise _stood_in("ACL model dump")


def AclopStartDumpArgs(*args: Any) -> None:  # noqa: N802
    raise _stood_in("ACL op dump")


def AclopStopDumpArgs(*args: Any) -> None:  # noqa: N802
    raise _stood_in("ACL op dump")
