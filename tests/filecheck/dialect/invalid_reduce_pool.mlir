// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Ops that break their rules are rejected with a message naming the op and the rule.

func.func @reduce_mode(%x: tensor<2x3x4x5xf32>) -> tensor<1x1x1x1xf32> {
  %0 = tx8be.Reduce %x {mode = "avg"} : (tensor<2x3x4x5xf32>) -> tensor<1x1x1x1xf32>
  func.return %0 : tensor<1x1x1x1xf32>
}
// CHECK: 'tx8be.Reduce' op mode must be one of sum, mean, max, min, prod, got "avg"

// -----

func.func @reduce_axis_range(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = tx8be.Reduce %x {mode = "sum", axes = array<i64: 4>} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  func.return %0 : tensor<2x3x4x5xf32>
}
// CHECK: 'tx8be.Reduce' op axis 4 is out of range for rank 4

// -----

func.func @reduce_axis_negative_range(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32> {
  %0 = tx8be.Reduce %x {mode = "sum", axes = array<i64: -5>} : (tensor<2x3x4x5xf32>) -> tensor<2x3x4x5xf32>
  func.return %0 : tensor<2x3x4x5xf32>
}
// CHECK: 'tx8be.Reduce' op axis -5 is out of range for rank 4

// -----

func.func @reduce_axes_repeat(%x: tensor<2x3x4x5xf32>) -> tensor<2x1x4x5xf32> {
  %0 = tx8be.Reduce %x {mode = "max", axes = array<i64: 1, -3>} : (tensor<2x3x4x5xf32>) -> tensor<2x1x4x5xf32>
  func.return %0 : tensor<2x1x4x5xf32>
}
// CHECK: 'tx8be.Reduce' op axes [1, -3] name axis 1 more than once

// -----

func.func @reduce_mean_int(%x: tensor<2x3xi32>) -> tensor<1x3xi32> {
  %0 = tx8be.Reduce %x {mode = "mean", axes = array<i64: 0>} : (tensor<2x3xi32>) -> tensor<1x3xi32>
  func.return %0 : tensor<1x3xi32>
}
// CHECK: 'tx8be.Reduce' op mode "mean" needs a float element type, got i32

// -----

func.func @reduce_bool(%x: tensor<2x3xi1>) -> tensor<1x1xi1> {
  %0 = tx8be.Reduce %x {mode = "sum"} : (tensor<2x3xi1>) -> tensor<1x1xi1>
  func.return %0 : tensor<1x1xi1>
}
// CHECK: 'tx8be.Reduce' op mode "sum" needs a numeric element type, got i1

// -----

func.func @reduce_keepdims(%x: tensor<2x3x4x5xf32>) -> tensor<2x1x4x5xf32> {
  %0 = tx8be.Reduce %x {mode = "sum", axes = array<i64: 1>, keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<2x1x4x5xf32>
  func.return %0 : tensor<2x1x4x5xf32>
}
// CHECK: 'tx8be.Reduce' op result #0 has type tensor<2x1x4x5xf32> but its operands and attributes give tensor<2x4x5xf32>

// -----

func.func @pool_rank(%x: tensor<2x6x6xf32>) -> tensor<2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>} : (tensor<2x6x6xf32>) -> tensor<2x4x4xf32>
  func.return %0 : tensor<2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op input must have rank 4 (NCHW) or 5 (NCDHW), got rank 3

// -----

func.func @pool_mode(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "min", kernel = array<i64: 3, 3>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op mode must be "max" or "avg", got "min"

// -----

func.func @pool_format(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>, data_format = "CHWN"} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op data_format must be "NCHW" or "NHWC" for a rank-4 input, got "CHWN"

// -----

func.func @pool_no_kernel(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x1x1xf32> {
  %0 = tx8be.Pool %x {mode = "max"} : (tensor<1x2x6x6xf32>) -> tensor<1x2x1x1xf32>
  func.return %0 : tensor<1x2x1x1xf32>
}
// CHECK: 'tx8be.Pool' op kernel is required unless global_pool is set

// -----

func.func @pool_kernel_length(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op kernel must have 2 values, got [3]

// -----

func.func @pool_strides(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>, strides = array<i64: 0, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op strides must be positive, got [0, 1]

// -----

func.func @pool_pads_length(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>, pads = array<i64: 1, 1>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op pads must have 4 values, got [1, 1]

// -----

func.func @pool_pads_negative(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>, pads = array<i64: 0, -1, 0, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op pads must be non-negative, got [0, -1, 0, 0]

// -----

func.func @pool_pads_kernel(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x7x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>, pads = array<i64: 0, 0, 3, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x7x4xf32>
  func.return %0 : tensor<1x2x7x4xf32>
}
// CHECK: 'tx8be.Pool' op pads [0, 0, 3, 0] must be smaller than kernel [3, 3]

// -----

func.func @pool_dilations(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x2x4xf32> {
  %0 = tx8be.Pool %x {mode = "avg", kernel = array<i64: 3, 3>, dilations = array<i64: 2, 0>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x2x4xf32>
  func.return %0 : tensor<1x2x2x4xf32>
}
// CHECK: 'tx8be.Pool' op dilations must be positive, got [2, 0]

// -----

func.func @pool_3d_format(%x: tensor<1x2x6x6x6xf32>) -> tensor<1x2x4x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3, 3>, data_format = "NHWC"} : (tensor<1x2x6x6x6xf32>) -> tensor<1x2x4x4x4xf32>
  func.return %0 : tensor<1x2x4x4x4xf32>
}
// CHECK: 'tx8be.Pool' op data_format must be "NCDHW" or "NDHWC" for a rank-5 input, got "NHWC"

// -----

func.func @pool_3d_kernel_length(%x: tensor<1x2x6x6x6xf32>) -> tensor<1x2x4x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>} : (tensor<1x2x6x6x6xf32>) -> tensor<1x2x4x4x4xf32>
  func.return %0 : tensor<1x2x4x4x4xf32>
}
// CHECK: 'tx8be.Pool' op kernel must have 3 values, got [3, 3]

// -----

func.func @pool_3d_pads_length(%x: tensor<1x2x6x6x6xf32>) -> tensor<1x2x4x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6x6xf32>) -> tensor<1x2x4x4x4xf32>
  func.return %0 : tensor<1x2x4x4x4xf32>
}
// CHECK: 'tx8be.Pool' op pads must have 6 values, got [1, 1, 1, 1]

// -----

func.func @pool_3d_too_small(%x: tensor<1x2x6x6x2xf32>) -> tensor<1x2x4x4x1xf32> {
  %0 = tx8be.Pool %x {mode = "avg", kernel = array<i64: 3, 3, 3>} : (tensor<1x2x6x6x2xf32>) -> tensor<1x2x4x4x1xf32>
  func.return %0 : tensor<1x2x4x4x1xf32>
}
// CHECK: 'tx8be.Pool' op the window does not fit: input D x H x W 6 x 6 x 2 gives output 4 x 4 x 0

// -----

func.func @pool_max_count_include_pad(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>, count_include_pad = true} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op count_include_pad applies to mode "avg" only

// -----

func.func @pool_avg_int(%x: tensor<1x2x6x6xi8>) -> tensor<1x2x4x4xi8> {
  %0 = tx8be.Pool %x {mode = "avg", kernel = array<i64: 3, 3>} : (tensor<1x2x6x6xi8>) -> tensor<1x2x4x4xi8>
  func.return %0 : tensor<1x2x4x4xi8>
}
// CHECK: 'tx8be.Pool' op mode "avg" needs a float element type, got i8

// -----

func.func @pool_too_small(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x1xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 7>} : (tensor<1x2x6x6xf32>) -> tensor<1x2x4x1xf32>
  func.return %0 : tensor<1x2x4x1xf32>
}
// CHECK: 'tx8be.Pool' op the window does not fit: input H x W 6 x 6 gives output 4 x 0

// -----

func.func @pool_nhwc_result(%x: tensor<1x6x6x2xf32>) -> tensor<1x2x4x4xf32> {
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 3>, data_format = "NHWC"} : (tensor<1x6x6x2xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}
// CHECK: 'tx8be.Pool' op result #0 has type tensor<1x2x4x4xf32> but its operands and attributes give tensor<1x4x4x2xf32>
