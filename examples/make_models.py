"""Build small example ONNX models shaped like what ``torch.onnx.export`` produces.

The graphs are written by hand with ``onnx.helper`` / ``onnx.numpy_helper`` (no torch),
opset 17, with deterministic weights (a fixed seed per model, He/Xavier-like scaling so
activations stay O(1)).  They mirror the exporter's habits: scalar and small shape
constants as ``Constant`` nodes, ``Linear`` layers on 3-D inputs as ``MatMul`` with a
pre-transposed ``[in, out]`` weight followed by ``Add(bias, x)``, reshapes whose target
shape is computed by a ``Shape -> Gather -> Unsqueeze -> Concat`` sub-graph, GELU through
``Erf``, RMSNorm through ``Pow / ReduceMean / Sqrt / Div``, and node names like
``/attention/self/query/MatMul`` with outputs ``<node name>_output_0``.

Usage::

    python examples/make_models.py OUTDIR [names...]

writes ``OUTDIR/<name>.onnx`` for every named model (all of ``MODELS`` by default).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8  # what torch.onnx.export writes for opset 17
INT64_MAX = np.iinfo(np.int64).max
F32_MIN = float(np.finfo(np.float32).min)


class _GraphBuilder:
    """Collects nodes and initializers; names nodes the way the torch exporter does."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._names: dict[str, int] = {}

    # -- naming -----------------------------------------------------------------------
    def _node_name(self, scope: str, op_type: str) -> str:
        base = f"{scope}/{op_type}"
        count = self._names.get(base, 0)
        self._names[base] = count + 1
        return base if count == 0 else f"{base}_{count}"

    # -- graph elements ---------------------------------------------------------------
    def op(
        self,
        op_type: str,
        inputs: Sequence[str],
        scope: str = "",
        n_out: int = 1,
        **attrs,
    ) -> str | list[str]:
        name = self._node_name(scope, op_type)
        outputs = [f"{name}_output_{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, name=name, **attrs))
        return outputs[0] if n_out == 1 else outputs

    def const(self, value, scope: str = "", dtype=None) -> str:
        """A ``Constant`` node (the exporter's form for scalars and small shape lists)."""
        array = np.asarray(value, dtype=dtype)
        if dtype is None and array.dtype == np.float64:
            array = array.astype(np.float32)
        return self.op("Constant", [], scope, value=numpy_helper.from_array(array))

    def init(self, name: str, array: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    # -- weights ----------------------------------------------------------------------
    def normal(self, shape: Sequence[int], std: float) -> np.ndarray:
        return (self.rng.standard_normal(shape) * std).astype(np.float32)

    def uniform(self, shape: Sequence[int], low: float, high: float) -> np.ndarray:
        return self.rng.uniform(low, high, shape).astype(np.float32)

    # -- layers -----------------------------------------------------------------------
    def conv(
        self,
        x: str,
        name: str,
        c_in: int,
        c_out: int,
        k: int,
        stride: int = 1,
        group: int = 1,
    ) -> str:
        """A bias-free Conv (it is followed by BatchNormalization), 'same' padding."""
        fan_in = (c_in // group) * k * k
        shape = [c_out, c_in // group, k, k]
        w = self.init(f"{name}.weight", self.normal(shape, math.sqrt(1.0 / fan_in)))
        pad = k // 2
        return self.op(
            "Conv",
            [x, w],
            _scope(name),
            dilations=[1, 1],
            group=group,
            kernel_shape=[k, k],
            pads=[pad, pad, pad, pad],
            strides=[stride, stride],
        )

    def batch_norm(self, x: str, name: str, channels: int) -> str:
        scale = self.init(f"{name}.weight", self.uniform([channels], 0.8, 1.2))
        bias = self.init(f"{name}.bias", self.normal([channels], 0.1))
        mean = self.init(f"{name}.running_mean", self.normal([channels], 0.1))
        var = self.init(f"{name}.running_var", self.uniform([channels], 0.5, 1.5))
        return self.op(
            "BatchNormalization",
            [x, scale, bias, mean, var],
            _scope(name),
            epsilon=1e-5,
            momentum=0.9,
        )

    def linear_matmul(self, x: str, name: str, d_in: int, d_out: int, bias: bool = True) -> str:
        """``nn.Linear`` on a 3-D input: MatMul by the transposed weight, then Add(bias, .)."""
        scope = _scope(name)
        w = self.init(f"{name}.weight", self.normal([d_in, d_out], 1.0 / math.sqrt(d_in)))
        y = self.op("MatMul", [x, w], scope)
        if bias:
            b = self.init(f"{name}.bias", self.normal([d_out], 0.02))
            y = self.op("Add", [b, y], scope)
        return y

    def gemm(self, x: str, name: str, d_in: int, d_out: int) -> str:
        """``nn.Linear`` on a 2-D input: Gemm with transB=1 and a [out, in] weight."""
        w = self.init(f"{name}.weight", self.normal([d_out, d_in], 1.0 / math.sqrt(d_in)))
        b = self.init(f"{name}.bias", self.normal([d_out], 0.02))
        return self.op("Gemm", [x, w, b], _scope(name), alpha=1.0, beta=1.0, transB=1)

    def unsqueeze(self, x: str, axes: Sequence[int], scope: str) -> str:
        return self.op("Unsqueeze", [x, self.const(list(axes), scope, np.int64)], scope)

    def dim(self, x: str, index: int, scope: str) -> str:
        """``x.size(index)`` as the exporter writes it: Shape -> Gather(scalar index)."""
        shape = self.op("Shape", [x], scope)
        return self.op("Gather", [shape, self.const(index, scope, np.int64)], scope, axis=0)

    def build(
        self,
        inputs: Sequence[onnx.ValueInfoProto],
        outputs: Sequence[onnx.ValueInfoProto],
        doc: str,
    ) -> onnx.ModelProto:
        graph = helper.make_graph(
            self.nodes, "main_graph", list(inputs), list(outputs), self.initializers
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="tx8c.examples",
            producer_version="0.1.0",
            doc_string=doc,
            ir_version=IR_VERSION,
        )
        # The torch exporter records shapes of intermediate values too.
        return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)


def _scope(name: str) -> str:
    """Module path -> exporter scope: ``layer1.0.conv1`` -> ``/layer1.0/conv1``."""
    parts: list[str] = []
    for part in name.split("."):
        if part.isdigit() and parts:
            parts[-1] += "." + part
        else:
            parts.append(part)
    return "/" + "/".join(parts)


def _f32(name: str, shape: Sequence[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def _i64(name: str, shape: Sequence[int]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT64, list(shape))


# ---------------------------------------------------------------------------------------
# residual_cnn
# ---------------------------------------------------------------------------------------
def residual_cnn() -> onnx.ModelProto:
    """A tiny ResNet: stem, a basic block, max-pool, a downsampling block, classifier."""
    g = _GraphBuilder(seed=0)
    x = g.conv("image", "conv1", 3, 16, 3)
    x = g.batch_norm(x, "bn1", 16)
    x = g.op("Relu", [x], "/relu")

    # layer1.0: basic block, identity skip
    skip = x
    y = g.conv(x, "layer1.0.conv1", 16, 16, 3)
    y = g.batch_norm(y, "layer1.0.bn1", 16)
    y = g.op("Relu", [y], "/layer1.0/relu")
    y = g.conv(y, "layer1.0.conv2", 16, 16, 3)
    y = g.batch_norm(y, "layer1.0.bn2", 16)
    y = g.op("Add", [y, skip], "/layer1.0")
    x = g.op("Relu", [y], "/layer1.0/relu")

    x = g.op(
        "MaxPool",
        [x],
        "/maxpool",
        ceil_mode=0,
        kernel_shape=[2, 2],
        pads=[0, 0, 0, 0],
        strides=[2, 2],
    )

    # layer2.0: downsampling block, 1x1 stride-2 projection on the skip path
    y = g.conv(x, "layer2.0.conv1", 16, 32, 3, stride=2)
    y = g.batch_norm(y, "layer2.0.bn1", 32)
    y = g.op("Relu", [y], "/layer2.0/relu")
    y = g.conv(y, "layer2.0.conv2", 32, 32, 3)
    y = g.batch_norm(y, "layer2.0.bn2", 32)
    skip = g.conv(x, "layer2.0.downsample.0", 16, 32, 1, stride=2)
    skip = g.batch_norm(skip, "layer2.0.downsample.1", 32)
    y = g.op("Add", [y, skip], "/layer2.0")
    x = g.op("Relu", [y], "/layer2.0/relu")

    x = g.op("GlobalAveragePool", [x], "/avgpool")
    x = g.op("Flatten", [x], "", axis=1)
    x = g.gemm(x, "fc", 32, 10)
    g.nodes[-1].output[0] = "logits"
    return g.build(
        [_f32("image", [1, 3, 32, 32])],
        [_f32("logits", [1, 10])],
        "ResNet-style CNN with a basic block and a downsampling block.",
    )


# ---------------------------------------------------------------------------------------
# mobilenet_block
# ---------------------------------------------------------------------------------------
def mobilenet_block() -> onnx.ModelProto:
    """MobileNetV2-style stem, depthwise-separable conv and one inverted residual."""
    g = _GraphBuilder(seed=1)
    # ReLU6 exports as Clip with min/max inputs (opset >= 11); shared scalar initializers.
    clip_min = g.init("relu6.min", np.array(0.0, dtype=np.float32))
    clip_max = g.init("relu6.max", np.array(6.0, dtype=np.float32))

    def relu6(x: str, scope: str) -> str:
        return g.op("Clip", [x, clip_min, clip_max], scope)

    # features.0: Conv3x3 s2 + BN + ReLU6
    x = g.conv("image", "features.0.0", 3, 16, 3, stride=2)
    x = g.batch_norm(x, "features.0.1", 16)
    x = relu6(x, "/features.0.2")

    # features.1: depthwise 3x3 + BN + ReLU6, pointwise 1x1 16->24 + BN
    x = g.conv(x, "features.1.conv.0.0", 16, 16, 3, group=16)
    x = g.batch_norm(x, "features.1.conv.0.1", 16)
    x = relu6(x, "/features.1/conv.0.2")
    x = g.conv(x, "features.1.conv.1", 16, 24, 1)
    x = g.batch_norm(x, "features.1.conv.2", 24)

    # features.2: inverted residual 24 -> 72 -> 24 with identity skip
    skip = x
    y = g.conv(x, "features.2.conv.0.0", 24, 72, 1)
    y = g.batch_norm(y, "features.2.conv.0.1", 72)
    y = relu6(y, "/features.2/conv.0.2")
    y = g.conv(y, "features.2.conv.1.0", 72, 72, 3, group=72)
    y = g.batch_norm(y, "features.2.conv.1.1", 72)
    y = relu6(y, "/features.2/conv.1.2")
    y = g.conv(y, "features.2.conv.2", 72, 24, 1)
    y = g.batch_norm(y, "features.2.conv.3", 24)
    x = g.op("Add", [skip, y], "/features.2")

    x = g.op("GlobalAveragePool", [x], "/pool")
    x = g.op("Flatten", [x], "", axis=1)
    x = g.gemm(x, "classifier", 24, 10)
    g.nodes[-1].output[0] = "logits"
    return g.build(
        [_f32("image", [1, 3, 32, 32])],
        [_f32("logits", [1, 10])],
        "MobileNetV2-style block: ReLU6 as Clip, depthwise convs, inverted residual.",
    )


# ---------------------------------------------------------------------------------------
# transformer_encoder / transformer_stack
# ---------------------------------------------------------------------------------------
def transformer_encoder() -> onnx.ModelProto:
    """One BERT encoder layer with embeddings, as exported from HF transformers."""
    return _bert_model(
        num_layers=1,
        seq=16,
        hidden=64,
        heads=4,
        ffn=256,
        vocab=100,
        doc="BERT-style encoder layer (4 heads of 16, erf-GELU FFN) with embeddings.",
    )


def transformer_stack(
    num_layers: int,
    seq: int = 16,
    hidden: int = 64,
    heads: int = 4,
    ffn: int = 256,
    vocab: int = 100,
) -> onnx.ModelProto:
    """BERT embeddings plus ``num_layers`` encoder layers, as exported from HF transformers.

    Every layer has its own weights (``encoder.layer.<i>.*``), node scopes
    (``/encoder/layer.<i>/...``) and the exporter's per-layer shape sub-graphs for the head
    split and merge; the extended attention mask is computed once and shared, as in
    ``BertModel``.  Inputs ``input_ids`` and ``attention_mask`` ([1, seq] int64), output
    ``hidden_states`` ([1, seq, hidden]).  Used by ``bench/bench_import.py`` to measure
    how import time scales with graph size.
    """
    if num_layers < 1:
        raise ValueError(f"num_layers must be >= 1, got {num_layers}")
    if hidden % heads:
        raise ValueError(f"hidden ({hidden}) must be divisible by heads ({heads})")
    return _bert_model(
        num_layers=num_layers,
        seq=seq,
        hidden=hidden,
        heads=heads,
        ffn=ffn,
        vocab=vocab,
        doc=(
            f"BERT-style encoder stack: {num_layers} layer(s), hidden {hidden}, {heads} heads, "
            f"FFN {ffn}, erf-GELU, with embeddings."
        ),
    )


def _bert_model(
    num_layers: int, seq: int, hidden: int, heads: int, ffn: int, vocab: int, doc: str
) -> onnx.ModelProto:
    """Embeddings, the shared extended mask, ``num_layers`` encoder layers (seed 2)."""
    max_pos = max(32, seq)
    g = _GraphBuilder(seed=2)
    h = _bert_embeddings(g, vocab, max_pos, hidden)

    # -- extended attention mask: (1 - mask[:, None, None, :]) * -10000 ----------------
    m = g.unsqueeze("attention_mask", [1], "")
    m = g.unsqueeze(m, [2], "")
    m = g.op("Cast", [m], "", to=TensorProto.FLOAT)
    m = g.op("Sub", [g.const(1.0), m], "")
    mask = g.op("Mul", [m, g.const(-10000.0)], "")

    for index in range(num_layers):
        h = _bert_layer(g, h, mask, index, hidden, heads, ffn)
    g.nodes[-1].output[0] = "hidden_states"
    return g.build(
        [_i64("input_ids", [1, seq]), _i64("attention_mask", [1, seq])],
        [_f32("hidden_states", [1, seq, hidden])],
        doc,
    )


def _layer_norm(g: _GraphBuilder, x: str, name: str, hidden: int) -> str:
    w = g.init(f"{name}.weight", g.uniform([hidden], 0.9, 1.1))
    b = g.init(f"{name}.bias", g.normal([hidden], 0.02))
    return g.op(
        "LayerNormalization",
        [x, w, b],
        _scope(name),
        axis=-1,
        epsilon=1e-12,
    )


def _bert_embeddings(g: _GraphBuilder, vocab: int, max_pos: int, hidden: int) -> str:
    """Word + position embeddings (positions from ``Range(0, input_ids.size(1))``), LN."""
    sc = "/embeddings"
    word = g.init("embeddings.word_embeddings.weight", g.normal([vocab, hidden], 1.0))
    pos_table = g.init("embeddings.position_embeddings.weight", g.normal([max_pos, hidden], 0.5))
    words = g.op("Gather", [word, "input_ids"], sc + "/word_embeddings")
    seq_len = g.dim("input_ids", 1, sc)
    position_ids = g.op("Range", [g.const(0, sc, np.int64), seq_len, g.const(1, sc, np.int64)], sc)
    position_ids = g.unsqueeze(position_ids, [0], sc)
    positions = g.op("Gather", [pos_table, position_ids], sc + "/position_embeddings")
    emb = g.op("Add", [words, positions], sc)
    return _layer_norm(g, emb, "embeddings.LayerNorm", hidden)


def _bert_layer(
    g: _GraphBuilder, h: str, mask: str, index: int, hidden: int, heads: int, ffn: int
) -> str:
    """``encoder.layer.<index>``: post-LN self-attention and erf-GELU feed-forward."""
    head_dim = hidden // heads
    prefix = f"encoder.layer.{index}"

    # -- self-attention -----------------------------------------------------------------
    sa = _scope(f"{prefix}.attention.self")

    def split_heads(x: str) -> str:
        """x.view(x.size()[:-1] + (heads, head_dim)).permute(0, 2, 1, 3)"""
        b = g.unsqueeze(g.dim(x, 0, sa), [0], sa)
        s = g.unsqueeze(g.dim(x, 1, sa), [0], sa)
        shape = g.op(
            "Concat",
            [b, s, g.const([heads], sa, np.int64), g.const([head_dim], sa, np.int64)],
            sa,
            axis=0,
        )
        x = g.op("Reshape", [x, shape], sa, allowzero=0)
        return g.op("Transpose", [x], sa, perm=[0, 2, 1, 3])

    q = split_heads(g.linear_matmul(h, f"{prefix}.attention.self.query", hidden, hidden))
    k = split_heads(g.linear_matmul(h, f"{prefix}.attention.self.key", hidden, hidden))
    v = split_heads(g.linear_matmul(h, f"{prefix}.attention.self.value", hidden, hidden))
    kt = g.op("Transpose", [k], sa, perm=[0, 1, 3, 2])
    scores = g.op("MatMul", [q, kt], sa)
    scores = g.op("Div", [scores, g.const(math.sqrt(head_dim), sa)], sa)
    scores = g.op("Add", [scores, mask], sa)
    probs = g.op("Softmax", [scores], sa, axis=-1)
    ctx = g.op("MatMul", [probs, v], sa)
    ctx = g.op("Transpose", [ctx], sa, perm=[0, 2, 1, 3])
    b = g.unsqueeze(g.dim(ctx, 0, sa), [0], sa)
    s = g.unsqueeze(g.dim(ctx, 1, sa), [0], sa)
    shape = g.op("Concat", [b, s, g.const([hidden], sa, np.int64)], sa, axis=0)
    ctx = g.op("Reshape", [ctx, shape], sa, allowzero=0)

    so = f"{prefix}.attention.output"
    attn = g.linear_matmul(ctx, f"{so}.dense", hidden, hidden)
    attn = g.op("Add", [attn, h], _scope(so))
    h = _layer_norm(g, attn, f"{so}.LayerNorm", hidden)

    # -- feed-forward with erf-GELU -------------------------------------------------------
    inter = f"{prefix}.intermediate"
    act_scope = _scope(inter) + "/intermediate_act_fn"
    f = g.linear_matmul(h, f"{inter}.dense", hidden, ffn)
    t = g.op("Div", [f, g.const(math.sqrt(2.0), act_scope)], act_scope)
    t = g.op("Erf", [t], act_scope)
    t = g.op("Add", [t, g.const(1.0, act_scope)], act_scope)
    t = g.op("Mul", [f, t], act_scope)
    f = g.op("Mul", [t, g.const(0.5, act_scope)], act_scope)

    out = f"{prefix}.output"
    f = g.linear_matmul(f, f"{out}.dense", ffn, hidden)
    f = g.op("Add", [f, h], _scope(out))
    return _layer_norm(g, f, f"{out}.LayerNorm", hidden)


# ---------------------------------------------------------------------------------------
# llama_decoder
# ---------------------------------------------------------------------------------------
def _rope_cache(max_pos: int, head_dim: int, theta: float = 10000.0) -> tuple[np.ndarray, ...]:
    inv_freq = 1.0 / theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)
    freqs = np.outer(np.arange(max_pos, dtype=np.float64), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb).astype(np.float32), np.sin(emb).astype(np.float32)


def llama_decoder() -> onnx.ModelProto:
    """One LLaMA decoder layer: RMSNorm, GQA attention with RoPE, SiLU-gated MLP."""
    hidden, heads, kv_heads, head_dim, inter, max_pos, seq = 64, 4, 2, 16, 128, 32, 16
    n_rep = heads // kv_heads
    g = _GraphBuilder(seed=3)

    def rms_norm(x: str, name: str) -> str:
        sc = _scope(name)
        w = g.init(f"{name}.weight", g.uniform([hidden], 0.9, 1.1))
        var = g.op("Pow", [x, g.const(2.0, sc)], sc)
        var = g.op("ReduceMean", [var], sc, axes=[-1], keepdims=1)
        var = g.op("Add", [var, g.const(1e-6, sc)], sc)
        rstd = g.op("Div", [g.const(1.0, sc), g.op("Sqrt", [var], sc)], sc)
        y = g.op("Mul", [x, rstd], sc)
        return g.op("Mul", [w, y], sc)

    sa = "/self_attn"

    def to_heads(x: str, scope: str) -> str:
        """x.view(*x.shape[:-1], -1, head_dim).transpose(1, 2)"""
        shape = g.op("Shape", [x], scope)
        lead = g.op(
            "Slice",
            [
                shape,
                g.const([0], scope, np.int64),
                g.const([-1], scope, np.int64),
                g.const([0], scope, np.int64),
                g.const([1], scope, np.int64),
            ],
            scope,
        )
        target = g.op("Concat", [lead, g.const([-1, head_dim], scope, np.int64)], scope, axis=0)
        x = g.op("Reshape", [x, target], scope, allowzero=0)
        return g.op("Transpose", [x], scope, perm=[0, 2, 1, 3])

    def rotate_half(x: str) -> str:
        half = head_dim // 2
        c = lambda v: g.const([v], sa, np.int64)
        x1 = g.op("Slice", [x, c(0), c(half), c(3), c(1)], sa)
        x2 = g.op("Slice", [x, c(half), c(INT64_MAX), c(3), c(1)], sa)
        return g.op("Concat", [g.op("Neg", [x2], sa), x1], sa, axis=-1)

    def apply_rope(x: str, cos: str, sin: str) -> str:
        a = g.op("Mul", [x, cos], sa)
        b = g.op("Mul", [rotate_half(x), sin], sa)
        return g.op("Add", [a, b], sa)

    def repeat_kv(x: str) -> str:
        """x[:, :, None].expand(b, kv, n_rep, s, d).reshape(b, kv * n_rep, s, d)"""
        x = g.unsqueeze(x, [2], sa)
        x = g.op("Expand", [x, g.const([1, kv_heads, n_rep, seq, head_dim], sa, np.int64)], sa)
        return g.op(
            "Reshape", [x, g.const([1, heads, seq, head_dim], sa, np.int64)], sa, allowzero=0
        )

    residual = "hidden_states"
    h = rms_norm("hidden_states", "input_layernorm")

    q = to_heads(g.linear_matmul(h, "self_attn.q_proj", hidden, heads * head_dim, False), sa)
    k = to_heads(g.linear_matmul(h, "self_attn.k_proj", hidden, kv_heads * head_dim, False), sa)
    v = to_heads(g.linear_matmul(h, "self_attn.v_proj", hidden, kv_heads * head_dim, False), sa)

    # rotary embedding: cos/sin caches gathered by position, broadcast over heads
    rot = "/self_attn/rotary_emb"
    cos_cache, sin_cache = _rope_cache(max_pos, head_dim)
    cos = g.op(
        "Gather",
        [g.init("self_attn.rotary_emb.cos_cached", cos_cache), "position_ids"],
        rot,
        axis=0,
    )
    sin = g.op(
        "Gather",
        [g.init("self_attn.rotary_emb.sin_cached", sin_cache), "position_ids"],
        rot,
        axis=0,
    )
    cos = g.unsqueeze(cos, [1], rot)
    sin = g.unsqueeze(sin, [1], rot)
    q = apply_rope(q, cos, sin)
    k = apply_rope(k, cos, sin)

    k = repeat_kv(k)
    v = repeat_kv(v)

    # causal mask: full((seq, seq), finfo.min).triu(1)[None, None]
    full = g.op(
        "ConstantOfShape",
        [g.const([seq, seq], "", np.int64)],
        "",
        value=numpy_helper.from_array(np.array([F32_MIN], dtype=np.float32)),
    )
    causal = g.op("Trilu", [full, g.const(1, "", np.int64)], "", upper=1)
    causal = g.unsqueeze(causal, [0, 1], "")

    kt = g.op("Transpose", [k], sa, perm=[0, 1, 3, 2])
    scores = g.op("MatMul", [q, kt], sa)
    scores = g.op("Div", [scores, g.const(math.sqrt(head_dim), sa)], sa)
    scores = g.op("Add", [scores, causal], sa)
    probs = g.op("Softmax", [scores], sa, axis=-1)
    ctx = g.op("MatMul", [probs, v], sa)
    ctx = g.op("Transpose", [ctx], sa, perm=[0, 2, 1, 3])
    lead = g.op(
        "Slice",
        [
            g.op("Shape", [residual], sa),
            g.const([0], sa, np.int64),
            g.const([-1], sa, np.int64),
            g.const([0], sa, np.int64),
            g.const([1], sa, np.int64),
        ],
        sa,
    )
    target = g.op("Concat", [lead, g.const([-1], sa, np.int64)], sa, axis=0)
    ctx = g.op("Reshape", [ctx, target], sa, allowzero=0)
    attn = g.linear_matmul(ctx, "self_attn.o_proj", heads * head_dim, hidden, False)
    h = g.op("Add", [residual, attn], "")

    residual = h
    h = rms_norm(h, "post_attention_layernorm")
    gate = g.linear_matmul(h, "mlp.gate_proj", hidden, inter, False)
    gate = g.op("Mul", [gate, g.op("Sigmoid", [gate], "/mlp/act_fn")], "/mlp/act_fn")
    up = g.linear_matmul(h, "mlp.up_proj", hidden, inter, False)
    m = g.op("Mul", [gate, up], "/mlp")
    m = g.linear_matmul(m, "mlp.down_proj", inter, hidden, False)
    g.op("Add", [residual, m], "")
    g.nodes[-1].output[0] = "output"
    return g.build(
        [_f32("hidden_states", [1, seq, hidden]), _i64("position_ids", [1, seq])],
        [_f32("output", [1, seq, hidden])],
        "LLaMA-style decoder layer: RMSNorm, GQA (4 q / 2 kv heads), RoPE, SwiGLU MLP.",
    )


MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "residual_cnn": residual_cnn,
    "mobilenet_block": mobilenet_block,
    "transformer_encoder": transformer_encoder,
    "llama_decoder": llama_decoder,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    usage = (f"usage: make_models.py [--inputs] OUTDIR [names...]\n"
             f"  --inputs  also write NAME.inputs.npz (random inputs, seed 0) beside each\n"
             f"models: {', '.join(MODELS)}")
    if args and args[0] in ("-h", "--help"):
        print(usage)
        return 0
    with_inputs = "--inputs" in args
    args = [a for a in args if a != "--inputs"]
    if not args:
        print(usage, file=sys.stderr)
        return 1
    outdir, names = Path(args[0]), args[1:] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(
            f"error: unknown model(s) {', '.join(unknown)}; available: {', '.join(MODELS)}",
            file=sys.stderr,
        )
        return 1
    if outdir.exists() and not outdir.is_dir():
        print(f"error: output directory {outdir} exists and is not a directory", file=sys.stderr)
        return 1
    outdir.mkdir(parents=True, exist_ok=True)
    for name in names:
        path = outdir / f"{name}.onnx"
        model = MODELS[name]()
        onnx.save_model(model, path)
        print(f"wrote {path}")
        if with_inputs:
            from tx8c.frontend.onnx.runtime import random_inputs

            inputs = outdir / f"{name}.inputs.npz"
            np.savez(inputs, **random_inputs(model, seed=0))
            print(f"wrote {inputs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
