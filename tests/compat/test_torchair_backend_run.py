"""fxlab.compat.torchair_backend_run: where a failure of TorchAir's own backend began. Only
a failure that began in TorchAir's (or npugraph_ex's) own code is said to be TorchAir's;
one that began in fxlab's stand-ins, even when TorchAir re-raised it, is not."""
from __future__ import annotations

from fxlab.compat import native_standins
from fxlab.compat.torchair_backend_run import _where_it_began


def _raiser(path: str, body: str = "raise TypeError(\"'>=' not supported between instances of 'ValuePack' and 'int'\")"):
    """A function whose frames are in ``path``, as TorchAir's or fxlab's files are."""
    scope: dict = {}
    exec(compile(f"def run(inner=None):\n    if inner is not None:\n        try:\n            inner()\n        except Exception as e:\n            raise type(e)('wrapped')\n    {body}\n", path, "exec"), scope)
    return scope["run"]


def _caught(fn) -> BaseException:
    try:
        fn()
    except Exception as exc:  # noqa: BLE001 - the exception is the subject
        return exc
    raise AssertionError("did not raise")


def test_a_failure_in_torchairs_compiler_is_placed_in_its_file_with_the_node():
    compiler = _raiser("/cache/torch_npu/dynamo/torchair/npu_fx_compiler.py")
    exc = _caught(compiler)
    exc.args = (str(exc) + "\n\nWhile executing %ge : [num_users=1] = call_function[target=operator.ge](args = (%x, 0))",)
    assert _where_it_began(exc) == ("torchair/npu_fx_compiler.py:7", "ge")


def test_npugraph_exs_own_files_count_as_torchairs():
    exc = _caught(_raiser("/site-packages/torch_npu/dynamo/npugraph_ex/npu_fx_compiler.py"))
    assert _where_it_began(exc) == ("npugraph_ex/npu_fx_compiler.py:7", None)


def test_a_failure_that_began_in_fxlabs_stand_ins_is_not_torchairs_even_when_torchair_reraised_it():
    stand_in = _raiser(native_standins.__file__, "raise RuntimeError('no NPU')")  # fxlab's own file
    rewrap = _raiser("/cache/torch_npu/dynamo/torchair/_utils/error_code.py")
    exc = _caught(lambda: rewrap(stand_in))
    assert str(exc) == "wrapped" and str(exc.__context__) == "no NPU"  # TorchAir's error-code wrapper re-raised it
    assert _where_it_began(exc) == (None, None)


def test_the_cause_dynamo_wraps_is_the_one_placed():
    class BackendCompilerFailed(Exception):
        pass

    inner = _caught(_raiser("/cache/torchair/core/_concrete_graph.py"))
    wrapper = BackendCompilerFailed("backend='npu' raised")
    wrapper.inner_exception = inner
    assert _where_it_began(wrapper) == ("torchair/core/_concrete_graph.py:7", None)
