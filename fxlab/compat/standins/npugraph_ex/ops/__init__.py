"""Stand-in ``npugraph_ex.ops``: npugraph_ex's record / wait and event operators
(``npugraph_ex::``), defined by :mod:`fxlab.npu_streams` with the scope markers."""

from __future__ import annotations

import fxlab.npu_streams  # noqa: F401 - defines the npugraph_ex:: operators where npugraph_ex has not
