// RUN: tx8c-opt %s --split-input-file -p group-ldst | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p group-ldst,group-ldst | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p group-ldst | tx8c-opt --split-input-file > /dev/null
//
// group-ldst (seed 003 GroupLdStPass): one LoadVar per group input that an op reads in
// SPM (need_load), shared by its readers, at the top of the body; one StoreVar per
// output produced in SPM (need_store) before the Yield; group_tag 0 when the group
// loads or stores, 2 when it does not. Running it twice changes nothing.

// %x is read by the Mul twice and by the Add: one LoadVar for all three uses. The
// table %t of the Gather stays in DDR (Gather clears need_load bit 0): no LoadVar. The
// two results leave through StoreVars; a LoadConst needs no LoadVar.
func.func @loads_and_stores(%x: tensor<2x3xf32>, %t: tensor<5x3xf32>, %i: tensor<2xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %m, %g = tx8be.Group(%x, %t, %i) : (tensor<2x3xf32>, tensor<5x3xf32>, tensor<2xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<5x3xf32>, %c: tensor<2xi32>):
    %k = tx8be.LoadConst {const_id = 0 : i64} : () -> tensor<2x3xf32>
    %sq = tx8be.Mul %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %s = tx8be.Add %sq, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %p = tx8be.Mul %s, %k : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %gg = tx8be.Gather %b, %c : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
    tx8be.Yield %p, %gg : tensor<2x3xf32>, tensor<2x3xf32>
  }
  func.return %m, %g : tensor<2x3xf32>, tensor<2x3xf32>
}
// CHECK-LABEL: func.func @loads_and_stores
// CHECK:         tx8be.Group(%x, %t, %i) {group_tag = 0 : i64}
// CHECK-NEXT:    ^bb0(%a: tensor<2x3xf32>, %b: tensor<5x3xf32>, %c: tensor<2xi32>):
// CHECK-NEXT:      %[[LA:.*]] = tx8be.LoadVar %a {dev_info = #tx8be.dev<imm_size = 0, mem_layout = NTensor,
// CHECK-NEXT:      %[[LC:.*]] = tx8be.LoadVar %c {
// CHECK-NEXT:      %k = tx8be.LoadConst
// CHECK-NEXT:      %sq = tx8be.Mul %[[LA]], %[[LA]]
// CHECK-NEXT:      %s = tx8be.Add %sq, %[[LA]]
// CHECK-NEXT:      %p = tx8be.Mul %s, %k
// CHECK-NEXT:      %gg = tx8be.Gather %b, %[[LC]]
// CHECK-NEXT:      %[[SP:.*]] = tx8be.StoreVar %p
// CHECK-NEXT:      %[[SG:.*]] = tx8be.StoreVar %gg
// CHECK-NEXT:      tx8be.Yield %[[SP]], %[[SG]]
// CHECK-NOT:     LoadVar
// CHECK:         func.return

// -----

// LoadVar and StoreVar keep the bytes as they are: each gets the layout its value is
// stored in (graph inputs are compact: NTensor, Tensor). The channel-aligned (Cx)
// rank-1 vector and the NCx feature map produced by the first group are loaded as Cx
// and NCx by the second (the seed's rule for a binary op with a rank-1 operand: load it
// as Cx); the second group's result is stored NCx.
func.func @layouts(%x: tensor<2x4x3x3xf32>, %v: tensor<3xf32>) -> tensor<2x4x3x3xf32> {
  %f, %w = tx8be.Group(%x, %v) : (tensor<2x4x3x3xf32>, tensor<3xf32>) -> (tensor<2x4x3x3xf32>, tensor<3xf32>) {
  ^bb0(%a: tensor<2x4x3x3xf32>, %b: tensor<3xf32>):
    %n = tx8be.ChannelNorm %a {direction = true, dev_info = #tx8be.dev<imm_size = 0, mem_layout = NCx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32>
    %u = tx8be.ChannelNorm %b {direction = true, dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<3xf32>) -> tensor<3xf32>
    tx8be.Yield %n, %u : tensor<2x4x3x3xf32>, tensor<3xf32>
  }
  %y = tx8be.Group(%f, %w) : (tensor<2x4x3x3xf32>, tensor<3xf32>) -> tensor<2x4x3x3xf32> {
  ^bb0(%a: tensor<2x4x3x3xf32>, %b: tensor<3xf32>):
    %s = tx8be.Add %a, %b {dev_info = #tx8be.dev<imm_size = 0, mem_layout = NCx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<2x4x3x3xf32>, tensor<3xf32>) -> tensor<2x4x3x3xf32>
    tx8be.Yield %s : tensor<2x4x3x3xf32>
  }
  func.return %y : tensor<2x4x3x3xf32>
}
// CHECK-LABEL: func.func @layouts
// CHECK:         tx8be.Group(%x, %v)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      tx8be.LoadVar %a {dev_info = #tx8be.dev<imm_size = 0, mem_layout = NTensor,
// CHECK-NEXT:      tx8be.LoadVar %b {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor,
// CHECK:           tx8be.StoreVar %n {dev_info = #tx8be.dev<imm_size = 0, mem_layout = NCx,
// CHECK-NEXT:      tx8be.StoreVar %u {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK:         tx8be.Group(%f, %w)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      tx8be.LoadVar %a {dev_info = #tx8be.dev<imm_size = 0, mem_layout = NCx,
// CHECK-NEXT:      tx8be.LoadVar %b {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK:           tx8be.StoreVar %s {dev_info = #tx8be.dev<imm_size = 0, mem_layout = NCx,

// -----

// A group that loads and stores nothing runs in DDR: group_tag 2 (here it only passes
// its input on; a group of relabels, which move no bytes, is the real case).
func.func @no_moves(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = tx8be.Group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    tx8be.Yield %a : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
// CHECK-LABEL: func.func @no_moves
// CHECK-NEXT:    tx8be.Group(%x) {group_tag = 2 : i64}
// CHECK-NEXT:    ^bb0(%a: tensor<4xf32>):
// CHECK-NEXT:      tx8be.Yield %a
