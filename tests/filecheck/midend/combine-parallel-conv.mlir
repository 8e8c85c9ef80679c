// RUN: tx8c-opt %s -p combine-parallel-conv | filecheck %s
// Three 1x1 convolutions of one input become one Conv whose weights are concatenated
// along O, followed by the (combined) Relu they all had and a Split on the channels.

// CHECK-LABEL: func.func @branches
func.func @branches(%x: tensor<1x2x3x3xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>) {
  %w0 = tx8be.Constant {value = dense<1.0> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %w1 = tx8be.Constant {value = dense<2.0> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %w2 = tx8be.Constant {value = dense<3.0> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %c0 = tx8be.Conv %x, %w0 : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %r0 = tx8be.Relu %c0 : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  %c1 = tx8be.Conv %x, %w1 : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r1 = tx8be.Relu %c1 : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  %c2 = tx8be.Conv %x, %w2 : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %r2 = tx8be.Relu %c2 : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %r0, %r1, %r2 : tensor<1x1x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x1x3x3xf32>
}
// CHECK-NEXT:  %[[W:.*]] = tx8be.Constant {value = dense<[{{\[\[\[}}1.000000e+00]], {{\[\[}}1.000000e+00]]], {{\[\[\[}}2.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}2.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}3.000000e+00]], {{\[\[}}3.000000e+00]]]]> : tensor<4x2x1x1xf32>}
// CHECK-NEXT:  %[[C:.*]] = tx8be.Conv %x, %[[W]] : (tensor<1x2x3x3xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:  %[[R:.*]] = tx8be.Relu %[[C]] : (tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:  %{{.*}}, %{{.*}}, %{{.*}} = tx8be.Split %[[R]] {axis = 1 : i64, split = array<i64: 1, 2, 1>}
// CHECK-NEXT:  func.return

// Kernels of another size (3x3 beside 1x1) and other strides do not combine.
// CHECK-LABEL: func.func @mismatched
func.func @mismatched(%x: tensor<1x2x3x3xf32>) -> (tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, tensor<1x1x2x2xf32>) {
  %w = tx8be.Constant {value = dense<1.0> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %w3 = tx8be.Constant {value = dense<1.0> : tensor<1x2x3x3xf32>} : () -> tensor<1x2x3x3xf32>
  %0 = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x3x3xf32>
  %1 = tx8be.Conv %x, %w3 : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x1x1x1xf32>
  %2 = tx8be.Conv %x, %w {strides = array<i64: 2, 2>} : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x1x2x2xf32>
  func.return %0, %1, %2 : tensor<1x1x3x3xf32>, tensor<1x1x1x1xf32>, tensor<1x1x2x2xf32>
}
// CHECK-COUNT-3: tx8be.Conv
// CHECK-NOT: tx8be.Split
