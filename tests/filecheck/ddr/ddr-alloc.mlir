// RUN: tx8c-opt %s -p ddr-alloc | filecheck %s
// RUN: tx8c-opt %s -p ddr-alloc | tx8c-opt > /dev/null
//
// ddr-alloc: every DDR tensor gets an offset; lifetimes are barrier epochs, so a tensor
// whose last reader has passed a barrier gives its bytes to a later one. Three groups in
// a chain with barriers: in0 (4 KiB) is read by group 0 (epoch 0); g0.0 is written in
// epoch 0 and read in epoch 1; g1.0 is written in epoch 1 and read in epoch 2, g2.0 is
// returned. At most two 4 KiB tensors live at once: peak = lower bound = 8192, and g1.0
// reuses in0's bytes, g2.0 reuses g0.0's.

func.func @main(%x: tensor<1x1024xf32>) -> tensor<1x1024xf32> {
  %a = tx8be.Group(%x) {group_id = 0 : i64, group_tag = 0 : i64} : (tensor<1x1024xf32>) -> tensor<1x1024xf32> {
  ^bb0(%i: tensor<1x1024xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    %r = tx8be.Relu %l : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    %s = tx8be.StoreVar %r : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    tx8be.Yield %s : tensor<1x1024xf32>
  }
  %b = tx8be.Group(%a) {group_id = 1 : i64, group_tag = 0 : i64} : (tensor<1x1024xf32>) -> tensor<1x1024xf32> {
  ^bb0(%i: tensor<1x1024xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    %r = tx8be.Relu %l : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    %s = tx8be.StoreVar %r : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    tx8be.Yield %s : tensor<1x1024xf32>
  }
  %c = tx8be.Group(%b) {group_id = 2 : i64, group_tag = 0 : i64} : (tensor<1x1024xf32>) -> tensor<1x1024xf32> {
  ^bb0(%i: tensor<1x1024xf32>):
    %l = tx8be.LoadVar %i : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    %r = tx8be.Relu %l : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    %s = tx8be.StoreVar %r : (tensor<1x1024xf32>) -> tensor<1x1024xf32>
    tx8be.Yield %s : tensor<1x1024xf32>
  }
  func.return %c : tensor<1x1024xf32>
}
// CHECK: builtin.module attributes {tx8c.ddr = "{
// CHECK-SAME: \22align\22:256,\22constants_bytes\22:0,\22lower_bound\22:8192,
// CHECK-SAME: \22offsets\22:{\22g0.0\22:[[G0:[0-9]+]],\22g1.0\22:[[G1:[0-9]+]],\22g2.0\22:[[G0]],\22in0\22:[[G1]]},
// CHECK-SAME: \22opt_ddr\22:false,{{.*}}\22peak\22:8192,\22reorder_bytes\22:0,\22total_bytes\22:8192,
// CHECK-SAME: \22live\22:[0,1],\22name\22:\22in0\22
// CHECK-SAME: \22live\22:[0,2],\22name\22:\22g0.0\22
// CHECK-SAME: \22live\22:[1,3],\22name\22:\22g1.0\22
// CHECK-SAME: \22kind\22:\22output\22,{{.*}}\22live\22:[2,3],\22name\22:\22g2.0\22
