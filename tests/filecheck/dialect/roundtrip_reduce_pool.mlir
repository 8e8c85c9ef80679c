// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @reduce(%x: tensor<2x3x4x5xf32>, %i: tensor<2x3xi32>) -> tensor<f32> {
  // CHECK:      %{{.*}} = tx8be.Reduce %x {mode = "sum"} : (tensor<2x3x4x5xf32>) -> tensor<1x1x1x1xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Reduce %x {mode = "mean", axes = array<i64: 1, -1>, keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Reduce %x {mode = "max", axes = array<i64: 2>, layout_str = "NCHW"} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x5xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Reduce %x {mode = "min", axes = array<i64: -4, 3>} : (tensor<2x3x4x5xf32>) -> tensor<1x3x4x1xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Reduce %i {mode = "prod", axes = array<i64: 0>, keepdims = false} : (tensor<2x3xi32>) -> tensor<3xi32>
  // CHECK-NEXT: %{{.*}} = tx8be.Reduce %x {mode = "sum", keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<f32>
  %0 = tx8be.Reduce %x {mode = "sum"} : (tensor<2x3x4x5xf32>) -> tensor<1x1x1x1xf32>
  %1 = tx8be.Reduce %x {mode = "mean", axes = array<i64: 1, -1>, keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<2x4xf32>
  %2 = tx8be.Reduce %x {mode = "max", axes = array<i64: 2>, layout_str = "NCHW"} : (tensor<2x3x4x5xf32>) -> tensor<2x3x1x5xf32>
  %3 = tx8be.Reduce %x {mode = "min", axes = array<i64: -4, 3>} : (tensor<2x3x4x5xf32>) -> tensor<1x3x4x1xf32>
  %4 = tx8be.Reduce %i {mode = "prod", axes = array<i64: 0>, keepdims = false} : (tensor<2x3xi32>) -> tensor<3xi32>
  %5 = tx8be.Reduce %x {mode = "sum", keepdims = false} : (tensor<2x3x4x5xf32>) -> tensor<f32>
  func.return %5 : tensor<f32>
}

func.func @pool(%x: tensor<2x4x7x9xf32>, %y: tensor<2x7x9x4xf16>) -> tensor<2x1x1x4xf16> {
  // CHECK:      %{{.*}} = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 2, 1>, ceil_mode = true} : (tensor<2x4x7x9xf32>) -> tensor<2x4x3x5xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pool %y {mode = "avg", kernel = array<i64: 2, 3>, strides = array<i64: 1, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true, data_format = "NHWC"} : (tensor<2x7x9x4xf16>) -> tensor<2x8x3x4xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.Pool %x {mode = "avg", global_pool = true} : (tensor<2x4x7x9xf32>) -> tensor<2x4x1x1xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pool %y {mode = "max", global_pool = true, data_format = "NHWC"} : (tensor<2x7x9x4xf16>) -> tensor<2x1x1x4xf16>
  %0 = tx8be.Pool %x {mode = "max", kernel = array<i64: 3, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 2, 1>, ceil_mode = true} : (tensor<2x4x7x9xf32>) -> tensor<2x4x3x5xf32>
  %1 = tx8be.Pool %y {mode = "avg", kernel = array<i64: 2, 3>, strides = array<i64: 1, 3>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true, data_format = "NHWC"} : (tensor<2x7x9x4xf16>) -> tensor<2x8x3x4xf16>
  %2 = tx8be.Pool %x {mode = "avg", global_pool = true} : (tensor<2x4x7x9xf32>) -> tensor<2x4x1x1xf32>
  %3 = tx8be.Pool %y {mode = "max", global_pool = true, data_format = "NHWC"} : (tensor<2x7x9x4xf16>) -> tensor<2x1x1x4xf16>
  func.return %3 : tensor<2x1x1x4xf16>
}

func.func @pool_3d_and_dilated_avg(%x: tensor<2x4x7x9xf32>, %z: tensor<1x3x6x7x8xf32>, %w: tensor<2x6x7x8x3xf16>) -> tensor<2x1x1x1x3xf16> {
  // CHECK:      %{{.*}} = tx8be.Pool %x {mode = "avg", kernel = array<i64: 3, 2>, dilations = array<i64: 2, 3>, pads = array<i64: 1, 1, 1, 0>} : (tensor<2x4x7x9xf32>) -> tensor<2x4x5x7xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pool %z {mode = "max", kernel = array<i64: 2, 3, 2>, strides = array<i64: 2, 1, 2>, pads = array<i64: 1, 0, 1, 0, 2, 1>, dilations = array<i64: 1, 1, 2>, ceil_mode = true} : (tensor<1x3x6x7x8xf32>) -> tensor<1x3x4x7x5xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pool %z {mode = "avg", kernel = array<i64: 2, 2, 2>} : (tensor<1x3x6x7x8xf32>) -> tensor<1x3x5x6x7xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pool %z {mode = "avg", kernel = array<i64: 2, 2, 2>, data_format = "NCDHW"} : (tensor<1x3x6x7x8xf32>) -> tensor<1x3x5x6x7xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pool %w {mode = "avg", kernel = array<i64: 3, 2, 2>, pads = array<i64: 1, 1, 0, 1, 0, 1>, dilations = array<i64: 2, 1, 1>, count_include_pad = true, data_format = "NDHWC"} : (tensor<2x6x7x8x3xf16>) -> tensor<2x4x7x8x3xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.Pool %w {mode = "max", global_pool = true, data_format = "NDHWC"} : (tensor<2x6x7x8x3xf16>) -> tensor<2x1x1x1x3xf16>
  %0 = tx8be.Pool %x {mode = "avg", kernel = array<i64: 3, 2>, dilations = array<i64: 2, 3>, pads = array<i64: 1, 1, 1, 0>} : (tensor<2x4x7x9xf32>) -> tensor<2x4x5x7xf32>
  %1 = tx8be.Pool %z {mode = "max", kernel = array<i64: 2, 3, 2>, strides = array<i64: 2, 1, 2>, pads = array<i64: 1, 0, 1, 0, 2, 1>, dilations = array<i64: 1, 1, 2>, ceil_mode = true} : (tensor<1x3x6x7x8xf32>) -> tensor<1x3x4x7x5xf32>
  %2 = tx8be.Pool %z {mode = "avg", kernel = array<i64: 2, 2, 2>} : (tensor<1x3x6x7x8xf32>) -> tensor<1x3x5x6x7xf32>
  %3 = tx8be.Pool %z {mode = "avg", kernel = array<i64: 2, 2, 2>, data_format = "NCDHW"} : (tensor<1x3x6x7x8xf32>) -> tensor<1x3x5x6x7xf32>
  %4 = tx8be.Pool %w {mode = "avg", kernel = array<i64: 3, 2, 2>, pads = array<i64: 1, 1, 0, 1, 0, 1>, dilations = array<i64: 2, 1, 1>, count_include_pad = true, data_format = "NDHWC"} : (tensor<2x6x7x8x3xf16>) -> tensor<2x4x7x8x3xf16>
  %5 = tx8be.Pool %w {mode = "max", global_pool = true, data_format = "NDHWC"} : (tensor<2x6x7x8x3xf16>) -> tensor<2x1x1x1x3xf16>
  func.return %5 : tensor<2x1x1x1x3xf16>
}
