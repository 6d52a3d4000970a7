"""Views of a multi-rank trace from the ranks' results (plain data)."""
from __future__ import annotations

from rich.console import Console

from fxlab.viz.rank_report import rank_report
from fxlab.viz.rank_views import group_rule, rank_lines, ranks_json, ranks_table


def _result(rank: int, structure: str = "s", exact: str = "e", status: str = "ok", ir_check: str = "match (3 tensors, max |diff| 0)") -> dict:
    calls = [{"op": "all_reduce"}, {"op": "all_reduce"}, {"op": "_send"}]
    return {
        "rank": rank,
        "status": status,
        "graphs": 1,
        "ge_ops": 12,
        "collectives": calls,
        "check": "match (2 tensors, max |diff| 0)",
        "ir_check": ir_check,
        "structure": structure,
        "exact": exact,
        "json": {"status": status, "graphs": []},
    }


def _text(renderable) -> str:
    console = Console(width=160, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_a_row_per_rank_with_its_collectives_and_checks_in_a_word():
    results = [_result(0), _result(1, status="partial", ir_check="match (3 tensors); not run: graph 1")]
    text = _text(ranks_table(results, [[0, 1]], "/x/tp.py"))
    assert "fxlab trace · tp.py · 2 ranks" in text
    rows = [line.split() for line in text.splitlines() if line.strip()[:1] in ("0", "1")]
    assert rows[0] == ["0", "1", "12", "3", "(2", "all_reduce,", "1", "send)", "match", "match", "ok"]
    assert rows[1][-6:] == ["match", "match,", "some", "not", "run", "partial"]


def test_which_ranks_are_alike():
    by_rank = {0: _result(0, exact="a"), 1: _result(1, exact="b"), 2: _result(2, structure="t")}
    assert "ranks 0-1: graphs identical in structure (constants differ on ranks 0-1)" in _text(group_rule([0, 1], by_rank))
    assert "rank 2" in _text(group_rule([2], by_rank))
    lines = "".join(_text(line) for line in rank_lines(list(by_rank.values()), [[0, 1], [2]], "ok"))
    assert "graphs differ between ranks: ranks 0-1 alike; rank 2 unlike the others" in lines
    one = "".join(_text(line) for line in rank_lines([_result(0), _result(1)], [[0, 1]], "ok"))
    assert "graphs: same on ranks 0-1 (structure)" in one and "status: ok" in one


def test_json_has_every_rank_and_the_groups():
    data = ranks_json([_result(0), _result(1)], [[0, 1]], "ok", "out")
    assert (data["nproc"], data["same_structure"], data["out"]) == (2, [[0, 1]], "out")
    assert [r["rank"] for r in data["ranks"]] == [0, 1] and data["ranks"][0]["collectives"][0] == {"op": "all_reduce"}


def test_the_html_page_embeds_each_ranks_report_escaped_with_a_selector():
    page = rank_report({0: '<html><body>rank "zero" & </script></body></html>', 1: None}, [[0], [1]])
    assert page.count("<iframe data-rank=") == 2
    assert 'srcdoc="&lt;html&gt;&lt;body&gt;rank &quot;zero&quot; &amp; &lt;/script&gt;' in page
    assert "rank 1 made no report" in page
    assert '<option value="1">rank 1</option>' in page and "graphs unlike every other rank" in page
