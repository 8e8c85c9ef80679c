// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @conv(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %xh: tensor<1x8x8x4xf32>, %wh: tensor<3x3x6x2xf32>, %b: tensor<6xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK:      %{{.*}} = tx8be.Conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Conv %xh, %wh, %b {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 2>, dilations = array<i64: 1, 2>, groups = 2 : i64, data_format = "NHWC", weight_format = "HWOI", layout_str = "NHWC-HWOI-NHWC"} : (tensor<1x8x8x4xf32>, tensor<3x3x6x2xf32>, tensor<6xf32>) -> tensor<1x4x6x6xf32>
  %0 = tx8be.Conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = tx8be.Conv %xh, %wh, %b {strides = array<i64: 2, 1>, pads = array<i64: 1, 0, 1, 2>, dilations = array<i64: 1, 2>, groups = 2 : i64, data_format = "NHWC", weight_format = "HWOI", layout_str = "NHWC-HWOI-NHWC"} : (tensor<1x8x8x4xf32>, tensor<3x3x6x2xf32>, tensor<6xf32>) -> tensor<1x4x6x6xf32>
  func.return %1 : tensor<1x4x6x6xf32>
}

func.func @gemm(%a: tensor<3x2xf16>, %b: tensor<4x3xf16>, %c: tensor<4xf16>, %ba: tensor<2x1x2x3xf32>, %bb: tensor<5x3x4xf32>) -> tensor<2x5x2x4xf32> {
  // CHECK:      %{{.*}} = tx8be.Gemm %a, %b, %c {trans_a = true, trans_b = true, alpha = 5.000000e-01 : f64, beta = 2.000000e+00 : f64} : (tensor<3x2xf16>, tensor<4x3xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  // CHECK-NEXT: %{{.*}} = tx8be.Gemm %ba, %bb : (tensor<2x1x2x3xf32>, tensor<5x3x4xf32>) -> tensor<2x5x2x4xf32>
  %0 = tx8be.Gemm %a, %b, %c {trans_a = true, trans_b = true, alpha = 0.5 : f64, beta = 2.0 : f64} : (tensor<3x2xf16>, tensor<4x3xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  %1 = tx8be.Gemm %ba, %bb : (tensor<2x1x2x3xf32>, tensor<5x3x4xf32>) -> tensor<2x5x2x4xf32>
  func.return %1 : tensor<2x5x2x4xf32>
}
