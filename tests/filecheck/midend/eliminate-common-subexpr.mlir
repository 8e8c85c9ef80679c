// RUN: tx8c-opt %s -p eliminate-common-subexpr | filecheck %s
// eliminate-common-subexpr: same op, same attributes, same operands in the same order ->
// the first one is reused. Equal Constants (same type, same bits, splat or not) merge
// first, so the ops reading them merge too, in one walk.

func.func @dup(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>) {
  %one = tx8be.Constant {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %ones = tx8be.Constant {value = dense<[1.0, 1.0, 1.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %a = tx8be.Add %x, %one : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %b = tx8be.Add %x, %ones : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %ra = tx8be.Relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %rb = tx8be.Relu %b : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %ta = tx8be.Transpose %ra {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %tb = tx8be.Transpose %rb {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %g = tx8be.Gemm %ta, %tb {trans_b = true} : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x3xf32>
  func.return %ra, %rb, %tb : tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>
}
// CHECK-LABEL: func.func @dup
// CHECK-NEXT:    %one = tx8be.Constant {value = dense<1.000000e+00> : tensor<3xf32>}
// CHECK-NEXT:    %a = tx8be.Add %x, %one
// CHECK-NEXT:    %ra = tx8be.Relu %a
// CHECK-NEXT:    %ta = tx8be.Transpose %ra {perm = array<i64: 1, 0>}
// CHECK-NEXT:    %g = tx8be.Gemm %ta, %ta {trans_b = true}
// CHECK-NEXT:    func.return %ra, %ra, %ta

// Not merged: different attributes, operands in another order, different constant types
// or bits (0.0 and -0.0).
func.func @distinct(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>)
    -> (tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>, tensor<f16>) {
  %c16 = tx8be.Cast %x {to = "f16"} : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %cbf = tx8be.Cast %x {to = "bf16"} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %s1 = tx8be.Sub %x, %y : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s2 = tx8be.Sub %y, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = tx8be.Constant {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %nz = tx8be.Constant {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %zh = tx8be.Constant {value = dense<0.0> : tensor<f16>} : () -> tensor<f16>
  func.return %c16, %cbf, %s1, %s2, %z, %nz, %zh : tensor<2x3xf16>, tensor<2x3xbf16>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>, tensor<f32>, tensor<f16>
}
// CHECK-LABEL: func.func @distinct
// CHECK-NEXT:    %c16 = tx8be.Cast %x {to = "f16"}
// CHECK-NEXT:    %cbf = tx8be.Cast %x {to = "bf16"}
// CHECK-NEXT:    %s1 = tx8be.Sub %x, %y
// CHECK-NEXT:    %s2 = tx8be.Sub %y, %x
// CHECK-NEXT:    %z = tx8be.Constant {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %nz = tx8be.Constant {value = dense<-0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %zh = tx8be.Constant {value = dense<0.000000e+00> : tensor<f16>}
// CHECK-NEXT:    func.return %c16, %cbf, %s1, %s2, %z, %nz, %zh

// Groups: the two identical groups stay two; inside a body, duplicates merge, but an op
// in a body is never merged with one outside it.
func.func @groups(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %r = tx8be.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  %g1 = tx8be.Group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r1 = tx8be.Relu %a : (tensor<4xf32>) -> tensor<4xf32>
    %r2 = tx8be.Relu %a : (tensor<4xf32>) -> tensor<4xf32>
    %s = tx8be.Add %r1, %r2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %s : tensor<4xf32>
  }
  %g2 = tx8be.Group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %r1 = tx8be.Relu %a : (tensor<4xf32>) -> tensor<4xf32>
    %r2 = tx8be.Relu %a : (tensor<4xf32>) -> tensor<4xf32>
    %s = tx8be.Add %r1, %r2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %s : tensor<4xf32>
  }
  func.return %r, %g1, %g2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @groups
// CHECK-NEXT:    %r = tx8be.Relu %x
// CHECK-NEXT:    %g1 = tx8be.Group(%x)
// CHECK-NEXT:    ^bb0(%a: tensor<4xf32>):
// CHECK-NEXT:      %r1 = tx8be.Relu %a
// CHECK-NEXT:      %s = tx8be.Add %r1, %r1
// CHECK-NEXT:      tx8be.Yield %s
// CHECK-NEXT:    }
// CHECK-NEXT:    %g2 = tx8be.Group(%x)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: tensor<4xf32>):
// CHECK-NEXT:      %[[R:.*]] = tx8be.Relu %[[A]]
// CHECK-NEXT:      %[[S:.*]] = tx8be.Add %[[R]], %[[R]]
// CHECK-NEXT:      tx8be.Yield %[[S]]
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r, %g1, %g2
