from __future__ import annotations

from rich.console import Console

from fxlab.viz.safe_text import plain, visible


def test_bidi_and_terminal_controls_are_escaped():
    assert visible("a\u202eb\u2066c\x1b[0m\r") == "a\\u202eb\\u2066c\\u001b[0m\\u000d"
    assert visible("tab\tand\nnewline stay") == "tab\tand\nnewline stay"


def test_plain_is_never_markup():
    console = Console(width=80, record=True, color_system=None)
    console.print(plain("[/] [bold]x[/bold] [link=http://e]y[/link]"))
    assert console.export_text().strip() == "[/] [bold]x[/bold] [link=http://e]y[/link]"
