"""Bad input through the command line, as a new user types it: each gives its exit code,
no traceback, one message naming the cause and the fix, and leaves ``--out`` as promised
(a trace already there untouched, no half-built folder beside it)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_runner import run_main
from tests.conftest import EXAMPLES

SIMPLE = "import torch\nmodel = torch.nn.Linear(2, 2)\nexample_inputs = (torch.randn(1, 2),)\n"
GOOD_TRACE = {"manifest.json": '{"fxlab_version": "0.1.0", "status": "ok", "graphs": []}', "graph_0/aten.json": "{}"}
VALID_EMPTY_MANIFEST = {"model": "m.py", "entry": "model", "fxlab_version": "0", "torch_version": "0", "stages": ["aten"], "graphs": []}

# name -> file text (str) or bytes, written into the test's folder before the command runs
FILES: dict[str, str | bytes] = {
    "simple.py": SIMPLE,
    "syntax.py": "def broken(:\n",
    "raises.py": "raise ValueError('bad [/] value')\n",
    "nothing.py": "x = 1\n",
    "not_callable.py": "model = 3\nexample_inputs = ()\n",
    "returns_42.py": "def get_model_and_inputs():\n    return 42\n",
    "exits.py": "def get_model_and_inputs():\n    raise SystemExit(4)\n",
    "inputs_int.py": "import torch\nmodel = torch.nn.ReLU()\nexample_inputs = 5\n",
    "inputs_object.py": "import torch\nmodel = torch.nn.ReLU()\nexample_inputs = (object(),)\n",
    "eager_fails.py": "import torch\ndef model(x):\n    return x @ x\nexample_inputs = (torch.randn(2, 3),)\n",
    "binary.py": b"\x00\xff\xfe\x01binary",
    "latin1.py": "s = 'caf\xe9'\n".encode("latin-1"),
    "interrupts.py": "raise KeyboardInterrupt\n",
    "plugin_raises.py": "raise RuntimeError('plugin broke')\n",
    "binary.bin": b"\xff\xfe\x00\x01" * 8,
    "bad.json": "{not json",
    "null.json": "null",
    "list.json": "[1, 2]",
    "no_socinfo.ini": "[version]\nSoC_version=X\n",
    "superscript.ini": "[SoCInfo]\nai_core_cnt=\u00b2\nvector_core_cnt=4\n",
    "negative.ini": "[SoCInfo]\nai_core_cnt=-3\nvector_core_cnt=4\n",
    "blocker": "a file, not a folder\n",
    "foreign/notes.txt": "mine\n",
    "t_empty/.keep": "",
    "t_null/manifest.json": "null",
    "t_list/manifest.json": "[]",
    "t_index/manifest.json": json.dumps({**VALID_EMPTY_MANIFEST, "graphs": [{"index": "../../etc", "stages": []}]}),
    "t_binary/manifest.json": b"\xff\xfe\x00",
    "t_corrupt/manifest.json": "{oops",
    "t_failed/manifest.json": '{"status": "failed", "error": "the model raised", "graphs": []}',
    "t_valid/manifest.json": json.dumps(VALID_EMPTY_MANIFEST),
}

MY_INPLACE = str(EXAMPLES / "my_inplace.py")

# (id, argv with {d} for the test folder, exit code, fragments of the message: cause..., fix)
CASES: list[tuple[str, list[str], int, list[str]]] = [
    # -- trace: the model file
    ("missing model", ["trace", "{d}/missing.py"], 2, ["does not exist", "Pass the path of a Python file"]),
    ("model is a folder", ["trace", "{d}/foreign"], 2, ["is a directory", "Pass the path of a Python file"]),
    ("syntax error", ["trace", "{d}/syntax.py"], 2, ["line 1, has a syntax error", "Fix it and run again"]),
    ("raises at import", ["trace", "{d}/raises.py"], 2, ["raised ValueError: bad [/] value", "Fix the model file"]),
    ("defines nothing", ["trace", "{d}/nothing.py"], 2, ["defines no model to trace", "Define one of them"]),
    ("model = 3", ["trace", "{d}/not_callable.py"], 2, ["`model` is an int", "Set `model` to an nn.Module"]),
    ("entry returns 42", ["trace", "{d}/returns_42.py"], 2, ["returned an int", "it must return a pair (model, inputs)"]),
    ("entry exits", ["trace", "{d}/exits.py"], 2, ["raised SystemExit: 4", "Fix get_model_and_inputs()"]),
    ("inputs are an int", ["trace", "{d}/inputs_int.py"], 2, ["example inputs are an int", "give a tuple of arguments"]),
    ("inputs are objects", ["trace", "{d}/inputs_object.py"], 2, ["but argument 0 is an object", "Pass the object's tensors"]),
    ("eager run fails", ["trace", "{d}/eager_fails.py"], 2, ["when run eagerly", "must first run eagerly"]),
    ("binary model file", ["trace", "{d}/binary.py"], 2, ["binary.py, has a syntax error: source code string cannot contain null bytes", "Fix it"]),
    ("latin-1 model file", ["trace", "{d}/latin1.py"], 2, ["latin1.py", "Fix"]),
    ("unknown entry", ["trace", "{d}/simple.py", "--entry", "nope"], 2, ["`nope` is not defined", "Give the name of a function"]),
    ("Ctrl-C in the model", ["trace", "{d}/interrupts.py"], 130, ["interrupted (Ctrl-C)", "Run the command again"]),
    # -- trace: options
    ("unknown stage", ["trace", "{d}/simple.py", "--stages", "bogus"], 2, ["unknown stage 'bogus'", "the stages are"]),
    ("unknown picture format", ["trace", "{d}/simple.py", "--graphviz", "bmp"], 2, ["unknown picture format 'bmp'", "use one of"]),
    ("focus without pictures", ["trace", "{d}/simple.py", "--focus", "add"], 2, ["--focus shapes the --graphviz pictures", "add --graphviz FORMAT"]),
    ("unknown converter", ["trace", "{d}/simple.py", "--converter", "bogus"], 2, ["--converter 'bogus'", "choose builtin or torchair"]),
    ("unknown converter, new --out", ["trace", "{d}/simple.py", "--converter", "bogus", "--out", "{d}/never_made"], 2, ["--converter 'bogus'", "choose builtin or torchair"]),
    ("bad TorchAir path", ["trace", "{d}/simple.py", "--converter", "torchair", "--torchair-path", "{d}/nowhere"], 2, ["is not a TorchAir source tree", "fxlab torchair fetch"]),
    ("missing plugin", ["trace", "{d}/simple.py", "--plugin", "{d}/absent.py"], 2, ["plugin file", "does not exist"]),
    ("plugin raises", ["trace", "{d}/simple.py", "--plugin", "{d}/plugin_raises.py"], 2, ["RuntimeError: plugin broke", "Fix the plugin file"]),
    ("--out is a file", ["trace", "{d}/simple.py", "--out", "{d}/blocker"], 2, ["is a file, not a directory", "Give a directory path"]),
    ("--out holds other files", ["trace", "{d}/simple.py", "--out", "{d}/foreign"], 2, ["already holds files that are not a saved trace (notes.txt)", "Give a new or empty directory"]),
    ("--out under a file", ["trace", "{d}/simple.py", "--out", "{d}/blocker/sub"], 2, ["blocker is a file, so no folder can be made under it", "Give a directory path"]),
    ("--out is the working folder", ["trace", "{d}/simple.py", "--out", "."], 2, ["is the folder you run fxlab in", "Give a folder of its own"]),
    ("no such command", ["bogus"], 2, ["No such command 'bogus'", "--help"]),
    ("trace without a model", ["trace"], 2, ["Missing argument", "--help"]),
    # -- scopes
    ("unknown SoC", ["scopes", MY_INPLACE, "--soc", "[/]Ascend"], 2, ["Unknown SoC '[/]Ascend'", "--soc-ini"]),
    ("SoC and ini both", ["scopes", MY_INPLACE, "--soc", "Ascend910B1", "--soc-ini", "{d}/no_socinfo.ini"], 2, ["Give either --soc NAME or --soc-ini FILE", "not both"]),
    ("missing ini", ["scopes", MY_INPLACE, "--soc-ini", "{d}/absent.ini"], 2, ["Cannot read the platform ini", "Check the --soc-ini path"]),
    ("binary ini", ["scopes", MY_INPLACE, "--soc-ini", "{d}/binary.bin"], 2, ["is not a text file", "Pass a CANN platform_config"]),
    ("ini without SoCInfo", ["scopes", MY_INPLACE, "--soc-ini", "{d}/no_socinfo.ini"], 2, ["has no ai_core_cnt / vector_core_cnt", "Pass the SoC's ini"]),
    ("superscript core count", ["scopes", MY_INPLACE, "--soc-ini", "{d}/superscript.ini"], 2, ["is not a core count", "Fix the ini file"]),
    ("negative core count", ["scopes", MY_INPLACE, "--soc-ini", "{d}/negative.ini"], 2, ["is not a core count", "Fix the ini file"]),
    ("double minus aicore_num", ["scopes", MY_INPLACE, "--aicore-num", "--5|4"], 2, ["is not an aicore_num value", "e.g. \"24|48\""]),
    ("aicore_num without bar", ["scopes", MY_INPLACE, "--aicore-num", "24"], 2, ["is not an aicore_num value", "write \"A|V\""]),
    # -- diff
    ("three paths", ["diff", "{d}/t_valid", "{d}/t_valid", "{d}/t_valid"], 2, ["not 3 paths", "one model file, two saved trace directories, or a saved trace and NPU dumps (TRACE NPU_DUMP)"]),
    ("one folder", ["diff", "{d}/t_valid"], 2, ["is a directory", "give a model file, or two saved trace directories"]),
    ("no trace in folder", ["diff", "{d}/t_valid", "{d}/t_empty"], 2, ["holds neither a saved trace (manifest.json) nor GE dumps", "fxlab trace MODEL.py --out DIR"]),
    ("manifest null", ["diff", "{d}/t_valid", "{d}/t_null"], 2, ["holds null", "Write the trace again"]),
    ("manifest list", ["diff", "{d}/t_list", "{d}/t_valid"], 2, ["holds a JSON array", "Write the trace again"]),
    ("manifest path index", ["diff", "{d}/t_valid", "{d}/t_index"], 2, ["graph index '../../etc' is not an integer", "Write it again"]),
    ("manifest binary", ["diff", "{d}/t_valid", "{d}/t_binary"], 2, ["UnicodeDecodeError", "Write it again"]),
    ("manifest corrupt", ["diff", "{d}/t_valid", "{d}/t_corrupt"], 2, ["JSONDecodeError", "Write it again"]),
    ("failed trace", ["diff", "{d}/t_failed", "{d}/t_valid"], 2, ["is from a failed run: the model raised", "Run `fxlab trace` again"]),
    ("missing graph", ["diff", "{d}/t_valid", "{d}/t_valid", "--graph", "5"], 2, ["--graph 5 does not exist", "leave --graph out"]),
    ("trace folder is absent", ["diff", "{d}/t_valid", "{d}/absent"], 2, ["does not exist", "fxlab trace MODEL.py --out DIR"]),
    ("unknown stage to diff", ["diff", MY_INPLACE, "--from", "bogus", "--to", "aten"], 2, ["--from 'bogus' is not a stage", "the stages are"]),
    ("same stage twice", ["diff", MY_INPLACE, "--from", "aten", "--to", "aten"], 2, ["no differences with itself", "Pick two stages"]),
    ("FX against IR", ["diff", MY_INPLACE, "--from", "aten", "--to", "ascend_ir"], 2, ["cannot be compared", "FX stages"]),
    ("model options on traces", ["diff", "{d}/t_valid", "{d}/t_valid", "--from", "aten"], 2, ["apply to a model file only", "--from"]),
    # -- ops
    ("ATen op to ops check", ["ops", "check", "aten::add"], 2, ["one of PyTorch's own aten ops", "Give a custom op such as npu::my_inplace"]),
    ("ATen overload to ops check", ["ops", "check", "torch.ops.aten.add.Tensor"], 2, ["one of PyTorch's own aten ops", "fxlab trace MODEL.py"]),
    ("unknown op", ["ops", "check", "npu::no_such_op"], 2, ["no custom op named 'npu::no_such_op'", "Load the file that defines it with --plugin FILE"]),
    ("missing prototype", ["ops", "check", "npu::my_inplace", "--prototype", "{d}/absent.json"], 2, ["does not exist", "Pass the msOpGen JSON file"]),
    ("binary prototype", ["ops", "check", "npu::my_inplace", "--prototype", "{d}/binary.bin"], 2, ["is not a text file", "Pass the msOpGen JSON file"]),
    ("corrupt prototype", ["ops", "check", "npu::my_inplace", "--prototype", "{d}/bad.json"], 2, ["is not valid JSON", "Fix the file"]),
    ("null prototype", ["ops", "check", "npu::my_inplace", "--prototype", "{d}/null.json"], 2, ["an op must be a JSON object", "\"op\", \"input_desc\" and"]),
    ("list prototype", ["ops", "check", "npu::my_inplace", "--prototype", "{d}/list.json"], 2, ["an op must be a JSON object", "got int"]),
    # -- torchair fetch
    ("wheel that is no zip", ["torchair", "fetch", "--wheel", "{d}/binary.bin", "--cache-dir", "{d}/cache"], 1, ["cannot be read as a wheel", "Pass a torch_npu .whl file"]),
    ("missing wheel", ["torchair", "fetch", "--wheel", "{d}/absent.whl", "--cache-dir", "{d}/cache"], 1, ["cannot be read as a wheel", "Pass a torch_npu .whl file"]),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad input")
    for name, content in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
    return root


def _good_trace(path: Path) -> dict[str, bytes]:
    for name, text in GOOD_TRACE.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    return _tree(path)


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_the_battery_is_large_enough():
    assert len(CASES) >= 40 and len({case[0] for case in CASES}) == len(CASES)


@pytest.mark.parametrize("name, argv, code, fragments", CASES, ids=[case[0] for case in CASES])
def test_bad_input(folder, tmp_path, monkeypatch, name, argv, code, fragments):
    monkeypatch.setenv("FXLAB_WIDTH", "400")  # one message, one line: fragments are not split
    args = [a.replace("{d}", str(folder)) for a in argv]
    out_dir = None
    if args[0] == "trace" and "--out" not in args and len(args) > 1:
        out_dir = tmp_path / "kept"  # a good trace the failed run must leave as it was
        before = _good_trace(out_dir)
        args += ["--out", str(out_dir)]
    siblings = sorted(p.name for p in folder.iterdir())
    got, out, err = run_main(*args)
    text = " ".join((out + err).split())
    assert got == code, text
    assert "Traceback" not in out + err and 'File "' not in err, text
    for fragment in fragments:
        assert fragment in text, (fragment, text)
    if out_dir is not None:
        assert _tree(out_dir) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kept"]  # no staging folder left
    assert sorted(p.name for p in folder.iterdir()) == siblings or "--cache-dir" in args  # nothing made for a bad option
