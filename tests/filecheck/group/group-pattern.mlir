// RUN: tx8c-opt %s --split-input-file -p 'group-pattern{pattern-file="%S/Inputs/seed_patterns.json"}' | filecheck %s
// RUN: tx8c-opt %s --split-input-file -p 'group-pattern{pattern-file="%S/Inputs/seed_patterns.json"}' | tx8c-opt --split-input-file > /dev/null
// RUN: tx8c-opt %s --split-input-file -p group-pattern{mode=none} | filecheck %s --check-prefix=NONE
// RUN: tx8c-opt %s --split-input-file -p group-pattern{mode=cnn} | filecheck %s --check-prefix=CNN
//
// group-pattern (seed 003 GroupPatternPass) with the patterns of Inputs/seed_patterns.json:
// the seed's trie examples (OR, WILDCARD, a priority tie, the DFS over several users),
// longest match first, the skip rule, and the cycles a group must never create.
// mode=none groups nothing; the built-in mode=cnn takes Conv with its activation and
// the residual Conv Add Relu.
// NONE-NOT: tx8be.Group

// OR: `Conv Relu OR Conv Clip` is two patterns; each chain becomes one group.
func.func @or_alternatives(%x: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %w = tx8be.Constant {value = dense<0.5> : tensor<4x4x1x1xf32>} : () -> tensor<4x4x1x1xf32>
  %c1 = tx8be.Conv %x, %w : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r = tx8be.Relu %c1 : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c2 = tx8be.Conv %x, %w : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %k = tx8be.Clip %c2 {min = 0.0 : f64, max = 6.0 : f64} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %r, %k : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}
// CHECK-LABEL: func.func @or_alternatives
// CHECK:        %r = tx8be.Group(%x)
// CHECK:          tx8be.Constant
// CHECK-NEXT:     tx8be.Conv
// CHECK-NEXT:     tx8be.Relu
// CHECK-NEXT:     tx8be.Yield
// CHECK:        %k = tx8be.Group(%x)
// CHECK:          tx8be.Constant
// CHECK-NEXT:     tx8be.Conv
// CHECK-NEXT:     tx8be.Clip
// CHECK-NEXT:     tx8be.Yield
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %r, %k
// CNN-LABEL:    func.func @or_alternatives
// CNN:          %r = tx8be.Group(%x)
// CNN:          %k = tx8be.Group(%x)

// -----

// The DFS over several users, longest match first: the Conv's users are a Relu
// (`Conv Relu`, priority 9) and an Add followed by a Relu (`Conv Add Relu`, priority 1).
// The longer match wins; the first Relu stays alone.
func.func @longest_over_users(%x: tensor<1x4x6x6xf32>, %y: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) {
  %w = tx8be.Constant {value = dense<0.5> : tensor<4x4x1x1xf32>} : () -> tensor<4x4x1x1xf32>
  %c = tx8be.Conv %x, %w : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %r1 = tx8be.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %a = tx8be.Add %c, %y : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %r2 = tx8be.Relu %a : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %r1, %r2 : tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>
}
// CHECK-LABEL: func.func @longest_over_users
// CHECK:        %c, %r2 = tx8be.Group(%x, %y)
// CHECK:          %c_1 = tx8be.Conv
// CHECK-NEXT:     %a = tx8be.Add %c_1
// CHECK-NEXT:     %r2_1 = tx8be.Relu %a
// CHECK-NEXT:     tx8be.Yield %c_1, %r2_1
// CHECK-NEXT:   }
// CHECK-NEXT:   %r1 = tx8be.Relu %c
// CNN-LABEL:    func.func @longest_over_users
// CNN:          %c, %r2 = tx8be.Group(%x, %y)
// CNN:          %r1 = tx8be.Relu %c
// CNN-LABEL:    func.func @wildcard
// CNN-NOT:      tx8be.Group

// -----

// WILDCARD: `Tanh Neg *` is Tanh followed by 1 to 5 Negs. Six Negs: the match takes
// five, the sixth stays alone.
func.func @wildcard(%x: tensor<8xf32>) -> tensor<8xf32> {
  %t = tx8be.Tanh %x : (tensor<8xf32>) -> tensor<8xf32>
  %n1 = tx8be.Neg %t : (tensor<8xf32>) -> tensor<8xf32>
  %n2 = tx8be.Neg %n1 : (tensor<8xf32>) -> tensor<8xf32>
  %n3 = tx8be.Neg %n2 : (tensor<8xf32>) -> tensor<8xf32>
  %n4 = tx8be.Neg %n3 : (tensor<8xf32>) -> tensor<8xf32>
  %n5 = tx8be.Neg %n4 : (tensor<8xf32>) -> tensor<8xf32>
  %n6 = tx8be.Neg %n5 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %n6 : tensor<8xf32>
}
// CHECK-LABEL: func.func @wildcard
// CHECK:        %n5 = tx8be.Group(%x)
// CHECK-NEXT:   ^bb0(%x_1: tensor<8xf32>):
// CHECK-NEXT:     tx8be.Tanh
// CHECK-COUNT-5:  tx8be.Neg
// CHECK-NEXT:     tx8be.Yield
// CHECK-NEXT:   }
// CHECK-NEXT:   %n6 = tx8be.Neg %n5

// -----

// Two matches of one length from one start: the higher priority wins (`Gemm Add
// Sigmoid`, 3, over `Gemm Add Softmax`, 2) although the Softmax comes first.
func.func @priority(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %g = tx8be.Gemm %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  %s = tx8be.Add %g, %c : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %soft = tx8be.Softmax %s : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %sig = tx8be.Sigmoid %s : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %soft, %sig : tensor<4x4xf32>, tensor<4x4xf32>
}
// CHECK-LABEL: func.func @priority
// CHECK:        %s, %sig = tx8be.Group(%a, %b, %c)
// CHECK:          tx8be.Gemm
// CHECK-NEXT:     tx8be.Add
// CHECK-NEXT:     tx8be.Sigmoid
// CHECK-NEXT:     tx8be.Yield
// CHECK-NEXT:   }
// CHECK-NEXT:   %soft = tx8be.Softmax %s

// -----

// A tie in length and priority (`Exp Abs OR Exp Sqrt`): the first user in block order.
func.func @tie(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = tx8be.Exp %x : (tensor<8xf32>) -> tensor<8xf32>
  %q = tx8be.Sqrt %e : (tensor<8xf32>) -> tensor<8xf32>
  %b = tx8be.Abs %e : (tensor<8xf32>) -> tensor<8xf32>
  func.return %q, %b : tensor<8xf32>, tensor<8xf32>
}
// CHECK-LABEL: func.func @tie
// CHECK:        %e, %q = tx8be.Group(%x)
// CHECK:          tx8be.Exp
// CHECK-NEXT:     tx8be.Sqrt
// CHECK-NEXT:     tx8be.Yield
// CHECK-NEXT:   }
// CHECK-NEXT:   %b = tx8be.Abs %e

// -----

// The skip rule: Gather reads its table from DDR (need_load bit 0 clear), so an op
// whose result is in SPM (need_store set) cannot feed the table inside one group
// (`Sigmoid Gather` is not taken); feeding its indices is fine (`Cast Gather`).
func.func @skip_rule(%t: tensor<5x3xf32>, %i: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %s = tx8be.Sigmoid %t : (tensor<5x3xf32>) -> tensor<5x3xf32>
  %k = tx8be.Constant {value = dense<[0, 4]> : tensor<2xi32>} : () -> tensor<2xi32>
  %g1 = tx8be.Gather %s, %k : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  %j = tx8be.Cast %i {to = "i32"} : (tensor<2xf32>) -> tensor<2xi32>
  %g2 = tx8be.Gather %t, %j : (tensor<5x3xf32>, tensor<2xi32>) -> tensor<2x3xf32>
  func.return %g1, %g2 : tensor<2x3xf32>, tensor<2x3xf32>
}
// CHECK-LABEL: func.func @skip_rule
// CHECK:        %s = tx8be.Sigmoid %t
// CHECK:        %g1 = tx8be.Gather %s
// CHECK-NEXT:   %g2 = tx8be.Group(%i, %t)
// CHECK:          tx8be.Cast
// CHECK-NEXT:     tx8be.Gather
// CHECK-NEXT:     tx8be.Yield

// -----

// A group may not create a cycle. `Mul Relu Add` matches, but the Neg outside reads the
// Mul and feeds the Add: the group would feed the Neg and read it back. Not taken.
func.func @cycle_through_an_op(%x: tensor<8xf32>) -> tensor<8xf32> {
  %m = tx8be.Mul %x, %x : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %r = tx8be.Relu %m : (tensor<8xf32>) -> tensor<8xf32>
  %n = tx8be.Neg %m : (tensor<8xf32>) -> tensor<8xf32>
  %a = tx8be.Add %r, %n : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %a : tensor<8xf32>
}
// CHECK-LABEL: func.func @cycle_through_an_op
// CHECK-NOT:    tx8be.Group
// CHECK:        func.return

// -----

// Two groups that are each fine but not together: {Abs %a1, Max %a2} and {Abs %b1,
// Max %b2} with %a1 -> %b2 and %b1 -> %a2 would feed each other. The first is taken;
// %b1's best match loses %a2 to it, the search from %b1 again finds {%b1, %b2}, which
// closes the cycle and is turned down.
func.func @cycle_between_groups(%x: tensor<8xf32>, %y: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %a1 = tx8be.Abs %x : (tensor<8xf32>) -> tensor<8xf32>
  %b1 = tx8be.Abs %y : (tensor<8xf32>) -> tensor<8xf32>
  %a2 = tx8be.Max %a1, %b1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %b2 = tx8be.Max %b1, %a1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %a2, %b2 : tensor<8xf32>, tensor<8xf32>
}
// CHECK-LABEL: func.func @cycle_between_groups
// CHECK-NEXT:   %b1 = tx8be.Abs %y
// CHECK-NEXT:   %a1, %a2 = tx8be.Group(%x, %b1)
// CHECK:          tx8be.Abs
// CHECK-NEXT:     tx8be.Max
// CHECK-NEXT:     tx8be.Yield
// CHECK-NEXT:   }
// CHECK-NEXT:   %b2 = tx8be.Max %b1, %a1
// CHECK-NEXT:   func.return %a2, %b2
