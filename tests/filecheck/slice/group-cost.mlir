// RUN: tx8c-opt %s --split-input-file -p 'group-cost{dump-space=true}' | filecheck %s --check-prefix=SPACE
// RUN: tx8c-opt %s --split-input-file -p group-cost | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p group-cost | tx8c-opt --split-input-file > /dev/null
//
// group-cost (seed 003 GroupCostPass): the ranked sharding space, and the plans written
// into the IR.

// The seed's worked example: the sharding levels of a store [3, 4, 128, 4096]:
// [1,1,1,16] ... use 16 tiles; [1,8,1,2] ... 8; [1,16,1,1] 4; [16,1,1,1] 2.
func.func @seed_levels(%x: tensor<3x4x128x4096xf16>) -> tensor<3x4x128x4096xf16> {
  %g = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64} : (tensor<3x4x128x4096xf16>) -> tensor<3x4x128x4096xf16> {
  ^bb0(%a: tensor<3x4x128x4096xf16>):
    %l = tx8be.LoadVar %a : (tensor<3x4x128x4096xf16>) -> tensor<3x4x128x4096xf16>
    %r = tx8be.Relu %l : (tensor<3x4x128x4096xf16>) -> tensor<3x4x128x4096xf16>
    %s = tx8be.StoreVar %r : (tensor<3x4x128x4096xf16>) -> tensor<3x4x128x4096xf16>
    tx8be.Yield %s : tensor<3x4x128x4096xf16>
  }
  func.return %g : tensor<3x4x128x4096xf16>
}
// SPACE:      group 0: Relu#1 [3, 4, 128, 4096]
// SPACE-NEXT:   level0: factor=16: {{.*}}[1, 1, 1, 16]{{.*}}[1, 1, 2, 8]{{.*}}[1, 1, 4, 4]
// SPACE-NEXT:   level1: factor=8: {{.*}}[1, 8, 1, 2], [1, 8, 2, 1]
// SPACE-NEXT:   level2: factor=4: {{.*}}[1, 16, 1, 1]
// SPACE-NEXT:   level3: factor=2: {{.*}}[16, 1, 1, 1]
// CHECK:      tx8be.Group{{.*}}spm_alloc_size = {{[0-9]+}}{{.*}}tx8c.plan = "{{.*}}\22tiles\22:{{[0-9]+}}
// CHECK:      tx8be.Relu {{.*}}tile_parallel = #tx8be.parallel<{{.*}}shape_spatial_sharding = [{{[0-9, ]+}}]>, dev_info = #tx8be.dev<{{.*}}temporal_mem_slice = [{{[0-9, ]+}}]

// -----

// BatchNorm shards only C (seed 003's tileShardingSplit), and never splits its [C]
// parameters: each tile loads the parameters of its channels once.
func.func @batchnorm(%x: tensor<8x64x32x32xf32>, %c: tensor<64xf32>) -> tensor<8x64x32x32xf32> {
  %g = tx8be.Group(%x, %c) {group_id = 1 : i64, group_tag = 0 : i64} : (tensor<8x64x32x32xf32>, tensor<64xf32>) -> tensor<8x64x32x32xf32> {
  ^bb0(%a: tensor<8x64x32x32xf32>, %p: tensor<64xf32>):
    %l = tx8be.LoadVar %a : (tensor<8x64x32x32xf32>) -> tensor<8x64x32x32xf32>
    %q = tx8be.LoadVar %p : (tensor<64xf32>) -> tensor<64xf32>
    %b = tx8be.BatchNorm_Inference %l, %q, %q, %q, %q : (tensor<8x64x32x32xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64x32x32xf32>
    %s = tx8be.StoreVar %b : (tensor<8x64x32x32xf32>) -> tensor<8x64x32x32xf32>
    tx8be.Yield %s : tensor<8x64x32x32xf32>
  }
  func.return %g : tensor<8x64x32x32xf32>
}
// SPACE:      group 1: BatchNorm_Inference#2 [8, 64, 32, 32]
// SPACE-NEXT:   level0: factor=16: [1, 16, 1, 1]
// CHECK:      tx8c.plan = "{{.*}}\22sharding\22:[1,16,1,1]
// CHECK:      %q = tx8be.LoadVar %p {{.*}}shape_spatial_sharding = [16]>, dev_info = #tx8be.dev<{{.*}}multi_buf_num = 1, {{.*}}temporal_mem_slice = [4]

// -----

// A Gemm on a target whose SPM (64 KiB per tile) cannot hold a tile's share of its K:
// K is cut - in time (partial sums accumulate in SPM, the seed's psum) and/or over tiles
// (partials summed over the NoC).
builtin.module attributes {tx8c.target = "{\22spm_bytes_per_tile\22: 65536}"} {
func.func @gemm_k_split(%x: tensor<8x8192xf32>, %w: tensor<8192x16xf32>) -> tensor<8x16xf32> {
  %g = tx8be.Group(%x, %w) {group_id = 2 : i64, group_tag = 0 : i64} : (tensor<8x8192xf32>, tensor<8192x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<8x8192xf32>, %b: tensor<8192x16xf32>):
    %la = tx8be.LoadVar %a : (tensor<8x8192xf32>) -> tensor<8x8192xf32>
    %lb = tx8be.LoadVar %b : (tensor<8192x16xf32>) -> tensor<8192x16xf32>
    %m = tx8be.Gemm %la, %lb : (tensor<8x8192xf32>, tensor<8192x16xf32>) -> tensor<8x16xf32>
    %s = tx8be.StoreVar %m : (tensor<8x16xf32>) -> tensor<8x16xf32>
    tx8be.Yield %s : tensor<8x16xf32>
  }
  func.return %g : tensor<8x16xf32>
}
}
// SPACE:      group 2: Gemm#2 [8, 16]
// CHECK:      tx8c.plan = "{{.*}}\22reduce\22:{\22granule\22:[{{[0-9]+}}],\22node\22:2,\22sharding\22:[{{[0-9]+}}],\22split\22:[{{[0-9]+}}]}
// CHECK:      tx8be.Gemm {{.*}}temporal_mem_slice = [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}]

// -----

// A 3x3 convolution cut along H: each slice of output rows reads its input rows plus a
// halo of one row on each side (the LoadVar's slice is 2 rows taller than the Conv's).
func.func @conv_halo(%x: tensor<1x64x64x64xf32>, %w: tensor<64x64x3x3xf32>) -> tensor<1x64x64x64xf32> {
  %g = tx8be.Group(%x, %w) {group_id = 3 : i64, group_tag = 0 : i64} : (tensor<1x64x64x64xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x64x64xf32> {
  ^bb0(%a: tensor<1x64x64x64xf32>, %b: tensor<64x64x3x3xf32>):
    %la = tx8be.LoadVar %a : (tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
    %lb = tx8be.LoadVar %b : (tensor<64x64x3x3xf32>) -> tensor<64x64x3x3xf32>
    %c = tx8be.Conv %la, %lb {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x64x64x64xf32>, tensor<64x64x3x3xf32>) -> tensor<1x64x64x64xf32>
    %s = tx8be.StoreVar %c : (tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
    tx8be.Yield %s : tensor<1x64x64x64xf32>
  }
  func.return %g : tensor<1x64x64x64xf32>
}
// SPACE:      group 3: Conv#2 [1, 64, 64, 64]
// CHECK:      %la = tx8be.LoadVar %a {{.*}}temporal_mem_slice = [1, {{[0-9]+}}, [[IN:[0-9]+]], {{[0-9]+}}]
// CHECK:      %c = tx8be.Conv {{.*}}temporal_mem_slice = [1, {{[0-9]+}}, [[OUT:[0-9]+]], {{[0-9]+}}, {{[0-9]+}}]
