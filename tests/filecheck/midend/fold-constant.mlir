// RUN: tx8c-opt %s -p fold-constant | filecheck %s
// RUN: tx8c-opt %s -p 'fold-constant{max-elements=16}' | filecheck %s --check-prefix=LIMIT
// fold-constant evaluates ops whose operands are all Constants with their compute(), in
// one forward walk (so a chain folds at once), and erases the Constants left unused.
// With max-elements=16 the broadcast of a scalar to 64 elements stays an op.

func.func @chain(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<8x8xf32>) {
  %a = tx8be.Constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %two = tx8be.Constant {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %m = tx8be.Mul %a, %two : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %n = tx8be.Neg %m : (tensor<3xf32>) -> tensor<3xf32>
  %y = tx8be.Add %x, %n : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %big = tx8be.BroadCast %two {shape = array<i64: 8, 8>} : (tensor<f32>) -> tensor<8x8xf32>
  func.return %y, %big : tensor<2x3xf32>, tensor<8x8xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %n = tx8be.Constant {value = dense<[-2.000000e+00, -4.000000e+00, -6.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT:    %y = tx8be.Add %x, %n
// CHECK-NEXT:    %big = tx8be.Constant {value = dense<2.000000e+00> : tensor<8x8xf32>}
// CHECK-NEXT:    func.return %y, %big

// LIMIT-LABEL: func.func @chain
// LIMIT-NEXT:    %two = tx8be.Constant {value = dense<2.000000e+00> : tensor<f32>}
// LIMIT-NEXT:    %n = tx8be.Constant {value = dense<[-2.000000e+00, -4.000000e+00, -6.000000e+00]> : tensor<3xf32>}
// LIMIT-NEXT:    %y = tx8be.Add %x, %n
// LIMIT-NEXT:    %big = tx8be.BroadCast %two {shape = array<i64: 8, 8>}
// LIMIT-NEXT:    func.return %y, %big

// Integer and shape ops fold too; the result keeps the op's result type (i64 -> i32).
func.func @ints() -> tensor<2x2xi32> {
  %a = tx8be.Constant {value = dense<[1, 2, 3, 4]> : tensor<4xi64>} : () -> tensor<4xi64>
  %r = tx8be.Reshape %a {shape = array<i64: 2, 2>} : (tensor<4xi64>) -> tensor<2x2xi64>
  %t = tx8be.Transpose %r : (tensor<2x2xi64>) -> tensor<2x2xi64>
  %c = tx8be.Cast %t {to = "i32"} : (tensor<2x2xi64>) -> tensor<2x2xi32>
  func.return %c : tensor<2x2xi32>
}
// CHECK-LABEL: func.func @ints
// CHECK-NEXT:    %c = tx8be.Constant {value = dense<{{\[}}[1, 3], [2, 4]]> : tensor<2x2xi32>}
// CHECK-NEXT:    func.return %c

// Left alone: an op with a run-time operand, and ChannelNorm, whose effect is on memory.
func.func @untouched(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %a = tx8be.Constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %y = tx8be.Add %x, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %n = tx8be.ChannelNorm %a {direction = true} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %y, %n : tensor<3xf32>, tensor<3xf32>
}
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    %a = tx8be.Constant
// CHECK-NEXT:    %y = tx8be.Add %x, %a
// CHECK-NEXT:    %n = tx8be.ChannelNorm %a {direction = true}
// CHECK-NEXT:    func.return %y, %n
