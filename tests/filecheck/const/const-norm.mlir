// RUN: tx8c-opt %s --split-input-file -p const-norm | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p const-norm | tx8c-opt --split-input-file > /dev/null
//
// const-norm (seed 003 constNormPass: constChannelNormErase and processMultiUse) on
// modules after move-constant: their constants are in the tx8c.constants container.

// A LoadConst whose only user is a ChannelNorm: the ChannelNorm goes, its readers read the
// LoadConst, and the constant is stored in the layout the ChannelNorm wrote (Cx).
builtin.module attributes {tx8c.constants = [{id = 0 : i64, mem_layout = "Tensor", chips = array<i64: -1>, value = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>}]} {
  func.func @single(%x: tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32> {
    %c = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<5xf32>
    %n = tx8be.ChannelNorm %c {direction = true} : (tensor<5xf32>) -> tensor<5xf32>
    %a = tx8be.Add %x, %n : (tensor<1x4x4x5xf32>, tensor<5xf32>) -> tensor<1x4x4x5xf32>
    func.return %a : tensor<1x4x4x5xf32>
  }
}
// CHECK:      tx8c.constants = [{id = 0 : i64, mem_layout = "Cx", chips = array<i64: -1>, value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<5xf32>}]
// CHECK-SAME: "const-norm" = {channel_norms_folded = 1 : i64, folded_bytes = 32 : i64, multi_layout_ids = 0 : i64, copies = 0 : i64, copy_bytes = 0 : i64, ids = 1 : i64}
// CHECK:      %c = tx8be.LoadConst {const_id = 0 : i64, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK-NEXT: %a = tx8be.Add %x, %c
// CHECK-NOT:  ChannelNorm

// -----

// processMultiUse: one id read through a ChannelNorm (aligned after the fold) and directly
// by a compact reader. The id takes the aligned layout (the seed prefers it); the compact
// reader gets a second stored copy in its own layout (id 1). A LoadConst feeding a
// Gather (bypass_codegen) keeps its flag.
builtin.module attributes {tx8c.constants = [{id = 0 : i64, mem_layout = "Tensor", chips = array<i64: -1>, value = dense<2.0> : tensor<1x4x4x5xf32>}]} {
  func.func @mixed(%x: tensor<1x4x4x5xf32>, %i: tensor<2xi64>) -> (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>, tensor<2x4x4x5xf32>) {
    %c1 = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<1x4x4x5xf32>
    %n = tx8be.ChannelNorm %c1 {direction = true} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
    %t = tx8be.Transpose %n {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
    %c2 = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<1x4x4x5xf32>
    %a = tx8be.Add %x, %c2 : (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
    %c3 = tx8be.LoadConst {const_id = 0 : i64, bypass_codegen = true} : () -> tensor<1x4x4x5xf32>
    %g = tx8be.Gather %c3, %i {axis = 0 : i64} : (tensor<1x4x4x5xf32>, tensor<2xi64>) -> tensor<2x4x4x5xf32>
    func.return %t, %a, %g : tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>, tensor<2x4x4x5xf32>
  }
}
// CHECK:      tx8c.constants = [{id = 0 : i64, mem_layout = "Cx", chips = array<i64: -1>, value = dense<2.000000e+00> : tensor<1x4x4x5xf32>}, {id = 1 : i64, mem_layout = "Tensor", chips = array<i64: -1>, value = dense<2.000000e+00> : tensor<1x4x4x5xf32>}]
// CHECK-SAME: "const-norm" = {channel_norms_folded = 1 : i64, folded_bytes = 512 : i64, multi_layout_ids = 1 : i64, copies = 1 : i64, copy_bytes = 320 : i64, ids = 2 : i64}
// CHECK:      %c1 = tx8be.LoadConst {const_id = 0 : i64, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK-NEXT: %t = tx8be.Transpose %c1
// CHECK-NEXT: %c2 = tx8be.LoadConst {const_id = 1 : i64} : () -> tensor<1x4x4x5xf32>
// CHECK-NEXT: %a = tx8be.Add %x, %c2
// CHECK-NEXT: %c3 = tx8be.LoadConst {const_id = 1 : i64, bypass_codegen = true}
// CHECK-NEXT: %g = tx8be.Gather %c3, %i

// -----

// Not the pattern: a LoadConst read by a ChannelNorm and by another op keeps the
// ChannelNorm (the seed folds only a ChannelNorm that is the only user).
builtin.module attributes {tx8c.constants = [{id = 0 : i64, mem_layout = "Tensor", chips = array<i64: -1>, value = dense<1.0> : tensor<1x4x4x5xf32>}]} {
  func.func @shared(%x: tensor<1x4x4x5xf32>) -> (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) {
    %c = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<1x4x4x5xf32>
    %n = tx8be.ChannelNorm %c {direction = true} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
    %a = tx8be.Add %x, %c : (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
    func.return %n, %a : tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>
  }
}
// CHECK:      "const-norm" = {channel_norms_folded = 0 : i64
// CHECK:      %n = tx8be.ChannelNorm %c {direction = true}

// -----

// The seed's flow end to end: the layout passes left a ChannelNorm on a constant (here by
// hand), move-constant makes a LoadConst per use, const-norm folds the ChannelNorm into
// the stored constant.
// RUN: tx8c-opt %s --split-input-file -p move-constant,const-norm | filecheck %s --check-prefix=FLOW
func.func @flow(%x: tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32> {
  %c = tx8be.Constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>} : () -> tensor<5xf32>
  %n = tx8be.ChannelNorm %c {direction = true} : (tensor<5xf32>) -> tensor<5xf32>
  %a = tx8be.Add %x, %n : (tensor<1x4x4x5xf32>, tensor<5xf32>) -> tensor<1x4x4x5xf32>
  func.return %a : tensor<1x4x4x5xf32>
}
// FLOW:      func.func @flow
// FLOW-NEXT: %[[L:.*]] = tx8be.LoadConst {const_id = 0 : i64, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// FLOW-NEXT: %a = tx8be.Add %x, %[[L]]
