"""The constants of a compiled model on disk: `consts.bin` and `consts.json`.

`tx8c compile` writes the model's ConstContainer (`tx8c.const_container`) as the DDR image
`consts.bin` and its index `consts.json`, and writes `model.mlir` without the data (its
`tx8c.constants` attribute names the index instead), through the command's `OutputDir`
(atomic, never over an input). `tx8c run` reads them back, checking sizes and hashes,
while it parses `model.mlir`; `tx8c compare` runs the cmodel on constants that went
through the same bytes. The statistics of the constants stage for `report.json` are
gathered here too.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import ModuleOp, StringAttr

from tx8c.cli.files import OutputDir
from tx8c.const_container import (
    CONST_STATS_ATTR,
    MODULE_ATTR,
    ConstContainer,
    index_json,
    module_container,
)
from tx8c.dialect.ops.backend import LoadConstOp
from tx8c.ir_utils import read_pass_stats

BIN_FILE = "consts.bin"
INDEX_FILE = "consts.json"


def write_constants(out: OutputDir, container: ConstContainer | None,
                    opt_ddr: bool) -> dict[str, Any]:
    """Stage `consts.bin` (written piece by piece when `out` writes it) and `consts.json`
    in `out`, and return the index (its sha256 fields are filled when consts.bin is
    written). `container`: the module's (`module_container`), final: no pass after the
    constants stage changes it. The caller makes the module name the index file
    (`ConstContainer.external`) once no pass reads the container from the module."""
    container = container or ConstContainer()
    index = container.image_index(opt_ddr, BIN_FILE)

    def write_bin(f) -> None:
        index.update(container.write_image(f, opt_ddr, BIN_FILE))

    out.add(BIN_FILE, write_bin)
    out.add(INDEX_FILE, lambda f: f.write(index_json(index).encode("utf-8")))
    return index


def image_round_trip(module: ModuleOp, opt_ddr: bool = True) -> ConstContainer | None:
    """The module's constants as `tx8c run` would read them: through the bytes and the
    index of their image, checked (None when the module carries no container)."""
    container = module_container(module)
    if container is None:
        return None
    image = container.image(opt_ddr, BIN_FILE)
    return ConstContainer.from_image(image.index, image.data, f"<{BIN_FILE}>")


class ConstantsLoader:
    """Reads `consts.json` + `consts.bin` beside a compiled module in a worker thread, so
    the hashes are checked while the main thread parses `model.mlir`."""

    def __init__(self, mlir_path: Path):
        self.directory = mlir_path.parent
        self._pool = ThreadPoolExecutor(1)
        self._future: Future | None = None
        if (self.directory / INDEX_FILE).is_file():
            self._future = self._pool.submit(ConstContainer.load, self.directory / INDEX_FILE)

    def container_for(self, module: ModuleOp) -> ConstContainer | None:
        """The constants `module` reads: the ones it names (read by the worker when they
        are the usual consts.json), the ones it carries, or None."""
        attr = module.attributes.get(MODULE_ATTR)
        try:
            if isinstance(attr, StringAttr):
                if attr.data == INDEX_FILE and self._future is not None:
                    return self._future.result()
                return ConstContainer.load(self.directory / attr.data)
            return module_container(module)
        finally:
            self._pool.shutdown(wait=False, cancel_futures=True)


def constants_report(module: ModuleOp, index: dict[str, Any] | None) -> dict[str, Any]:
    """Statistics of the constants stage for report.json."""
    stats = read_pass_stats(module, CONST_STATS_ATTR)
    loads = [op for op in module.walk() if isinstance(op, LoadConstOp)]
    bypassed = sum(not op.emits_code() for op in loads)
    from tx8c.analysis.layout_problem import read_layout_stats

    folded_at_layout = read_layout_stats(module).get("layout-align-opt", {}).get(
        "const_folded", 0)
    move = stats.get("move-constant", {})
    norm = stats.get("const-norm", {})
    rows = index["constants"] if index is not None else []
    return {
        "constants": len({r["id"] for r in rows}),
        "placements": len(rows),
        "stored_bytes": sum(r["bytes"] for r in rows),
        "logical_bytes": sum(_logical_bytes(r) for r in rows),
        "large": move.get("large", 0),
        "consts_bin_bytes": index["file_bytes"] if index is not None else 0,
        "opt_ddr": index["opt_ddr"] if index is not None else None,
        "load_consts": {"real": len(loads) - bypassed, "bypassed": bypassed},
        "channel_norms_folded": {
            "layout-align-opt": folded_at_layout,
            "const-norm": norm.get("channel_norms_folded", 0),
        },
        "dedup": {"hits": move.get("dedup_hits", 0),
                  "bytes_saved": move.get("dedup_saved_bytes", 0)},
        "layout_copies": {"ids": norm.get("multi_layout_ids", 0),
                          "copies": norm.get("copies", 0),
                          "bytes": norm.get("copy_bytes", 0)},
    }


def _logical_bytes(row: dict[str, Any]) -> int:
    """Elements x item size of an index row (its bytes without layout padding)."""
    from tx8c.target.mem_layout import resolve_dtype

    count = 1
    for d in row["shape"]:
        count *= d
    return count * resolve_dtype(row["dtype"]).itemsize
