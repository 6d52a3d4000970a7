"""SDPA captured as on an NPU machine: torch_npu's fused attention or the math form."""
from __future__ import annotations


from fxlab.capture.loader import load_model
from fxlab.capture.pipeline import capture_trace
from fxlab.capture.request import TraceRequest
from tests.sessions import trace_of

MODEL = '''
import torch
import torch.nn.functional as F


class Attention(torch.nn.Module):
    def forward(self, q, k, v, keep, bias):
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        masked = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, scale=0.3)
        biased = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return causal + masked + biased


def get_model_and_inputs():
    torch.manual_seed(0)
    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8), torch.randn(1, 2, 4, 8)
    keep = torch.rand(1, 1, 4, 4) > 0.3
    keep[..., 0] = True
    return Attention(), (q, k, v, keep, torch.randn(1, 1, 4, 4))
'''


def _functional_targets(trace) -> list[str]:
    return trace.graphs[0].stages["functional"].targets()


def test_sdpa_becomes_npu_fusion_attention_or_math(write_model):
    from fxlab.compat.torch_npu_ops import torch_npu_definitions

    with torch_npu_definitions():
        trace = trace_of(write_model(MODEL), stages=("dynamo", "functional", "ascend_ir"))
    targets = _functional_targets(trace)
    assert targets.count("npu.npu_fusion_attention.default") == 2  # causal and the boolean mask
    assert "aten._scaled_dot_product_flash_attention_for_cpu.default" not in targets
    assert targets.count("aten._safe_softmax.default") == 1  # the float mask: math
    assert trace.check.ok and trace.ir_check.ok and trace.status == "ok"
    notes = [n for n in trace.notes if "as on an NPU machine" in n]
    assert len(notes) == 2
    assert "(2 call(s)) -> torch_npu.npu_fusion_attention" in notes[0] and "(1 call(s)) -> torch's math decomposition" in notes[1]
    assert "a float mask" in notes[1]
    ge_types = [op.type for op in trace.graphs[0].ir.ops]
    assert ge_types.count("FlashAttentionScore") == 2


def test_without_torch_npu_operators_every_call_takes_the_math_form(write_model):
    # A capture session always defines torch_npu's operators (the compat layer): the
    # pipeline alone, without them, is a machine where they are missing.
    path = write_model(MODEL)
    stages = ("dynamo", "functional")
    trace = capture_trace(load_model(path), TraceRequest(path, stages=stages)).trace
    targets = _functional_targets(trace)
    assert "npu.npu_fusion_attention.default" not in targets and targets.count("aten._safe_softmax.default") == 3
    assert trace.check.ok
    assert any("no torch_npu operators defined" in n for n in trace.notes)


MULTI_HEAD = '''
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)

    def forward(self, x, mask):
        plain, _ = self.attn(x, x, x, need_weights=False)
        masked, _ = self.attn(x, x, x, attn_mask=mask, need_weights=False)
        return plain + masked


def get_model_and_inputs():
    torch.manual_seed(0)
    return Block().eval(), (torch.randn(2, 5, 16), torch.randn(5, 5))
'''


def test_the_sdpa_inside_multi_head_attention_is_made_as_on_an_npu_machine(write_model):
    """``nn.MultiheadAttention``: Dynamo keeps ``F.multi_head_attention_forward`` as one
    call, whose SDPA, captured on CPU, would be the CPU-only flash attention op."""
    from fxlab.compat.torch_npu_ops import torch_npu_definitions

    with torch_npu_definitions():
        trace = trace_of(write_model(MULTI_HEAD), stages=("dynamo", "functional", "ascend_ir"))
    targets = _functional_targets(trace)
    assert "aten._scaled_dot_product_flash_attention_for_cpu.default" not in targets
    assert targets.count("npu.npu_fusion_attention.default") == 1 and targets.count("aten._safe_softmax.default") == 1  # the float mask: math
    assert [op.type for op in trace.graphs[0].ir.ops].count("FlashAttentionScore") == 1
    assert trace.check.ok and trace.ir_check.ok and trace.status == "ok"
    plain, masked = [n for n in trace.notes if "in F.multi_head_attention_forward" in n]  # one note per call
    assert "(multi_head_attention_forward) -> torch_npu.npu_fusion_attention" in plain
    assert "(multi_head_attention_forward_1) -> torch's math decomposition" in masked and "a float mask" in masked


LSTM = '''
import torch
import torch._dynamo

torch._dynamo.config.allow_rnn = True  # else Dynamo runs the LSTM eagerly


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = torch.nn.LSTM(8, 12, batch_first=True)
        self.head = torch.nn.Linear(12, 3)

    def forward(self, x):
        out, (h, c) = self.rnn(x)
        return self.head(out[:, -1]), h


def get_model_and_inputs():
    torch.manual_seed(0)
    return Tagger().eval(), (torch.randn(2, 5, 8),)
'''


def test_an_lstm_decomposes_as_for_npu_tensors_not_into_onednns_cpu_op(write_model):
    import torch

    trace = trace_of(write_model(LSTM), stages=("dynamo", "functional", "ascend_ir"))
    targets = _functional_targets(trace)
    assert "aten.mkldnn_rnn_layer.default" not in targets and "aten.mm.default" in targets
    assert trace.check.ok and trace.ir_check.ok and trace.status == "ok"
    assert "graph 0: as on an NPU machine: torch.lstm decomposed without oneDNN's mkldnn_rnn_layer, which torch's decomposition picks only for CPU tensors." in trace.notes
    assert torch._C._get_mkldnn_enabled()  # oneDNN is on again after the capture


ENCODER_LAYER = '''
import torch

torch.backends.mha.set_fastpath_enabled(False)  # the fix the refusal of the fused fast path gives


def get_model_and_inputs():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True).eval()
    return layer, (torch.randn(2, 5, 16),)
'''


def test_an_encoder_layer_off_the_fast_path_converts(write_model):
    import torch

    from fxlab.compat.torch_npu_ops import torch_npu_definitions

    try:
        with torch_npu_definitions():
            trace = trace_of(write_model(ENCODER_LAYER), stages=("dynamo", "functional", "ascend_ir"))
    finally:
        torch.backends.mha.set_fastpath_enabled(True)
    targets = _functional_targets(trace)
    assert "aten._transformer_encoder_layer_fwd.default" not in targets and "npu.npu_fusion_attention.default" in targets
    assert trace.check.ok and trace.ir_check.ok and trace.status == "ok"
