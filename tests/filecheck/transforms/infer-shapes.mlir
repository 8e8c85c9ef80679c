// RUN: tx8c-opt %s --disable-verify -p infer-shapes | tx8c-opt | filecheck %s
// infer-shapes recomputes stale result types from operands and attributes, forward
// through the graph, and updates the function signature. The input does not verify
// (its types are stale), hence --disable-verify; the output is verified by the second
// tx8c-opt.

func.func @stale(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "tx8be.Add"(%a, %b) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "tx8be.Relu"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "tx8be.Cast"(%1) {to = "f16"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}
// CHECK:      func.func @stale(%a: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf16> {
// CHECK-NEXT:   %0 = tx8be.Add %a, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:   %1 = tx8be.Relu %0 : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT:   %2 = tx8be.Cast %1 {to = "f16"} : (tensor<4x3xf32>) -> tensor<4x3xf16>
// CHECK-NEXT:   func.return %2 : tensor<4x3xf16>
