"""Folding: module groups, repeated layers in one box, the cap, --expand and --focus."""
from __future__ import annotations

from fxlab.viz.fold import FoldOptions, GroupKey, Leaf, adopt_orphans, fold, folded_edges, hops_around


def _modules(*entries: str) -> tuple[GroupKey, ...]:
    keys, parent = [], ""
    for entry in entries:
        parent = f"{parent}/m:{entry}"
        keys.append(GroupKey(id=parent, name=entry.split(" (")[0], label=entry, repeatable=True))
    return tuple(keys)


def decoder_leaves(layers: int = 4) -> list[Leaf]:
    """x -> embed -> layers.i (attn: mm, add; mlp: mm, relu) ... -> head -> output;
    each layer's weight placeholder has no module (as in the ATen stages)."""
    leaves = [Leaf("x", "", "placeholder"), Leaf("emb", "", "embedding", modules=_modules("embed (Embedding)"), inputs=[("x", "")])]
    prev = "emb"
    for i in range(layers):
        layer = f"layers.{i} (Layer)"
        attn, mlp = _modules(layer, f"layers.{i}.attn (Attn)"), _modules(layer, f"layers.{i}.mlp (Mlp)")
        leaves += [
            Leaf(f"w{i}", "", "placeholder"),
            Leaf(f"mm{i}", "", "mm", modules=attn, inputs=[(prev, ""), (f"w{i}", "")]),
            Leaf(f"add{i}", "", "add", modules=attn, inputs=[(f"mm{i}", ""), (prev, "")]),
            Leaf(f"mm2_{i}", "", "mm", modules=mlp, inputs=[(f"add{i}", "")]),
            Leaf(f"relu{i}", "", "relu", modules=mlp, inputs=[(f"mm2_{i}", "")]),
        ]
        prev = f"relu{i}"
    leaves += [Leaf("head", "", "linear", modules=_modules("head (Linear)"), inputs=[(prev, "")]), Leaf("output", "", "output", inputs=[("head", "")], adoptable=False)]
    return leaves


def test_repeated_layers_are_drawn_once_and_the_rest_folded_into_one_box() -> None:
    leaves = decoder_leaves(4)
    plan = fold(leaves, FoldOptions(cap=100))
    (box,) = plan.repeats[""]
    assert [m.key.name for m in box.members] == ["layers.1", "layers.2", "layers.3"] and box.size == 15
    drawn = plan.drawn_of
    # layer 0 is open down to its nodes; the weight placeholder went with its user
    assert drawn["mm0"] == "mm0" and drawn["w0"] == "w0" and leaves[2].modules[-1].name == "layers.0.attn"
    assert {drawn[k] for k in ("w2", "mm2", "relu3", "add1")} == {box.id}
    assert drawn["output"] == "output" and leaves[-1].modules == ()
    assert plan.drawn == 10 and plan.total == 24  # x, emb, layer 0's five nodes, the box, head, output
    assert folded_edges(plan, leaves) == {
        ("x", "emb"): (1, ""), ("emb", "mm0"): (1, ""), ("w0", "mm0"): (1, ""), ("mm0", "add0"): (1, ""),
        ("emb", "add0"): (1, ""), ("add0", "mm2_0"): (1, ""), ("mm2_0", "relu0"): (1, ""),
        ("relu0", box.id): (2, ""),  # mm1 and add1 both read relu0
        (box.id, "head"): (1, ""), ("head", "output"): (1, ""),
    }


def test_layers_that_differ_are_not_folded_together() -> None:
    leaves = decoder_leaves(3)
    leaves[leaves.index(next(l for l in leaves if l.key == "relu2"))].op_text = "gelu"
    plan = fold(leaves, FoldOptions(cap=100))
    (box,) = plan.repeats[""]
    assert [m.key.name for m in box.members] == ["layers.1"]
    assert plan.drawn_of["relu2"] == "relu2" and plan.drawn_of["relu1"] == box.id


def test_the_cap_folds_modules_breadth_first() -> None:
    leaves = decoder_leaves(4)
    plan = fold(leaves, FoldOptions(cap=6))
    # top level: x, output, embed, layers.0, the repeat box, head = 6 boxes; the one-node
    # modules open for free, layers.0 (two more boxes) does not fit
    assert plan.open == {"", "/m:embed (Embedding)", "/m:head (Linear)"} and plan.drawn == 6
    assert plan.drawn_of["mm0"] == "/m:layers.0 (Layer)" and plan.drawn_of["emb"] == "emb"
    plan = fold(decoder_leaves(4), FoldOptions(cap=8))
    assert "/m:layers.0 (Layer)" in plan.open and plan.drawn == 8
    assert plan.drawn_of["mm0"] == "/m:layers.0 (Layer)/m:layers.0.attn (Attn)"  # attn does not fit any more; mlp did
    assert plan.drawn_of["relu0"] == "relu0"


def test_expand_takes_a_layer_out_of_its_repeat_box_and_opens_it() -> None:
    plan = fold(decoder_leaves(4), FoldOptions(cap=6, expand=("layers.2",)))
    (box,) = plan.repeats[""]
    assert [m.key.name for m in box.members] == ["layers.1", "layers.3"]
    assert plan.expanded == ["layers.2"] and "/m:layers.2 (Layer)" in plan.open
    assert plan.drawn_of["mm2"] == "/m:layers.2 (Layer)/m:layers.2.attn (Attn)"


def test_focus_draws_only_the_neighbourhood_node_by_node() -> None:
    leaves = decoder_leaves(4)
    assert hops_around(leaves, "add2", 1) == {"add2", "mm2", "relu1", "mm2_2"}
    plan = fold(leaves, FoldOptions(focus="add2", depth=1))
    assert set(plan.drawn_of) == {"add2", "mm2", "relu1", "mm2_2"}
    assert all(plan.drawn_of[k] == k for k in plan.drawn_of) and not plan.repeats
    assert fold(decoder_leaves(2), FoldOptions(focus="nosuch")).drawn == 0


def test_a_flat_graph_over_the_cap_is_drawn_as_runs_of_consecutive_nodes() -> None:
    leaves = [Leaf("n0", "", "placeholder")] + [Leaf(f"n{i}", "", "relu", inputs=[(f"n{i - 1}", "")]) for i in range(1, 1000)]
    plan = fold(leaves, FoldOptions(cap=100))
    runs = plan.runs[""]
    assert len(runs) == 50 and sum(len(r.leaves) for r in runs) == 1000 and plan.drawn == 50
    assert plan.notes == ["1000 nodes directly in the top level drawn as 50 boxes of consecutive nodes; --focus NODE --depth K draws one part node by node"]
    assert folded_edges(plan, leaves)[(runs[0].id, runs[1].id)] == (1, "")


def test_orphans_take_the_module_of_a_user_or_a_producer() -> None:
    mod = _modules("m (M)")
    leaves = [Leaf("p", "", "placeholder"), Leaf("a", "", "add", modules=mod, inputs=[("p", "")]), Leaf("c", "", "copy_", inputs=[("a", "")]), Leaf("output", "", "output", inputs=[("c", "")], adoptable=False)]
    adopt_orphans(leaves)
    assert [leaf.modules for leaf in leaves] == [mod, mod, mod, ()]


def test_orphans_stay_in_their_scopes() -> None:
    scope = (GroupKey(id="/s:0", name="scope 0", label="scope 0"),)
    mod = tuple(GroupKey(id="/s:0" + k.id, name=k.name, label=k.label, repeatable=True) for k in _modules("m (M)"))
    leaves = [Leaf("c", "", "const"), Leaf("a", "", "add", scopes=scope, modules=mod, inputs=[("c", "")]), Leaf("b", "", "relu", inputs=[("a", "")])]
    adopt_orphans(leaves)
    assert [leaf.modules for leaf in leaves] == [(), mod, ()]
    plan = fold(leaves, FoldOptions())
    assert sorted(plan.root.children) == ["/s:0"] and plan.drawn_of == {"c": "c", "a": "a", "b": "b"}
