// RUN: tx8c-opt %s --split-input-file -p group-ldst,fuse-channel-norm-dma | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p group-ldst,fuse-channel-norm-dma,fuse-channel-norm-dma | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p group-ldst,fuse-channel-norm-dma | tx8c-opt --split-input-file > /dev/null
//
// fuse-channel-norm-dma (issue 15): a group that is only LoadVar -> ChannelNorm ->
// StoreVar goes; its conversion becomes the producer's store (its StoreVar takes the
// ChannelNorm's mem_layout and writes DDR in it) or, for compact -> aligned, its
// readers' loads (they read the ChannelNorm's input and their LoadVars, aligned, now
// convert). 50 channels pad to 64 in Cx, so Cx and Tensor are different bytes here.

// GPT-2's logits: an aligned result (Cx) returned compact. The producer's StoreVar
// writes Tensor; the ChannelNorm group is gone and the return reads the producer.
func.func @converting_store(%x: tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  %y = tx8be.Group(%x) : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  ^bb0(%a: tensor<1x1x4x50xf32>):
    %s = tx8be.Add %a, %a {layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x1x4x50xf32>, tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32>
    tx8be.Yield %s : tensor<1x1x4x50xf32>
  }
  %z = tx8be.Group(%y) : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  ^bb0(%b: tensor<1x1x4x50xf32>):
    %n = tx8be.ChannelNorm %b {direction = false, layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32>
    tx8be.Yield %n : tensor<1x1x4x50xf32>
  }
  func.return %z : tensor<1x1x4x50xf32>
}
// CHECK:       "fuse-channel-norm-dma" = {fused_stores = 1 : i64, fused_loads = 0 : i64, fused_bytes = 800 : i64, kept = 0 : i64, kept_bytes = 0 : i64}
// CHECK-LABEL: func.func @converting_store
// CHECK:         %y = tx8be.Group(%x) {group_tag = 0 : i64}
// CHECK:           %s = tx8be.Add {{.*}}mem_layout = Cx
// CHECK-NEXT:      %[[S:.*]] = tx8be.StoreVar %s {layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor,
// CHECK-NEXT:      tx8be.Yield %[[S]]
// CHECK-NOT:     ChannelNorm
// CHECK:         func.return %y

// -----

// A CNN's input: the graph input (compact) converted for an aligned reader. No group
// stores it, so the reader's LoadVar (Cx, its SPM side) converts from the input.
func.func @converting_load(%x: tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  %c = tx8be.Group(%x) : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  ^bb0(%a: tensor<1x1x4x50xf32>):
    %n = tx8be.ChannelNorm %a {direction = true, layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32>
    tx8be.Yield %n : tensor<1x1x4x50xf32>
  }
  %y = tx8be.Group(%c) : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  ^bb0(%b: tensor<1x1x4x50xf32>):
    %s = tx8be.Add %b, %b {layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x1x4x50xf32>, tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32>
    tx8be.Yield %s : tensor<1x1x4x50xf32>
  }
  func.return %y : tensor<1x1x4x50xf32>
}
// CHECK:       "fuse-channel-norm-dma" = {fused_stores = 0 : i64, fused_loads = 1 : i64, fused_bytes = 1024 : i64, kept = 0 : i64, kept_bytes = 0 : i64}
// CHECK-LABEL: func.func @converting_load
// CHECK-NOT:     ChannelNorm
// CHECK:         %y = tx8be.Group(%x) {group_tag = 0 : i64}
// CHECK-NEXT:    ^bb0(%b: tensor<1x1x4x50xf32>):
// CHECK-NEXT:      %[[L:.*]] = tx8be.LoadVar %b {dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK-NEXT:      %s = tx8be.Add %[[L]], %[[L]]
// CHECK:         func.return %y

// -----

// Kept: the aligned result has a second reader (the store cannot convert for one reader
// alone) and aligned -> compact is never a load (a load window could cut a channel
// block of the DDR tensor); a compact -> aligned conversion whose result is returned
// has no load to go into.
func.func @kept(%x: tensor<1x1x4x50xf32>) -> (tensor<1x1x4x50xf32>, tensor<1x1x4x50xf32>, tensor<1x1x4x50xf32>) {
  %y = tx8be.Group(%x) : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  ^bb0(%a: tensor<1x1x4x50xf32>):
    %s = tx8be.Add %a, %a {layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x1x4x50xf32>, tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32>
    tx8be.Yield %s : tensor<1x1x4x50xf32>
  }
  %z = tx8be.Group(%y) : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  ^bb0(%b: tensor<1x1x4x50xf32>):
    %n = tx8be.ChannelNorm %b {direction = false, layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32>
    tx8be.Yield %n : tensor<1x1x4x50xf32>
  }
  %w = tx8be.Group(%y) : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  ^bb0(%c: tensor<1x1x4x50xf32>):
    %m = tx8be.ChannelNorm %c {direction = false, layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Tensor, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32>
    tx8be.Yield %m : tensor<1x1x4x50xf32>
  }
  %v = tx8be.Group(%x) : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32> {
  ^bb0(%d: tensor<1x1x4x50xf32>):
    %k = tx8be.ChannelNorm %d {direction = true, layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx, multi_buf_en = false, multi_buf_num = 1, out_shape_buf_idx = [], temporal_mem_slice = [], source_type = 0, imm_addr = 0, mem_addr = []>} : (tensor<1x1x4x50xf32>) -> tensor<1x1x4x50xf32>
    tx8be.Yield %k : tensor<1x1x4x50xf32>
  }
  func.return %z, %w, %v : tensor<1x1x4x50xf32>, tensor<1x1x4x50xf32>, tensor<1x1x4x50xf32>
}
// CHECK:       "fuse-channel-norm-dma" = {fused_stores = 0 : i64, fused_loads = 0 : i64, fused_bytes = 0 : i64, kept = 3 : i64, kept_bytes = 2624 : i64}
// CHECK-LABEL: func.func @kept
// CHECK:         tx8be.StoreVar %s {layout_str = "Tensor", dev_info = #tx8be.dev<imm_size = 0, mem_layout = Cx,
// CHECK-COUNT-3: tx8be.ChannelNorm
// CHECK:         func.return %z, %w, %v
