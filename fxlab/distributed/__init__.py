"""Multi-rank traces on torch.distributed: starting the ranks (``launch``), each rank's
environment and default group (``environment``), the collectives of its graphs
(``calls``) and their cross-rank check through the store (``agreement``), and the saved
layout of a multi-rank trace (``layout``)."""

from __future__ import annotations
