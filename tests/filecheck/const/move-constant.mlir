// RUN: tx8c-opt %s --split-input-file -p move-constant | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p move-constant | tx8c-opt --split-input-file -p move-constant | filecheck %s --check-prefix=AGAIN
//
// move-constant (seed 003 MoveConstantPass / ConstantToLoadConst): every Constant goes
// into the module's ConstContainer (the attribute tx8c.constants, which carries the data
// through printing and parsing) and each use reads a LoadConst of its id.

// One LoadConst per use, right before its user. %w and %w2 hold the same data: one id
// (content hashing). The Gather reads its table from DDR itself (need_load bit 0 clear):
// its LoadConst is bypass_codegen. A Constant without users is erased.
func.func @uses(%x: tensor<2x3xf32>, %i: tensor<2xi64>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %w = tx8be.Constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %w2 = tx8be.Constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %dead = tx8be.Constant {value = dense<7.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %a = tx8be.Add %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = tx8be.Mul %a, %w2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %g = tx8be.Gather %w, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %m, %g : tensor<2x3xf32>, tensor<2x3xf32>
}
// CHECK:      tx8c.constants = [{id = 0 : i64, mem_layout = "NTensor", chips = array<i64: -1>, value = dense<{{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]> : tensor<2x3xf32>}]
// CHECK-SAME: "move-constant" = {constants = 2 : i64, dead_constants = 1 : i64, load_consts = 3 : i64, bypassed = 1 : i64, ids = 1 : i64, large = 0 : i64, dedup_hits = 1 : i64, dedup_saved_bytes = 24 : i64}
// CHECK:      func.func @uses
// CHECK-NEXT: %[[L0:.*]] = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<2x3xf32>
// CHECK-NEXT: %a = tx8be.Add %x, %[[L0]]
// CHECK-NEXT: %[[L1:.*]] = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<2x3xf32>
// CHECK-NEXT: %m = tx8be.Mul %a, %[[L1]]
// CHECK-NEXT: %[[L2:.*]] = tx8be.LoadConst {const_id = 0 : i64, bypass_codegen = true} : () -> tensor<2x3xf32>
// CHECK-NEXT: %g = tx8be.Gather %[[L2]], %i
// CHECK-NOT:  tx8be.Constant
// Running it again on its own output (the container read back) changes nothing.
// AGAIN:      tx8c.constants = [{id = 0 : i64, mem_layout = "NTensor"
// AGAIN-SAME: "move-constant" = {constants = 0 : i64, dead_constants = 0 : i64, load_consts = 0 : i64, bypassed = 0 : i64, ids = 1 : i64
// AGAIN:      tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<2x3xf32>

// -----

// The seed's order (updateConstContainer): constants larger than 4 KiB x 16 tiles (stored)
// get the first ids, small ones the next, each in order of first appearance. The Constant's
// dev_info (its stored layout) and layout_str go to its LoadConsts; the same data stored
// in two layouts is two entries.
func.func @order(%x: tensor<128x256xf32>, %y: tensor<1x5xf32>) -> (tensor<128x256xf32>, tensor<1x5xf32>, tensor<1x5xf32>) {
  %small = tx8be.Constant {value = dense<[[1.0, 2.0, 3.0, 4.0, 5.0]]> : tensor<1x5xf32>} : () -> tensor<1x5xf32>
  %cx = tx8be.Constant {value = dense<[[1.0, 2.0, 3.0, 4.0, 5.0]]> : tensor<1x5xf32>, layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : () -> tensor<1x5xf32>
  %big = tx8be.Constant {value = dense<0.5> : tensor<128x256xf32>} : () -> tensor<128x256xf32>
  %s = tx8be.Add %y, %small : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<1x5xf32>
  %c = tx8be.Add %y, %cx {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x5xf32>, tensor<1x5xf32>) -> tensor<1x5xf32>
  %b = tx8be.Add %x, %big : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x256xf32>
  func.return %b, %s, %c : tensor<128x256xf32>, tensor<1x5xf32>, tensor<1x5xf32>
}
// CHECK:      tx8c.constants = [{id = 0 : i64, mem_layout = "NTensor", chips = array<i64: -1>, value = dense<5.000000e-01> : tensor<128x256xf32>}, {id = 1 : i64, mem_layout = "Tensor", {{.*}}}, {id = 2 : i64, mem_layout = "Cx", {{.*}}}]
// CHECK-SAME: ids = 3 : i64, large = 1 : i64, dedup_hits = 0 : i64
// CHECK:      %[[S:.*]] = tx8be.LoadConst {const_id = 1 : i64} : () -> tensor<1x5xf32>
// CHECK-NEXT: %s = tx8be.Add %y, %[[S]]
// CHECK-NEXT: %[[C:.*]] = tx8be.LoadConst {const_id = 2 : i64, layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK-NEXT: %c = tx8be.Add %y, %[[C]]
// CHECK-NEXT: %[[B:.*]] = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<128x256xf32>
// CHECK-NEXT: %b = tx8be.Add %x, %[[B]]
