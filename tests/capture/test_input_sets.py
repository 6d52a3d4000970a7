"""Several input sets from a model file, and the second size fxlab derives for a dynamic graph."""
from __future__ import annotations

import torch

from fxlab.capture.input_sets import DynamicDim, argument_names, describe_inputs, grown_inputs, is_input_sets
from fxlab.capture.loader import load_model


def test_a_list_of_tuples_is_several_input_sets_a_tuple_or_a_list_of_tensors_is_one():
    x = torch.randn(2)
    assert is_input_sets([(x,), (x,)]) and is_input_sets([((x,), {"y": x}), (x,)])
    assert not is_input_sets((x, x)) and not is_input_sets([x, x]) and not is_input_sets([])
    # one tuple in a list is one call's argument (serving code passes tuples as arguments)
    assert not is_input_sets([(x, x)]) and not is_input_sets([(x,), x])


def test_input_sets_hold_serving_style_inputs(write_model):
    path = write_model(
        "import torch\n"
        "def model(x, lens, cache=None, *, scale=1.0):\n"
        "    return x * scale\n"
        "example_inputs_list = [(torch.ones(2), [2], None), {'x': torch.ones(3), 'lens': [3], 'scale': 2.0}, ((torch.ones(4), (4,)), {'cache': [torch.ones(1)]})]\n"
        "def one_call_of_tuples():\n"
        "    return model, [((torch.ones(2),), (2,))]\n"
    )
    loaded = load_model(path)
    assert loaded.args[1:] == ([2], None) and loaded.kwargs == {}
    (args1, kwargs1), (args2, kwargs2) = loaded.more_inputs
    assert args1 == () and set(kwargs1) == {"x", "lens", "scale"} and kwargs1["lens"] == [3]
    assert args2[1] == (4,) and kwargs2["cache"][0].shape == (1,)
    single = load_model(path, entry="one_call_of_tuples")
    assert single.more_inputs == [] and len(single.args) == 1 and single.args[0][1] == (2,)


def test_example_inputs_list_and_an_entry_returning_a_list_give_the_later_sets(write_model):
    path = write_model(
        "import torch\n"
        "model = torch.nn.Linear(4, 2)\n"
        "example_inputs_list = [(torch.randn(2, 4),), torch.randn(3, 4), [torch.randn(5, 4)]]\n"
        "def warm():\n"
        "    return model, [(torch.randn(1, 4),), ((torch.randn(6, 4),), {})]\n"
    )
    loaded = load_model(path)
    assert loaded.args[0].shape == (2, 4)
    assert [args[0].shape for args, _ in loaded.more_inputs] == [(3, 4), (5, 4)]
    warm = load_model(path, entry="warm")
    assert warm.args[0].shape == (1, 4) and [(a[0].shape, k) for a, k in warm.more_inputs] == [((6, 4), {})]


def test_inputs_are_described_by_argument_name():
    def fn(tokens, mask=None):
        return tokens

    assert argument_names(fn) == ["tokens", "mask"]
    described = describe_inputs((torch.zeros(2, 3, dtype=torch.int64),), {"mask": torch.ones(2, 3, dtype=torch.bool)}, ["tokens", "mask"])
    assert described == "tokens: i64[2, 3], mask: b8[2, 3]"


def test_a_second_size_grows_every_dim_of_one_symbol_alike_and_keeps_values_and_marks():
    def fn(tokens, mask):
        return tokens * mask

    tokens, mask = torch.arange(8).reshape(2, 4), torch.ones(2, 4, dtype=torch.int64)
    torch._dynamo.mark_dynamic(tokens, 1)
    dims = [DynamicDim(("tokens",), 1, "s0"), DynamicDim(("mask",), 1, "s0")]
    args, kwargs, changes = grown_inputs(fn, (tokens, mask), {}, dims, lambda n: n + 1)
    assert [a.shape for a in args] == [(2, 5), (2, 5)] and kwargs == {}
    assert torch.equal(args[0], torch.tensor([[0, 1, 2, 3, 0], [4, 5, 6, 7, 4]]))  # the values repeat along the dim
    assert args[0].stride() == (5, 1) and args[0]._dynamo_dynamic_indices == {1}
    assert changes == "dim 1 of tokens: 4 -> 5; dim 1 of mask: 4 -> 5"


def test_a_modules_inputs_are_found_as_dynamos_frame_names_them():
    class Model(torch.nn.Module):
        def forward(self, x, *rest):
            return x

    model, x, extra = Model(), torch.randn(3, 2), torch.randn(3)
    # A module's forward is traced with the module first: a *rest argument is L['rest'].
    args, _, changes = grown_inputs(model, (x, extra), {}, [DynamicDim(("rest", 0), 0, "s1")], lambda n: 2 * n)
    assert args[0] is x and args[1].shape == (6,) and changes == "dim 0 of argument 1: 3 -> 6"
    assert grown_inputs(model, (x,), {}, [DynamicDim(("missing",), 0, "s1")], lambda n: n) is None
