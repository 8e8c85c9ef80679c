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

// -----

func.func @mod_float_needs_fmod(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Mod %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Mod' op a f32 remainder needs fmod = true (ONNX Mod's rule)

// -----

func.func @mod_bool(%c: tensor<2x3xi1>) -> tensor<2x3xi1> {
  %0 = tx8be.Mod %c, %c : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return %0 : tensor<2x3xi1>
}
// CHECK: 'tx8be.Mod' op operand #0 has element type i1; this op accepts bf16, f16, f32, i32, i64, i8

// -----

func.func @round_int(%i: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = tx8be.Round %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}
// CHECK: 'tx8be.Round' op operand #0 has element type i32; this op accepts bf16, f16, f32
