"""User text full of rich markup, bidi and terminal controls goes through every view
as it is: never parsed as markup (``[/]`` used to raise, ``[bold]`` vanished), never
reordering or driving the terminal."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_runner import run_main

SCOPE = "[/]sk[link=http://x]\u202eevil\nos.system('x') &amp;"
SCOPE_SHOWN = "[/]sk[link=http://x]\\u202eevil\\nos.system('x') &amp;"  # one line: a tag ends the line it is on

HOSTILE_MODEL = f'''
import torch
import torchair


class Block(torch.nn.Module):
    def forward(self, x, y):
        with torchair.scope.super_kernel({SCOPE!r}, "stream-fusion=1"):
            with torchair.scope.limit_core_num(8, 16):
                h = torch.relu(x) * 2  # [red]code[/] comment
        y.add_(1)
        s = h.sum().item()  # graph break
        return torch.cat([h, y], -1) / (s + 1.0)


model = Block()
example_inputs = (torch.randn(2, 3), torch.randn(2, 3))
'''


@pytest.fixture
def hostile_model(tmp_path, monkeypatch):
    """The model's path, relative to the working directory (as views show it)."""
    folder = tmp_path / "[bold]d[/]e"
    folder.mkdir(parents=True)
    (folder / "m[link=x].py").write_text(HOSTILE_MODEL)
    monkeypatch.chdir(tmp_path)
    return "[bold]d[/]e/m[link=x].py"


def _assert_shown_as_is(text: str) -> None:
    assert "\u202e" not in text and "\x1b" not in text


def test_trace_shows_every_view_with_names_as_they_are(hostile_model):
    code, out, err = run_main("trace", str(hostile_model), "--out", "o[/]u[bold]t", "--graphviz", "dot", "--html", "r[/].html")
    assert code == 0, err
    assert "trace saved to o[/]u[bold]t/" in err
    pictures = [p.read_text() for p in Path("o[/]u[bold]t").rglob("*.dot")]
    page = Path("r[/].html").read_text()
    assert all("\u202e" not in text for text in [*pictures, page])
    assert "\\u202eevil" in page and any("\\u202eevil" in text for text in pictures)
    assert any("&amp;amp;" in text for text in pictures)  # graphviz reads &amp; as &: drawn as written
    assert f"super_kernel_scope={SCOPE_SHOWN}" in out
    assert not any(line.lstrip().startswith("os.system") for line in out.splitlines())
    assert "# [red]code[/] comment" in out
    assert "[bold]d[/]e/m[link=x].py" in out  # the summary title and source lines
    # lists inside signatures were dropped as markup before: "(, -1)"
    assert "([float32(2, 3), float32(2, 3)], -1)" in out
    _assert_shown_as_is(out + err)


def test_scopes_report_shows_hostile_scope_names(hostile_model):
    code, out, err = run_main("scopes", str(hostile_model))
    assert code in (0, 1), err
    assert f"SuperKernel {SCOPE_SHOWN}" in out
    assert "[bold]d[/]e/m[link=x].py:10" in out
    _assert_shown_as_is(out + err)


def test_diff_shows_hostile_source_lines(hostile_model):
    code, out, err = run_main("diff", str(hostile_model), "--before-functionalize")
    assert code in (0, 1), err
    assert "[red]code[/] comment" in out
    _assert_shown_as_is(out + err)


@pytest.mark.parametrize("text", ["[/]", "[bold]x[/bold]", "[link=http://evil]click[/link]", "a\u202eb\x1b[31m"])
def test_error_messages_print_user_text_literally(tmp_path, text):
    model = tmp_path / "model.py"
    model.write_text(f"raise ValueError({text!r})\n")
    code, out, err = run_main("trace", str(model))
    assert code == 2
    expected = text.replace("\u202e", "\\u202e").replace("\x1b", "\\u001b")
    assert f"ValueError: {expected}" in " ".join(err.split())
    _assert_shown_as_is(err)


def test_soc_name_with_markup_is_an_error_not_a_crash(hostile_model):
    code, _, err = run_main("scopes", str(hostile_model), "--soc", "[/]bad")
    assert code == 2 and "[/]bad" in err


def test_ops_list_shows_plugin_files_and_schemas_with_brackets(tmp_path):
    plugin = tmp_path / "p[bold]x[red].py"
    plugin.write_text(
        "import torch\n"
        "lib = torch.library.Library('fxlabhostile', 'DEF')\n"
        "lib.define(\"f(Tensor x, str mode='[/]m[link=http://e]') -> Tensor\")\n"
        "lib.impl('f', lambda x, mode: x.clone(), 'CPU')\n"
    )
    code, out, err = run_main("ops", "list", "--plugin", str(plugin))
    assert code == 0, err
    text = "".join(out.split())
    assert "CPU:p[bold]x[red].py:" in text and "mode=\"[/]m[link=http://e]\"" in text
