"""NoC multicast of shared input windows: whole-model latency against the roofline, with
and without multicast (issue 11's "estimated latency / roofline bound", issue 12's
estimate vs cmodel v2).

    .venv/bin/python bench/bench_multicast.py [--models resnet50,bert_base,mobilenetv2,vit_full]
        [--models-dir /work/models] [--settings off,on] [--spm-resident 0,default,2097152]

Each model is imported and compiled through the DDR stage once per setting of
`TX8Config.noc_multicast` (off: every tile loads its windows from DDR itself; on: a
window several tiles load at the same step is read once and multicast over the NoC), from
an empty search memo, then lowered and timed by cmodel v2 (timing only). Columns: search
seconds (the group-cost pass, wall), the estimate (sum of the groups' estimates), the
simulated latency, both over the roofline bound (`analysis.roofline`), estimate /
simulated, groups whose estimate is within 5 % of their simulated cycles, and the DDR
bytes the simulated DMAs moved beside the roofline's compulsory bytes.

`--spm-resident` lists budgets of the spm-resident pass (issue 11: values between groups
kept in the top BUDGET bytes of every tile's SPM instead of DDR; 0 off; `default`, the
default, the compiler's: a third of the tile's SPM);
each setting is measured with each budget, and the table says how many values were kept
and their stored bytes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from xdsl.dialects.builtin import StringAttr  # noqa: E402

from tx8c.analysis.roofline import model_roofline  # noqa: E402
from tx8c.analysis.spm_resident import read_residency  # noqa: E402
from tx8c.codegen.lower import lower_module  # noqa: E402
from tx8c.const_container import module_container  # noqa: E402
from tx8c.errors import Tx8Error  # noqa: E402
from tx8c.frontend.onnx.importer import import_onnx  # noqa: E402
from tx8c.frontend.onnx.loader import prepare  # noqa: E402
from tx8c.pipeline import CompileOptions, run_pipeline  # noqa: E402
from tx8c.sim.cmodel_v2 import simulate  # noqa: E402
from tx8c.slicing import search as search_module  # noqa: E402
from tx8c.target.config import DEFAULT_CONFIG, target_config  # noqa: E402

MB = 1e6
SETTINGS = {"off": {"noc_multicast": False}, "on": {}, "default": {}}


def measure(path: Path, setting: str, budget: int | None = None) -> dict:
    model, _ = prepare(str(path), None)
    module = import_onnx(model).module
    overrides = SETTINGS[setting]
    if overrides:
        module.attributes["tx8c.target"] = StringAttr(json.dumps(overrides))
    search_module._searched.cache_clear()
    start = time.perf_counter()
    records = run_pipeline(module, CompileOptions(spm_resident=budget))
    compile_s = time.perf_counter() - start
    search_s = sum(r.seconds for r in records if r.name == "group-cost")
    residency = read_residency(module)
    config = target_config(module)
    program = lower_module(module, module_container(module))
    timing = simulate(program, module)
    roofline = model_roofline(module, DEFAULT_CONFIG)
    bound = roofline.seconds * config.clock_hz
    estimate = sum(timing.group_estimates.values())
    within = sum(1 for g, c in timing.group_cycles.items()
                 if c and abs(timing.group_estimates[g] / c - 1) <= 0.05)
    return {
        "model": path.stem, "setting": setting,
        "budget": residency.budget if residency else 0,
        "resident": len(residency.values) if residency else 0,
        "kept_mb": residency.bytes_kept / MB if residency else 0.0, "compile_s": compile_s,
        "search_s": search_s, "estimate": estimate, "simulated": timing.cycles,
        "est_roof": estimate / bound, "sim_roof": timing.cycles / bound,
        "est_sim": estimate / timing.cycles if timing.cycles else 0.0,
        "within": f"{within}/{len(timing.group_cycles)}",
        "ddr_mb": timing.ddr_bytes / MB, "compulsory_mb": roofline.ddr_bytes / MB,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="resnet50,bert_base,mobilenetv2,vit_full")
    parser.add_argument("--models-dir", default="/work/models", type=Path)
    parser.add_argument("--settings", default="off,on",
                        help="comma-separated: off, on (default of this checkout: default)")
    parser.add_argument("--spm-resident", default="default",
                        help="comma-separated budgets of spm-resident in bytes (0: off; "
                        "default: the compiler's default)")
    args = parser.parse_args(argv)
    print("| model | multicast | spm-resident | values kept | kept MB | search s | compile s "
          "| estimate | simulated | est/roofline "
          "| sim/roofline | est/sim | grp<=5% | DDR MB (sim) | compulsory MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.models.split(","):
        for setting in args.settings.split(","):
            for budget in args.spm_resident.split(","):
                try:
                    row(measure(args.models_dir / f"{name}.onnx", setting,
                                None if budget == "default" else int(budget)))
                except Tx8Error as e:  # a budget that breaks a model is a result too
                    print(f"| {name} | {setting} | {budget} | fails: "
                          f"{str(e).splitlines()[0][:200]} |", flush=True)
    return 0


def row(r: dict) -> None:
    print(f"| {r['model']} | {r['setting']} | {r['budget']} | {r['resident']} | "
          f"{r['kept_mb']:.1f} | {r['search_s']:.1f} | "
          f"{r['compile_s']:.1f} | {r['estimate']} | {r['simulated']} | "
          f"{r['est_roof']:.2f} | {r['sim_roof']:.2f} | {r['est_sim']:.3f} | "
          f"{r['within']} | {r['ddr_mb']:.1f} | {r['compulsory_mb']:.1f} |", flush=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
