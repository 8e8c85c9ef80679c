// RUN: tx8c-opt %s -p layout-init,layout-transmit | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s -p layout-init,layout-transmit,layout-transmit | filecheck %s
// RUN: tx8c-opt %s -p layout-init,layout-transmit | filecheck %s --check-prefix=ALL
// layout-transmit (seed 001): from the ops whose layout is known (Conv, Gemm), a
// reverse-topological walk infers operand layouts backward (not through Reshape and
// BroadCast), inputs still unknown get the Tensor class of their shape, then a forward
// walk gives every other op its layout from its operands. Graph-input layouts are
// recorded as the argument attribute tx8c.layout. Running the pass twice changes nothing.

// Seed 001, "several uncertain nodes in a row": Conv -> Reshape -> C -> G -> Reshape ->
// Gemm. Backward, the Gemm colours the last Reshape (Tensor), which cannot go further.
// Forward looks behind: the first Reshape keeps the rank, so it and C, G carry the
// Conv's NCHW down the chain; the last Reshape turns it into the Gemm's Tensor.
// CHECK-LABEL: func.func @seed001_chain(
// CHECK-SAME:    %x: tensor<1x3x8x8xf32> {tx8c.layout = "NCHW"}, %w: tensor<4x3x3x3xf32> {tx8c.layout = "OIHW"}, %wg: tensor<144x10xf32> {tx8c.layout = "NTensor"})
// CHECK-NEXT:    tx8be.Conv %x, %w {layout_str = "NCHW-OIHW-NCHW"}
// CHECK-NEXT:    tx8be.Reshape %{{.*}} {shape = array<i64: 1, 4, 3, 12>, layout_str = "NCHW"}
// CHECK-NEXT:    tx8be.Relu %{{.*}} {layout_str = "NCHW"}
// CHECK-NEXT:    tx8be.Sigmoid %{{.*}} {layout_str = "NCHW"}
// CHECK-NEXT:    tx8be.Reshape %{{.*}} {shape = array<i64: 1, 144>, layout_str = "Tensor"}
// CHECK-NEXT:    tx8be.Gemm %{{.*}}, %wg {layout_str = "Tensor-NTensor-Tensor"}
func.func @seed001_chain(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %wg: tensor<144x10xf32>) -> tensor<1x10xf32> {
  %conv = tx8be.Conv %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r1 = tx8be.Reshape %conv {shape = array<i64: 1, 4, 3, 12>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x12xf32>
  %c = tx8be.Relu %r1 : (tensor<1x4x3x12xf32>) -> tensor<1x4x3x12xf32>
  %g = tx8be.Sigmoid %c : (tensor<1x4x3x12xf32>) -> tensor<1x4x3x12xf32>
  %r2 = tx8be.Reshape %g {shape = array<i64: 1, 144>} : (tensor<1x4x3x12xf32>) -> tensor<1x144xf32>
  %out = tx8be.Gemm %r2, %wg : (tensor<1x144xf32>, tensor<144x10xf32>) -> tensor<1x10xf32>
  func.return %out : tensor<1x10xf32>
}

// Seed 001's example of the strategy: Conv(NHWC) --> (NHWC) Reshape (NTensor) -->
// Gemm(NTensor). The Reshape gets the layout its successor needs.
// CHECK-LABEL: func.func @seed001_reshape(
// CHECK-SAME:    {tx8c.layout = "NHWC"}, %{{.*}}: tensor<3x3x4x3xf32> {tx8c.layout = "HWOI"}, %{{.*}}: tensor<144x10xf32> {tx8c.layout = "NTensor"})
// CHECK-NEXT:    tx8be.Conv {{.*}}layout_str = "NHWC-HWOI-NHWC"}
// CHECK-NEXT:    tx8be.Reshape %{{.*}} {shape = array<i64: 2, 144>, layout_str = "NTensor"}
// CHECK-NEXT:    tx8be.Gemm {{.*}}layout_str = "NTensor-NTensor-NTensor"}
func.func @seed001_reshape(%x: tensor<2x8x8x3xf32>, %w: tensor<3x3x4x3xf32>, %wg: tensor<144x10xf32>) -> tensor<2x10xf32> {
  %conv = tx8be.Conv %x, %w {data_format = "NHWC", weight_format = "HWOI"} : (tensor<2x8x8x3xf32>, tensor<3x3x4x3xf32>) -> tensor<2x6x6x4xf32>
  %flat = tx8be.Reshape %conv {shape = array<i64: 2, 144>} : (tensor<2x6x6x4xf32>) -> tensor<2x144xf32>
  %out = tx8be.Gemm %flat, %wg : (tensor<2x144xf32>, tensor<144x10xf32>) -> tensor<2x10xf32>
  func.return %out : tensor<2x10xf32>
}

// Seed 001's A/B/C/D/E/F graph: A and B are inputs, C (a Conv) knows its layouts and is
// fed by A and B, D by A, E by C, F by E and D. Backward gives the inputs their colours,
// forward the rest.
// CHECK-LABEL: func.func @seed001_abcdef(
// CHECK-SAME:    %A: tensor<1x4x6x6xf32> {tx8c.layout = "NCHW"}, %B: tensor<4x4x1x1xf32> {tx8c.layout = "OIHW"})
// CHECK-NEXT:    %C = tx8be.Conv %A, %B {layout_str = "NCHW-OIHW-NCHW"}
// CHECK-NEXT:    %D = tx8be.Relu %A {layout_str = "NCHW"}
// CHECK-NEXT:    %E = tx8be.Sigmoid %C {layout_str = "NCHW"}
// CHECK-NEXT:    %F = tx8be.Add %E, %D {layout_str = "NCHW"}
func.func @seed001_abcdef(%A: tensor<1x4x6x6xf32>, %B: tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32> {
  %C = tx8be.Conv %A, %B : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %D = tx8be.Relu %A : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %E = tx8be.Sigmoid %C : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %F = tx8be.Add %E, %D : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  func.return %F : tensor<1x4x6x6xf32>
}

// A multi-modal graph: an image branch in CNN layouts (a Transpose to NHWC feeding an
// NHWC Conv, so the image itself must be NCHW) meets a text branch in Tensor-class
// layouts. Constants take the layout their consumer needs (HWOI weight, Tensor bias),
// the flattening Reshape the one the Add needs. The CNN ops between the Conv and the
// Reshape keep NHWC: nothing is pushed back through the Reshape.
// CHECK-LABEL: func.func @multimodal(
// CHECK-SAME:    %img: tensor<1x3x8x8xf32> {tx8c.layout = "NCHW"}, %txt: tensor<2x5x16xf32> {tx8c.layout = "NTensor"})
// CHECK-NEXT:    %w = tx8be.Constant {{.*}}layout_str = "HWOI"}
// CHECK-NEXT:    %bias = tx8be.Constant {{.*}}layout_str = "Tensor"}
// CHECK-NEXT:    %wq = tx8be.Constant {{.*}}layout_str = "NTensor"}
// CHECK-NEXT:    %wo = tx8be.Constant {{.*}}layout_str = "NTensor"}
// CHECK-NEXT:    %t = tx8be.Transpose %img {perm = array<i64: 0, 2, 3, 1>, layout_str = "NHWC"}
// CHECK-NEXT:    %c = tx8be.Conv %t, %w, %bias {{.*}}layout_str = "NHWC-HWOI-NHWC"}
// CHECK-NEXT:    %r = tx8be.Relu %c {layout_str = "NHWC"}
// CHECK-NEXT:    %p = tx8be.Pool %r {{.*}}layout_str = "NHWC"}
// CHECK-NEXT:    %f = tx8be.Reshape %p {shape = array<i64: 1, 4>, layout_str = "Tensor"}
// CHECK-NEXT:    %q = tx8be.Gemm %txt, %wq {layout_str = "NTensor-NTensor-NTensor"}
// CHECK-NEXT:    %s = tx8be.Add %q, %f {layout_str = "NTensor"}
// CHECK-NEXT:    %o = tx8be.Gemm %s, %wo {layout_str = "NTensor-NTensor-NTensor"}
func.func @multimodal(%img: tensor<1x3x8x8xf32>, %txt: tensor<2x5x16xf32>) -> tensor<2x5x3xf32> {
  %w = tx8be.Constant {value = dense<0.5> : tensor<3x3x4x3xf32>} : () -> tensor<3x3x4x3xf32>
  %bias = tx8be.Constant {value = dense<0.25> : tensor<4xf32>} : () -> tensor<4xf32>
  %wq = tx8be.Constant {value = dense<0.125> : tensor<16x4xf32>} : () -> tensor<16x4xf32>
  %wo = tx8be.Constant {value = dense<1.0> : tensor<4x3xf32>} : () -> tensor<4x3xf32>
  %t = tx8be.Transpose %img {perm = array<i64: 0, 2, 3, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x8x8x3xf32>
  %c = tx8be.Conv %t, %w, %bias {data_format = "NHWC", weight_format = "HWOI"} : (tensor<1x8x8x3xf32>, tensor<3x3x4x3xf32>, tensor<4xf32>) -> tensor<1x6x6x4xf32>
  %r = tx8be.Relu %c : (tensor<1x6x6x4xf32>) -> tensor<1x6x6x4xf32>
  %p = tx8be.Pool %r {mode = "avg", global_pool = true, data_format = "NHWC"} : (tensor<1x6x6x4xf32>) -> tensor<1x1x1x4xf32>
  %f = tx8be.Reshape %p {shape = array<i64: 1, 4>} : (tensor<1x1x1x4xf32>) -> tensor<1x4xf32>
  %q = tx8be.Gemm %txt, %wq : (tensor<2x5x16xf32>, tensor<16x4xf32>) -> tensor<2x5x4xf32>
  %s = tx8be.Add %q, %f : (tensor<2x5x4xf32>, tensor<1x4xf32>) -> tensor<2x5x4xf32>
  %o = tx8be.Gemm %s, %wo : (tensor<2x5x4xf32>, tensor<4x3xf32>) -> tensor<2x5x3xf32>
  func.return %o : tensor<2x5x3xf32>
}

// No known op on any path: inputs get the default, the Tensor class of their shape
// (also a rank-4 one: a CNN layout is never guessed), and the forward walk carries it.
// An undemanded constant gets the Tensor class of its shape.
// CHECK-LABEL: func.func @defaults(
// CHECK-SAME:    %x: tensor<2x5xf32> {tx8c.layout = "NTensor"}, %y: tensor<1x3x4x4xf32> {tx8c.layout = "Tensor"})
// CHECK-NEXT:    tx8be.Constant {{.*}}layout_str = "Tensor"}
// CHECK-NEXT:    tx8be.Tanh %x {layout_str = "NTensor"}
// CHECK-NEXT:    tx8be.Mul %y, %{{.*}} {layout_str = "Tensor"}
func.func @defaults(%x: tensor<2x5xf32>, %y: tensor<1x3x4x4xf32>) -> (tensor<2x5xf32>, tensor<1x3x4x4xf32>) {
  %k = tx8be.Constant {value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %0 = tx8be.Tanh %x : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %1 = tx8be.Mul %y, %k : (tensor<1x3x4x4xf32>, tensor<4xf32>) -> tensor<1x3x4x4xf32>
  func.return %0, %1 : tensor<2x5xf32>, tensor<1x3x4x4xf32>
}

// Every op ends with a concrete layout_str: none is left UNKNOWN (the default, which
// would print no layout_str at all).
// ALL:     builtin.module
// ALL-NOT: tx8be.{{[A-Za-z_]+}} {{[^{]*}}: (
// ALL-NOT: UNKNOWN
