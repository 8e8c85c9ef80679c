// RUN: tx8c-opt %s --split-input-file -p group-dag | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p group-dag | tx8c-opt --split-input-file > /dev/null
//
// group-dag (seed 003 opt_barrier, groupDAGPass): layers from the back (0 = nothing reads
// the group's results but the return, else 1 + the highest reader's layer), the groups
// put in layer order and numbered in it, a barrier only after the last group of each
// layer.

// A diamond: %a (layer 2) feeds %b and %c (layer 1), which feed %d (layer 0). %b and %c
// do not read each other: only %c, the last of layer 1, keeps its barrier.
func.func @diamond(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = tx8be.Group(%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Neg %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  %b = tx8be.Group(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Abs %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  %c = tx8be.Group(%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Relu %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  %d = tx8be.Group(%b, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>, %j: tensor<4xf32>):
    %o = tx8be.Add %i, %j : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  func.return %d : tensor<4xf32>
}
// CHECK-LABEL: func.func @diamond
// CHECK:         %a = tx8be.Group(%x) {group_id = 0 : i64}
// CHECK:         %b = tx8be.Group(%a) {need_barrier = false, group_id = 1 : i64}
// CHECK:         %c = tx8be.Group(%a) {group_id = 2 : i64}
// CHECK:         %d = tx8be.Group(%b, %c) {group_id = 3 : i64}

// -----

// Two chains interleaved: %a, %c, %b, %e in block order with layers 2, 1, 2, 1. The
// groups move into layer order (%a, %b, then %c, %e): the barrier after %b separates
// %a from its reader %c. Left in place, the last of layer 2 (%b) would come after %c,
// which could then read %a before every tile finished it. The ids follow the new order;
// %e's template_id follows %c.
func.func @interleaved(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = tx8be.Group(%x) {group_id = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Neg %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  %c = tx8be.Group(%a) {group_id = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Abs %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  %b = tx8be.Group(%y) {group_id = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Neg %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  %e = tx8be.Group(%b) {group_id = 3 : i64, template_id = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Abs %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  %f = tx8be.Group(%c, %e) {group_id = 4 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>, %j: tensor<4xf32>):
    %o = tx8be.Add %i, %j : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  func.return %f : tensor<4xf32>
}
// CHECK-LABEL: func.func @interleaved
// CHECK:         %a = tx8be.Group(%x) {group_id = 0 : i64, need_barrier = false}
// CHECK:         %b = tx8be.Group(%y) {group_id = 1 : i64}
// CHECK:         %c = tx8be.Group(%a) {group_id = 2 : i64, need_barrier = false}
// CHECK:         %e = tx8be.Group(%b) {group_id = 3 : i64, template_id = 2 : i64}
// CHECK:         %f = tx8be.Group(%c, %e) {group_id = 4 : i64}

// -----

// %p is returned and read by %q: its layer comes from its reader (1), so it keeps its
// barrier (the seed's "returned -> layer 0" would put it beside %q and drop it).
func.func @returned_and_read(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %p = tx8be.Group(%x) {need_barrier = false} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Neg %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  %q = tx8be.Group(%p) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<4xf32>):
    %o = tx8be.Abs %i : (tensor<4xf32>) -> tensor<4xf32>
    tx8be.Yield %o : tensor<4xf32>
  }
  func.return %p, %q : tensor<4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @returned_and_read
// CHECK:         %p = tx8be.Group(%x) {group_id = 0 : i64}
// CHECK:         %q = tx8be.Group(%p) {group_id = 1 : i64}
