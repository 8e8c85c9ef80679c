// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Ops that break their rules are rejected with a message naming the op and the rule.

func.func @matmul_float(%a: tensor<3x16xf32>, %b: tensor<16x4xf32>) -> tensor<3x4xi32> {
  %0 = tx8be.MatMulInteger %a, %b : (tensor<3x16xf32>, tensor<16x4xf32>) -> tensor<3x4xi32>
  func.return %0 : tensor<3x4xi32>
}
// CHECK: 'tx8be.MatMulInteger' op operand #0 has element type f32; this op accepts i32, i8

// -----

func.func @matmul_mixed(%a: tensor<3x16xi8>, %b: tensor<16x4xi32>) -> tensor<3x4xi32> {
  %0 = tx8be.MatMulInteger %a, %b : (tensor<3x16xi8>, tensor<16x4xi32>) -> tensor<3x4xi32>
  func.return %0 : tensor<3x4xi32>
}
// CHECK: 'tx8be.MatMulInteger' op operands [0, 1] must share one element type, got i8, i32

// -----

func.func @matmul_k(%a: tensor<3x16xi8>, %b: tensor<15x4xi8>) -> tensor<3x4xi32> {
  %0 = tx8be.MatMulInteger %a, %b : (tensor<3x16xi8>, tensor<15x4xi8>) -> tensor<3x4xi32>
  func.return %0 : tensor<3x4xi32>
}
// CHECK: 'tx8be.MatMulInteger' op contraction dims differ: a is [3, 16], b is [15, 4]

// -----

func.func @matmul_result_type(%a: tensor<3x16xi8>, %b: tensor<16x4xi8>) -> tensor<3x4xi8> {
  %0 = tx8be.MatMulInteger %a, %b : (tensor<3x16xi8>, tensor<16x4xi8>) -> tensor<3x4xi8>
  func.return %0 : tensor<3x4xi8>
}
// CHECK: 'tx8be.MatMulInteger' op result #0 has type tensor<3x4xi8> but its operands and attributes give tensor<3x4xi32>

// -----

func.func @conv_groups(%x: tensor<1x4x6x6xi8>, %w: tensor<6x2x3x3xi8>) -> tensor<1x6x4x4xi32> {
  %0 = tx8be.ConvInteger %x, %w {groups = 3 : i64} : (tensor<1x4x6x6xi8>, tensor<6x2x3x3xi8>) -> tensor<1x6x4x4xi32>
  func.return %0 : tensor<1x6x4x4xi32>
}
// CHECK: 'tx8be.ConvInteger' op 4 input and 6 output channels with 2 per group do not fit groups = 3

// -----

func.func @conv_strides(%x: tensor<1x4x6x6xi8>, %w: tensor<6x4x3x3xi8>) -> tensor<1x6x4x4xi32> {
  %0 = tx8be.ConvInteger %x, %w {strides = array<i64: 0, 1>} : (tensor<1x4x6x6xi8>, tensor<6x4x3x3xi8>) -> tensor<1x6x4x4xi32>
  func.return %0 : tensor<1x6x4x4xi32>
}
// CHECK: 'tx8be.ConvInteger' op strides must be 2 values >= 1, got [0, 1]

// -----

func.func @conv_kernel_too_big(%x: tensor<1x4x2x2xi8>, %w: tensor<6x4x3x3xi8>) -> tensor<1x6x1x1xi32> {
  %0 = tx8be.ConvInteger %x, %w : (tensor<1x4x2x2xi8>, tensor<6x4x3x3xi8>) -> tensor<1x6x1x1xi32>
  func.return %0 : tensor<1x6x1x1xi32>
}
// CHECK: 'tx8be.ConvInteger' op kernel 3x3 does not fit in the padded input 2x2
