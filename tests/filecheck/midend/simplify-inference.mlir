// RUN: tx8c-opt %s -p simplify-inference | filecheck %s
// simplify-inference turns BatchNorm_Inference into scale and shift: folded into the Conv
// before it when that Conv feeds it alone, else a Mul and an Add by per-channel constants
// (computed by ops when the parameters are not constants).

// scale = gamma / sqrt(var + eps) = [2, 0.5], shift = beta - mean * scale = [1, -1]:
// W * scale per output channel, bias = shift (the conv had none). Nothing else is left.
// CHECK-LABEL: func.func @fold_into_conv
// CHECK-NEXT:    %0 = tx8be.Constant {value = dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}4.000000e+00]]], {{\[\[\[}}1.500000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
// CHECK-NEXT:    %1 = tx8be.Constant {value = dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK-NEXT:    %bn = tx8be.Conv %x, %0, %1 : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %bn :
func.func @fold_into_conv(%x: tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = tx8be.Constant {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %c = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %gamma = tx8be.Constant {value = dense<[4.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %beta = tx8be.Constant {value = dense<[3.0, -1.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = tx8be.Constant {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = tx8be.Constant {value = dense<[4.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %bn = tx8be.BatchNorm_Inference %c, %gamma, %beta, %mean, %var {epsilon = 0.0 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %bn : tensor<1x2x3x3xf32>
}

// The conv's result is also returned: folding would change it, so the BatchNorm becomes
// a Mul and an Add by constants shaped [1, C, 1, 1], and the conv stays as it was.
// CHECK-LABEL: func.func @conv_has_another_user
// CHECK:         %c = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %0 = tx8be.Constant {value = dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}5.000000e-01]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
// CHECK-NEXT:    %1 = tx8be.Constant {value = dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}-1.000000e+00]]]]> : tensor<1x2x1x1xf32>} : () -> tensor<1x2x1x1xf32>
// CHECK-NEXT:    %2 = tx8be.Mul %c, %0 : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    %bn = tx8be.Add %2, %1 : (tensor<1x2x3x3xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x3x3xf32>
// CHECK-NEXT:    func.return %bn, %c
func.func @conv_has_another_user(%x: tensor<1x2x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = tx8be.Constant {value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>} : () -> tensor<2x2x1x1xf32>
  %c = tx8be.Conv %x, %w : (tensor<1x2x3x3xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %gamma = tx8be.Constant {value = dense<[4.0, 1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %beta = tx8be.Constant {value = dense<[3.0, -1.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %mean = tx8be.Constant {value = dense<[1.0, -1.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %var = tx8be.Constant {value = dense<[4.0, 4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %bn = tx8be.BatchNorm_Inference %c, %gamma, %beta, %mean, %var {epsilon = 0.0 : f64} : (tensor<1x2x3x3xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x3x3xf32>
  func.return %bn, %c : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// Parameters known only at run time: scale and shift are computed by ops, reshaped to
// broadcast along axis 1 and cast from the f32 parameters to the f16 data.
// CHECK-LABEL: func.func @runtime_parameters
// CHECK-NEXT:    %0 = tx8be.Constant {value = dense<1.000000e-05> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %1 = tx8be.Add %var, %0 : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT:    %2 = tx8be.Rsqrt %1 : (tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %3 = tx8be.Mul %2, %gamma : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %4 = tx8be.Mul %mean, %3 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %5 = tx8be.Sub %beta, %4 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %6 = tx8be.Reshape %3 {shape = array<i64: 1, 3>} : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %7 = tx8be.Cast %6 {to = "f16"} : (tensor<1x3xf32>) -> tensor<1x3xf16>
// CHECK-NEXT:    %8 = tx8be.Reshape %5 {shape = array<i64: 1, 3>} : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT:    %9 = tx8be.Cast %8 {to = "f16"} : (tensor<1x3xf32>) -> tensor<1x3xf16>
// CHECK-NEXT:    %10 = tx8be.Mul %x, %7 : (tensor<4x3xf16>, tensor<1x3xf16>) -> tensor<4x3xf16>
// CHECK-NEXT:    %bn = tx8be.Add %10, %9 : (tensor<4x3xf16>, tensor<1x3xf16>) -> tensor<4x3xf16>
// CHECK-NEXT:    func.return %bn :
func.func @runtime_parameters(%x: tensor<4x3xf16>, %gamma: tensor<3xf32>, %beta: tensor<3xf32>, %mean: tensor<3xf32>, %var: tensor<3xf32>) -> tensor<4x3xf16> {
  %bn = tx8be.BatchNorm_Inference %x, %gamma, %beta, %mean, %var : (tensor<4x3xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3xf16>
  func.return %bn : tensor<4x3xf16>
}
