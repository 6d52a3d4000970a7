"""fxlab.ops.define: where define_op looks for the prototype it is given."""
from __future__ import annotations

from pathlib import Path

from fxlab.ops.define import prototype_beside


def test_a_relative_prototype_is_beside_the_calling_file(tmp_path: Path) -> None:
    plugin = tmp_path / "my_ops" / "plugin.py"
    plugin.parent.mkdir()
    plugin.write_text("")
    assert prototype_beside("scale.json", f"{plugin}:12") == tmp_path / "my_ops" / "scale.json"
    assert prototype_beside("protos/scale.json", f"{plugin}:12") == tmp_path / "my_ops" / "protos" / "scale.json"


def test_an_absolute_prototype_or_a_call_from_no_file_is_kept(tmp_path: Path) -> None:
    absolute = tmp_path / "elsewhere" / "scale.json"
    assert prototype_beside(absolute, f"{tmp_path / 'plugin.py'}:3") == absolute
    assert prototype_beside("scale.json", "<stdin>:1") == Path("scale.json")
