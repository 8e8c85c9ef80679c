"""Export real model architectures to ONNX with ``torch.onnx.export`` (developer tool).

This is a local benchmark helper: it is NOT run in CI and nothing in the test suite imports
it.  It needs ``torch`` and ``transformers``, which do not belong in the project venv; see
``bench/README.md`` for setting up the separate torch venv.

Every model is built from a config written in code (no hub downloads of weights or configs),
with random weights (a fixed seed), in eval mode, batch 1 and static shapes, and exported at
opset 17 with the TorchScript exporter (``dynamo=False``), i.e. the graphs users get from a
plain ``torch.onnx.export`` call.  Each file is then checked with ``onnx.checker``, run in
onnxruntime on random inputs and compared with the torch output, and a summary table is
printed (nodes, op types with counts, file size, export time).

Models (``--only`` selects a comma-separated subset):

=================  ==========================================================================
resnet50           transformers ``ResNetConfig()`` (ResNet-50), BatchNormalization kept
resnet50_bnfold    the same network exported the default way: BN folded into Conv
mobilenetv2        ``MobileNetV2Config()`` (1.0, 224)
convnext           ``ConvNextConfig()`` (ConvNeXt-T)
vit                ``ViTConfig()`` (ViT-B/16) with 4 layers (12 with ``--full``)
bert               ``BertModel``: 4 layers (12 with ``--full``), hidden 256, 4 heads, vocab 30522
gpt2               ``GPT2LMHeadModel``: 4 layers (12 with ``--full``), n_embd 256, 4 heads
llama              ``LlamaForCausalLM``: 2 layers (32 with ``--full``), hidden 256,
                   intermediate 688, 8 heads, 2 KV heads, vocab 32000, max positions 512
swin               ``SwinConfig()`` (Swin-T: windowed attention, shifted windows, 224)
lstm               a text classifier: Embedding 5000x128, a 2-layer bidirectional LSTM
                   (hidden 256, batch first), Linear to 10 classes, sequence 64
gru                the same with a 2-layer GRU (hidden 256, time first, one direction)
=================  ==========================================================================

Vision models take ``pixel_values`` 1x3x224x224 and return ``logits`` (1000 classes);
``bert`` takes ``input_ids`` and ``attention_mask`` (1x128 int64) and returns
``last_hidden_state``; ``gpt2`` and ``llama`` take ``input_ids`` (1x128 int64, no KV cache)
and return ``logits``; ``lstm`` and ``gru`` take ``input_ids`` (1x64 int64) and return
``logits`` (1x10).  ``--full`` only raises the layer counts of the transformer models to
the library defaults (their widths stay as above; ``vit`` is then exactly ``ViTConfig()``).
With ``--full`` those files are named ``<model>_full.onnx``.

Usage::

    /work/torchenv/bin/python bench/export_models.py [--out /work/models] [--only a,b] [--full]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import torch
import transformers

OPSET = 17
SEED = 0
IMAGE_SHAPE = (1, 3, 224, 224)
SEQ_LEN = 128
NUM_LABELS = 1000
DEFAULT_OUT = Path("/work/models")
REPO_ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------
# Model specs
# ---------------------------------------------------------------------------------------
@dataclass
class Spec:
    """How to build, feed and export one model."""

    name: str
    build: Callable[[bool], torch.nn.Module]  # full -> module returning one tensor
    inputs: Callable[[torch.Generator], dict[str, torch.Tensor]]
    output_name: str
    transformer: bool = False  # --full changes it (and its file name)
    causal: bool = False  # decoder: check in onnxruntime that later tokens are not seen
    vocab: int = 0
    keep_bn: bool = False  # export with BatchNormalization kept
    expect_bn: bool | None = None  # True: BN nodes must be present; False: must be absent


class _Main(torch.nn.Module):
    """Calls a transformers model by keyword and returns only its main output tensor.

    ``ones_mask`` passes ``attention_mask=ones_like(input_ids)`` (what a tokenizer returns for
    one unpadded sequence) without making it a graph input.  transformers 5 needs a mask under
    ``torch.jit`` tracing: with ``attention_mask=None`` it looks for packed sequences with
    ``torch.diff``, which the TorchScript exporter cannot convert (``aten::diff``).  With the
    mask present the causal mask is built in the graph and grouped KV heads go through
    ``repeat_kv`` (Expand + Reshape) instead of SDPA's ``enable_gqa``, which that exporter
    cannot convert either.
    """

    def __init__(
        self,
        model: torch.nn.Module,
        input_names: tuple[str, ...],
        attr: str,
        ones_mask: bool = False,
    ) -> None:
        super().__init__()
        self.model = model
        self.input_names = input_names
        self.attr = attr
        self.ones_mask = ones_mask

    def forward(self, *args: torch.Tensor) -> torch.Tensor:
        feeds = dict(zip(self.input_names, args))
        if self.ones_mask:
            feeds["attention_mask"] = torch.ones_like(feeds["input_ids"])
        out = self.model(**feeds, return_dict=True)
        return getattr(out, self.attr)


def _randomize_constant_tensors(model: torch.nn.Module, gen: torch.Generator) -> None:
    """Replace parameters that are initialized to one repeated value by random ones.

    transformers initializes biases to 0, norm weights to 1, BatchNorm statistics to 0/1 and
    e.g. ConvNeXt layer scales to 1e-6.  Trained weights are never like that: a
    BatchNormalization that is an identity hides folding bugs, and the exporter deduplicates
    equal-valued tensors into ``Identity`` nodes that real models do not have.  Such values
    become ``value * U(0.5, 1.5)``, zeros become ``N(0, 0.02)``.
    """

    def randomize(t: torch.Tensor, zero_std: float) -> None:
        if not t.is_floating_point() or t.numel() < 2 or not bool(torch.all(t == t.flatten()[0])):
            return
        value = float(t.flatten()[0])
        if value == 0.0:
            t.copy_(zero_std * torch.randn(t.shape, generator=gen, dtype=t.dtype))
        else:
            t.copy_(value * (0.5 + torch.rand(t.shape, generator=gen, dtype=t.dtype)))

    with torch.no_grad():
        for param in model.parameters():
            randomize(param, 0.02)


def _calibrate_batchnorm(
    model: torch.nn.Module, feeds: dict[str, torch.Tensor], gen: torch.Generator
) -> None:
    """Set BatchNorm running statistics to the batch statistics of a few random inputs.

    Like a trained network's, each BN then normalizes what really reaches it, so activations
    stay O(1) through ResNet-50 instead of growing layer by layer.
    """
    bns = [
        m
        for m in model.modules()
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and m.track_running_stats
    ]
    if not bns:
        return
    batch = {
        k: torch.randn((8, *v.shape[1:]), generator=gen, dtype=v.dtype) for k, v in feeds.items()
    }
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # cumulative average: after one batch, exactly its statistics
    model.train()
    with torch.no_grad():
        model(*batch.values())
    model.eval()
    for bn in bns:
        bn.momentum = 0.1


def _image_inputs(gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"pixel_values": torch.randn(IMAGE_SHAPE, generator=gen)}


def _token_inputs(vocab: int, with_mask: bool) -> Callable[[torch.Generator], dict]:
    def make(gen: torch.Generator) -> dict[str, torch.Tensor]:
        ids = torch.randint(0, vocab, (1, SEQ_LEN), generator=gen, dtype=torch.int64)
        feeds = {"input_ids": ids}
        if with_mask:
            mask = torch.ones((1, SEQ_LEN), dtype=torch.int64)
            mask[:, SEQ_LEN - 16 :] = 0  # a padded tail, so the mask is not all ones
            feeds["attention_mask"] = mask
        return feeds

    return make


def _wrap(
    model: torch.nn.Module, names: tuple[str, ...], attr: str, ones_mask: bool = False
) -> torch.nn.Module:
    return _Main(model.eval(), names, attr, ones_mask).eval()


def _resnet50(full: bool) -> torch.nn.Module:
    cfg = transformers.ResNetConfig(num_labels=NUM_LABELS)  # defaults: ResNet-50
    return _wrap(transformers.ResNetForImageClassification(cfg), ("pixel_values",), "logits")


def _mobilenetv2(full: bool) -> torch.nn.Module:
    cfg = transformers.MobileNetV2Config(num_labels=NUM_LABELS)
    model = transformers.MobileNetV2ForImageClassification(cfg)
    return _wrap(model, ("pixel_values",), "logits")


def _convnext(full: bool) -> torch.nn.Module:
    cfg = transformers.ConvNextConfig(num_labels=NUM_LABELS)  # defaults: ConvNeXt-T
    model = transformers.ConvNextForImageClassification(cfg)
    return _wrap(model, ("pixel_values",), "logits")


def _vit(full: bool) -> torch.nn.Module:
    cfg = transformers.ViTConfig(num_labels=NUM_LABELS)  # defaults: ViT-B/16, 224
    if not full:
        cfg.num_hidden_layers = 4
    model = transformers.ViTForImageClassification(cfg)
    return _wrap(model, ("pixel_values",), "logits")


def _bert(full: bool) -> torch.nn.Module:
    cfg = transformers.BertConfig(
        vocab_size=30522,
        hidden_size=256,
        num_hidden_layers=transformers.BertConfig().num_hidden_layers if full else 4,
        num_attention_heads=4,
        intermediate_size=1024,
    )
    model = transformers.BertModel(cfg, add_pooling_layer=False)
    return _wrap(model, ("input_ids", "attention_mask"), "last_hidden_state")


def _gpt2(full: bool) -> torch.nn.Module:
    cfg = transformers.GPT2Config(
        n_layer=transformers.GPT2Config().n_layer if full else 4,
        n_embd=256,
        n_head=4,
        use_cache=False,
    )
    model = transformers.GPT2LMHeadModel(cfg)
    return _wrap(model, ("input_ids",), "logits", ones_mask=True)


def _llama(full: bool) -> torch.nn.Module:
    cfg = transformers.LlamaConfig(
        vocab_size=32000,
        hidden_size=256,
        intermediate_size=688,
        num_hidden_layers=transformers.LlamaConfig().num_hidden_layers if full else 2,
        num_attention_heads=8,
        num_key_value_heads=2,  # grouped-query attention: 4 query heads per KV head
        max_position_embeddings=512,
        hidden_act="silu",
        use_cache=False,
    )
    model = transformers.LlamaForCausalLM(cfg)
    return _wrap(model, ("input_ids",), "logits", ones_mask=True)


def _bert_base(full: bool) -> torch.nn.Module:
    """BERT-base exactly: `BertConfig()` (hidden 768, 12 layers, 12 heads, FFN 3072)."""
    model = transformers.BertModel(transformers.BertConfig(), add_pooling_layer=False)
    return _wrap(model, ("input_ids", "attention_mask"), "last_hidden_state")


def _gpt2_base(full: bool) -> torch.nn.Module:
    """GPT-2 (124M) exactly: `GPT2Config()` (n_embd 768, 12 layers, 12 heads)."""
    model = transformers.GPT2LMHeadModel(transformers.GPT2Config(use_cache=False))
    return _wrap(model, ("input_ids",), "logits", ones_mask=True)


def _llama_small(full: bool) -> torch.nn.Module:
    """A LLaMA-style decoder: 4 layers, hidden 512, FFN 1376, 8 heads, 4 KV heads."""
    cfg = transformers.LlamaConfig(
        vocab_size=32000,
        hidden_size=512,
        intermediate_size=1376,
        num_hidden_layers=4,
        num_attention_heads=8,
        num_key_value_heads=4,
        max_position_embeddings=512,
        hidden_act="silu",
        use_cache=False,
    )
    return _wrap(transformers.LlamaForCausalLM(cfg), ("input_ids",), "logits", ones_mask=True)


def _swin(full: bool) -> torch.nn.Module:
    """Swin-T exactly: `SwinConfig()` (window 7, shifted windows, depths 2-2-6-2)."""
    cfg = transformers.SwinConfig(num_labels=NUM_LABELS)
    return _wrap(transformers.SwinForImageClassification(cfg), ("pixel_values",), "logits")


RNN_VOCAB, RNN_SEQ = 5000, 64


class _RecurrentClassifier(torch.nn.Module):
    """Embedding -> a 2-layer LSTM or GRU -> Linear on the last step's output."""

    def __init__(self, cell: str) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(RNN_VOCAB, 128)
        if cell == "lstm":
            self.rnn = torch.nn.LSTM(128, 256, num_layers=2, bidirectional=True,
                                     batch_first=True)
            width = 512
        else:
            self.rnn = torch.nn.GRU(128, 256, num_layers=2)
            width = 256
        self.batch_first = cell == "lstm"
        self.head = torch.nn.Linear(width, 10)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids)
        if not self.batch_first:
            x = x.transpose(0, 1)
        out, _ = self.rnn(x)
        last = out[:, -1] if self.batch_first else out[-1]
        return self.head(last)


def _rnn_inputs(gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"input_ids": torch.randint(0, RNN_VOCAB, (1, RNN_SEQ), generator=gen)}


SPECS: dict[str, Spec] = {
    s.name: s
    for s in [
        Spec("resnet50", _resnet50, _image_inputs, "logits", keep_bn=True, expect_bn=True),
        Spec("resnet50_bnfold", _resnet50, _image_inputs, "logits", expect_bn=False),
        Spec("mobilenetv2", _mobilenetv2, _image_inputs, "logits", expect_bn=False),
        Spec("convnext", _convnext, _image_inputs, "logits"),
        Spec("vit", _vit, _image_inputs, "logits", transformer=True),
        Spec("bert", _bert, _token_inputs(30522, True), "last_hidden_state", transformer=True),
        Spec("gpt2", _gpt2, _token_inputs(50257, False), "logits", True, causal=True, vocab=50257),
        Spec(
            "llama", _llama, _token_inputs(32000, False), "logits", True, causal=True, vocab=32000
        ),
        # Full-size models (the sizes users deploy); not changed by --full.
        Spec("bert_base", _bert_base, _token_inputs(30522, True), "last_hidden_state"),
        Spec("gpt2_base", _gpt2_base, _token_inputs(50257, False), "logits", causal=True,
             vocab=50257),
        Spec("llama_small", _llama_small, _token_inputs(32000, False), "logits", causal=True,
             vocab=32000),
        # Windowed attention and recurrences (issue 14's "Done when" models).
        Spec("swin", _swin, _image_inputs, "logits"),
        Spec("lstm", lambda full: _RecurrentClassifier("lstm").eval(), _rnn_inputs, "logits"),
        Spec("gru", lambda full: _RecurrentClassifier("gru").eval(), _rnn_inputs, "logits"),
    ]
}


# ---------------------------------------------------------------------------------------
# Export and check
# ---------------------------------------------------------------------------------------
@dataclass
class Result:
    name: str
    file: Path
    nodes: int
    op_counts: dict[str, int]
    mb: float
    seconds: float
    max_abs_diff: float
    ref_max_abs: float
    static_out: bool
    exporter: str


def _export(spec: Spec, out_dir: Path, full: bool, dynamo: bool, opset: int) -> Result:
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED)
    model = spec.build(full)
    _randomize_constant_tensors(model, gen)
    feeds = spec.inputs(gen)
    _calibrate_batchnorm(model, feeds, gen)
    model.eval()
    names = list(feeds)
    args = tuple(feeds.values())

    suffix = "_full" if (full and spec.transformer) else ""
    path = out_dir / f"{spec.name}{suffix}.onnx"
    kwargs: dict = dict(
        input_names=names,
        output_names=[spec.output_name],
        opset_version=opset,
        dynamo=dynamo,
    )
    if spec.keep_bn and dynamo:
        # The torch.export-based exporter's graph optimizer fuses BN into Conv.
        kwargs.update(optimize=False)
    elif spec.keep_bn:
        # A default eval-mode export fuses BatchNormalization into the preceding Conv;
        # training=PRESERVE (on an eval-mode model) or do_constant_folding=False each
        # stops that, and BN is exported with training_mode=0.  Both are set.
        kwargs.update(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)

    with torch.no_grad():
        ref = model(*args).detach().numpy()
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TracerWarning / DeprecationWarning noise
            torch.onnx.export(model, args, str(path), **kwargs)
        seconds = time.perf_counter() - t0

    onnx.checker.check_model(str(path), full_check=True)
    proto = onnx.load(str(path))
    opsets = {o.domain or "ai.onnx": o.version for o in proto.opset_import}
    if opsets.get("ai.onnx") != opset:
        raise RuntimeError(f"{path.name}: exported opset {opsets}, expected {opset}")
    op_counts = dict(sorted(Counter(n.op_type for n in proto.graph.node).items()))
    n_bn = op_counts.get("BatchNormalization", 0)
    if spec.expect_bn is True and n_bn == 0:
        raise RuntimeError(f"{path.name}: expected BatchNormalization nodes, found none")
    if spec.expect_bn is False and n_bn:
        raise RuntimeError(f"{path.name}: expected BN folded into Conv, found {n_bn} BN nodes")

    def static(value: onnx.ValueInfoProto) -> bool:
        return all(d.HasField("dim_value") for d in value.type.tensor_type.shape.dim)

    for value in proto.graph.input:
        if not static(value):
            raise RuntimeError(f"{path.name}: input {value.name} has a non-static shape")
    # An output dim may still be symbolic in the file: MobileNetV2's TF "SAME" padding becomes
    # Pad nodes whose amounts come from unfolded all-constant sub-graphs (ConstantOfShape,
    # Concat, Reshape, Slice, Transpose, Cast), which ONNX shape inference does not evaluate.
    static_out = all(static(v) for v in proto.graph.output)

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (got,) = sess.run([spec.output_name], {k: v.numpy() for k, v in feeds.items()})
    if got.shape != ref.shape:
        raise RuntimeError(f"{path.name}: onnxruntime shape {got.shape} != torch {ref.shape}")
    if not np.all(np.isfinite(got)):
        raise RuntimeError(f"{path.name}: onnxruntime output has non-finite values")
    diff = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))))
    scale = float(np.max(np.abs(ref)))
    if diff > 1e-3 * max(1.0, scale):
        raise RuntimeError(f"{path.name}: onnxruntime differs from torch: max |diff| {diff:.3g}")
    if spec.causal:
        # Changing the last token must leave the logits of every earlier position unchanged.
        ids = feeds["input_ids"].numpy().copy()
        ids[0, -1] = (ids[0, -1] + 1) % spec.vocab
        (got2,) = sess.run([spec.output_name], {"input_ids": ids})
        if not np.array_equal(got[:, :-1], got2[:, :-1]) or np.array_equal(got, got2):
            raise RuntimeError(f"{path.name}: the exported graph is not causal")

    # Large models (or the dynamo exporter) put weights in external data files beside it.
    external = {
        entry.value
        for init in onnx.load(str(path), load_external_data=False).graph.initializer
        if init.data_location == onnx.TensorProto.EXTERNAL
        for entry in init.external_data
        if entry.key == "location"
    }
    size = path.stat().st_size + sum((path.parent / loc).stat().st_size for loc in external)
    return Result(
        name=path.stem,
        file=path,
        nodes=len(proto.graph.node),
        op_counts=op_counts,
        mb=size / 2**20,
        seconds=seconds,
        max_abs_diff=diff,
        ref_max_abs=scale,
        static_out=static_out,
        exporter="dynamo" if dynamo else "torchscript",
    )


def _print_table(results: list[Result]) -> None:
    header = f"{'model':<18} {'nodes':>6} {'MB':>8} {'export s':>9} {'max|diff|':>10}  op types"
    print(header)
    print("-" * len(header))
    for r in results:
        ops = " ".join(f"{op}:{n}" for op, n in r.op_counts.items())
        print(
            f"{r.name:<18} {r.nodes:>6} {r.mb:>8.1f} {r.seconds:>9.2f} "
            f"{r.max_abs_diff:>10.2e}  {ops}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    ap.add_argument("--only", default="", help="comma-separated model names: " + ",".join(SPECS))
    ap.add_argument(
        "--full", action="store_true", help="default (full) layer counts for transformers"
    )
    ap.add_argument("--opset", type=int, default=OPSET, help=f"ONNX opset (default {OPSET})")
    ap.add_argument(
        "--dynamo",
        action="store_true",
        help="use the torch.export-based exporter instead of the TorchScript one "
        "(torch 2.13's cannot produce opset 17 reliably: use it with --opset 18)",
    )
    args = ap.parse_args(argv)

    names = [n.strip() for n in args.only.split(",") if n.strip()] or list(SPECS)
    unknown = [n for n in names if n not in SPECS]
    if unknown:
        ap.error(f"unknown model(s) {unknown}; choose from {list(SPECS)}")
    out_dir = args.out.resolve()
    if out_dir == REPO_ROOT or REPO_ROOT in out_dir.parents:
        ap.error(f"--out {out_dir} is inside the repository; write models elsewhere")
    out_dir.mkdir(parents=True, exist_ok=True)

    print(
        f"torch {torch.__version__}, transformers {transformers.__version__}, "
        f"onnx {onnx.__version__}, onnxruntime {ort.__version__}; opset {args.opset}, "
        f"exporter {'dynamo' if args.dynamo else 'torchscript (dynamo=False)'}, out {out_dir}"
    )
    results: list[Result] = []
    failures: list[tuple[str, str]] = []
    for name in names:
        print(f"exporting {name} ...", flush=True)
        try:
            r = _export(SPECS[name], out_dir, args.full, args.dynamo, args.opset)
        except Exception as exc:  # keep going; report every failure at the end
            failures.append((name, f"{type(exc).__name__}: {exc}"))
            print(f"  FAILED: {type(exc).__name__}: {exc}", flush=True)
            continue
        results.append(r)
        print(
            f"  {r.file}: {r.nodes} nodes, {r.mb:.1f} MB, {r.seconds:.2f} s, "
            f"onnxruntime vs torch max |diff| {r.max_abs_diff:.2e} (max |ref| {r.ref_max_abs:.3g})"
            + ("" if r.static_out else "; NOTE: an output shape is not static in the file"),
            flush=True,
        )

    print()
    _print_table(results)
    summary = out_dir / ("summary_full.json" if args.full else "summary.json")
    old = json.loads(summary.read_text()) if summary.exists() else {}
    old.update(
        {
            r.name: {
                "file": r.file.name,
                "nodes": r.nodes,
                "op_counts": r.op_counts,
                "mb": round(r.mb, 3),
                "export_seconds": round(r.seconds, 3),
                "max_abs_diff": r.max_abs_diff,
                "static_output_shape": r.static_out,
                "exporter": r.exporter,
                "torch": torch.__version__,
                "transformers": transformers.__version__,
            }
            for r in results
        }
    )
    summary.write_text(json.dumps(old, indent=2) + "\n")
    if failures:
        print(f"\n{len(failures)} export(s) failed:", file=sys.stderr)
        for name, msg in failures:
            print(f"  {name}: {msg}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
