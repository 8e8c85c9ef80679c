// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @integer(%a: tensor<2x3x16xi8>, %b: tensor<16x4xi8>, %c: tensor<3x16xi32>, %d: tensor<16x4xi32>, %x: tensor<1x4x6x6xi8>, %w: tensor<6x2x3x3xi8>) -> tensor<2x3x4xi32> {
  // CHECK:      %{{.*}} = tx8be.MatMulInteger %a, %b : (tensor<2x3x16xi8>, tensor<16x4xi8>) -> tensor<2x3x4xi32>
  // CHECK-NEXT: %{{.*}} = tx8be.MatMulInteger %c, %d {layout_str = "Tensor-Tensor-Tensor"} : (tensor<3x16xi32>, tensor<16x4xi32>) -> tensor<3x4xi32>
  // CHECK-NEXT: %{{.*}} = tx8be.ConvInteger %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 2>, groups = 2 : i64} : (tensor<1x4x6x6xi8>, tensor<6x2x3x3xi8>) -> tensor<1x6x3x4xi32>
  %0 = tx8be.MatMulInteger %a, %b : (tensor<2x3x16xi8>, tensor<16x4xi8>) -> tensor<2x3x4xi32>
  %1 = tx8be.MatMulInteger %c, %d {layout_str = "Tensor-Tensor-Tensor"} : (tensor<3x16xi32>, tensor<16x4xi32>) -> tensor<3x4xi32>
  %2 = tx8be.ConvInteger %x, %w {strides = array<i64: 2, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 2>, groups = 2 : i64} : (tensor<1x4x6x6xi8>, tensor<6x2x3x3xi8>) -> tensor<1x6x3x4xi32>
  func.return %0 : tensor<2x3x4xi32>
}
