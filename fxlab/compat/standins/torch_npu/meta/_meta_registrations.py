"""Stand-in ``torch_npu.meta._meta_registrations``: ``m`` is the ``npu`` Meta library that
plugin files register Meta functions with (``@impl(m, "npu_add_custom")``)."""

from __future__ import annotations

from torch.library import Library

m = Library("npu", "IMPL", "Meta")
