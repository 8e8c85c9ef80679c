// RUN: tx8c-opt %s --split-input-file -p layout-align-opt | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p layout-align-opt | tx8c-opt --split-input-file > /dev/null
//
// Each rewrite of layout-align-opt (seed 003 LayoutAlignOptPass) on a small graph.

// ConstChannelNormErase: a constant read only through a ChannelNorm is stored in the
// ChannelNorm's layout (here Cx) and read directly. Rank 1 as in the seed.
func.func @const_single(%x: tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32> {
  %c = tx8be.Constant {value = dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>} : () -> tensor<5xf32>
  %n = tx8be.ChannelNorm %c {direction = true} : (tensor<5xf32>) -> tensor<5xf32>
  %a = tx8be.Add %x, %n : (tensor<1x4x4x5xf32>, tensor<5xf32>) -> tensor<1x4x4x5xf32>
  func.return %a : tensor<1x4x4x5xf32>
}
// CHECK:      "layout-align-opt" = {inverse_erased = 0 : i64, redundant_erased = 0 : i64, const_folded = 1 : i64, channel_norms = 0 : i64, channel_norm_bytes = 0 : i64}
// CHECK:      %c = tx8be.Constant {{.*}}dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK-NEXT: %a = tx8be.Add %x, %c
// CHECK-NOT:  ChannelNorm
// CHECK:      func.return %a

// -----

// Generalised: a constant of any rank that other ops read as it is gets a copy stored in
// the ChannelNorm's layout; the original keeps its own (here Tensor).
func.func @const_shared(%x: tensor<1x4x4x5xf32>) -> (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) {
  %c = tx8be.Constant {value = dense<2.0> : tensor<1x4x4x5xf32>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : () -> tensor<1x4x4x5xf32>
  %n = tx8be.ChannelNorm %c {direction = true} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %t = tx8be.Transpose %n {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %a = tx8be.Add %x, %c : (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  func.return %t, %a : tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>
}
// CHECK:      const_folded = 1 : i64, channel_norms = 0 : i64
// CHECK:      %c = tx8be.Constant {{.*}}mem_layout = Tensor,
// CHECK-NEXT: %[[COPY:.*]] = tx8be.Constant {value = dense<2.000000e+00> : tensor<1x4x4x5xf32>, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK-NEXT: %t = tx8be.Transpose %[[COPY]]
// CHECK-NEXT: %a = tx8be.Add %x, %c

// -----

// RedundantChannelNormErase: two ChannelNorms of one value and direction become one; the
// one in the other direction stays.
func.func @redundant(%x: tensor<1x4x4x5xf32>) -> (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) {
  %n1 = tx8be.ChannelNorm %x {direction = true} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %t1 = tx8be.Transpose %n1 {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %n2 = tx8be.ChannelNorm %x {direction = true} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %t2 = tx8be.Transpose %n2 {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %b1 = tx8be.ChannelNorm %t1 {direction = false} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %b2 = tx8be.ChannelNorm %t2 {direction = false} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %o = tx8be.ChannelNorm %x {direction = false} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  func.return %b1, %b2, %o : tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>
}
// CHECK:      redundant_erased = 1 : i64, const_folded = 0 : i64, channel_norms = 4 : i64, channel_norm_bytes = 1472 : i64
// CHECK:      %n1 = tx8be.ChannelNorm %x {direction = true}
// CHECK-NEXT: %t1 = tx8be.Transpose %n1
// CHECK-NEXT: %t2 = tx8be.Transpose %n1
// CHECK-NEXT: %b1 = tx8be.ChannelNorm %t1 {direction = false}
// CHECK-NEXT: %b2 = tx8be.ChannelNorm %t2 {direction = false}
// CHECK-NEXT: %o = tx8be.ChannelNorm %x {direction = false}
// CHECK-NEXT: func.return %b1, %b2, %o

// -----

// A ChannelNorm of its inverse reads the original value: both go when nothing else reads
// the inner one (%i1, %o1); the inner one stays when another op reads it (%i2).
func.func @inverse(%x: tensor<1x4x4x5xf32>, %y: tensor<1x4x4x5xf32>) -> (tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>) {
  %i1 = tx8be.ChannelNorm %x {direction = true} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %o1 = tx8be.ChannelNorm %i1 {direction = false} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %r = tx8be.Relu %o1 : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %i2 = tx8be.ChannelNorm %y {direction = true} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %t = tx8be.Transpose %i2 {perm = array<i64: 0, 1, 2, 3>} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %o2 = tx8be.ChannelNorm %i2 {direction = false} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  %b = tx8be.ChannelNorm %t {direction = false} : (tensor<1x4x4x5xf32>) -> tensor<1x4x4x5xf32>
  func.return %r, %o2, %b : tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>, tensor<1x4x4x5xf32>
}
// CHECK:      inverse_erased = 3 : i64, redundant_erased = 0 : i64, const_folded = 0 : i64, channel_norms = 2 : i64, channel_norm_bytes = 832 : i64
// CHECK:      func.func @inverse
// CHECK-NEXT: %r = tx8be.Relu %x
// CHECK-NEXT: %i2 = tx8be.ChannelNorm %y {direction = true}
// CHECK-NEXT: %t = tx8be.Transpose %i2
// CHECK-NEXT: %b = tx8be.ChannelNorm %t {direction = false}
// CHECK-NEXT: func.return %r, %y, %b
