"""fxlab.cli.console's progress line: what it says, how often it redraws, and that it is
gone when its block ends."""
from __future__ import annotations

import json

import io

import pytest
from rich.console import Console

from fxlab.cli import console


@pytest.fixture
def terminal(monkeypatch):
    """stderr as a 60-column colour terminal, written to memory."""
    screen = io.StringIO()
    fake = Console(file=screen, force_terminal=True, width=60, color_system=None)
    monkeypatch.setattr(console, "err", lambda: fake)
    return screen


def _rendered(line: console.ProgressLine) -> str:
    return line.__rich__().plain


def test_the_line_says_the_message_as_it_is_and_the_seconds_so_far(monkeypatch):
    clock = iter([100.0, 100.4, 103.7])
    monkeypatch.setattr(console.time, "monotonic", lambda: next(clock))
    line = console.ProgressLine("reading [bold]a\x1b.pb[/]")
    assert _rendered(line) == f"{console._PROGRESS_FRAMES[0]} reading [bold]a\\u001b.pb[/]"  # no markup, controls escaped
    assert _rendered(line) == f"{console._PROGRESS_FRAMES[3]} reading [bold]a\\u001b.pb[/]  3 s"


def test_an_update_is_shown_at_once_and_the_line_is_gone_after_the_block(terminal):
    with console.progress("loading model") as line:
        line.update("recording graph 0 of 1")
        shown = terminal.getvalue()
        line.update("recording graph 0 of 1")  # the same words: nothing redrawn
        assert terminal.getvalue() == shown
    assert "loading model" in shown and "recording graph 0 of 1" in shown
    assert shown.index("loading model") < shown.index("recording graph 0 of 1")
    assert terminal.getvalue().endswith("\x1b[2K")  # the line erased (transient), nothing printed after it


def test_it_redraws_itself_once_a_second(terminal, monkeypatch):
    rates = []
    real_live = console.Live

    def live(*args, **kwargs):  # type: ignore[no-untyped-def]
        rates.append(kwargs["refresh_per_second"])
        return real_live(*args, **kwargs)

    monkeypatch.setattr(console, "Live", live)
    with console.progress("x"):
        pass
    assert rates == [1.0]


def test_json_on_stdout_escapes_what_would_reorder_or_break_the_terminals_lines(capsys):
    from fxlab.cli import console

    console.print_json('{"scope": "a\\u202eb\\u2028c", "name": "caf\\u00e9"}')
    printed = capsys.readouterr().out
    assert "\u202e" not in printed and "\u2028" not in printed
    assert json.loads(printed) == {"scope": "a\u202eb\u2028c", "name": "caf\u00e9"}
