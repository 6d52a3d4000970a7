from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from fxlab.compat.npugraph_ex_loader import NpugraphExNotFoundError, locate_npugraph_ex, npugraph_ex_session


def test_npugraph_ex_is_found_beside_torchair_or_the_fix_is_named(tmp_path: Path):
    with pytest.raises(NpugraphExNotFoundError, match="Run `fxlab torchair fetch` again"):
        locate_npugraph_ex(tmp_path / "dynamo" / "torchair")


def test_the_session_imports_npugraph_ex_and_undoes_it(torchair_path):
    from fxlab.compat.bridge import open_torchair

    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    with open_torchair(torchair_path) as torchair:
        where = locate_npugraph_ex(torchair.report.path)
        with npugraph_ex_session(where) as package:
            assert package.__name__ == "npugraph_ex" and callable(package.register_replacement)
            assert Path(sys.modules["npugraph_ex.npu_fx_compiler"].__file__).parent == where
    assert not [n for n in sys.modules if n.startswith("npugraph_ex")]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
