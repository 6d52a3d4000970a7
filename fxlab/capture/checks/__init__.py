"""The checks of a trace: what fxlab ran, compared with what the model computes.

``values`` says how two values are compared; ``runs`` holds the runs a check compares
against and the one routine every graph check goes through (``run_against``); one module
per check: ``eager`` (eager vs compiled), ``program_calls`` (a program's compiled call vs
its eager run), ``ascend_ir``, ``aclgraph`` (with ``aclgraph_blame`` and
``torchair_reference``), ``user_passes``, ``custom_ops``.
"""
