"""``--soc`` / ``--soc-ini``: every command refuses an unknown SoC alike, up front, and all
default to the same SoC."""
from __future__ import annotations

import json

import pytest

from fxlab.socs import DEFAULT_SOC, KNOWN_SOCS
from tests.cli.cli_runner import run_cli
from tests.conftest import EXAMPLES

MULTI_STREAM = str(EXAMPLES / "multi_stream.py")
UNKNOWN = "Unknown SoC 'Ascend999'. fxlab knows " + ", ".join(KNOWN_SOCS)


@pytest.mark.parametrize(
    "argv",
    [
        ["trace", MULTI_STREAM, "--mode", "reduce-overhead", "--soc", "Ascend999"],
        ["trace", MULTI_STREAM, "--mode", "reduce-overhead", "--soc", "Ascend999", "--nproc", "2"],
        ["scopes", MULTI_STREAM, "--soc", "Ascend999"],
        ["scopes", MULTI_STREAM, "--mode", "reduce-overhead", "--soc", "Ascend999"],
    ],
)
def test_an_unknown_soc_is_refused_alike_before_anything_is_captured(argv: list[str], tmp_path) -> None:
    out = tmp_path / "out"
    code, stdout, message = run_cli(*argv, "--out", str(out)) if argv[0] == "trace" else run_cli(*argv)
    assert code == 2
    assert " ".join(message.split()).startswith(UNKNOWN)
    assert stdout == "" and not out.exists()  # nothing captured, nothing written


@pytest.mark.parametrize("command", ["trace", "scopes"])
def test_both_soc_options_at_once_are_refused(command: str, tmp_path) -> None:
    code, _, message = run_cli(command, MULTI_STREAM, "--soc", "Ascend910B1", "--soc-ini", str(tmp_path / "x.ini"))
    assert code == 2 and message == "Give either --soc NAME or --soc-ini FILE, not both."


def _stream_warning_of_trace(*argv: str) -> str:
    code, out, err = run_cli("trace", MULTI_STREAM, "--mode", "reduce-overhead", "--json", *argv)
    assert code == 0, err
    (graph,) = json.loads(out)["graphs"]
    (warning,) = graph["streams"]["warnings"]
    return warning


def _stream_warning_of_scopes(*argv: str) -> str:
    code, out, err = run_cli("scopes", MULTI_STREAM, "--mode", "reduce-overhead", "--json", *argv)
    assert code == 0, err
    (graph,) = json.loads(out)["graphs"]
    (warning,) = graph["warnings"]
    return warning


def test_trace_and_scopes_check_against_the_same_default_soc() -> None:
    expected = f"more cores than {DEFAULT_SOC} has (16 + 16 AI cores > 24; 32 + 32 vector cores > 48)"
    assert expected in _stream_warning_of_trace()
    assert expected in _stream_warning_of_scopes()


def test_a_platform_ini_is_the_soc_the_streams_are_checked_against(tmp_path) -> None:
    ini = tmp_path / "Ascend910B9.ini"
    ini.write_text("[version]\nSoC_version=Ascend910B9\n[SoCInfo]\nai_core_cnt=30\nvector_core_cnt=60\n")
    # 16 + 16 AI cores > 30 and 32 + 32 vector cores > 60: both commands warn, naming the ini's SoC.
    expected = "more cores than Ascend910B9 has (16 + 16 AI cores > 30; 32 + 32 vector cores > 60)"
    assert expected in _stream_warning_of_trace("--soc-ini", str(ini))
    assert expected in _stream_warning_of_scopes("--soc-ini", str(ini))
