// RUN: tx8c-opt %s -p fold-scale-axis | filecheck %s
// fold-scale-axis folds a Mul by a per-channel constant into the weights of the Conv/Gemm
// next to it: backward (the Mul after the op scales its output channels) and forward (the
// Mul before the op scales its input channels).

// Backward, NHWC data and HWOI weights: the scale [2, 3] runs along C (the last axis) and
// scales the weight's O axis (axis 2) and the bias.
// CHECK-LABEL: func.func @backward_conv_nhwc
// CHECK-NEXT:    %0 = tx8be.Constant {value = dense<{{\[\[\[\[}}2.000000e+00], [3.000000e+00]]]]> : tensor<1x1x2x1xf32>} : () -> tensor<1x1x2x1xf32>
// CHECK-NEXT:    %1 = tx8be.Constant {value = dense<[2.000000e+00, -3.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK-NEXT:    %s = tx8be.Conv %x, %0, %1 {data_format = "NHWC", weight_format = "HWOI"} : (tensor<1x3x3x1xf32>, tensor<1x1x2x1xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
// CHECK-NEXT:    func.return %s
func.func @backward_conv_nhwc(%x: tensor<1x3x3x1xf32>) -> tensor<1x3x3x2xf32> {
  %w = tx8be.Constant {value = dense<[[[[1.0], [1.0]]]]> : tensor<1x1x2x1xf32>} : () -> tensor<1x1x2x1xf32>
  %b = tx8be.Constant {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %c = tx8be.Conv %x, %w, %b {data_format = "NHWC", weight_format = "HWOI"} : (tensor<1x3x3x1xf32>, tensor<1x1x2x1xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  %k = tx8be.Constant {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %s = tx8be.Mul %c, %k : (tensor<1x3x3x2xf32>, tensor<2xf32>) -> tensor<1x3x3x2xf32>
  func.return %s : tensor<1x3x3x2xf32>
}

// Forward into a grouped conv (2 groups of 1 channel): input channel c meets only the
// output channels of its group, so output channels 0-1 take 2 and 2-3 take 5.
// CHECK-LABEL: func.func @forward_grouped_conv
// CHECK-NEXT:    %0 = tx8be.Constant {value = dense<{{\[\[\[\[}}2.000000e+00]]], {{\[\[\[}}4.000000e+00]]], {{\[\[\[}}5.000000e+00]]], {{\[\[\[}}1.000000e+01]]]]> : tensor<4x1x1x1xf32>} : () -> tensor<4x1x1x1xf32>
// CHECK-NEXT:    %c = tx8be.Conv %x, %0 {groups = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    func.return %c
func.func @forward_grouped_conv(%x: tensor<1x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %k = tx8be.Constant {value = dense<[[[2.0]], [[5.0]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %s = tx8be.Mul %x, %k : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %w = tx8be.Constant {value = dense<[[[[1.0]]], [[[2.0]]], [[[1.0]]], [[[2.0]]]]> : tensor<4x1x1x1xf32>} : () -> tensor<4x1x1x1xf32>
  %c = tx8be.Conv %s, %w {groups = 2 : i64} : (tensor<1x2x3x3xf32>, tensor<4x1x1x1xf32>) -> tensor<1x4x3x3xf32>
  func.return %c : tensor<1x4x3x3xf32>
}

// Forward into every Gemm that reads the scaled value (scale along K: rows of B).
// CHECK-LABEL: func.func @forward_two_gemms
// CHECK-NEXT:    %0 = tx8be.Constant {value = dense<{{\[\[}}2.000000e+00], [-1.000000e+00]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
// CHECK-NEXT:    %g1 = tx8be.Gemm %a, %0 : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
// CHECK-NEXT:    %1 = tx8be.Constant {value = dense<{{\[\[}}4.000000e+00], [-2.000000e+00]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
// CHECK-NEXT:    %g2 = tx8be.Gemm %a, %1 : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
func.func @forward_two_gemms(%a: tensor<3x2xf32>) -> (tensor<3x1xf32>, tensor<3x1xf32>) {
  %k = tx8be.Constant {value = dense<[2.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %s = tx8be.Mul %k, %a : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %b1 = tx8be.Constant {value = dense<[[1.0], [1.0]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %g1 = tx8be.Gemm %s, %b1 : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %b2 = tx8be.Constant {value = dense<[[2.0], [2.0]]> : tensor<2x1xf32>} : () -> tensor<2x1xf32>
  %g2 = tx8be.Gemm %s, %b2 : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  func.return %g1, %g2 : tensor<3x1xf32>, tensor<3x1xf32>
}

// A scalar scale after a Gemm of two run-time values goes into alpha (and
// beta, when there is a bias).
// CHECK-LABEL: func.func @backward_gemm_alpha
// CHECK-NEXT:    %s = tx8be.Gemm %a, %b {alpha = 2.500000e-01 : f64} : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
// CHECK-NEXT:    func.return %s
func.func @backward_gemm_alpha(%a: tensor<2x4x4xf32>, %b: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %g = tx8be.Gemm %a, %b : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %k = tx8be.Constant {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %s = tx8be.Mul %g, %k : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  func.return %s : tensor<2x4x4xf32>
}

// Left alone: a scale varying along W (not a channel scale); a conv whose result is also
// returned; a scaled value that something other than a conv also reads.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    %w = tx8be.Constant
// CHECK-NEXT:    %c = tx8be.Conv %x, %w
// CHECK-NEXT:    %kw = tx8be.Constant
// CHECK-NEXT:    %s1 = tx8be.Mul %c, %kw
// CHECK-NEXT:    %c2 = tx8be.Conv %x, %w
// CHECK-NEXT:    %k = tx8be.Constant
// CHECK-NEXT:    %s2 = tx8be.Mul %c2, %k
// CHECK-NEXT:    %s3 = tx8be.Mul %x, %k
// CHECK-NEXT:    %c3 = tx8be.Conv %s3, %w
// CHECK-NEXT:    %r = tx8be.Relu %s3
func.func @untouched(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = tx8be.Constant {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %c = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %kw = tx8be.Constant {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> tensor<3xf32>
  %s1 = tx8be.Mul %c, %kw : (tensor<1x2x3x3xf32>, tensor<3xf32>) -> tensor<1x2x3x3xf32>
  %c2 = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %k = tx8be.Constant {value = dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>} : () -> tensor<2x1x1xf32>
  %s2 = tx8be.Mul %c2, %k : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %s3 = tx8be.Mul %x, %k : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %c3 = tx8be.Conv %s3, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %r = tx8be.Relu %s3 : (tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %s1, %c2, %s2, %c3, %r : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}
