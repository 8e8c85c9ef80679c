"""The tx8c pipeline: the passes that follow ONNX import, in order.

DESIGN.md lists the stages (mid-end, layout, constants, grouping, slicing, DDR,
codegen). A stage appears here only once its passes are implemented. `pipeline_spec`
writes the pipeline as a `tx8c-opt -p` string, so any prefix of it can be replayed by
hand; `run_pipeline` runs the passes one by one, timing each and handing the module
after each pass to a callback (used for `--dump-ir-after-all` and `tx8c compare`).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline

from tx8c.dialect import make_context
from tx8c.errors import Tx8Error


@dataclass(frozen=True)
class CompileOptions:
    """Options of `tx8c compile` that shape the pipeline."""

    input_shapes: dict[str, list[int]] = field(default_factory=dict)
    opt_level: int = 1
    """0 turns the mid-end off; 1 (the default) runs it."""
    layout_strategy: str = "optimal"
    """How the layout passes place conversions: "greedy" (the seeds' walks) or "optimal"."""
    opt_group: str = "default"
    """The built-in op patterns of group-pattern (seed 003 opt_group): none, cnn,
    transformer or default (cnn and transformer)."""
    group_patterns: str | None = None
    """A JSON file of op patterns; when given it replaces the built-in set."""
    opt_barrier: bool = True
    """Run group-dag (seed 003 opt_barrier): keep one barrier per layer of groups."""
    regroup: int = 0
    """regroup-by-cost's window: merge up to this many adjacent groups where the slicing
    estimate says it pays; 0 (or 1) keeps the groups the patterns made."""
    dma_conversions: bool = True
    """fuse-channel-norm-dma: a ChannelNorm group becomes its neighbour's converting
    store or load (the LSU writes each side in its own layout)."""
    opt_ddr: bool = True
    """Seed 003 opt_ddr: large constants start on a DDR bank boundary in `consts.bin`
    (`ConstContainer.ddr_layout`); off, every constant is packed tightly."""
    spm_resident: int | None = None
    """spm-resident's budget: bytes at the top of every tile's SPM that may keep values
    between groups instead of DDR (issue 11); None, the default, is the pass's default
    (a third of the tile's SPM: 1 MiB on the default target); 0 keeps every value in
    DDR."""
    overlap: bool = True
    """Cross-group overlap (group-cost's `overlap`): each group's constant prefix loads
    during the previous group's tail (the lowering marks it early and mirrors every
    other group's buffers; the model's estimate is chained: `tx8c.slicing.overlap`)."""
    jobs: int = 0
    """Worker processes of the slicing search (group-cost's `jobs`): distinct groups are
    searched side by side; 0 means as many as the cores available. The plans, and so
    every output, do not depend on it."""
    verify_each_pass: bool = False
    """Verify the module after every pass (`--verify-each-pass`; `tx8c compare` and the
    tests turn it on) instead of once after the last pass (see `run_pipeline`)."""

    def __post_init__(self) -> None:
        if self.opt_level not in (0, 1):
            raise Tx8Error(f"--opt-level must be 0 or 1, got {self.opt_level}")
        if self.jobs < 0:
            raise Tx8Error(f"--jobs must be >= 0 (0: as many as the cores), got {self.jobs}")
        if self.spm_resident is not None and self.spm_resident < 0:
            raise Tx8Error(f"--spm-resident must be >= 0 (bytes per tile; 0: off), got "
                           f"{self.spm_resident}")
        if self.regroup < 0:
            raise Tx8Error(f"--regroup must be >= 0 (a window of groups), got {self.regroup}")
        from tx8c.analysis.layout_problem import STRATEGIES

        if self.layout_strategy not in STRATEGIES:
            raise Tx8Error(
                f"--layout-strategy must be one of {', '.join(STRATEGIES)}, "
                f"got '{self.layout_strategy}'"
            )
        self._check_grouping()

    def _check_grouping(self) -> None:
        """Unknown modes and unusable pattern files fail here, before the model is read."""
        from tx8c.analysis.group_patterns import BUILTIN_PATTERNS, read_pattern_file

        if self.opt_group not in BUILTIN_PATTERNS:
            raise Tx8Error(
                f"--opt-group must be one of {', '.join(BUILTIN_PATTERNS)}, "
                f"got '{self.opt_group}'"
            )
        if self.group_patterns is not None:
            if any(c in self.group_patterns for c in '"\\'):
                raise Tx8Error(
                    f"pattern file path '{self.group_patterns}' holds a quote or a "
                    "backslash, which a pass pipeline cannot carry; rename the file"
                )
            read_pattern_file(self.group_patterns)


def midend_spec() -> list[str]:
    """The mid-end (seed 004), in the seed's order; bias-adds are split out for the
    rewrites (canonicalize-op) and fused back into Conv/Gemm at the end for the backend."""
    return [
        "legalize",
        "fold-constant",
        "simplify-inference",
        "eliminate-common-subexpr",
        "combine-parallel-conv",
        "combine-parallel-gemm",
        "fold-scale-axis",
        "canonicalize-cast",
        "canonicalize-op",
        "peephole",
        "canonicalize-concat-pos",
        "canonicalize-op{bias-mode=fuse}",
        "eliminate-common-subexpr",
    ]


def layout_spec(strategy: str) -> list[str]:
    """The layout stage (seeds 000-003; rank views and relabels: issue 15)."""
    return [
        "layout-init",
        "layout-transmit",
        f"layout-preset-to-npu{{strategy={strategy}}}",
        "layout-normalize-rank",
        f"layout-align-to-npu{{strategy={strategy}}}",
        "layout-align-opt",
        "layout-relabel",
    ]


def constants_spec() -> list[str]:
    """The constants stage (seed 003): constants into the ConstContainer, a LoadConst per
    use; ChannelNorms of constants folded and one stored layout per constant."""
    return ["move-constant", "const-norm"]


def grouping_spec(options: CompileOptions) -> list[str]:
    """The grouping stage (seed 003): patterns (unless opt-group is none and no pattern
    file is given), single groups for the rest, loads and stores, adjacent groups merged
    where the slicing estimate says so (regroup), ChannelNorm groups folded into their
    neighbours' DMAs (dma_conversions), the tile region, and one barrier per layer of
    groups (opt_barrier)."""
    stages = []
    if options.group_patterns is not None:
        stages.append(f'group-pattern{{pattern-file="{options.group_patterns}"}}')
    elif options.opt_group != "none":
        stages.append(f"group-pattern{{mode={options.opt_group}}}")
    stages += ["group-optimization", "group-ldst"]
    if options.regroup > 1:
        stages.append(f"regroup-by-cost{{window={options.regroup}}}")
    if options.dma_conversions:  # after regroup: its merges replace a load by the
        stages.append("fuse-channel-norm-dma")  # stored SPM value, same layout assumed
    stages += ["group-mapping"]
    if options.opt_barrier:
        stages.append("group-dag")
    return stages


def slicing_spec(options: CompileOptions) -> list[str]:
    """The slicing stage (seed 003 GroupCost): every group's plan, below the SPM that
    spm-resident reserves for values kept between groups (unless its budget is 0)."""
    budget = options.spm_resident
    resident = (["spm-resident"] if budget is None
                else [f"spm-resident{{budget={budget}}}"] if budget else [])
    settings = ([f"jobs={options.jobs}"] if options.jobs else []) + (
        [] if options.overlap else ["overlap=false"])
    return resident + ["group-cost" + (f"{{{' '.join(settings)}}}" if settings else "")]


def ddr_spec(options: CompileOptions) -> list[str]:
    """The DDR stage (seed 003): every DDR tensor's offset; bank alignment (opt_ddr)."""
    return ["ddr-alloc"] + (["ddr-reorder"] if options.opt_ddr else [])


def pipeline_stages(options: CompileOptions) -> list[tuple[str, list[str]]]:
    """The stages in order, each with its passes (DESIGN.md's stage names)."""
    return [
        ("midend", midend_spec() if options.opt_level >= 1 else []),
        ("layout", layout_spec(options.layout_strategy)),
        ("constants", constants_spec()),
        ("grouping", grouping_spec(options)),
        ("slicing", slicing_spec(options)),
        ("ddr", ddr_spec(options)),
    ]


def pipeline_spec(options: CompileOptions) -> str:
    return ",".join(p for _, passes in pipeline_stages(options) for p in passes)


def build_pipeline(options: CompileOptions) -> list[ModulePass]:
    """The passes after import, in order."""
    from tx8c.passes import available_passes

    return list(PassPipeline.parse_spec(available_passes(), pipeline_spec(options)).passes)


@dataclass
class StageRecord:
    name: str
    seconds: float
    stage: str = ""
    """The stage the pass belongs to (`pipeline_stages`)."""


def stage_name(p: ModulePass) -> str:
    """The pass with its non-default options, as tx8c-opt would spell it."""
    return p.pipeline_pass_spec().__str__() if _has_options(p) else p.name


def _has_options(p: ModulePass) -> bool:
    defaults = type(p)()
    return p != defaults


@contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while passes run.

    The IR is millions of long-lived objects; the collector's full passes over them make
    large graphs look superlinear (measured: the layout stage on 100k ops grows 1.3-1.6x
    faster than linearly with the collector on, 1.05x with it paused). Passes create few
    reference cycles, which are collected when the collector resumes. Nested in another
    `gc_paused` (or with the collector off), it does nothing.
    """
    was_enabled = gc.isenabled()
    if not was_enabled:  # paused already (a caller's gc_paused): nothing to do
        yield
        return
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.unfreeze()
        if was_enabled:
            gc.enable()


def run_pipeline(
    module: ModuleOp,
    options: CompileOptions,
    after_each: Callable[[str, ModuleOp], None] | None = None,
) -> list[StageRecord]:
    """Run the pipeline on `module` in place; return the per-pass wall times.

    Verification policy: with `options.verify_each_pass` the module is verified after
    every pass (the failing pass is then the one just run; `tx8c compare`, the tests and
    `tx8c compile --verify-each-pass` use it); by default it is verified once, after the
    last pass, before anything reads the result (the lowering). A full verification of
    BERT-base costs about 0.3 s, and the pipeline has some thirty passes: verifying after
    each was 15 % of a default compile. The import verifies what it builds, and tx8c-opt
    verifies after its passes as xDSL's opt does."""
    ctx = make_context()
    records = []
    stages = [stage for stage, passes in pipeline_stages(options) for _ in passes]
    passes = build_pipeline(options)
    with gc_paused():  # once for the whole pipeline: a full collection costs 0.1 s on BERT
        for i, (p, stage) in enumerate(zip(passes, stages, strict=True)):
            start = time.perf_counter()
            p.apply(ctx, module)
            if options.verify_each_pass or i == len(passes) - 1:
                module.verify()
            name = stage_name(p)
            records.append(StageRecord(name, time.perf_counter() - start, stage))
            if after_each is not None:
                after_each(name, module)
    return records
