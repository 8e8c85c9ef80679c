// RUN: tx8c-opt %s --split-input-file -p group-optimization | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p group-optimization | tx8c-opt --split-input-file > /dev/null
//
// group-optimization (seed 003 GroupOptimizationPass, createSingleGroup): every compute op
// not in a group gets its own; its constant sources (LoadConst, and Constant before
// move-constant) move inside as dependencies, other producers' results become inputs;
// every group, pattern groups included, is numbered in block order.

// The seed's example: a Conv reading the output of a Relu, a LoadConst weight and a
// Constant bias. The LoadConst and the Constant move into the Conv's group in front of
// it; the Relu's result is the group's input.
func.func @create_single_group(%x: tensor<1x4x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %r = tx8be.Relu %x : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %w = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<8x4x1x1xf32>
  %b = tx8be.Constant {value = dense<1.0> : tensor<8xf32>} : () -> tensor<8xf32>
  %c = tx8be.Conv %r, %w, %b : (tensor<1x4x6x6xf32>, tensor<8x4x1x1xf32>, tensor<8xf32>) -> tensor<1x8x6x6xf32>
  func.return %c : tensor<1x8x6x6xf32>
}
// CHECK-LABEL: func.func @create_single_group
// CHECK-NEXT:    %r = tx8be.Group(%x) {group_id = 0 : i64}
// CHECK-NEXT:    ^bb0(%x_1: tensor<1x4x6x6xf32>):
// CHECK-NEXT:      %r_1 = tx8be.Relu %x_1
// CHECK-NEXT:      tx8be.Yield %r_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %c = tx8be.Group(%r) {group_id = 1 : i64}
// CHECK-NEXT:    ^bb0(%r_1: tensor<1x4x6x6xf32>):
// CHECK-NEXT:      %w = tx8be.LoadConst {const_id = 0 : i64}
// CHECK-NEXT:      %b = tx8be.Constant
// CHECK-NEXT:      %c_1 = tx8be.Conv %r_1, %w, %b
// CHECK-NEXT:      tx8be.Yield %c_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %c

// -----

// A constant read by two ops (before move-constant gives every use its own LoadConst):
// each group gets its own copy. A multi-result op (Split) is one group with two
// outputs. A group already there keeps its ops and is numbered with the new ones.
func.func @shared_constant_and_existing_group(%x: tensor<1x4x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %k = tx8be.Constant {value = dense<2.0> : tensor<1x4x2x2xf32>} : () -> tensor<1x4x2x2xf32>
  %e = tx8be.Group(%x) : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32> {
  ^bb0(%y: tensor<1x4x2x2xf32>):
    %n = tx8be.Neg %y : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
    tx8be.Yield %n : tensor<1x4x2x2xf32>
  }
  %m = tx8be.Mul %e, %k : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %a = tx8be.Add %m, %k : (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %s0, %s1 = tx8be.Split %a {axis = 1 : i64, split = array<i64: 2, 2>} : (tensor<1x4x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
  func.return %s0, %s1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}
// CHECK-LABEL: func.func @shared_constant_and_existing_group
// CHECK-NEXT:    %e = tx8be.Group(%x) {group_id = 0 : i64}
// CHECK-NEXT:    ^bb0(%y: tensor<1x4x2x2xf32>):
// CHECK-NEXT:      tx8be.Neg
// CHECK-NEXT:      tx8be.Yield
// CHECK-NEXT:    }
// CHECK-NEXT:    %m = tx8be.Group(%e) {group_id = 1 : i64}
// CHECK-NEXT:    ^bb0(%e_1: tensor<1x4x2x2xf32>):
// CHECK-NEXT:      %k = tx8be.Constant
// CHECK-NEXT:      %m_1 = tx8be.Mul %e_1, %k
// CHECK-NEXT:      tx8be.Yield %m_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %a = tx8be.Group(%m) {group_id = 2 : i64}
// CHECK-NEXT:    ^bb0(%m_1: tensor<1x4x2x2xf32>):
// CHECK-NEXT:      %k = tx8be.Constant
// CHECK-NEXT:      %a_1 = tx8be.Add %m_1, %k
// CHECK-NEXT:      tx8be.Yield %a_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %s0, %s1 = tx8be.Group(%a) {group_id = 3 : i64}
// CHECK-NEXT:    ^bb0(%a_1: tensor<1x4x2x2xf32>):
// CHECK-NEXT:      %s0_1, %s1_1 = tx8be.Split %a_1
// CHECK-NEXT:      tx8be.Yield %s0_1, %s1_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %s0, %s1
// CHECK-NOT:     tx8be.Constant
