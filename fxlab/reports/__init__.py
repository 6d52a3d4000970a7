"""Reports computed from a trace: the SuperKernel scope and core-limit report, and the
per-op conversion summary. Data only; viz renders them and capture saves them."""
