"""A ResNet stem (Conv 7x7 / 2, Relu, MaxPool 3x3 / 2 on an NCHW image) cut along W.

The group converts the compact image into a channel-aligned tensor (ChannelNorm), whose
last dim is W (blocked by 64) before the Transpose to NHWC. Its windows only live in
SPM: the seed's alignCx (cut on whole channel blocks) is kept for what a DMA moves, not
for them (`evaluate._channel_blocks`). Before, the halo of the Conv and the Pool never
ended a W window on a block, so the stem could only be cut along H, where each time step
recomputes a Conv row for the Pool's halo: ResNet-50's group 0 ran as one step (24 418
cycles on cmodel v2 against NE 15 392; with W cuts 19 458)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from tests.unit.group.common import run
from tests.unit.slicing.helpers import grouped_graph
from tx8c.codegen.lower import lower_module
from tx8c.const_container import module_container
from tx8c.pipeline import CompileOptions, ddr_spec, slicing_spec
from tx8c.sim.cmodel_v2 import run_program
from tx8c.sim.reference import run_reference
from tx8c.slicing.evaluate import data_split, evaluate
from tx8c.slicing.group import ValueRef, group_spec
from tx8c.slicing.plan import Candidate
from tx8c.slicing.search import search
from tx8c.target.config import DEFAULT_CONFIG
from tx8c.transforms.slice import group_cost
from tx8c.transforms.slice.group_cost import groups_to_slice

H, W = 32, 192
W_CUT = Candidate((1, 2, 4, 1), (1, 1, 2, 1))
"""H over 2 tiles, W over 4 and in 2 steps: W windows of 12 pool columns, whose image
columns (with the halos) start and end off the 64-column blocks."""


def stem():
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array((rng.standard_normal((16, 3, 7, 7)) / 12).astype(np.float32),
                                "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[7, 7], strides=[2, 2],
                              pads=[3, 3, 3, 3]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1])]
    graph = helper.make_graph(
        nodes, "stem", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, H, W])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, H // 4, W // 4])],
        [w])
    return grouped_graph(graph)


def stem_group(module):
    group = next(g for g in groups_to_slice(module)
                 if any(n.label.startswith("ChannelNorm") for n in group_spec(g).nodes))
    return group, group_spec(group)


def test_the_stems_channel_norm_is_blocked_along_w():
    _, spec = stem_group(stem())
    norm = next(n for n in spec.nodes if n.label.startswith("ChannelNorm"))
    assert norm.results[0].aligned and norm.results[0].shape[-1] == W > 64
    assert {n.kind for n in spec.nodes if ValueRef(norm.index, 0) in n.inputs} == {"compute"}


def test_a_w_cut_off_the_blocks_of_an_spm_only_value_is_planned():
    _, spec = stem_group(stem())
    plan = evaluate(spec, W_CUT, DEFAULT_CONFIG)
    norm = next(n.index for n in spec.nodes if n.label.startswith("ChannelNorm"))
    width = plan.slice_shapes[norm][-1]
    assert width % 64 and width < W  # a window off the blocks
    assert search(spec, DEFAULT_CONFIG).candidate.sharding[2] > 1  # the search cuts W


def test_the_w_cut_stem_runs_to_the_reference(monkeypatch):
    """Bit for bit: the stem's group with the W cut (the other group, converting the
    result back to NCHW, searched as usual)."""
    module = stem()
    key = stem_group(module)[1].key

    def plan(spec, config, options, name=""):
        if spec.key == key:
            return evaluate(spec, W_CUT, config)
        return search(spec, config, options, name)

    monkeypatch.setattr(group_cost, "search", plan)
    run(module, slicing_spec(CompileOptions()) + ddr_spec(CompileOptions()))
    container = module_container(module)
    program = lower_module(module, container)
    x = np.random.default_rng(1).standard_normal((1, 3, H, W)).astype(np.float32)
    got, _ = run_program(program, module, [x], container)
    for want, value in zip(run_reference(module, [x]), got, strict=True):
        assert value.tobytes() == want.tobytes()


def test_the_image_loads_of_a_w_cut_stem_run_out_of_step():
    """A border tile's image window loses its halo (W_CUT: 2 x 4 tiles), so the image
    load is `ragged`: its DMAs take different times on different tiles, which drift
    apart on the chip, and their setups keep their share of the DDR in the estimate
    (`_run_lanes`' `setups`); the weight, the bias and the store move the same on every
    tile."""
    _, spec = stem_group(stem())
    ragged = data_split(spec, W_CUT, DEFAULT_CONFIG).ragged
    kinds = {spec.nodes[n].label.split("#")[0] for n in ragged}
    image = next(n.index for n in spec.nodes if n.kind == "load"
                 and n.label.startswith("LoadVar"))
    assert image in ragged
    assert kinds <= {"LoadVar", "ChannelNorm", "Transpose", "Conv", "Relu", "Pool"}
    assert not any(spec.nodes[n].kind == "store" for n in ragged)
    assert not any(spec.nodes[n].label.startswith("LoadConst") for n in ragged)
