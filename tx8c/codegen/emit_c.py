"""C code generation from the lowered Program (seed 003, "OpLibInterface": genOpCode,
main.c load -> compute -> store with TSR / L_SHAPE / G_SHAPE; DESIGN.md "Backend data
model": the cmodel and the C emitter read one Program).

`emit_c(program, out_dir)` writes a C program that runs `program` on the host CPU:

- `tile_<n>.c` per tile with work: per group, the tile's instructions as a table (each a
  DMA descriptor, a kernel call, a NoC reduction or a multicast's NoC copy, with TSR
  structs holding the windows, layouts and addresses) and a function running it in
  order: the loads of a step, its kernels, its stores (the seed's
  `while (!input_done) { load; compute; store; }`, the loop unrolled into the table
  because the Program lists every step);
- `host.c`: loads `consts.bin` and the inputs into DDR, runs the tiles group by group
  (each group completes before the next starts: the barriers), writes the outputs;
- a DMA of a "resident" tensor (a value spm-resident keeps in SPM) is a `TX_RESIDENT`
  descriptor with the tensor's page size: the runtime copies the window between the
  tile's buffer and the pages in the tiles' SPM (page p on tile p mod tiles), the same
  bytes cmodel v2 moves;
- the C runtime (`tx8c_rt.[ch]`, `tx8c_kernels.c`: layouts, DMA, one reference kernel
  per op family) and a `Makefile`.

A kernel's call comes from its op's `gen_op_code(loops)` (the OpLib interface): the
runtime function and its params. An op without one raises `NoCKernelError` naming it.

Departures from the seed: the host runs the tiles of a group interleaved on one CPU
(`tx_run_group`: a NoC reduction or copy waits for its source tile's partial sum or
loaded window, the source tile waits until it has been read - the Program's semaphore
pair), so the C program
checks numerics, not concurrency; missing barriers are the cmodel's to catch. The host
loads the constants from `constants.bin` (each constant's stored bytes, taken from
`consts.bin` through its index) at the DDR offsets the Program gives them.
Kernels allocate their scratch on the host heap instead of the Program's `imm` buffer.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tx8c.codegen.program import (
    DdrRef,
    Dma,
    Kernel,
    NocReduce,
    NocTransfer,
    Operand,
    Program,
    SpmRef,
)
from tx8c.errors import Tx8UnsupportedError
from tx8c.interfaces.sharding import Window

RUNTIME_DIR = Path(__file__).parent / "runtime"
RUNTIME_FILES = ("tx8c_rt.h", "tx8c_rt.c", "tx8c_kernels.c")
CFLAGS = ("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffp-contract=off")
EXECUTABLE = "tx8c_model"

DTYPES = {
    "f32": "TX_F32", "tf32": "TX_TF32", "f16": "TX_F16", "bf16": "TX_BF16", "f64": "TX_F64",
    "i8": "TX_I8", "ui8": "TX_U8", "i16": "TX_I16", "i32": "TX_I32", "i64": "TX_I64",
    "i1": "TX_BOOL",
}
LAYOUTS = {"Tensor": "TX_TENSOR", "NTensor": "TX_NTENSOR", "Cx": "TX_CX", "NCx": "TX_NCX"}
COMBINES = {None: "TX_COMBINE_NONE", "sum": "TX_COMBINE_SUM", "max": "TX_COMBINE_MAX",
            "min": "TX_COMBINE_MIN", "prod": "TX_COMBINE_PROD"}
MAX_SHAPE_DIM = 8


class NoCKernelError(Tx8UnsupportedError):
    """An op of the Program has no kernel in the C runtime."""


@dataclass(frozen=True)
class CSources:
    """What `emit_c` wrote: the directory, the C files, and the command that builds them."""

    directory: Path
    files: tuple[str, ...]

    def compile_command(self, compiler: str = "cc") -> list[str]:
        sources = [f for f in self.files if f.endswith(".c")]
        return [compiler, *CFLAGS, "-o", EXECUTABLE, *sources, "-lm"]


# --------------------------------------------------------------------------------------
# The ops of a Program as xDSL ops
# --------------------------------------------------------------------------------------

_RESULTS = re.compile(r"^\s*(?:(%[\w.$#-]+(?:\s*,\s*%[\w.$#-]+)*|%[\w.$#-]+:\d+)\s*=\s*)?")


def ops_from_program(program: Program) -> list:
    """The op of each `Program.ops` entry, parsed back from its IR text (its operands
    become arguments of a function of the operand types)."""
    return [op_from_text(info.text) for info in program.ops]


def op_from_text(text: str):
    """One op from its IR text (custom or generic form), with block arguments standing
    for its operands."""
    from tx8c.ir import parse_module

    head = _RESULTS.match(text)
    body = text[head.end():]
    name_end = re.match(r'\s*"?[\w.]+"?', body).end()
    operands = _operand_names(body[name_end:])
    types = _operand_types(text, len(operands))
    args = ", ".join(f"{n}: {t}" for n, t in zip(operands, types, strict=True))
    module = parse_module(f"func.func @wrap({args}) {{\n{text}\n func.return\n}}")
    func = next(iter(module.ops))
    return next(iter(func.body.block.ops))


def _operand_names(rest: str) -> list[str]:
    """The `%names` before the attribute dict, region or type signature."""
    rest = rest.lstrip()
    if rest.startswith("("):  # generic form
        rest = rest[1:rest.index(")")]
    stop = len(rest)
    for mark in ("{", " : ", "<{", "("):
        at = rest.find(mark)
        if at >= 0:
            stop = min(stop, at)
    seen: list[str] = []
    for name in re.findall(r"%[\w.$#-]+", rest[:stop]):
        if name not in seen:
            seen.append(name)
    return seen


def _operand_types(text: str, count: int) -> list[str]:
    """The operand types of the trailing `: (T, ...) -> R` (or `: T -> R`) signature."""
    colon = max((i for i, ch in _top_level(text) if ch == ":"), default=-1)
    signature = text[colon + 1:].strip()
    arrow = signature.rfind("->")
    inputs = signature[:arrow].strip() if arrow >= 0 else signature
    if inputs.startswith("(") and inputs.endswith(")"):
        inputs = inputs[1:-1]
    types = _split_top(inputs) if inputs else []
    if len(types) != count:
        raise ValueError(f"cannot read {count} operand types from {signature!r}")
    return types


def _split_top(text: str) -> list[str]:
    """`text` cut at its top-level commas."""
    cuts = [i for i, ch in _top_level(text) if ch == ","]
    return [text[a + 1:b].strip() for a, b in zip([-1, *cuts], [*cuts, len(text)], strict=True)]


def _top_level(text: str):
    """(index, character) of every character of `text` outside brackets (`->` is not a
    closing bracket)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}" and text[i - 1] != "-":
            depth -= 1
        elif depth == 0:
            yield i, ch


# --------------------------------------------------------------------------------------
# C text of the Program's data
# --------------------------------------------------------------------------------------


def _ints(values: Sequence[int | str]) -> str:
    return "{" + ", ".join(_c_int(v) for v in values) + "}" if values else "{0}"


def _c_int(v: int | str) -> str:
    """An integer literal; INT64_MIN has none in C (its negation overflows)."""
    return "INT64_MIN" if v == -2**63 else str(v)


def _l_shape(whole: Sequence[int], window: Window, held: Window | None = None) -> str:
    """An L_SHAPE of `window` of a tensor of shape `whole`; `held`: the window the SPM
    buffer holds (shape_real from shape_origin), when it is more than `window`."""
    rank = len(whole)
    if rank > MAX_SHAPE_DIM:
        raise NoCKernelError(f"a tensor of rank {rank} exceeds the C runtime's "
                             f"MAX_SHAPE_DIM ({MAX_SHAPE_DIM})")
    held = held or window
    return (f"{{{_ints(whole)}, {_ints(window.start)}, {_ints(window.shape)}, "
            f"{_ints(held.shape)}, {_ints(held.start)}, {rank}}}")


def _tsr(dtype: str, layout: str, space: str, addr: int, whole, window: Window,
         held: Window | None = None) -> str:
    if dtype not in DTYPES:
        raise NoCKernelError(f"element type {dtype} has no C runtime type")
    return (f"{{{DTYPES[dtype]}, {LAYOUTS[layout]}, {space}, {addr}u, "
            f"{_l_shape(tuple(whole), window, held)}}}")


def _c_float(v: float) -> str:
    r = repr(float(v))
    if r in ("inf", "-inf", "nan"):
        return {"inf": "INFINITY", "-inf": "-INFINITY", "nan": "NAN"}[r]
    return r


class _TileWriter:
    """The C tables and functions of one tile."""

    def __init__(self, program: Program, ops: Sequence, tile: int):
        self.program, self.ops, self.tile = program, ops, tile
        self.decls: list[str] = []
        self.functions: list[str] = []
        self.counter = 0

    def _name(self, kind: str) -> str:
        self.counter += 1
        return f"t{self.tile}_{kind}{self.counter}"

    def group(self, group_id: int, instructions) -> str:
        """The function running this tile's part of a group; returns its name."""
        entries = [self._instruction(group_id, i, ins) for i, ins in enumerate(instructions)]
        table = f"g{group_id}_t{self.tile}_code"
        self.decls.append(f"/* group {group_id}, tile {self.tile}: {len(entries)} instructions "
                          "(load -> compute -> store per step) */\n"
                          f"static const TxInstr {table}[] = {{\n  "
                          + ",\n  ".join(entries) + "\n};")
        function = f"tile_{self.tile}_group_{group_id}"
        self.functions.append(
            f"const TxInstr *{function}(int32_t *count) {{\n"
            f"    *count = (int32_t)(sizeof {table} / sizeof {table}[0]);\n"
            f"    return {table};\n}}")
        return function

    def _instruction(self, group_id: int, index: int, ins) -> str:
        if isinstance(ins, Dma):
            return f"{{TX_I_DMA, &{self._dma(ins)}, 0, 0}}"
        if isinstance(ins, Kernel):
            return f"{{TX_I_KERNEL, 0, &{self._kernel(group_id, index, ins)}, 0}}"
        if isinstance(ins, NocTransfer):
            return f"{{TX_I_NOC, 0, 0, &{self._noc(ins)}}}"
        raise TypeError(f"unknown instruction {ins!r}")

    def _dma(self, dma: Dma) -> str:
        tensor = self.program.tensor(dma.tensor)
        name = self._name("dma")
        space = "TX_RESIDENT" if tensor.kind == "resident" else "TX_DDR"
        ddr = _tsr(tensor.dtype, tensor.layout, space, tensor.offset, tensor.shape,
                   dma.window)
        held = dma.spm_window  # the buffer holds `held`; the DMA moves `window` of it
        if tuple(dma.spm.shape) != tuple(held.shape):
            raise ValueError(f"SPM buffer of shape {list(dma.spm.shape)} holds a window of "
                             f"shape {list(held.shape)}")
        # the SPM side counts from the buffer's first element: the moved part of it
        part = dma.window.shifted(held.start)
        spm = _tsr(dma.spm.dtype, dma.spm.layout, "TX_SPM", dma.spm.addr, tensor.shape, part,
                   Window.whole(held.shape))
        self.decls.append(f"static const TxDma {name} = {{{int(dma.lane == 'st')}, "
                          f"{_c_string(dma.tensor)}, {ddr}, {spm}, {tensor.page}u}};")
        return name

    def _spm(self, ref: SpmRef, whole, window: Window, need: Window | None = None) -> str:
        """The TSR of the buffer `ref` holding `window`; `need`: the part of it a kernel
        reads (the whole buffer when None)."""
        if tuple(ref.shape) != tuple(window.shape):
            raise ValueError(f"SPM buffer of shape {list(ref.shape)} holds a window of shape "
                             f"{list(window.shape)}")
        if need is None or need == window:
            return _tsr(ref.dtype, ref.layout, "TX_SPM", ref.addr, whole, window)
        if not window.contains(need):
            raise ValueError(f"a kernel needs {need} of an SPM buffer holding {window}")
        return _tsr(ref.dtype, ref.layout, "TX_SPM", ref.addr, whole, need, window)

    def _operand(self, operand: Operand, whole, need: Window) -> str:
        """An operand's TSR: the window the slice needs (`back_window`), not the whole
        tensor (one read in place from DDR: a Gather's table) nor the whole window its
        SPM buffer holds (a value loaded with a Conv's halo, read by an Add)."""
        if isinstance(operand.ref, DdrRef):
            tensor = self.program.tensor(operand.ref.tensor)
            if not operand.window.contains(need):
                raise ValueError(f"a kernel needs {need} of DDR tensor {tensor.name}, "
                                 f"which holds {operand.window}")
            return _tsr(tensor.dtype, tensor.layout, "TX_DDR", tensor.offset, tensor.shape,
                        need)
        return self._spm(operand.ref, whole, operand.window, need)

    def _kernel(self, group_id: int, index: int, kernel: Kernel) -> str:
        op = self.ops[kernel.op]
        info = self.program.ops[kernel.op]
        code = op.gen_op_code(kernel.loops)
        if code is None:
            raise NoCKernelError(
                f"op '{op.name}' ({info.name}, group {group_id}, node {info.node}) has no "
                "kernel in the C runtime (tx8c/codegen/runtime/tx8c_kernels.c); run the "
                "model with --backend reference or cmodel")
        name = self._name("k")
        whole_in = [tuple(v.type.get_shape()) for v in op.operands]
        whole_out = [tuple(r.type.get_shape()) for r in op.results]
        needs = op.back_window(kernel.loops)
        ins = [self._operand(o, w, n)
               for o, w, n in zip(kernel.operands, whole_in, needs, strict=True)]
        outs, used = [], []
        for result, whole in zip(kernel.results, whole_out, strict=True):
            if result is None:  # nothing of it: a placeholder the kernel skips
                outs.append(_tsr("i8", "Tensor", "TX_SPM", 0, whole, Window.whole(whole)))
                used.append(0)
            else:
                outs.append(self._spm(result.ref, whole, result.window))
                used.append(1)
        combine = op.slicer().combine if kernel.accumulate else None
        decls = [
            f"static const int64_t {name}_ip[] = {_ints(code.ints)};",
            f"static const double {name}_fp[] = "
            f"{_ints([_c_float(f) for f in code.floats])};",
            f"static const TSR {name}_in[] = {{\n    " + ",\n    ".join(ins) + "};"
            if ins else f"static const TSR {name}_in[1];",
            f"static const TSR {name}_out[] = {{\n    " + ",\n    ".join(outs) + "};",
            f"static const int32_t {name}_used[] = {_ints(used)};",
            f"static const TxKernel {name} = {{{code.function}, "
            f"{_c_string(f'{op.name} ({info.name})')}, {name}_ip, {len(code.ints)}, "
            f"{name}_fp, {len(code.floats)}, {_l_shape(kernel.loops.stop, kernel.loops)}, "
            f"{len(ins)}, {len(outs)}, {name}_in, {name}_out, {name}_used, "
            f"{COMBINES[None if combine is None else str(combine)]}}};",
        ]
        self.decls.extend(decls)
        return name

    def _noc(self, noc: NocTransfer) -> str:
        """A NoC reduction, or one destination of a multicast: the same copy between
        two tiles' SPM without a combine (`TX_COMBINE_NONE`)."""
        name = self._name("noc")
        src = self._spm(noc.source, noc.source.shape, Window.whole(noc.source.shape))
        dst = self._spm(noc.target, noc.target.shape, Window.whole(noc.target.shape))
        self.decls.append(f"static const TxNoc {name} = {{{noc.source_tile}, {src}, {dst}, "
                          f"{COMBINES[noc.combine if isinstance(noc, NocReduce) else None]}, "
                          f"{noc.after}}};")
        return name

    def text(self) -> str:
        return "\n".join([
            f"/* tile {self.tile}: generated by tx8c (tx8c/codegen/emit_c.py) */",
            '#include "tx8c_rt.h"', "#include <math.h>", "",
            *self.decls, "", *self.functions, "",
        ])


def _c_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


# --------------------------------------------------------------------------------------
# Ordering the tiles of a group, host.c, Makefile
# --------------------------------------------------------------------------------------


def _config_init(config: dict) -> str:
    from tx8c.target.config import TX8Config

    cfg = TX8Config(**{k: v for k, v in config.items() if k in TX8Config.__dataclass_fields__})
    pf, pi = cfg.channel_pad_steps_float, cfg.channel_pad_steps_int8
    return (f"{{{cfg.batch_align_bytes}, {cfg.channel_block_float}, {cfg.channel_block_int8}, "
            f"{_ints(pf)}, {len(pf)}, {_ints(pi)}, {len(pi)}}}"), cfg


def constant_parts(program: Program) -> list[tuple[str, int, int, int]]:
    """(tensor name, offset in constants.bin, DDR offset, bytes) of every constant: the
    file is the constants' stored bytes one after another."""
    parts, at = [], 0
    for t in program.tensors:
        if t.kind == "constant":
            parts.append((t.name, at, t.offset, t.size))
            at += t.size
    return parts


def _host(program: Program, calls: list[tuple[int, list[int], list[str]]]) -> str:
    config, cfg = _config_init(program.config)
    constant_table = "{" + ", ".join(
        f"{{{a}u, {b}u, {c}u}}" for _, a, b, c in constant_parts(program)) + "}" \
        if constant_parts(program) else "{{0, 0, 0}}"
    decls = sorted({f"const TxInstr *{fn}(int32_t *count);" for _, _, fns in calls
                    for fn in fns})
    runs = []
    for group_id, tiles, fns in calls:
        if not tiles:
            runs.append(f"    /* group {group_id}: no instructions (runs in DDR) */")
            continue
        n = len(tiles)
        runs.append(f"    {{ /* group {group_id} */\n"
                    f"        static const int32_t tiles[] = {_ints(tiles)};\n"
                    f"        const TxInstr *code[{n}];\n        int32_t counts[{n}];")
        runs.extend(f"        code[{i}] = {fn}(&counts[{i}]);" for i, fn in enumerate(fns))
        runs.append(f"        tx_run_group(&m, {group_id}, {n}, tiles, code, counts);\n    }}")
    inputs = [program.tensor(n) for n in program.inputs]
    outputs = [program.tensor(n) for n in program.outputs]
    io = "\n".join(
        [f"    load_file(&m, dir, \"input_{i}.bin\", {t.offset}u, {t.size}u);"
         for i, t in enumerate(inputs)])
    out = "\n".join(
        [f"    save_file(&m, dir, \"output_{i}.bin\", {t.offset}u, {t.size}u);"
         for i, t in enumerate(outputs)])
    return f"""/* host: generated by tx8c (tx8c/codegen/emit_c.py). Usage: {EXECUTABLE} DIR
 * reads DIR/constants.bin (every constant's stored bytes, from consts.bin) and
 * DIR/input_<i>.bin (each input's bytes in its DDR layout), runs every group in program
 * order (a group completes on every tile before the next starts: the barriers) and
 * writes DIR/output_<i>.bin. */
#include "tx8c_rt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

{chr(10).join(decls)}

/* the constants: (offset in constants.bin, DDR offset, bytes) */
static const uint64_t constants[][3] = {constant_table};

static FILE *open_in(const char *dir, const char *name, const char *mode) {{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, mode);
    if (!f) {{
        fprintf(stderr, "tx8c host: cannot open %s\\n", path);
        exit(2);
    }}
    return f;
}}

/* `size` 0: the whole file */
static void load_file(TxMachine *m, const char *dir, const char *name, uint64_t at,
                      uint64_t size) {{
    FILE *f = open_in(dir, name, "rb");
    if (!size) {{
        fseek(f, 0, SEEK_END);
        size = (uint64_t)ftell(f);
        fseek(f, 0, SEEK_SET);
    }}
    if (at > m->ddr_bytes || size > m->ddr_bytes - at) {{
        fprintf(stderr, "tx8c host: %s does not fit in DDR at %llu\\n", name,
                (unsigned long long)at);
        exit(2);
    }}
    size_t got = fread(m->ddr + at, 1, (size_t)size, f);
    if (got != size || fgetc(f) != EOF) {{
        fprintf(stderr, "tx8c host: %s has not %llu bytes\\n", name, (unsigned long long)size);
        exit(2);
    }}
    fclose(f);
}}

static void load_part(TxMachine *m, const char *dir, const char *name, uint64_t from,
                      uint64_t at, uint64_t size) {{
    FILE *f = open_in(dir, name, "rb");
    if (at > m->ddr_bytes || size > m->ddr_bytes - at || fseek(f, (long)from, SEEK_SET) ||
        fread(m->ddr + at, 1, (size_t)size, f) != size) {{
        fprintf(stderr, "tx8c host: cannot load %llu bytes of %s at %llu\\n",
                (unsigned long long)size, name, (unsigned long long)at);
        exit(2);
    }}
    fclose(f);
}}

static void save_file(TxMachine *m, const char *dir, const char *name, uint64_t at,
                      uint64_t size) {{
    FILE *f = open_in(dir, name, "wb");
    if (fwrite(m->ddr + at, 1, (size_t)size, f) != size) {{
        fprintf(stderr, "tx8c host: cannot write %s\\n", name);
        exit(2);
    }}
    fclose(f);
}}

int main(int argc, char **argv) {{
    if (argc != 2) {{
        fprintf(stderr, "usage: %s DIR\\n", argv[0]);
        return 2;
    }}
    const char *dir = argv[1];
    TxMachine m;
    memset(&m, 0, sizeof m);
    m.config = (TxConfig){config};
    m.ddr_bytes = {max(program.ddr_bytes, 1)}u;
    m.ddr = tx_alloc((size_t)m.ddr_bytes, 1);
    m.tiles = {cfg.tiles_per_chip};
    m.spm_bytes = {cfg.spm_bytes_per_tile}u;
    m.spm = tx_alloc((size_t)m.tiles, sizeof(uint8_t *));
    for (int32_t t = 0; t < m.tiles; t++) m.spm[t] = tx_alloc((size_t)m.spm_bytes, 1);
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        load_part(&m, dir, "constants.bin", constants[i][0], constants[i][1], constants[i][2]);
{io}
{chr(10).join(runs)}
{out}
    for (int32_t t = 0; t < m.tiles; t++) free(m.spm[t]);
    free(m.spm);
    free(m.ddr);
    return 0;
}}
"""


def emit_c(program: Program, out_dir: str | Path, ops: Sequence | None = None) -> CSources:
    """Write the C program of `program` into `out_dir` (see the module docstring).

    `ops`: the xDSL op of each `program.ops` entry (parsed from their IR text when not
    given). Raises `NoCKernelError` for an op the C runtime has no kernel for.
    """
    out = Path(out_dir)
    ops = list(ops) if ops is not None else ops_from_program(program)
    writers: dict[int, _TileWriter] = {}
    calls: list[tuple[int, list[int], list[str]]] = []
    for group in program.groups:
        tiles = [t for t in group.tiles if t.instructions]
        fns = []
        for t in tiles:
            writer = writers.setdefault(t.tile, _TileWriter(program, ops, t.tile))
            fns.append(writer.group(group.group_id, t.instructions))
        calls.append((group.group_id, [t.tile for t in tiles], fns))
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name in RUNTIME_FILES:
        shutil.copyfile(RUNTIME_DIR / name, out / name)
        files.append(name)
    for tile, writer in sorted(writers.items()):
        (out / f"tile_{tile}.c").write_text(writer.text())
        files.append(f"tile_{tile}.c")
    (out / "host.c").write_text(_host(program, calls))
    files.append("host.c")
    sources = CSources(out, tuple(files))
    (out / "Makefile").write_text(_makefile(sources))
    return sources


def _makefile(sources: CSources) -> str:
    objects = " ".join(f for f in sources.files if f.endswith(".c"))
    return (f"# generated by tx8c: make CC=gcc\nCC ?= cc\nCFLAGS = {' '.join(CFLAGS)}\n\n"
            f"{EXECUTABLE}: {objects} tx8c_rt.h\n\t$(CC) $(CFLAGS) -o $@ {objects} -lm\n")
