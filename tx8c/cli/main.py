"""tx8c: compile an ONNX model, run a compiled model, compare against onnxruntime.

    tx8c compile MODEL.onnx -o OUT/ [--input-shapes name:1x3x224x224,...] [--dump-ir-after-all]
                 [--no-opt-ddr]
    tx8c run OUT/ --inputs in.npz -o out.npz
    tx8c compare MODEL.onnx [--inputs in.npz] [--input-shapes ...]

Every user error is reported as one paragraph on stderr with exit code 1 and no
traceback; `compare` exits with 3 when a stage falls below its numeric threshold.
Nothing is written unless the whole command succeeds, and no input file is overwritten.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import numpy as np

from tx8c.cli.background import Background
from tx8c.cli.common import ArgumentParser, run_reporting_errors
from tx8c.cli.consts import (
    BIN_FILE,
    INDEX_FILE,
    ConstantsLoader,
    constants_report,
    image_round_trip,
    write_constants,
)
from tx8c.cli.files import OutputDir, check_output_file, write_file, write_npz
from tx8c.cli.progress import Progress
from tx8c.cli.resources import check_fits
from tx8c.errors import Tx8Error, require_file

if TYPE_CHECKING:  # imported when a command needs them: `tx8c --help` stays quick
    from tx8c.pipeline import CompileOptions
    from tx8c.target.config import TX8Config

EXIT_NUMERICS = 3


# --------------------------------------------------------------------------------------
# compile
# --------------------------------------------------------------------------------------


PROGRAM_FILE = "program.json.gz"
BACKENDS = ("reference", "cmodel", "cmodelv2", "c")
C_DIR = "c"
"""Where `run --backend c` writes, builds and runs the C program (inside OUT/)."""
COMPILE_FILES = ["model.mlir", "report.json", PROGRAM_FILE, BIN_FILE, INDEX_FILE]
"""The files `tx8c compile` writes in OUT/ (and report.html with --report)."""
STAGE_FILE = r"\d{2,}-[A-Za-z0-9_.-]+\.mlir"
"""The names of the stage dumps in OUT/stages (nothing else is ever written there)."""


def cmd_compile(args: argparse.Namespace) -> int:
    from tx8c.pipeline import gc_paused

    # The collector is paused for the whole compile, not only the passes: lowering,
    # simulating and writing JSON build millions of small objects beside the IR, and
    # each full collection walks the IR again (ResNet-50: 2 s of 30).
    with gc_paused():
        return _compile(args)


def _compile(args: argparse.Namespace) -> int:
    from tx8c.const_container import ConstContainer
    from tx8c.frontend.onnx.loader import parse_input_shapes
    from tx8c.ir import print_module

    progress = Progress(args.quiet or args.json)
    out = OutputDir(args.output, inputs=[args.model], subdirs={"stages": STAGE_FILE},
                    planned=COMPILE_FILES + (["report.html"] if args.report else []))
    out.check()
    shapes = parse_input_shapes(args.input_shapes)
    run = _CompileRun(args, out, _target_config(args), shapes, _options(args, shapes),
                      PhaseClock(), progress)
    clock, options = run.clock, run.options
    with clock("import"):
        result = _import(args.model, shapes, progress)
    _set_target(result.module, run.target)
    if args.dump_ir_after_all:
        run.stages.append(("import", print_module(result.module)))

    constants = _ConstantsAhead(out, options)

    def after_each(name, module):
        if args.dump_ir_after_all:
            run.stages.append((name, print_module(module)))
        constants.after_pass(module)

    children: list[Background] = []
    try:
        records = _run_pipeline(result.module, options, progress, after_each)
        for r in records:
            clock.add(r.stage, r.seconds)
        container, consts_index = constants.written(result.module)
        clock.add("write-constants", constants.seconds)
        ConstContainer.external(result.module, INDEX_FILE)  # model.mlir names the files
        # The IR text and the report's statistics of the module are made in a child
        # while this process lowers (nothing changes the module after the pipeline); the
        # cmodel v2 simulation and the Program's file in two children while this process
        # makes the rest of the report (`_Texts`).
        children.append(Background(
            "printing of model.mlir and the report's module statistics",
            lambda: (print_module(result.module),
                     _module_statistics(result.module, consts_index))))
        with clock("lower"):
            program = _lower(result.module, container, progress)
        children.append(Background("cmodel v2 simulation",
                                   lambda: _simulation(program, result.module)))
        children.append(Background(f"writing of {PROGRAM_FILE}", program.to_file_bytes))
        _compile_outputs(run, result, records, program, consts_index, _Texts(*children))
    except BaseException:
        for child in children:
            child.cancel()
        out.discard()
        raise
    return 0


class _ConstantsAhead:
    """consts.bin and consts.json of a compile, written by a thread (`OutputDir.
    write_ahead`) from the end of the constants stage on: the container is final there
    (only the constants stage's passes change it), and hashing and writing BERT-base's
    415 MB (about a CPU second) then runs beside the grouping and slicing stages, whose
    serial parts leave a core idle, instead of beside the lowering (which the IR child
    shares). The module keeps carrying the container until the pipeline ends (the DDR
    passes read it). `seconds`: staging the files and starting the thread, the phase
    "write-constants" (added to the clock after the pipeline's stages, where it was)."""

    def __init__(self, out: OutputDir, options: CompileOptions):
        from tx8c.pipeline import pipeline_stages

        self.out, self.opt_ddr = out, options.opt_ddr
        self.passes_run = 0
        self.final_after = 0  # passes up to the end of the constants stage
        for stage, passes in pipeline_stages(options):
            self.final_after += len(passes)
            if stage == "constants":
                break
        self.container = None
        self.carried = None  # the module's constants attribute that was written
        self.index: dict | None = None
        self.seconds = 0.0

    def after_pass(self, module) -> None:
        """After each pass of the pipeline: start writing at the constants stage's end."""
        self.passes_run += 1
        if self.passes_run == self.final_after:
            self._start(module)

    def written(self, module):
        """After the pipeline: (the module's container, the index of consts.json), the
        files being written (started here if the pipeline had no constants stage)."""
        from tx8c.const_container import MODULE_ATTR

        if self.index is None:
            self._start(module)
        elif module.attributes.get(MODULE_ATTR) is not self.carried:
            # Attributes are immutable: a pass that changed a constant replaced this one.
            raise RuntimeError("a pass after the constants stage changed the module's "
                               "constants after consts.bin was written ahead")
        return self.container, self.index

    def _start(self, module) -> None:
        from tx8c.const_container import MODULE_ATTR, module_container

        start = time.perf_counter()
        self.carried = module.attributes.get(MODULE_ATTR)
        self.container = module_container(module)
        self.index = write_constants(self.out, self.container, self.opt_ddr)
        self.out.write_ahead()
        self.seconds = time.perf_counter() - start


@dataclass
class _Texts:
    """What `tx8c compile` computes in forked children (`Background`) beside the
    report: model.mlir's text with the report's statistics of the module
    (`_module_statistics`, during the lowering: BERT-base's groups and slicing sections
    took 0.3 s after it), the cmodel v2 simulation (`_simulation`'s pair) and the
    bytes of program.json.gz. A child costs the fork and the pickled answer (the texts
    are a few MB, the file a few hundred KB) and takes its work off the one core this
    process runs on."""

    ir: Background
    """(model.mlir's text, `_module_statistics`)."""
    simulation: Background
    program_file: Background


def _module_statistics(module, consts_index) -> dict:
    """The sections of report.json that read the compiled module alone (not the
    Program): made in a child while the Program is lowered (`_Texts`)."""
    return {
        "op_counts": _op_counts(module),
        "layout": _layout_stats(module),
        "layout_traffic": _layout_traffic(module),
        "constants": constants_report(module, consts_index),
        "groups": _group_stats(module),
        "regroup": _regroup_stats(module),
        "ddr": _ddr_stats(module),
        "resident": _resident_stats(module),
        "slicing": _slicing_report(module),
    }


@dataclass
class _CompileRun:
    """What one `tx8c compile` works with from its command line to its commit."""

    args: argparse.Namespace
    out: OutputDir
    target: TX8Config
    shapes: dict
    options: CompileOptions
    clock: PhaseClock
    progress: Progress
    stages: list[tuple[str, str]] = field(default_factory=list)
    """(pass name, IR text after it) with --dump-ir-after-all."""


def _compile_outputs(run: _CompileRun, result, records, program, consts_index,
                     texts: _Texts) -> None:
    """The report and the output texts of `tx8c compile`, and the commit; the children
    of `texts` are joined where their results are needed (the phases `write-ir`,
    `write-program` and `simulate` are the waits for them)."""
    from tx8c.pipeline import pipeline_spec

    args, out, options, clock, progress = run.args, run.out, run.options, run.clock, \
        run.progress

    with clock("report"):
        ir_text, module_stats = texts.ir.result()
        report = {
            "model": str(args.model),
            "opset": result.opset,
            "onnx_nodes": result.onnx_nodes,
            "onnx_op_counts": dict(sorted(result.onnx_op_counts.items())),
            "op_counts": module_stats["op_counts"],
            "pass_seconds": [{"pass": "import", "seconds": round(result.seconds, 6)}]
            + [{"pass": r.name, "seconds": round(r.seconds, 6)} for r in records],
            "options": {
                "input_shapes": run.shapes,
                "dump_ir_after_all": args.dump_ir_after_all,
                "opt_level": options.opt_level,
                "layout_strategy": options.layout_strategy,
                "opt_ddr": options.opt_ddr,
                "opt_group": options.opt_group,
                "group_patterns": options.group_patterns,
                "opt_barrier": options.opt_barrier,
                "regroup": options.regroup,
                "spm_resident": options.spm_resident,
                "dma_conversions": options.dma_conversions,
                "overlap": options.overlap,
            },
            "pipeline": pipeline_spec(options),
            **{key: module_stats[key] for key in ("layout", "layout_traffic", "constants",
                                                  "groups", "regroup", "ddr", "resident")},
            "program": {"groups": len(program.groups),
                        "instructions": program.instruction_count(),
                        "ddr_bytes": program.ddr_bytes},
            "simulation": None,  # joined below
            "slicing": module_stats["slicing"],
            "inputs": result.input_names,
            "outputs": result.output_names,
            "target": overrides_json(run.target),
        }
    with clock("write-ir"):
        out.add("model.mlir", ir_text)
        for i, (name, text) in enumerate(run.stages):
            out.add(f"stages/{i:02d}-{_file_name(name)}.mlir", text)
    with clock("write-program"):
        out.add(PROGRAM_FILE, texts.program_file.result())
    with clock("simulate"):  # the wait for the child, what it did not overlap
        report["simulation"], line = texts.simulation.result()
        progress(line)
    report["phase_seconds"] = clock.rounded()
    out.add("report.json", json.dumps(report, indent=2) + "\n")
    if args.report:
        from tx8c.report.html import build_report

        progress("writing report.html")
        out.add("report.html", build_report(result.module, report, run.target, None, progress))
    out.commit()
    written = ", ".join(COMPILE_FILES[:1] + COMPILE_FILES[2:] + COMPILE_FILES[1:2]
                        + (["report.html"] if args.report else []))
    progress(f"wrote {out.path}/{{{written}}}")
    if not args.json:  # --quiet silences the progress, not the result
        print(_latency_line(report["slicing"], report["simulation"]))
        if report["resident"]:
            print(_resident_line(report["resident"], report["simulation"]))
    if args.json:
        print(json.dumps(report, indent=2))


class PhaseClock:
    """Wall seconds of the phases of a compile, in the order they first ran: import,
    the pipeline's stages (midend ... ddr, from the passes' records), lowering, the
    constants file, simulation, the report's statistics and the output texts. What
    `report.json` keeps as `phase_seconds` (writing the files to disk comes after)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds

    @contextmanager
    def __call__(self, phase: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(phase, time.perf_counter() - start)

    def rounded(self) -> dict[str, float]:
        return {phase: round(s, 6) for phase, s in self.seconds.items()}


def _lower(module, container, progress):
    """The Program of the compiled module (tx8c.codegen.lower) with its constants."""
    from tx8c.codegen.lower import lower_module

    program = lower_module(module, container)
    progress(f"lowered to {program.instruction_count()} instructions")
    return program


def _simulation(program, module) -> tuple[dict, str]:
    """The cmodel v2 timing of the Program (latency per model and group beside the
    estimate, engine busy time), and a progress line about it."""
    from tx8c.sim.cmodel_v2 import simulate, timing_report
    from tx8c.target.config import target_config

    timing = simulate(program, module)
    line = (f"simulated {timing.cycles} cycles (estimate "
            f"{timing.estimate})")
    return timing_report(timing, target_config(module)), line


def _ddr_stats(module) -> dict:
    """The DDR placement: variables peak beside its lower bound, constants, bank cost."""
    from tx8c.analysis.ddr_tensors import read_placement

    placement = read_placement(module)
    if placement is None:
        return {}
    return {
        "opt_ddr": placement.opt_ddr, "align": placement.align,
        "constants_bytes": placement.constants_bytes,
        "variables_base": placement.variables_base,
        "variables_peak": placement.peak, "variables_lower_bound": placement.lower_bound,
        "peak_over_bound": round(placement.peak / placement.lower_bound, 4)
        if placement.lower_bound else 1.0,
        "total_bytes": placement.total_bytes, "reorder_bytes": placement.reorder_bytes,
        "tensors": len(placement.values),
    }


def _resident_stats(module) -> dict | None:
    """What spm-resident kept in SPM (None when it did not run): the values, the stored
    bytes kept out of DDR (each would be stored once and loaded by every reader), the
    budget and page, and the largest reserve of an epoch."""
    from tx8c.analysis.spm_resident import read_residency

    residency = read_residency(module)
    if residency is None:
        return None
    return {
        "budget": residency.budget, "page": residency.page,
        "values": len(residency.values), "bytes_kept": residency.bytes_kept,
        "max_reserve": max(residency.reserve, default=0),
        "names": [v.name for v in residency.values],
    }


def _resident_line(resident: dict, simulation: dict) -> str:
    return (f"spm-resident: {resident['values']} values kept in SPM "
            f"({resident['bytes_kept'] / 1e6:.2f} MB stored there instead of DDR, "
            f"largest reserve {resident['max_reserve']} B per tile); DDR bytes moved "
            f"(cmodel v2) {simulation['ddr_bytes'] / 1e6:.2f} MB")


def _layout_traffic(module) -> dict:
    """What still moves bytes after the layout stage (ChannelNorms, Transposes, Reshapes:
    count and bytes; relabels)."""
    from tx8c.analysis.layout_problem import layout_traffic, read_layout_stats

    return layout_traffic(read_layout_stats(module))


def _import(model, shapes, progress: Progress):
    """The ONNX import (`model` a path, or a model `prepare` returned), with a progress
    step per node."""
    import onnx

    from tx8c.frontend.onnx.importer import import_prepared
    from tx8c.frontend.onnx.loader import check_opset, prepare

    start = time.perf_counter()
    if isinstance(model, onnx.ModelProto):
        opset = check_opset(model)
    else:
        progress(f"reading {model}")
        model, opset = prepare(model, shapes)
    with progress.task("importing", len(model.graph.node)) as advance:
        return import_prepared(model, opset, on_node=advance, start=start)


def _run_pipeline(module, options, progress: Progress, after_each=None):
    """The pipeline, with a progress step per pass (the bar names the pass running)."""
    from tx8c.pipeline import build_pipeline, run_pipeline, stage_name

    names = [stage_name(p) for p in build_pipeline(options)]
    upcoming = iter(names[1:])
    with progress.task("compiling", len(names), first=names[0]) as advance:
        def each(name, module):
            advance(next(upcoming, name))
            if after_each is not None:
                after_each(name, module)

        return run_pipeline(module, options, each)


def _target_config(args: argparse.Namespace):
    """The TX8Config of --target-config, else the default."""
    from tx8c.target.config import DEFAULT_CONFIG
    from tx8c.target.config_file import read_target_config

    path = getattr(args, "target_config", None)
    return DEFAULT_CONFIG if path is None else read_target_config(path)


def _set_target(module, config) -> None:
    """Record the fields of `config` that differ from the default in the module's
    `tx8c.target` attribute, where the passes read them (nothing when all are default,
    so outputs stay byte-identical)."""
    from xdsl.dialects.builtin import StringAttr

    from tx8c.target.config_file import TARGET_ATTR, overrides, target_attr_json

    if overrides(config):
        module.attributes[TARGET_ATTR] = StringAttr(target_attr_json(config))


def overrides_json(config) -> dict:
    from tx8c.target.config_file import target_attr_json

    return json.loads(target_attr_json(config))


def _layout_stats(module) -> dict:
    """What the layout passes inserted (ChannelNorms, Transposes: count and bytes)."""
    from tx8c.analysis.layout_problem import read_layout_stats

    return read_layout_stats(module)


def _group_stats(module) -> dict:
    """The groups (ops, tag, barrier, boundary tensors and bytes) and the DDR bytes
    between groups, against the singles-only grouping."""
    from tx8c.analysis.group_stats import group_report

    return group_report(module)


def _regroup_stats(module) -> dict | None:
    """What regroup-by-cost did (groups and estimated cycles before and after, searches);
    None when it did not run."""
    from tx8c.ir_utils import read_pass_stats
    from tx8c.transforms.group.regroup_by_cost import STATS_ATTR, RegroupByCostPass

    return read_pass_stats(module, STATS_ATTR).get(RegroupByCostPass.name)


def _slicing_report(module) -> dict:
    """The slicing search's plans (per group) and the model's estimated latency beside
    its bounds: the sum of the groups' bounds and the roofline bound."""
    from tx8c.analysis.roofline import model_roofline
    from tx8c.transforms.slice.group_cost import STATS_ATTR, target_config

    attr = module.attributes.get(STATS_ATTR)
    stats = json.loads(attr.data) if attr is not None else {"groups": [], "cycles": 0,
                                                             "bound_cycles": 0}
    config = target_config(module)
    roofline = model_roofline(module, config)
    seconds = stats["cycles"] / config.clock_hz
    return {
        **stats,
        "estimated_seconds": seconds,
        "alone_seconds": stats.get("alone_cycles", stats["cycles"]) / config.clock_hz,
        "groups_bound_seconds": stats["bound_cycles"] / config.clock_hz,
        "roofline": roofline.as_dict(),
        "estimate_over_roofline": seconds / roofline.seconds if roofline.seconds else None,
    }


def _latency_line(slicing: dict, simulation: dict) -> str:
    us = 1e6
    roof = slicing["roofline"]
    ratio = slicing["estimate_over_roofline"]
    alone = slicing.get("alone_seconds", slicing["estimated_seconds"])
    chained = (f", {alone * us:.1f} us one after another whole"
               if slicing.get("overlap") and alone != slicing["estimated_seconds"] else "")
    return (f"estimated latency {slicing['estimated_seconds'] * us:.1f} us "
            f"({len(slicing['groups'])} groups{chained}), simulated (cmodel v2) "
            f"{simulation['simulated_seconds'] * us:.1f} us; roofline bound "
            f"{roof['seconds'] * us:.1f} us ({roof['bound_by']}-bound)"
            + (f"; estimate / bound {ratio:.2f}" if ratio is not None else ""))


def _file_name(stage: str) -> str:
    """A stage name fit for a file name: the pass name without its options."""
    return stage.split("{")[0]


def _options(args: argparse.Namespace, shapes: dict):
    from tx8c.pipeline import CompileOptions

    return CompileOptions(
        input_shapes=shapes, opt_level=args.opt_level, layout_strategy=args.layout_strategy,
        opt_ddr=getattr(args, "opt_ddr", True),
        opt_group=args.opt_group, group_patterns=args.group_patterns,
        opt_barrier=args.opt_barrier, regroup=args.regroup,
        spm_resident=getattr(args, "spm_resident", None),
        dma_conversions=getattr(args, "dma_conversions", True),
        overlap=getattr(args, "overlap", True),
        jobs=getattr(args, "jobs", 0),
        verify_each_pass=getattr(args, "verify_each_pass", False),
    )


def _op_counts(module) -> dict[str, int]:
    from collections import Counter

    from tx8c.dialect.base import Tx8beOp

    counts = Counter(op.name.removeprefix("tx8be.") for op in module.walk()
                     if isinstance(op, Tx8beOp))
    return dict(sorted(counts.items()))


# --------------------------------------------------------------------------------------
# run
# --------------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    from tx8c.ir import parse_module, read_ir_file, verify_module
    from tx8c.sim.reference import input_names, main_function

    progress = Progress(args.quiet)
    mlir = _compiled_module_path(Path(args.compiled))
    inputs_path = Path(args.inputs)
    sources = [inputs_path, mlir, mlir.parent / BIN_FILE, mlir.parent / INDEX_FILE]
    check_output_file(Path(args.output), inputs=sources)
    text = read_ir_file(mlir)
    if not text.strip():
        raise Tx8Error(f"'{mlir}' is empty; give the model.mlir that `tx8c compile` wrote.")
    loader = ConstantsLoader(mlir)  # reads and checks consts.bin while the IR is parsed
    module = parse_module(text, str(mlir))
    verify_module(module, str(mlir))
    progress(f"parsed {mlir}")
    constants = loader.container_for(module)
    if constants is not None:
        progress(f"loaded {len(constants)} constants")
    inputs = load_npz(inputs_path)
    _check_input_names(inputs, input_names(main_function(module)), inputs_path)
    check_fits(module, "running this model")
    outputs = _run_backend(args.backend, mlir.parent, module, inputs, constants, progress)
    names = _output_names(main_function(module))
    write_npz(args.output, dict(zip(names, outputs, strict=True)), inputs=sources)
    progress(f"wrote {args.output} ({', '.join(names)})")
    return 0


def _run_backend(backend: str, directory: Path, module, inputs: dict, constants, progress):
    """The outputs of the compiled model on `inputs` by `backend`."""
    from tx8c.sim.reference import input_names, main_function, run_reference

    if backend == "reference":
        progress("running the reference executor")
        return run_reference(module, inputs, constants)
    if backend == "cmodel":
        from tx8c.sim.cmodel import run_cmodel

        progress("running the cmodel (v1)")
        return run_cmodel(module, inputs, constants)
    from tx8c.sim.cmodel_v2 import run_program

    program = _read_program(directory, "to run the cmodel v2")
    ordered = [inputs[n] for n in input_names(main_function(module))]
    if backend == "c":
        from tx8c.codegen.c_backend import run_c
        from tx8c.sim.cmodel_v2 import resolve_ops

        progress(f"building and running the C program in {directory / C_DIR}")
        return run_c(program, ordered, constants, directory / C_DIR,
                     resolve_ops(program, module))
    progress("running the cmodel v2 (byte-level, 16 tiles, timing)")
    outputs, timing = run_program(program, module, ordered, constants)
    progress(f"cmodel v2: {timing.cycles} cycles simulated, estimate {timing.estimate}")
    return outputs


def _read_program(directory: Path, purpose: str):
    """The Program `tx8c compile` wrote in `directory` (a clear error when it is missing
    or not one)."""
    from tx8c.codegen.program import program_from_file_bytes

    path = directory / PROGRAM_FILE
    if not path.is_file():
        raise Tx8Error(f"'{path}' not found; compile the model again with this tx8c "
                       f"(tx8c compile writes {PROGRAM_FILE}) {purpose}.")
    try:
        return program_from_file_bytes(path.read_bytes())
    except (ValueError, KeyError, TypeError) as e:
        raise Tx8Error(f"'{path}' is not a Program tx8c wrote ({e}); compile again.") \
            from None


def _check_input_names(inputs: dict, names: list[str], path: Path) -> None:
    missing = [n for n in names if n not in inputs]
    unknown = [n for n in inputs if n not in names]
    if missing or unknown:
        raise Tx8Error(
            f"the inputs in '{path}' do not match the model's: "
            + (f"missing {missing}; " if missing else "")
            + (f"unknown {unknown}; " if unknown else "")
            + f"the model takes {names}, the file has {list(inputs)}."
        )


def _compiled_module_path(compiled: Path) -> Path:
    """OUT/model.mlir for the output directory of `tx8c compile` (or a .mlir file)."""
    if compiled.suffix == ".onnx":
        raise Tx8Error(
            f"'{compiled}' is an ONNX model; `tx8c run` runs a compiled model. Compile it "
            f"first (tx8c compile {compiled} -o OUT/) and give OUT/ to run."
        )
    mlir = compiled / "model.mlir" if compiled.is_dir() else compiled
    if not mlir.is_file():
        raise Tx8Error(f"'{mlir}' not found; give the output directory of `tx8c compile`.")
    return mlir


def _output_names(function) -> list[str]:
    n = len(function.function_type.outputs.data)
    names = [f"output{i}" for i in range(n)]
    if function.res_attrs is not None:
        for i, attrs in enumerate(function.res_attrs.data):
            entry = attrs.data.get("tx8c.name")
            if entry is not None:
                names[i] = entry.data
    return names


def load_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an .npz file, with a clear error for anything else."""
    import zipfile

    require_file(path, Tx8Error, "inputs file", "an .npz file")
    if not zipfile.is_zipfile(path):
        hint = (" It looks like a single .npy array" if path.read_bytes()[:6] == b"\x93NUMPY"
                else "")
        raise Tx8Error(
            f"'{path}' is not a readable .npz file (an .npz is a zip of arrays).{hint} Save "
            "the inputs with numpy.savez(path, name=array, ...), one array per model input."
        )
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as e:
        raise Tx8Error(f"'{path}' is not a readable .npz file ({e}).") from None
    if not arrays:
        raise Tx8Error(
            f"'{path}' holds no arrays; save one array per model input with numpy.savez."
        )
    return arrays


# --------------------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------------------


def cmd_compare(args: argparse.Namespace) -> int:
    from tx8c.frontend.onnx.loader import parse_input_shapes, prepare
    from tx8c.frontend.onnx.runtime import check_inputs, random_inputs, run_onnxruntime
    from tx8c.pipeline import build_pipeline, run_pipeline

    progress = Progress(args.quiet or args.json)
    target = _target_config(args)
    shapes = parse_input_shapes(args.input_shapes)
    # compare checks every stage, so it verifies every stage too
    options = replace(_options(args, shapes), verify_each_pass=True)
    model, _ = prepare(args.model, shapes)
    result = _import(model, shapes, progress)
    _set_target(result.module, target)
    # onnxruntime's results are held beside the executor's: two copies
    check_fits(result.module, "comparing this model", copies=2)
    if args.inputs:
        inputs = load_npz(Path(args.inputs))
        check_inputs(model, inputs)
    else:
        inputs = random_inputs(model, seed=args.seed)
    progress("running onnxruntime")
    expected = run_onnxruntime(model, inputs, optimize=args.ort_optimize)
    stage_row = _stage_rower(args, model, result, inputs, expected, progress)
    rows = [stage_row("import", result.module)]
    with progress.task("comparing", len(build_pipeline(options)) + 1) as advance:
        def after_each(name, module):
            rows.append(stage_row(name, module))
            advance(f"{name}: {rows[-1]['verdict']}")

        run_pipeline(result.module, options, after_each)
        rows.append(_cmodel_row(result.module, inputs, expected))
        advance(f"cmodel: {rows[-1]['verdict']}")
    found: dict = {}
    rows.append(_cmodel_v2_row(result.module, inputs, expected, found))
    progress(f"cmodel v2: {rows[-1]['verdict']}")
    rows.append(_c_row(result.module, inputs, expected, found, progress))
    progress(f"C: {rows[-1]['verdict']}")
    failed = [r for r in rows if r["verdict"] == "FAIL"]
    if args.json:
        print(json.dumps({"model": str(args.model), "stages": rows}, indent=2))
    elif args.summary:
        print(format_table(_summary_rows(rows)))
    else:
        print(format_table(rows))
    return EXIT_NUMERICS if failed else 0


def _stage_rower(args, model, result, inputs, expected, progress: Progress):
    """The function giving a stage's row: outputs only, or with --all-tensors every
    intermediate tensor too (tx8c.cli.tensor_compare)."""
    if not args.all_tensors:
        return lambda name, module: _stage_row(name, module, inputs, expected)
    from tx8c.cli.tensor_compare import Arrangements, onnx_intermediates, run_and_compare

    progress("running onnxruntime on every intermediate tensor")
    tensors = onnx_intermediates(model, inputs, optimize=args.ort_optimize)
    arrangements = Arrangements()

    def row(name, module):
        holder = {}

        def executor(module, inputs):
            outputs, holder["tensors"] = run_and_compare(
                module, inputs, result.value_names, tensors, arrangements)
            return outputs

        out = _stage_row(name, module, inputs, expected, executor)
        out["tensors"] = holder["tensors"].as_dict()
        return out

    return row


def _stage_row(stage: str, module, inputs: dict, expected: list[np.ndarray],
               executor=None) -> dict:
    """A stage's outputs against onnxruntime: the worst output's figures and the
    verdict (FAIL if any output fails; INCONCLUSIVE when none fails and some output's
    reference is all zero or subnormal, with the reason)."""
    from tx8c.cli.tensor_compare import FAIL, INCONCLUSIVE, PASS, verdict
    from tx8c.sim.reference import run_reference

    got = (executor or run_reference)(module, inputs)
    checks = [verdict(e, g) for e, g in zip(expected, got, strict=True)]
    worst = min((figures for _, figures in checks), key=lambda f: f["cosine"])
    verdicts = [v for v, _ in checks]
    row = {
        "stage": stage,
        "cosine": worst["cosine"],
        "sqnr_db": worst["sqnr_db"],
        "max_abs_error": max(f["max_abs_error"] for _, f in checks),
        "verdict": FAIL if FAIL in verdicts else INCONCLUSIVE if INCONCLUSIVE in verdicts
        else PASS,
    }
    reasons = [f"output {i}: {f['reason']}" for i, (v, f) in enumerate(checks)
               if v == INCONCLUSIVE]
    if reasons:
        row["reason"] = "; ".join(reasons)
    return row


def _cmodel_row(module, inputs: dict, expected: list[np.ndarray]) -> dict:
    """The byte-level cmodel after the last stage, reading its constants from the bytes
    of their DDR image (as `tx8c run` reads consts.bin), against onnxruntime, and whether
    it equals the reference executor bit for bit."""
    from tx8c.sim.cmodel import run_cmodel
    from tx8c.sim.reference import run_reference

    constants = image_round_trip(module)  # the bytes consts.bin would hold, checked

    def cmodel(module, inputs):
        return run_cmodel(module, inputs, constants)

    row = _stage_row("cmodel", module, inputs, expected, cmodel)
    reference = run_reference(module, inputs)
    got = cmodel(module, inputs)
    row["equals_reference"] = all(
        g.tobytes() == r.tobytes() for g, r in zip(got, reference, strict=True)
    )
    return row


def _cmodel_v2_row(module, inputs: dict, expected: list[np.ndarray], found: dict) -> dict:
    """The lowered Program on the cmodel v2 (constants through the bytes of their DDR
    image) against onnxruntime, whether it equals the reference executor bit for bit,
    and its simulated latency beside the estimate. `found` gets the Program, its
    constants and the outputs (for the C row)."""
    from tx8c.codegen.lower import lower_module
    from tx8c.sim.cmodel_v2 import run_program
    from tx8c.sim.reference import input_names, main_function, run_reference

    constants = image_round_trip(module)

    def cmodel_v2(module, inputs):
        if "outputs" not in found:
            ordered = [inputs[n] for n in input_names(main_function(module))]
            found["program"] = lower_module(module, constants)
            found["constants"], found["inputs"] = constants, ordered
            found["outputs"], found["timing"] = run_program(found["program"], module,
                                                            ordered, constants)
        return found["outputs"]

    row = _stage_row("cmodel v2", module, inputs, expected, cmodel_v2)
    reference = run_reference(module, inputs)
    row["equals_reference"] = all(
        g.tobytes() == r.tobytes() for g, r in zip(found["outputs"], reference, strict=True))
    timing = found["timing"]
    row["simulated_cycles"] = timing.cycles
    row["estimate_cycles"] = timing.estimate
    return row


def _c_row(module, inputs: dict, expected: list[np.ndarray], found: dict,
           progress: Progress) -> dict:
    """The Program emitted as C, built with the system C compiler and run in a temporary
    directory, against onnxruntime, and against the cmodel v2 (bit for bit, else the
    worst cosine). Skipped, with the reason, when no C compiler exists."""
    import tempfile
    import time

    from tx8c.codegen.c_backend import find_compiler, run_c
    from tx8c.sim.cmodel_v2 import resolve_ops

    if find_compiler() is None:
        return {"stage": "C", "verdict": "SKIPPED",
                "reason": "no C compiler found ($CC, cc, gcc or clang); install one to "
                          "build and run the emitted C program"}
    progress("building and running the C program")
    program = found["program"]
    with tempfile.TemporaryDirectory(prefix="tx8c-c-") as work:
        start = time.perf_counter()
        got = run_c(program, found["inputs"], found["constants"], work,
                    resolve_ops(program, module))
        seconds = time.perf_counter() - start
    row = _stage_row("C", module, inputs, expected, lambda module, inputs: got)
    row["c_seconds"] = round(seconds, 3)
    row["equals_cmodel_v2"] = all(
        g.tobytes() == v.tobytes() for g, v in zip(got, found["outputs"], strict=True))
    if not row["equals_cmodel_v2"]:
        from tx8c.cli.tensor_compare import verdict

        row["cmodel_v2_cosine"] = min(verdict(v, g)[1]["cosine"]
                                      for v, g in zip(found["outputs"], got, strict=True))
    return row


FINAL_ROWS = ("cmodel", "cmodel v2", "C")
"""The rows after the pipeline's stages."""


def _summary_rows(rows: list[dict]) -> list[dict]:
    """The import row, the last stage's, one line for the stages between them and the
    cmodel and C rows (`compare --summary`)."""
    stages = [r for r in rows if r["stage"] not in FINAL_ROWS]
    between = stages[1:-1]
    verdicts = sorted({r["verdict"] for r in between})
    note = {"stage": f"({len(between)} stages between)", "verdict": "SKIPPED",
            "reason": "their verdicts: " + ", ".join(verdicts), "note": True}
    return [stages[0], note, stages[-1], *[r for r in rows if r["stage"] in FINAL_ROWS]]


def format_table(rows: list[dict]) -> str:
    head = f"{'stage':<34} {'cosine':>12} {'SQNR (dB)':>10} {'max abs err':>12}  verdict"
    lines = [head, "-" * len(head)]
    for r in rows:
        if r.get("note"):
            lines.append(f"{r['stage']:<34} {r['reason']}")
            continue
        if r["verdict"] == "SKIPPED":
            lines.append(f"{r['stage']:<34} {'-':>12} {'-':>10} {'-':>12}  SKIPPED")
            lines.append(f"  skipped: {r['reason']}")
            continue
        lines.append(
            f"{r['stage']:<34} {r['cosine']:>12.8f} {r['sqnr_db']:>10.2f} "
            f"{r['max_abs_error']:>12.3e}  {r['verdict']}"
        )
        if r.get("reason"):
            lines.append(f"  inconclusive: {r['reason']}")
        if "tensors" in r:
            lines.append(_tensor_line(r["tensors"]))
        if "equals_reference" in r:
            same = "bit-exact" if r["equals_reference"] else "NOT bit-exact"
            lines.append(f"  ({r['stage']} vs reference executor after the last stage: "
                         f"{same})")
        if "equals_cmodel_v2" in r:
            same = "bit-exact" if r["equals_cmodel_v2"] else \
                f"not bit-exact, cosine {r['cmodel_v2_cosine']:.8f}"
            lines.append(f"  (C program vs cmodel v2: {same}; emitted, built and run in "
                         f"{r['c_seconds']:.1f} s)")
        if "simulated_cycles" in r:
            lines.append(f"  (simulated {r['simulated_cycles']} cycles, estimate "
                         f"{r['estimate_cycles']})")
    return "\n".join(lines)


def _tensor_line(t: dict) -> str:
    """One stage's per-tensor summary: counts, and the first failing tensor."""
    counts = (f"  tensors: {t['compared']} compared, {t['failed']} below threshold, "
              f"{t['inconclusive']} inconclusive, {t['not_comparable']} not comparable")
    first = t["first_failure"]
    if first is None:
        return counts
    return (counts + f"\n  first failing tensor: '{first['tensor']}' from "
            f"{first['producer']} (cosine {first['cosine']:.8f}, max abs err "
            f"{first['max_abs_error']:.3e})")


# --------------------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------------------


def cmd_report(args: argparse.Namespace) -> int:
    """The HTML report of a compiled model (tx8c.report)."""
    from tx8c.ir import parse_module, read_ir_file
    from tx8c.report.html import build_report
    from tx8c.transforms.slice.group_cost import target_config

    progress = Progress(args.quiet)
    out_dir = Path(args.compiled)
    mlir, report_json = out_dir / "model.mlir", out_dir / "report.json"
    for needed in (mlir, report_json):
        if not needed.is_file():
            raise Tx8Error(f"'{needed}' not found; give the output directory of `tx8c "
                           "compile`.")
    compare_path = Path(args.compare) if args.compare else out_dir / "compare.json"
    sources = [mlir, report_json] + ([compare_path] if compare_path.is_file() else [])
    check_output_file(Path(args.output), inputs=sources)
    report = _read_json(report_json)
    compare = _read_json(compare_path) if compare_path.is_file() else None
    if args.compare and compare is None:
        raise Tx8Error(f"comparison file '{args.compare}' not found.")
    progress(f"reading {mlir}")
    module = parse_module(read_ir_file(mlir), str(mlir))
    config = (_target_config(args) if args.target_config else target_config(module))
    page = build_report(module, report, config, compare, progress)
    write_file(args.output, page, inputs=sources)
    progress(f"wrote {args.output} ({len(page.encode()) / 1e6:.1f} MB)")
    return 0


def cmd_trace(args: argparse.Namespace) -> int:
    """The cmodel v2's timeline of a compiled model as a Chrome trace (tx8c.sim.trace)."""
    import gzip

    from tx8c.ir import parse_module, read_ir_file
    from tx8c.sim.cmodel_v2 import simulate_events
    from tx8c.sim.trace import chrome_trace

    progress = Progress(args.quiet)
    mlir = _compiled_module_path(Path(args.compiled))
    sources = [mlir, mlir.parent / PROGRAM_FILE]
    check_output_file(Path(args.output), inputs=sources)
    program = _read_program(mlir.parent, "to trace it")
    known = {g.group_id for g in program.groups}
    groups = _group_ids(args.groups, known) if args.groups else None
    module = parse_module(read_ir_file(mlir), str(mlir))
    progress(f"simulating {sum(len(t.instructions) for g in program.groups for t in g.tiles)}"
             " instructions (cmodel v2 timing)")
    timing, events, entered = simulate_events(program, module)
    clock = float(program.config["clock_hz"])
    trace = chrome_trace(program, events, entered, clock, groups)
    data = json.dumps(trace, separators=(",", ":")).encode()
    if args.output.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    write_file(args.output, data, inputs=sources)
    progress(f"wrote {args.output}: {len(trace['traceEvents'])} events, "
             f"{len(trace['otherData']['groups'])} groups, {timing.cycles} cycles simulated; "
             "open it in https://ui.perfetto.dev or chrome://tracing")
    return 0


def _group_ids(text: str, known: set[int]) -> set[int]:
    """The group ids of `--groups` ("3,5-7"), each one the Program has."""
    ids: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.strip().partition("-")
        try:
            ids.update(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            raise Tx8Error(f"--groups '{text}': '{part}' is not a group id or a range "
                           "like 5-7.") from None
    unknown = sorted(ids - known)
    if unknown:
        raise Tx8Error(f"--groups '{text}': the program has no group {unknown[0]} (its "
                       f"groups are {min(known)}-{max(known)}; report.json lists them).")
    return ids


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise Tx8Error(f"'{path}' is not readable JSON ({e}); give the file `tx8c "
                       "compile` (report.json) or `tx8c compare --json` wrote.") from None
    if not isinstance(data, dict):
        raise Tx8Error(f"'{path}' holds a JSON {type(data).__name__}, not an object.")
    return data


# --------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------


def non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _add_pipeline_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--opt-level", type=int, default=1, choices=(0, 1),
                   help="0 turns the mid-end off (default 1)")
    p.add_argument("--layout-strategy", default="optimal", choices=("greedy", "optimal"),
                   help="how layout passes place conversions (default optimal)")
    p.add_argument("--opt-group", default="default",
                   choices=("none", "cnn", "transformer", "default"),
                   help="built-in op patterns for grouping (default: cnn and transformer); "
                   "none makes every op its own group")
    p.add_argument("--group-patterns", metavar="FILE",
                   help="JSON file of op patterns for grouping (replaces --opt-group)")
    p.add_argument("--no-opt-barrier", dest="opt_barrier", action="store_false",
                   help="keep a barrier after every group (no group-dag)")
    p.add_argument("--regroup", type=int, default=0, metavar="WINDOW",
                   help="merge up to WINDOW adjacent groups where the slicing estimate "
                   "says it pays (regroup-by-cost; 0 = off, the default)")
    p.add_argument("--spm-resident", type=non_negative_int, default=None, metavar="BYTES",
                   help="keep values between groups in the top BYTES of every tile's SPM "
                   "instead of DDR, where they fit (spm-resident; default: a third of "
                   "the tile's SPM, 1 MiB on the default target; 0 = off)")
    p.add_argument("--no-dma-conversions", dest="dma_conversions", action="store_false",
                   help="keep ChannelNorm groups as CT conversions instead of folding them "
                   "into the neighbouring group's DMA (fuse-channel-norm-dma)")
    p.add_argument("--no-overlap", dest="overlap", action="store_false",
                   help="run every group whole after the previous one (no cross-group "
                   "overlap: constant loads wait for the previous group's end)")
    p.add_argument("-j", "--jobs", type=non_negative_int, default=0, metavar="N",
                   help="processes searching the groups' slicing plans side by side "
                   "(default 0: as many as the cores available; the output does not "
                   "depend on it)")
    p.add_argument("--verify-each-pass", action="store_true",
                   help="verify the IR after every pass (finds the pass that breaks it; "
                   "by default it is verified once, after the last pass)")
    _add_target_config(p)


def _add_target_config(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target-config", metavar="FILE",
                   help="TOML or JSON file overriding TX8Config fields (e.g. "
                   "spm_bytes_per_tile = 8388608)")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="tx8c", description="Compile ONNX models for the TX8 NPU and check the results."
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)

    c = sub.add_parser("compile", help="import and compile an ONNX model")
    c.add_argument("model", help="the .onnx file")
    c.add_argument("-o", "--output", required=True, help="output directory")
    c.add_argument("--input-shapes", help="static shapes, e.g. input:1x3x224x224,mask:1x128")
    c.add_argument("--dump-ir-after-all", action="store_true",
                   help="write OUT/stages/NN-<pass>.mlir after import and every pass")
    c.add_argument("--no-opt-ddr", dest="opt_ddr", action="store_false",
                   help="pack constants tightly in consts.bin instead of starting large "
                        "ones on a 4096-byte DDR bank (seed opt_ddr, on by default)")
    _add_pipeline_options(c)
    c.add_argument("--report", action="store_true",
                   help="also write OUT/report.html (see `tx8c report`)")
    c.add_argument("--quiet", action="store_true", help="no progress output")
    c.add_argument("--json", action="store_true", help="print the report as JSON")
    c.set_defaults(func=cmd_compile)

    r = sub.add_parser("run", help="run a compiled model on inputs")
    r.add_argument("compiled", help="the output directory of `tx8c compile`")
    r.add_argument("--inputs", required=True, help=".npz file with one array per input")
    r.add_argument("-o", "--output", required=True,
                   help="file to write the outputs to (an .npz archive, at exactly this path)")
    r.add_argument("--backend", default="reference", choices=BACKENDS,
                   help="what runs the model: the reference executor (default), the cmodel "
                   "v1 (bytes per value) or the cmodel v2 (the lowered Program on DDR and "
                   "16 SPMs, with timing) or c (the Program emitted as C, built with the "
                   "system compiler in OUT/c/ and run)")
    r.add_argument("--quiet", action="store_true")
    r.set_defaults(func=cmd_run)

    m = sub.add_parser("compare", help="compare every stage against onnxruntime")
    m.add_argument("model", help="the .onnx file")
    m.add_argument("--inputs", help=".npz inputs (default: random inputs)")
    m.add_argument("--input-shapes", help="static shapes, e.g. input:1x3x224x224")
    m.add_argument("--seed", type=non_negative_int, default=0,
                   help="seed of the random inputs (0 or more)")
    m.add_argument("--all-tensors", action="store_true",
                   help="also compare every intermediate tensor onnxruntime can expose and "
                   "name the first one (in graph order) below its threshold")
    m.add_argument("--ort-optimize", action="store_true",
                   help="run onnxruntime with its graph optimiser (faster on large models); "
                   "by default it runs node by node as the ONNX definitions say, because "
                   "its fused kernels may round otherwise (a QDQ model's integer kernels)")
    _add_pipeline_options(m)
    m.add_argument("--quiet", action="store_true")
    m.add_argument("--json", action="store_true", help="print the table as JSON")
    m.add_argument("--summary", action="store_true",
                   help="print the import row, the last stage, the cmodel and C rows, and "
                   "one line for the stages between")
    m.set_defaults(func=cmd_compare)

    p = sub.add_parser("report", help="write an HTML report of a compiled model")
    p.add_argument("compiled", help="the output directory of `tx8c compile`")
    p.add_argument("-o", "--output", required=True, help="the HTML file to write")
    p.add_argument("--compare", metavar="FILE",
                   help="`tx8c compare --json` output to show (default: OUT/compare.json "
                   "when present)")
    _add_target_config(p)
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_report)
    t = sub.add_parser("trace", help="write the simulated timeline of a compiled model "
                       "(Chrome trace JSON: every instruction on its tile's engine lane)")
    t.add_argument("compiled", help="the output directory of `tx8c compile`")
    t.add_argument("-o", "--output", required=True,
                   help="the trace file to write (.json, or .json.gz compressed); open it "
                   "in https://ui.perfetto.dev or chrome://tracing")
    t.add_argument("--groups", metavar="IDS",
                   help="only these groups, e.g. 3,5-7 (default: all)")
    t.add_argument("--quiet", action="store_true")
    t.set_defaults(func=cmd_trace)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; exit codes as in `tx8c.cli.common` (3: `compare` found a stage
    below its threshold)."""

    def command() -> int:
        args = build_parser().parse_args(argv)
        return args.func(args)

    return run_reporting_errors(command)


def entry() -> NoReturn:
    """The `tx8c` program (console script and `python -m tx8c.cli.main`): `main()`,
    then the process ends at once with its exit code. Every command has written and
    closed its files, joined its threads and reaped its children by then; what the
    interpreter's normal exit would add is freeing each of the millions of objects a
    compile leaves (ResNet-50: about 0.2 s of an idle machine's 16 s), which the
    operating system does by itself."""
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: the output is lost either way
            pass
    os._exit(code)


if __name__ == "__main__":
    entry()
