// RUN: tx8c-opt %s -p peephole | filecheck %s
// RUN: tx8c-opt %s -p 'peephole{fc-to-conv=true}' | filecheck %s --check-prefix=FC

// PatternTransformer1: Conv -> Add(per channel) -> Mul(per channel) folds into the Conv:
// W' = W * m, b' = (b + a) * m.
// CHECK-LABEL: func.func @conv_add_mul
func.func @conv_add_mul(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = tx8be.Constant {value = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : () -> tensor<2x1x1x1xf32>
  %b = tx8be.Constant {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %a = tx8be.Constant {value = dense<[[[0.5]], [[1.5]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %m = tx8be.Constant {value = dense<[[[[2.0]], [[4.0]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
  %0 = tx8be.Conv %x, %w, %b : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %1 = tx8be.Add %0, %a : (tensor<1x2x2x2xf32>, tensor<2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %2 = tx8be.Mul %m, %1 : (tensor<1x2x1x1xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %2 : tensor<1x2x2x2xf32>
}
// CHECK-NEXT:  %[[W:.*]] = tx8be.Constant {value = dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}8.000000e+00]]]]> : tensor<2x1x1x1xf32>}
// CHECK-NEXT:  %[[B:.*]] = tx8be.Constant {value = dense<[3.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT:  %[[C:.*]] = tx8be.Conv %x, %[[W]], %[[B]]
// CHECK-NEXT:  func.return %[[C]]

// PatternTransformer2: Add(Add(x, c1), c2) -> Add(x, c1 + c2).
// CHECK-LABEL: func.func @constant_adds
func.func @constant_adds(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c1 = tx8be.Constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c2 = tx8be.Constant {value = dense<[[10.0, 20.0]]> : tensor<1x2xf32>} : () -> tensor<1x2xf32>
  %0 = tx8be.Add %x, %c1 : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %1 = tx8be.Add %c2, %0 : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %1 : tensor<2x2xf32>
}
// CHECK-NEXT:  %[[C:.*]] = tx8be.Constant {value = dense<{{\[\[}}1.100000e+01, 2.200000e+01]]> : tensor<1x2xf32>}
// CHECK-NEXT:  %[[A:.*]] = tx8be.Add %x, %[[C]] : (tensor<2x2xf32>, tensor<1x2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT:  func.return %[[A]]

// PatternTransformer3: Add(Concat(t0, t1), y) with y an intermediate only the Add reads
// becomes zero Pads accumulated into y (the byte cost model: 3S < 5S).
// CHECK-LABEL: func.func @concat_add
func.func @concat_add(%t0: tensor<1x1x2xf32>, %t1: tensor<1x3x2xf32>, %z: tensor<1x4x2xf32>) -> tensor<1x4x2xf32> {
  %y = tx8be.Relu %z : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %0 = tx8be.Concatenate %t0, %t1 {axis = 1 : i64} : (tensor<1x1x2xf32>, tensor<1x3x2xf32>) -> tensor<1x4x2xf32>
  %1 = tx8be.Add %0, %y : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  func.return %1 : tensor<1x4x2xf32>
}
// CHECK-NEXT:  %[[Y:.*]] = tx8be.Relu %z
// CHECK-NEXT:  %[[P0:.*]] = tx8be.Pad %t0 {pads = array<i64: 0, 0, 0, 0, 3, 0>} : (tensor<1x1x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT:  %[[A0:.*]] = tx8be.Add %[[P0]], %[[Y]]
// CHECK-NEXT:  %[[P1:.*]] = tx8be.Pad %t1 {pads = array<i64: 0, 1, 0, 0, 0, 0>} : (tensor<1x3x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT:  %[[A1:.*]] = tx8be.Add %[[P1]], %[[A0]]
// CHECK-NEXT:  func.return %[[A1]]

// ... but not when y is a function argument: it would have to be copied first (5S).
// CHECK-LABEL: func.func @concat_add_argument
func.func @concat_add_argument(%t0: tensor<1x1x2xf32>, %t1: tensor<1x3x2xf32>, %y: tensor<1x4x2xf32>) -> tensor<1x4x2xf32> {
  %0 = tx8be.Concatenate %t0, %t1 {axis = 1 : i64} : (tensor<1x1x2xf32>, tensor<1x3x2xf32>) -> tensor<1x4x2xf32>
  %1 = tx8be.Add %0, %y : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  func.return %1 : tensor<1x4x2xf32>
}
// CHECK-NEXT:  tx8be.Concatenate
// CHECK-NEXT:  tx8be.Add

// PatternTransformer5 (fc-to-conv=true only): a fully connected layer becomes a 1x1 Conv.
// CHECK-LABEL: func.func @fc
// CHECK:       tx8be.Gemm
// FC-LABEL: func.func @fc
// FC:       %[[R:.*]] = tx8be.Reshape %x {shape = array<i64: 2, 3, 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3x1x1xf32>
// FC-NEXT:  %[[C:.*]] = tx8be.Conv %[[R]], %{{.*}}, %{{.*}} : (tensor<2x3x1x1xf32>, tensor<4x3x1x1xf32>, tensor<4xf32>) -> tensor<2x4x1x1xf32>
// FC-NEXT:  %[[O:.*]] = tx8be.Reshape %[[C]] {shape = array<i64: 2, 4>} : (tensor<2x4x1x1xf32>) -> tensor<2x4xf32>
// FC-NEXT:  func.return %[[O]]
func.func @fc(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w = tx8be.Constant {value = dense<1.0> : tensor<3x4xf32>} : () -> tensor<3x4xf32>
  %b = tx8be.Constant {value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = tx8be.Gemm %x, %w, %b : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
