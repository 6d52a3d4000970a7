"""Stand-in ``torchair`` and ``torch_npu`` packages, imported under those names only
through :func:`fxlab.compat.layer.compat_layer` (never as ``fxlab.compat.standins.*``)."""
