// RUN: tx8c-opt %s --split-input-file --verify-diagnostics | filecheck %s
// Indexing ops that break their rules are rejected with a message naming the op and the rule.

func.func @gather_axis(%d: tensor<4x6xf32>, %i: tensor<3xi64>) -> tensor<4x3xf32> {
  %0 = tx8be.Gather %d, %i {axis = 2 : i64} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: 'tx8be.Gather' op axis 2 is out of range for data of rank 2 (valid: -2..1)

// -----

func.func @gather_negative_axis(%d: tensor<4x6xf32>, %i: tensor<3xi64>) -> tensor<4x3xf32> {
  %0 = tx8be.Gather %d, %i {axis = -3 : i64} : (tensor<4x6xf32>, tensor<3xi64>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
// CHECK: 'tx8be.Gather' op axis -3 is out of range for data of rank 2 (valid: -2..1)

// -----

func.func @gather_float_indices(%d: tensor<4x6xf32>, %i: tensor<3xf32>) -> tensor<3x6xf32> {
  %0 = tx8be.Gather %d, %i : (tensor<4x6xf32>, tensor<3xf32>) -> tensor<3x6xf32>
  func.return %0 : tensor<3x6xf32>
}
// CHECK: 'tx8be.Gather' op indices (operand #1) must have element type i32 or i64, got f32

// -----

func.func @gather_i8_indices(%d: tensor<4x6xf32>, %i: tensor<3xi8>) -> tensor<3x6xf32> {
  %0 = tx8be.Gather %d, %i : (tensor<4x6xf32>, tensor<3xi8>) -> tensor<3x6xf32>
  func.return %0 : tensor<3x6xf32>
}
// CHECK: 'tx8be.Gather' op indices (operand #1) must have element type i32 or i64, got i8

// -----

func.func @gather_scalar_data(%d: tensor<f32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  %0 = tx8be.Gather %d, %i : (tensor<f32>, tensor<3xi64>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// CHECK: 'tx8be.Gather' op data (operand #0) must have rank >= 1, got a rank-0 tensor

// -----

func.func @gather_data_dtype(%d: tensor<4x6xf64>, %i: tensor<3xi64>) -> tensor<3x6xf64> {
  %0 = tx8be.Gather %d, %i : (tensor<4x6xf64>, tensor<3xi64>) -> tensor<3x6xf64>
  func.return %0 : tensor<3x6xf64>
}
// CHECK: 'tx8be.Gather' op operand #0 has element type f64; this op accepts bf16, f16, f32, i1, i32, i64, i8

// -----

func.func @gather_scalar_keeps_axis(%d: tensor<4x6xf32>, %i: tensor<i64>) -> tensor<4x1xf32> {
  %0 = tx8be.Gather %d, %i {axis = 1 : i64} : (tensor<4x6xf32>, tensor<i64>) -> tensor<4x1xf32>
  func.return %0 : tensor<4x1xf32>
}
// CHECK: 'tx8be.Gather' op result #0 has type tensor<4x1xf32> but its operands and attributes give tensor<4xf32>

// -----

func.func @gather_operands(%d: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.Gather %d : (tensor<4x6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.Gather' op expects 2 operand(s) (data, indices), got 1

// -----

func.func @gather_elements_rank(%d: tensor<4x6xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  %0 = tx8be.GatherElements %d, %i {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4xi64>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: 'tx8be.GatherElements' op indices must have the rank of data (2), got rank 1

// -----

func.func @gather_elements_off_axis(%d: tensor<4x6xf32>, %i: tensor<5x2xi64>) -> tensor<5x2xf32> {
  %0 = tx8be.GatherElements %d, %i {axis = 1 : i64} : (tensor<4x6xf32>, tensor<5x2xi64>) -> tensor<5x2xf32>
  func.return %0 : tensor<5x2xf32>
}
// CHECK: 'tx8be.GatherElements' op indices dimension 0 has size 5, larger than data's 4; only along axis 1 may indices be larger than data

// -----

func.func @gather_elements_axis(%d: tensor<4x6xf32>, %i: tensor<4x6xi64>) -> tensor<4x6xf32> {
  %0 = tx8be.GatherElements %d, %i {axis = -3 : i64} : (tensor<4x6xf32>, tensor<4x6xi64>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.GatherElements' op axis -3 is out of range for data of rank 2 (valid: -2..1)

// -----

func.func @gather_elements_indices_dtype(%d: tensor<4x6xf32>, %i: tensor<4x6xi1>) -> tensor<4x6xf32> {
  %0 = tx8be.GatherElements %d, %i : (tensor<4x6xf32>, tensor<4x6xi1>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.GatherElements' op indices (operand #1) must have element type i32 or i64, got i1

// -----

func.func @gather_elements_result(%d: tensor<4x6xf32>, %i: tensor<4x9xi64>) -> tensor<4x6xf32> {
  %0 = tx8be.GatherElements %d, %i {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x9xi64>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.GatherElements' op result #0 has type tensor<4x6xf32> but its operands and attributes give tensor<4x9xf32>

// -----

func.func @scatter_reduction(%d: tensor<4x6xf32>, %i: tensor<2x1xi64>, %u: tensor<2x6xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u {reduction = "sum"} : (tensor<4x6xf32>, tensor<2x1xi64>, tensor<2x6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.ScatterND' op reduction must be "none", "add", "mul", "max" or "min", got "sum"

// -----

func.func @scatter_bool_reduction(%d: tensor<4x6xi1>, %i: tensor<2x1xi64>, %u: tensor<2x6xi1>) -> tensor<4x6xi1> {
  %0 = tx8be.ScatterND %d, %i, %u {reduction = "add"} : (tensor<4x6xi1>, tensor<2x1xi64>, tensor<2x6xi1>) -> tensor<4x6xi1>
  func.return %0 : tensor<4x6xi1>
}
// CHECK: 'tx8be.ScatterND' op reduction "add" needs numeric data, got element type i1

// -----

func.func @scatter_depth(%d: tensor<4x6xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x6xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.ScatterND' op the last dimension of indices (3) must be between 1 and the rank of data (2)

// -----

func.func @scatter_empty_depth(%d: tensor<4x6xf32>, %i: tensor<2x0xi64>, %u: tensor<2x4x6xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x6xf32>, tensor<2x0xi64>, tensor<2x4x6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.ScatterND' op the last dimension of indices (0) must be between 1 and the rank of data (2)

// -----

func.func @scatter_scalar_indices(%d: tensor<4x6xf32>, %i: tensor<i64>, %u: tensor<6xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x6xf32>, tensor<i64>, tensor<6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.ScatterND' op indices (operand #1) must have rank >= 1, got a rank-0 tensor

// -----

func.func @scatter_scalar_data(%d: tensor<f32>, %i: tensor<1xi64>, %u: tensor<f32>) -> tensor<f32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<f32>, tensor<1xi64>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
// CHECK: 'tx8be.ScatterND' op data (operand #0) must have rank >= 1, got a rank-0 tensor

// -----

func.func @scatter_updates_shape(%d: tensor<4x5x6xf32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x5xf32>) -> tensor<4x5x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x5x6xf32>, tensor<2x3x2xi64>, tensor<2x3x5xf32>) -> tensor<4x5x6xf32>
  func.return %0 : tensor<4x5x6xf32>
}
// CHECK: 'tx8be.ScatterND' op updates must have shape indices.shape[:-1] + data.shape[2:] = [2, 3, 6], got [2, 3, 5]

// -----

func.func @scatter_updates_rank(%d: tensor<4x5x6xf32>, %i: tensor<2x1xi64>, %u: tensor<2x30xf32>) -> tensor<4x5x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x5x6xf32>, tensor<2x1xi64>, tensor<2x30xf32>) -> tensor<4x5x6xf32>
  func.return %0 : tensor<4x5x6xf32>
}
// CHECK: 'tx8be.ScatterND' op updates must have shape indices.shape[:-1] + data.shape[1:] = [2, 5, 6], got [2, 30]

// -----

func.func @scatter_mixed_dtypes(%d: tensor<4x6xf32>, %i: tensor<2x1xi64>, %u: tensor<2x6xf16>) -> tensor<4x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x6xf32>, tensor<2x1xi64>, tensor<2x6xf16>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.ScatterND' op operands [0, 2] must share one element type, got f32, f16

// -----

func.func @scatter_indices_dtype(%d: tensor<4x6xf32>, %i: tensor<2x1xf32>, %u: tensor<2x6xf32>) -> tensor<4x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x6xf32>, tensor<2x1xf32>, tensor<2x6xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.ScatterND' op indices (operand #1) must have element type i32 or i64, got f32

// -----

func.func @scatter_result(%d: tensor<4x6xf32>, %i: tensor<2x1xi64>, %u: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = tx8be.ScatterND %d, %i, %u : (tensor<4x6xf32>, tensor<2x1xi64>, tensor<2x6xf32>) -> tensor<2x6xf32>
  func.return %0 : tensor<2x6xf32>
}
// CHECK: 'tx8be.ScatterND' op result #0 has type tensor<2x6xf32> but its operands and attributes give tensor<4x6xf32>

// -----

func.func @scatter_operands(%d: tensor<4x6xf32>, %i: tensor<2x1xi64>) -> tensor<4x6xf32> {
  %0 = tx8be.ScatterND %d, %i : (tensor<4x6xf32>, tensor<2x1xi64>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}
// CHECK: 'tx8be.ScatterND' op expects 3 operand(s) (data, indices, updates), got 2
