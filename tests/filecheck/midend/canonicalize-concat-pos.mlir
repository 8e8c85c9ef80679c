// RUN: tx8c-opt %s -p canonicalize-concat-pos | filecheck %s
// A channel-wise op after a Concat moves before it, one copy per input; a per-channel
// constant is cut along the concat axis, one that is 1 along it is shared.

// CHECK-LABEL: func.func @move
func.func @move(%a: tensor<1x1x2xf32>, %b: tensor<1x2x2xf32>) -> tensor<1x3x2xf32> {
  %s = tx8be.Constant {value = dense<[[[1.0], [2.0], [3.0]]]> : tensor<1x3x1xf32>} : () -> tensor<1x3x1xf32>
  %h = tx8be.Constant {value = dense<0.5> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = tx8be.Concatenate %a, %b {axis = 1 : i64} : (tensor<1x1x2xf32>, tensor<1x2x2xf32>) -> tensor<1x3x2xf32>
  %1 = tx8be.Mul %0, %s : (tensor<1x3x2xf32>, tensor<1x3x1xf32>) -> tensor<1x3x2xf32>
  %2 = tx8be.Add %h, %1 : (tensor<2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %3 = tx8be.Relu %2 : (tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  func.return %3 : tensor<1x3x2xf32>
}
// CHECK-NEXT:  %[[H:.*]] = tx8be.Constant {value = dense<5.000000e-01> : tensor<2xf32>}
// CHECK-NEXT:  %[[S0:.*]] = tx8be.Constant {value = dense<1.000000e+00> : tensor<1x1x1xf32>}
// CHECK-NEXT:  %[[M0:.*]] = tx8be.Mul %a, %[[S0]]
// CHECK-NEXT:  %[[S1:.*]] = tx8be.Constant {value = dense<{{\[\[\[}}2.000000e+00], [3.000000e+00]]]> : tensor<1x2x1xf32>}
// CHECK-NEXT:  %[[M1:.*]] = tx8be.Mul %b, %[[S1]]
// CHECK-NEXT:  %[[A0:.*]] = tx8be.Add %[[H]], %[[M0]]
// CHECK-NEXT:  %[[A1:.*]] = tx8be.Add %[[H]], %[[M1]]
// CHECK-NEXT:  %[[R0:.*]] = tx8be.Relu %[[A0]] : (tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
// CHECK-NEXT:  %[[R1:.*]] = tx8be.Relu %[[A1]] : (tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
// CHECK-NEXT:  %[[C:.*]] = tx8be.Concatenate %[[R0]], %[[R1]] {axis = 1 : i64}
// CHECK-NEXT:  func.return %[[C]]

// Not when the Concat has another user, nor for an op that is not channel-wise.
// CHECK-LABEL: func.func @stay
func.func @stay(%a: tensor<1x1x2xf32>, %b: tensor<1x2x2xf32>) -> (tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>) {
  %0 = tx8be.Concatenate %a, %b {axis = 1 : i64} : (tensor<1x1x2xf32>, tensor<1x2x2xf32>) -> tensor<1x3x2xf32>
  %1 = tx8be.Relu %0 : (tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %2 = tx8be.Concatenate %a, %b {axis = 1 : i64} : (tensor<1x1x2xf32>, tensor<1x2x2xf32>) -> tensor<1x3x2xf32>
  %3 = tx8be.Softmax %2 {axis = 1 : i64} : (tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  func.return %0, %1, %3 : tensor<1x3x2xf32>, tensor<1x3x2xf32>, tensor<1x3x2xf32>
}
// CHECK-NEXT:  %[[C0:.*]] = tx8be.Concatenate %a, %b
// CHECK-NEXT:  tx8be.Relu %[[C0]]
// CHECK-NEXT:  %[[C1:.*]] = tx8be.Concatenate %a, %b
// CHECK-NEXT:  tx8be.Softmax %[[C1]]
