"""TorchAir-compatible layer: stand-in ``torchair`` / ``torch_npu`` packages installed by
:func:`compat_layer` only while fxlab runs user files, plugin loading, and (``bridge*``)
the bridge to a real TorchAir."""

from __future__ import annotations
