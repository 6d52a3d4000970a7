"""SoC table, platform ini reading and core-count checks."""
from __future__ import annotations

import pytest

from fxlab.errors import UsageError
from fxlab.socs import KNOWN_SOCS, check_core_count, parse_aicore_num, read_platform_ini, soc_by_name

A2 = soc_by_name("Ascend910B1")


def test_lookup_is_case_insensitive_and_unknown_names_list_the_known_ones() -> None:
    assert soc_by_name("ascend910b1") == KNOWN_SOCS["Ascend910B1"]
    assert (A2.ai_core_cnt, A2.vector_core_cnt) == (24, 48)
    with pytest.raises(UsageError) as info:
        soc_by_name("Ascend999")
    assert "Ascend999" in str(info.value) and all(name in str(info.value) for name in KNOWN_SOCS)


def test_platform_ini_is_read(tmp_path) -> None:
    ini = tmp_path / "MySoC.ini"
    ini.write_text("[version]\nSoC_version=MySoC\n\n[SoCInfo]\nai_core_cnt=20 # cube\ncube_core_cnt=20\nvector_core_cnt=40\n")
    soc = read_platform_ini(ini)
    assert (soc.name, soc.ai_core_cnt, soc.cube_core_cnt, soc.vector_core_cnt) == ("MySoC", 20, 20, 40)
    assert soc.source == str(ini)


@pytest.mark.parametrize(
    "text, complaint",
    [
        ("[SoCInfo]\nai_core_cnt=24\n", "vector_core_cnt"),
        ("[version]\nSoC_version=X\n", "ai_core_cnt / vector_core_cnt"),
        ("[SoCInfo]\nai_core_cnt=many\nvector_core_cnt=4\n", "not a core count"),
        ("not an ini", "not an ini file"),
    ],
)
def test_platform_ini_without_core_counts_is_a_usage_error(tmp_path, text: str, complaint: str) -> None:
    ini = tmp_path / "Bad.ini"
    ini.write_text(text)
    with pytest.raises(UsageError, match=complaint):
        read_platform_ini(ini)


def test_missing_ini_file_is_a_usage_error(tmp_path) -> None:
    with pytest.raises(UsageError, match="Cannot read"):
        read_platform_ini(tmp_path / "absent.ini")


@pytest.mark.parametrize(
    "text, kind, soc, problem",
    [
        ("24", "aicore", A2, None),
        ("48", "vectorcore", A2, None),
        ("25", "aicore", A2, "above the maximum of Ascend910B1 (24)"),
        ("49", "vectorcore", A2, "above the maximum"),
        ("0", "aicore", A2, "0 is not allowed"),
        ("0", "vectorcore", A2, "0 is not allowed"),
        ("0", "vectorcore", None, "only on a SoC without Vector Cores"),
        ("-3", "aicore", None, "negative"),
        ("2.5", "aicore", None, "not an integer"),
        ("x", "vectorcore", A2, "not an integer"),
        ("1000", "aicore", None, None),
    ],
)
def test_core_count_rules(text: str, kind: str, soc, problem: str | None) -> None:
    found = check_core_count(text, kind, soc)
    assert (found is None) if problem is None else (problem in found)


def test_vector_core_zero_is_valid_on_a_soc_without_vector_cores(tmp_path) -> None:
    ini = tmp_path / "NoVec.ini"
    ini.write_text("[SoCInfo]\nai_core_cnt=32\nvector_core_cnt=0\n")
    soc = read_platform_ini(ini)
    assert check_core_count("0", "vectorcore", soc) is None
    assert "above the maximum" in check_core_count("1", "vectorcore", soc)


@pytest.mark.parametrize("text", ["24", "24|48|1", "a|b", "24,48", "|"])
def test_malformed_global_aicore_num(text: str) -> None:
    with pytest.raises(UsageError, match="A\\|V"):
        parse_aicore_num(text, "--aicore-num")


def test_global_aicore_num_syntax() -> None:
    assert parse_aicore_num("24|48", "--aicore-num") == (24, 48)
    assert parse_aicore_num(" -1|0", "--aicore-num") == (-1, 0)  # ranges are checked separately
