// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Ops that break their rules are rejected with a message naming the op and the rule.

func.func @topk_k_too_large(%x: tensor<2x8xf32>) -> tensor<2x9xf32> {
  %0, %1 = tx8be.TopK %x {k = 9 : i64} : (tensor<2x8xf32>) -> (tensor<2x9xf32>, tensor<2x9xi64>)
  func.return %0 : tensor<2x9xf32>
}
// CHECK: 'tx8be.TopK' op k = 9 must be between 0 and the size of dim 1 (8)

// -----

func.func @topk_axis(%x: tensor<2x8xf32>) -> tensor<2x3xf32> {
  %0, %1 = tx8be.TopK %x {k = 3 : i64, axis = 2 : i64} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.TopK' op axis 2 is out of range for an input of rank 2

// -----

func.func @topk_bool(%x: tensor<2x8xi1>) -> tensor<2x3xi1> {
  %0, %1 = tx8be.TopK %x {k = 3 : i64} : (tensor<2x8xi1>) -> (tensor<2x3xi1>, tensor<2x3xi64>)
  func.return %0 : tensor<2x3xi1>
}
// CHECK: 'tx8be.TopK' op operand #0 has element type i1; this op accepts bf16, f16, f32, i32, i64, i8

// -----

func.func @topk_indices_type(%x: tensor<2x8xf32>) -> tensor<2x3xf32> {
  %0, %1 = tx8be.TopK %x {k = 3 : i64} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>)
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.TopK' op result #1 has type tensor<2x3xi32> but its operands and attributes give tensor<2x3xi64>
