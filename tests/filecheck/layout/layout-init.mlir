// RUN: tx8c-opt %s -p layout-init | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s -p layout-init,layout-init | filecheck %s
// RUN: tx8c-opt %s -p layout-init | filecheck %s --check-prefix=NONE
// layout-init (seed 003, layoutInitPass): Conv and Gemm get the layout_str their
// attributes fix (operands then result); every other op gets UNKNOWN, which is the
// default and is not printed, whatever it had before. Recorded graph-input layouts
// (tx8c.layout) are removed. Running it twice gives the same result.

// Conv: "{data_format}-{weight_format}-{data_format}"; a stale layout_str is replaced.
// CHECK-LABEL: func.func @conv(
// CHECK-SAME:    %x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %xh: tensor<1x8x8x4xf32>, %wh: tensor<3x3x6x2xf32>, %b: tensor<6xf32>)
func.func @conv(%x: tensor<1x3x8x8xf32> {tx8c.layout = "NCHW"}, %w: tensor<4x3x3x3xf32>, %xh: tensor<1x8x8x4xf32>, %wh: tensor<3x3x6x2xf32>, %b: tensor<6xf32>) -> tensor<1x4x6x6xf32> {
  // CHECK-NEXT: tx8be.Conv %x, %w {layout_str = "NCHW-OIHW-NCHW"}
  // CHECK-NEXT: tx8be.Conv %xh, %wh, %b {{{.*}}data_format = "NHWC", weight_format = "HWOI", layout_str = "NHWC-HWOI-NHWC"}
  // CHECK-NEXT: tx8be.Relu %{{.*}} : (tensor<1x4x6x6xf32>)
  %0 = tx8be.Conv %x, %w {layout_str = "Tensor"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = tx8be.Conv %xh, %wh, %b {strides = array<i64: 2, 1>, groups = 2 : i64, data_format = "NHWC", weight_format = "HWOI"} : (tensor<1x8x8x4xf32>, tensor<3x3x6x2xf32>, tensor<6xf32>) -> tensor<1x3x6x6xf32>
  %2 = tx8be.Relu %0 {layout_str = "NCHW"} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %2 : tensor<1x4x6x6xf32>
}

// Gemm: the Tensor class of a, b and the result (seed 003's "Tensor-Tensor-Tensor"):
// "Tensor" when dim 0 is 1, "NTensor" when it is larger; a bias is not listed.
// CHECK-LABEL: func.func @gemm(
// CHECK-NEXT:  tx8be.Gemm %a, %b {layout_str = "Tensor-Tensor-Tensor"}
// CHECK-NEXT:  tx8be.Gemm %ba, %bb, %c {layout_str = "NTensor-NTensor-NTensor"}
// CHECK-NEXT:  tx8be.Gemm %a, %bb {layout_str = "Tensor-NTensor-NTensor"}
// CHECK-NEXT:  tx8be.Constant {value = dense<1.000000e+00> : tensor<1x5xf32>} :
// CHECK-NEXT:  tx8be.Add %{{.*}}, %{{.*}} : (tensor<1x5xf32>, tensor<1x5xf32>)
func.func @gemm(%a: tensor<1x4x3xf32>, %b: tensor<1x3x5xf32>, %ba: tensor<2x4x3xf32>, %bb: tensor<2x3x5xf32>, %c: tensor<5xf32>) -> tensor<1x5xf32> {
  %0 = tx8be.Gemm %a, %b : (tensor<1x4x3xf32>, tensor<1x3x5xf32>) -> tensor<1x4x5xf32>
  %1 = tx8be.Gemm %ba, %bb, %c : (tensor<2x4x3xf32>, tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x4x5xf32>
  %2 = tx8be.Gemm %a, %bb : (tensor<1x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  %3 = tx8be.Constant {value = dense<1.0> : tensor<1x5xf32>, layout_str = "Tensor"} : () -> tensor<1x5xf32>
  %4 = tx8be.Add %3, %3 {layout_str = "NTensor"} : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<1x5xf32>
  func.return %4 : tensor<1x5xf32>
}

// Nowhere in the module does an op keep a layout_str it had before, or an input its
// recorded layout.
// NONE:     builtin.module
// NONE-NOT: layout_str = "NCHW"}
// NONE-NOT: layout_str = "Tensor"}
// NONE-NOT: layout_str = "NTensor"}
// NONE-NOT: tx8c.layout
