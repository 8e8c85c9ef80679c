// RUN: tx8c-opt %s -p canonicalize-op | filecheck %s
// RUN: tx8c-opt %s -p canonicalize-op,'canonicalize-op{bias-mode=fuse}' | filecheck %s --check-prefix=FUSE
// canonicalize-op (the seed's BiasAddSimplifier): a Conv or Gemm bias becomes an explicit
// Add whose second operand broadcasts along the channel ([C] -> [C, 1, 1] in NCHW), Gemm's
// beta is folded into a constant bias, and Add/Mul take their constant second.
// bias-mode=fuse is the reverse: it gives back the Conv and Gemm with their bias.

func.func @bias(%x: tensor<1x3x4x4xf32>, %a: tensor<2x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<2x5xf32>) {
  %w = tx8be.Constant {value = dense<0.5> : tensor<2x3x1x1xf32>} : () -> tensor<2x3x1x1xf32>
  %b = tx8be.Constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = tx8be.Conv %x, %w, %b : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %gw = tx8be.Constant {value = dense<0.25> : tensor<8x5xf32>} : () -> tensor<8x5xf32>
  %gb = tx8be.Constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>} : () -> tensor<5xf32>
  %g = tx8be.Gemm %a, %gw, %gb {beta = 0.5 : f64} : (tensor<2x8xf32>, tensor<8x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  func.return %c, %g : tensor<1x2x4x4xf32>, tensor<2x5xf32>
}
// CHECK-LABEL: func.func @bias
// CHECK-NEXT:    %w = tx8be.Constant
// CHECK-NEXT:    %[[B:.*]] = tx8be.Constant {value = dense<{{\[}}{{\[}}[1.000000e+00]], {{\[}}[2.000000e+00]]]> : tensor<2x1x1xf32>}
// CHECK-NEXT:    %[[C:.*]] = tx8be.Conv %x, %w : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %c = tx8be.Add %[[C]], %[[B]] : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %gw = tx8be.Constant
// CHECK-NEXT:    %[[GB:.*]] = tx8be.Constant {value = dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00, 2.500000e+00]> : tensor<5xf32>}
// CHECK-NEXT:    %[[G:.*]] = tx8be.Gemm %a, %gw : (tensor<2x8xf32>, tensor<8x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %g = tx8be.Add %[[G]], %[[GB]] : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    func.return %c, %g

// FUSE-LABEL: func.func @bias
// FUSE-NEXT:    %w = tx8be.Constant
// FUSE-NEXT:    %[[B:.*]] = tx8be.Constant {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// FUSE-NEXT:    %c = tx8be.Conv %x, %w, %[[B]] : (tensor<1x3x4x4xf32>, tensor<2x3x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
// FUSE-NEXT:    %gw = tx8be.Constant
// FUSE-NEXT:    %[[GB:.*]] = tx8be.Constant {value = dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00, 2.500000e+00]> : tensor<5xf32>}
// FUSE-NEXT:    %g = tx8be.Gemm %a, %gw, %[[GB]] : (tensor<2x8xf32>, tensor<8x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// FUSE-NEXT:    func.return %c, %g

// The exporter's Linear: Add(bias, MatMul) -> Add(MatMul, bias), the constant second.
// Sub does not commute and keeps its order; an Add of two run-time values is unchanged.
func.func @operands(%x: tensor<2x4xf32>, %w: tensor<4x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %m = tx8be.Gemm %x, %w : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %b = tx8be.Constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %y = tx8be.Add %b, %m : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = tx8be.Sub %b, %y : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = tx8be.Mul %y, %s : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y, %s, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
// CHECK-LABEL: func.func @operands
// CHECK-NEXT:    %m = tx8be.Gemm %x, %w
// CHECK-NEXT:    %b = tx8be.Constant
// CHECK-NEXT:    %y = tx8be.Add %m, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %s = tx8be.Sub %b, %y
// CHECK-NEXT:    %z = tx8be.Mul %y, %s

// In fuse mode the Gemm takes the bias back, since %m has no other user.
// FUSE-LABEL: func.func @operands
// FUSE-NEXT:    %b = tx8be.Constant
// FUSE-NEXT:    %y = tx8be.Gemm %x, %w, %b : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// FUSE-NEXT:    %s = tx8be.Sub %b, %y
