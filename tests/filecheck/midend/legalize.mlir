// RUN: tx8c-opt %s -p legalize | filecheck %s
// legalize rewrites the ops the TX8 op library has no kernel for (Gelu, HardSwish, Silu)
// into ops it has, and puts a Sub or Div by a constant into its Add / Mul form.

// CHECK-LABEL: func.func @gelu
// CHECK-NEXT:    %0 = tx8be.Constant {value = dense<0.707106769> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %1 = tx8be.Mul %x, %0 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %2 = tx8be.Erf %1 : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %3 = tx8be.Constant {value = dense<5.000000e-01> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %4 = tx8be.Mul %x, %3 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %5 = tx8be.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %6 = tx8be.Add %2, %5 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
// CHECK-NEXT:    %7 = tx8be.Mul %4, %6 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %7
func.func @gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tx8be.Gelu %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @gelu_tanh
// CHECK-NOT:     tx8be.Gelu
// CHECK:         tx8be.Tanh
// CHECK-NOT:     tx8be.Gelu
func.func @gelu_tanh(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tx8be.Gelu %x {approximate = "tanh"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// HardSigmoid has a kernel, so HardSwish becomes x * HardSigmoid(x, 1/6, 1/2).
// CHECK-LABEL: func.func @hard_swish
// CHECK-NEXT:    %0 = tx8be.HardSigmoid %x {alpha = 0.16666666666666666 : f64} : (tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    %1 = tx8be.Mul %x, %0 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
// CHECK-NEXT:    func.return %1
func.func @hard_swish(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = tx8be.HardSwish %x : (tensor<4xf16>) -> tensor<4xf16>
  func.return %0 : tensor<4xf16>
}

// CHECK-LABEL: func.func @silu
// CHECK-NEXT:    %0 = tx8be.Sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %1 = tx8be.Mul %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
func.func @silu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tx8be.Silu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// The constant the Sub / Div used is erased once nothing uses it.
// CHECK-LABEL: func.func @sub_div_constant
// CHECK-NEXT:    %0 = tx8be.Constant {value = dense<[-1.000000e+00, 2.000000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK-NEXT:    %1 = tx8be.Add %x, %0 : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    %2 = tx8be.Constant {value = dense<2.500000e-01> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %3 = tx8be.Mul %1, %2 : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
// CHECK-NEXT:    func.return %3
func.func @sub_div_constant(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %c = tx8be.Constant {value = dense<[1.0, -2.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %0 = tx8be.Sub %x, %c : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %four = tx8be.Constant {value = dense<4.0> : tensor<f32>} : () -> tensor<f32>
  %1 = tx8be.Div %0, %four : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}

// Left alone: integer division (it truncates), division by a run-time value, a constant
// minus a value, and ops that have kernels.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    %c = tx8be.Constant {value = dense<3> : tensor<i32>} : () -> tensor<i32>
// CHECK-NEXT:    %0 = tx8be.Div %i, %c : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
// CHECK-NEXT:    %1 = tx8be.Div %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %one = tx8be.Constant {value = dense<1.000000e+00> : tensor<f32>} : () -> tensor<f32>
// CHECK-NEXT:    %2 = tx8be.Sub %one, %1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %3 = tx8be.Erf %2 : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %4 = tx8be.HardSigmoid %3 : (tensor<4xf32>) -> tensor<4xf32>
func.func @untouched(%i: tensor<4xi32>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>) {
  %c = tx8be.Constant {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %0 = tx8be.Div %i, %c : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %1 = tx8be.Div %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %one = tx8be.Constant {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %2 = tx8be.Sub %one, %1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = tx8be.Erf %2 : (tensor<4xf32>) -> tensor<4xf32>
  %4 = tx8be.HardSigmoid %3 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0, %4 : tensor<4xi32>, tensor<4xf32>
}
