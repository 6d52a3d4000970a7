"""The program as Python runs it: which commands run in fxlab's own process, the exit
code and the traceback of a program run there, and a child's exit code or signal."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from fxlab.cli.run_program import COMMAND, MODULE, SCRIPT, CannotStart, Program, parse_program, run_child, run_in_process
from fxlab.errors import UsageError


def test_python_scripts_and_modules_run_here_and_anything_else_as_a_child(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("")
    assert parse_program(["python", str(script), "--x", "1"]) == Program(("python", str(script), "--x", "1"), SCRIPT, str(script), ("--x", "1"))
    assert parse_program([sys.executable, "-m", "pkg.mod", "a"]) == Program((sys.executable, "-m", "pkg.mod", "a"), MODULE, "pkg.mod", ("a",))
    for command in (["torchrun", "--nproc-per-node", "2", str(script)], ["python", "-c", "pass"], ["python", "-u", str(script)], ["bash", "run.sh"]):
        assert parse_program(command).kind == COMMAND
    with pytest.raises(UsageError, match="no program given"):
        parse_program([])
    with pytest.raises(UsageError, match="nope.py is not a file"):
        parse_program(["python3", "nope.py"])


TRACEBACK = """import sys

def inner():
    raise KeyError(sys.argv[1])

inner()
"""


def test_a_scripts_traceback_and_exit_code_are_pythons_own(tmp_path, capsys):
    script = tmp_path / "t.py"
    script.write_text(TRACEBACK)
    alone = subprocess.run([sys.executable, str(script), "key"], capture_output=True, text=True)
    code = run_in_process(parse_program(["python", str(script), "key"]))
    assert (code, capsys.readouterr().err) == (alone.returncode, alone.stderr) == (1, alone.stderr)
    assert sys.argv[1:] != ["key"]  # put back


def test_a_childs_exit_code_and_the_signal_that_ended_it(tmp_path):
    assert run_child(Program(("sh", "-c", "exit 7")), {}) == 7
    assert run_child(Program(("sh", "-c", "kill -TERM $$")), {}) == -signal.SIGTERM
    started: list[int] = []
    assert run_child(Program(("sh", "-c", f"echo $$ > {tmp_path / 'pid'}")), {}, started.append) == 0
    assert started == [int((tmp_path / "pid").read_text())]  # the process id the run records its exit code under
    with pytest.raises(CannotStart, match="no-such-command-here: no such command"):
        run_child(Program(("no-such-command-here",)), {})
