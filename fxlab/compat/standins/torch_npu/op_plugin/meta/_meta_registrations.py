"""Stand-in ``torch_npu.op_plugin.meta._meta_registrations`` (the same ``m`` as
``torch_npu.meta._meta_registrations``)."""

from __future__ import annotations

from torch_npu.meta._meta_registrations import m  # noqa: F401
