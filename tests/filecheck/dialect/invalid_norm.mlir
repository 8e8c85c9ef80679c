// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Ops that break their rules are rejected with a message naming the op and the rule.

func.func @bn_rank(%x: tensor<1x4x2x2x2xf32>, %p: tensor<4xf32>) -> tensor<1x4x2x2x2xf32> {
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p : (tensor<1x4x2x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2x2xf32>
  func.return %0 : tensor<1x4x2x2x2xf32>
}
// CHECK: 'tx8be.BatchNorm_Inference' op input must have rank 2, 3 or 4, got rank 5

// -----

func.func @bn_axis(%x: tensor<1x4x2x2xf32>, %p: tensor<4xf32>) -> tensor<1x4x2x2xf32> {
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p {axis = 4 : i64} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  func.return %0 : tensor<1x4x2x2xf32>
}
// CHECK: 'tx8be.BatchNorm_Inference' op axis 4 is out of range for an input of rank 4

// -----

func.func @bn_param_shape(%x: tensor<1x4x2x3xf32>, %p: tensor<4xf32>) -> tensor<1x4x2x3xf32> {
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p {axis = -1 : i64} : (tensor<1x4x2x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x3xf32>
  func.return %0 : tensor<1x4x2x3xf32>
}
// CHECK: 'tx8be.BatchNorm_Inference' op scale (operand #1) must have shape [3] (the input's dim 3), got [4]

// -----

func.func @bn_param_rank(%x: tensor<1x4x2x3xf32>, %p: tensor<1x4xf32>) -> tensor<1x4x2x3xf32> {
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p : (tensor<1x4x2x3xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4x2x3xf32>
  func.return %0 : tensor<1x4x2x3xf32>
}
// CHECK: 'tx8be.BatchNorm_Inference' op scale (operand #1) must have shape [4] (the input's dim 1), got [1, 4]

// -----

func.func @bn_param_dtype(%x: tensor<1x4x2x3xf16>, %p: tensor<4xbf16>) -> tensor<1x4x2x3xf16> {
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p : (tensor<1x4x2x3xf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>, tensor<4xbf16>) -> tensor<1x4x2x3xf16>
  func.return %0 : tensor<1x4x2x3xf16>
}
// CHECK: 'tx8be.BatchNorm_Inference' op scale, offset, mean and variance must share the input's element type (f16) or f32, got bf16, bf16, bf16, bf16

// -----

func.func @bn_epsilon(%x: tensor<1x4x2x3xf32>, %p: tensor<4xf32>) -> tensor<1x4x2x3xf32> {
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p {epsilon = -1.0 : f64} : (tensor<1x4x2x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x3xf32>
  func.return %0 : tensor<1x4x2x3xf32>
}
// CHECK: 'tx8be.BatchNorm_Inference' op epsilon must be non-negative, got -1.0

// -----

func.func @bn_input_dtype(%x: tensor<1x4x2x3xi32>, %p: tensor<4xf32>) -> tensor<1x4x2x3xi32> {
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p, %p : (tensor<1x4x2x3xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x3xi32>
  func.return %0 : tensor<1x4x2x3xi32>
}
// CHECK: 'tx8be.BatchNorm_Inference' op operand #0 has element type i32; this op accepts bf16, f16, f32

// -----

func.func @bn_operands(%x: tensor<1x4x2x3xf32>, %p: tensor<4xf32>) -> tensor<1x4x2x3xf32> {
  %0 = tx8be.BatchNorm_Inference %x, %p, %p, %p : (tensor<1x4x2x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x3xf32>
  func.return %0 : tensor<1x4x2x3xf32>
}
// CHECK: 'tx8be.BatchNorm_Inference' op expects 5 operand(s) (input, scale, offset, mean, variance), got 4

// -----

func.func @ln_axis(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tx8be.LayerNorm %x {axis = -4 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
// CHECK: 'tx8be.LayerNorm' op axis -4 is out of range for an input of rank 3

// -----

func.func @ln_scale(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tx8be.LayerNorm %x, %s : (tensor<2x3x4xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
// CHECK: 'tx8be.LayerNorm' op scale shape [3, 4] does not broadcast to the normalised shape [4] (input dims 2..)

// -----

func.func @ln_bias(%x: tensor<2x3x4xf32>, %s: tensor<3x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tx8be.LayerNorm %x, %s, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
// CHECK: 'tx8be.LayerNorm' op bias shape [2, 4] does not broadcast to the normalised shape [3, 4] (input dims 1..)

// -----

func.func @ln_epsilon(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tx8be.LayerNorm %x {epsilon = -1.0e-05 : f64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
// CHECK: 'tx8be.LayerNorm' op epsilon must be non-negative, got -1e-05

// -----

func.func @ln_result(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf16> {
  %0 = tx8be.LayerNorm %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf16>
  func.return %0 : tensor<2x3x4xf16>
}
// CHECK: 'tx8be.LayerNorm' op result #0 has type tensor<2x3x4xf16> but its operands and attributes give tensor<2x3x4xf32>

// -----

func.func @rms_scale(%x: tensor<2x3x4xf32>, %s: tensor<5xf32>) -> tensor<2x3x4xf32> {
  %0 = tx8be.RMSNorm %x, %s : (tensor<2x3x4xf32>, tensor<5xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
// CHECK: 'tx8be.RMSNorm' op scale shape [5] does not broadcast to the normalised shape [4] (input dims 2..)

// -----

func.func @rms_axis(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = tx8be.RMSNorm %x {axis = 3 : i64} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
// CHECK: 'tx8be.RMSNorm' op axis 3 is out of range for an input of rank 3

// -----

func.func @rms_operands(%x: tensor<2x3x4xf32>, %s: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = tx8be.RMSNorm %x, %s, %s : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
// CHECK: 'tx8be.RMSNorm' op expects 1 to 2 operand(s) (input, scale?), got 3

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = tx8be.Softmax %x {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
// CHECK: 'tx8be.Softmax' op axis 2 is out of range for an input of rank 2

// -----

func.func @softmax_dtype(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = tx8be.Softmax %x : (tensor<2x3xi32>) -> tensor<2x3xi32>
  func.return %0 : tensor<2x3xi32>
}
// CHECK: 'tx8be.Softmax' op operand #0 has element type i32; this op accepts bf16, f16, f32
