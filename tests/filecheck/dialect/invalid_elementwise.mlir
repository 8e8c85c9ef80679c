// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Ops that break their rules are rejected with a message naming the op and the rule.

func.func @bad_broadcast(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Add' op operand shapes [2, 3] and [4] do not broadcast

// -----

func.func @wrong_result(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  %0 = tx8be.Mul %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}
// CHECK: 'tx8be.Mul' op result #0 has type tensor<3x3xf32> but its operands and attributes give tensor<2x3xf32>

// -----

func.func @operand_count(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Add %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Add' op expects 2 operand(s) (lhs, rhs), got 1

// -----

func.func @dtype(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Not %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Not' op operand #0 has element type f32; this op accepts i1

// -----

func.func @mixed(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) -> tensor<2x3xf32> {
  %0 = tx8be.Add %a, %b : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Add' op operands [0, 1] must share one element type, got f32, f16

// -----

func.func @where_cond(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Where %a, %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Where' op condition (operand #0) must have element type i1

// -----

func.func @gelu(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Gelu %a {approximate = "fast"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Gelu' op approximate must be "none" or "tanh", got "fast"

// -----

func.func @cast(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Cast %a {to = "f8"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Cast' op to = "f8" is not a supported element type
