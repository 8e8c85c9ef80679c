"""Normalisation, Lp-pool and Upsample converters against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.unit.frontend.onnx_check import check_node

RNG = np.random.default_rng(0)
X4 = RNG.standard_normal((2, 6, 5, 4)).astype(np.float32)


@pytest.mark.parametrize("opset, groups", [(18, 3), (21, 2), (21, 6)])
def test_group_norm(opset, groups) -> None:
    per = groups if opset < 21 else 6
    inits = {"s": RNG.standard_normal(per).astype(np.float32),
             "b": RNG.standard_normal(per).astype(np.float32)}
    check_node("GroupNormalization", {"x": X4}, initializers=inits, opset=opset,
               num_groups=groups, epsilon=1e-3, rtol=1e-4, atol=1e-5)


def test_group_norm_through_the_pipeline() -> None:
    inits = {"s": RNG.standard_normal(6).astype(np.float32),
             "b": RNG.standard_normal(6).astype(np.float32)}
    check_node("GroupNormalization", {"x": X4}, initializers=inits, opset=21, num_groups=3,
               rtol=1e-4, atol=1e-5, pipeline=True)


@pytest.mark.parametrize("shape", [(2, 6, 5, 4), (2, 3, 7)])
def test_instance_norm(shape) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    inits = {"s": RNG.standard_normal(shape[1]).astype(np.float32),
             "b": RNG.standard_normal(shape[1]).astype(np.float32)}
    check_node("InstanceNormalization", {"x": x}, initializers=inits, epsilon=1e-4,
               rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis", [-1, 1])
def test_rms_norm(axis) -> None:
    scale = RNG.standard_normal(X4.shape[axis:]).astype(np.float32)
    check_node("RMSNormalization", {"x": X4}, initializers={"s": scale}, opset=23, axis=axis,
               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("axes", [[0, 2, 3], [1], [2, 3]])
def test_mean_variance_norm(axes) -> None:
    check_node("MeanVarianceNormalization", {"x": X4}, axes=axes, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("p, axis", [(1, -1), (2, 0), (2, 1)])
def test_lp_norm(p, axis) -> None:
    x = X4.copy()
    x[0, :, 0, 0] = 0  # an all-zero slice
    check_node("LpNormalization", {"x": x}, p=p, axis=axis, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("size", [1, 3, 5])  # onnxruntime takes odd sizes only
def test_lrn(size) -> None:
    check_node("LRN", {"x": X4}, size=size, alpha=0.5, beta=0.6, bias=2.0, rtol=1e-5,
               atol=1e-6)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool(p) -> None:
    check_node("GlobalLpPool", {"x": X4}, p=p, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs", [
    {"kernel_shape": [2, 2]},
    {"kernel_shape": [3, 2], "strides": [2, 1], "pads": [1, 0, 1, 1], "p": 3},
    {"kernel_shape": [2, 2], "auto_pad": "SAME_UPPER", "p": 1},
    {"kernel_shape": [2, 3], "strides": [2, 2], "ceil_mode": 1},
    {"kernel_shape": [2, 2], "dilations": [2, 1]},
])
def test_lp_pool(attrs) -> None:
    check_node("LpPool", {"x": X4}, opset=18, rtol=1e-5, atol=1e-5, **attrs)


def test_lp_pool_1d_through_the_pipeline() -> None:
    x = RNG.standard_normal((1, 3, 9)).astype(np.float32)
    check_node("LpPool", {"x": x}, kernel_shape=[3], strides=[2], rtol=1e-5, atol=1e-5,
               pipeline=True)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_upsample(mode) -> None:
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    check_node("Upsample", {"x": x}, initializers={"s": np.array([1, 1, 2, 3], np.float32)},
               opset=9, mode=mode)


def test_upsample_opset_7_scales_attribute() -> None:
    x = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32)
    check_node("Upsample", {"x": x}, opset=7, scales=[1.0, 1.0, 2.0, 2.0])


@pytest.mark.parametrize("mode, scales", [("nearest", [1, 1, 2, 1.5]),
                                          ("nearest", [1, 1, 0.5, 0.75]),
                                          ("linear", [1, 1, 2, 3])])
def test_resize_10(mode, scales) -> None:
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float32)
    check_node("Resize", {"x": x}, initializers={"s": np.array(scales, np.float32)}, opset=10,
               mode=mode)
