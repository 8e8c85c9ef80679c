// RUN: tx8c-opt %s -p "spm-resident{budget=8192 page=256},ddr-alloc" | filecheck %s
// RUN: tx8c-opt %s -p "spm-resident{budget=4096 page=256}" | filecheck %s --check-prefix=SMALL
// RUN: tx8c-opt %s -p "spm-resident{budget=8192 page=256}" | tx8c-opt > /dev/null
// RUN: sed s/16384/1024/g %s | tx8c-opt -p "spm-resident{budget=8192 page=256}" | filecheck %s --check-prefix=TINY
// RUN: not tx8c-opt %s -p "spm-resident{budget=512 page=100}" 2>&1 | filecheck %s --check-prefix=BAD
//
// spm-resident: three groups in a chain with barriers (epochs 0, 1, 2). g0.0 (64 KiB,
// written in epoch 0, read in 1: live [0, 2)) and g1.0 (live [1, 3)) are values between
// groups; in0 and g2.0 (the output) stay in DDR. In pages of 256 bytes a 64 KiB value is
// 256 pages, 16 per tile: 4096 bytes per tile. With an 8 KiB budget both fit, at region
// offsets 0 and 4096 (their epochs meet at 1); the reserve per epoch is the highest region
// end live then: [4096, 8192, 8192]; each group records it with its resident operands and
// results, and ddr-alloc gives the two values no DDR. With 4 KiB only g0.0 fits
// (g1.0 would overlap it in epoch 1): it stays in DDR, and group 2 reserves nothing.
// The run through sed: values of 4 KiB stay in DDR whatever the budget: a tile's window
// of 256 bytes is faster through DDR than over the NoC's hops from the pages.
func.func @main(%x: tensor<1x16384xf32>) -> tensor<1x16384xf32> {
  %a = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64} : (tensor<1x16384xf32>) -> tensor<1x16384xf32> {
  ^bb0(%i: tensor<1x16384xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    %r = tx8be.Relu %l : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    %s = tx8be.StoreVar %r : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    tx8be.Yield %s : tensor<1x16384xf32>
  }
  %b = tx8be.Group(%a) {group_id = 1 : i64, group_tag = 0 : i64} : (tensor<1x16384xf32>) -> tensor<1x16384xf32> {
  ^bb0(%i: tensor<1x16384xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    %r = tx8be.Relu %l : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    %s = tx8be.StoreVar %r : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    tx8be.Yield %s : tensor<1x16384xf32>
  }
  %c = tx8be.Group(%b) {group_id = 2 : i64, group_tag = 0 : i64} : (tensor<1x16384xf32>) -> tensor<1x16384xf32> {
  ^bb0(%i: tensor<1x16384xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    %r = tx8be.Relu %l : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    %s = tx8be.StoreVar %r : (tensor<1x16384xf32>) -> tensor<1x16384xf32>
    tx8be.Yield %s : tensor<1x16384xf32>
  }
  func.return %c : tensor<1x16384xf32>
}
// CHECK: builtin.module attributes {tx8c.resident = "{\22budget\22:8192,\22page\22:256,\22reserve\22:[4096,8192,8192],
// CHECK-SAME: {\22live\22:[0,2],\22name\22:\22g0.0\22,\22per_tile\22:4096,\22region\22:0,\22size\22:65536}
// CHECK-SAME: {\22live\22:[1,3],\22name\22:\22g1.0\22,\22per_tile\22:4096,\22region\22:4096,\22size\22:65536}
// CHECK-SAME: tx8c.ddr = "{
// CHECK-SAME: \22offsets\22:{\22g2.0\22:0,\22in0\22:0}
// CHECK: group_id = 0 {{.*}}tx8c.resident = "{\22operands\22:[],\22reserve\22:4096,\22results\22:[0]}"
// CHECK: group_id = 1 {{.*}}tx8c.resident = "{\22operands\22:[0],\22reserve\22:8192,\22results\22:[0]}"
// CHECK: group_id = 2 {{.*}}tx8c.resident = "{\22operands\22:[0],\22reserve\22:8192,\22results\22:[]}"

// SMALL: \22reserve\22:[4096,4096,0],\22values\22:[{\22live\22:[0,2],\22name\22:\22g0.0\22,\22per_tile\22:4096,\22region\22:0,\22size\22:65536}]}"
// SMALL: group_id = 0 {{.*}}tx8c.resident = "{\22operands\22:[],\22reserve\22:4096,\22results\22:[0]}"
// SMALL: group_id = 1 {{.*}}tx8c.resident = "{\22operands\22:[0],\22reserve\22:4096,\22results\22:[]}"
// SMALL-NOT: tx8c.resident

// TINY: tx8c.resident = "{\22budget\22:8192,\22page\22:256,\22reserve\22:[0,0,0],\22values\22:[]}"
// TINY-NOT: tx8c.resident

// BAD: spm-resident page must be a positive multiple of 256 bytes (batch_align_bytes), got 100
