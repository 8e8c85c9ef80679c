// RUN: tx8c-opt %s | tx8c-opt | filecheck %s
// RUN: tx8c-opt %s --print-op-generic | tx8c-opt | filecheck %s
// Printing, parsing and printing again gives the same text; the generic form parses too.

func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x3xi1>, %d: tensor<2x3xi1>) -> tensor<2x3xf32> {
  // CHECK:      %{{.*}} = tx8be.Add %a, %b {layout_str = "NCHW"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Mul %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Min %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.Less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.LessOrEqual %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.Greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.GreaterOrEqual %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.And %c, %d : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.Or %c, %d : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.Where %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %0 = tx8be.Add %a, %b {layout_str = "NCHW"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = tx8be.Sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = tx8be.Mul %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = tx8be.Div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = tx8be.Max %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %5 = tx8be.Min %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = tx8be.Pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %7 = tx8be.Equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %8 = tx8be.Less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %9 = tx8be.LessOrEqual %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %10 = tx8be.Greater %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %11 = tx8be.GreaterOrEqual %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %12 = tx8be.And %c, %d : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %13 = tx8be.Or %c, %d : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %14 = tx8be.Where %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %14 : tensor<2x3xf32>
}

func.func @unary(%a: tensor<2x3xf32>, %c: tensor<2x3xi1>, %i: tensor<2x3xi32>) -> tensor<2x3xf32> {
  // CHECK-LABEL: func.func @unary
  // CHECK-NEXT: %{{.*}} = tx8be.Relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.LeakyRelu %a {alpha = 2.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Clip %a {min = -1.000000e+00 : f64, max = 6.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Sigmoid %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Erf %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Gelu %a {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Silu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.HardSigmoid %a {alpha = 0.1666667 : f64, beta = 6.000000e-01 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.HardSwish %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Exp %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Log %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Sqrt %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Rsqrt %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Reciprocal %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Abs %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
  // CHECK-NEXT: %{{.*}} = tx8be.Neg %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Not %c : (tensor<2x3xi1>) -> tensor<2x3xi1>
  // CHECK-NEXT: %{{.*}} = tx8be.Sin %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Cos %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Floor %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Ceil %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT: %{{.*}} = tx8be.Cast %a {to = "bf16"} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  %0 = tx8be.Relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = tx8be.LeakyRelu %a {alpha = 0.2 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = tx8be.Clip %a {min = -1.0 : f64, max = 6.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = tx8be.Sigmoid %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = tx8be.Tanh %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %5 = tx8be.Erf %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = tx8be.Gelu %a {approximate = "tanh"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %7 = tx8be.Silu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %8 = tx8be.HardSigmoid %a {alpha = 0.1666667 : f64, beta = 0.6 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = tx8be.HardSwish %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %10 = tx8be.Exp %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %11 = tx8be.Log %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = tx8be.Sqrt %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %13 = tx8be.Rsqrt %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %14 = tx8be.Reciprocal %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %15 = tx8be.Abs %i : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %16 = tx8be.Neg %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %17 = tx8be.Not %c : (tensor<2x3xi1>) -> tensor<2x3xi1>
  %18 = tx8be.Sin %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %19 = tx8be.Cos %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %20 = tx8be.Floor %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %21 = tx8be.Ceil %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %22 = tx8be.Cast %a {to = "bf16"} : (tensor<2x3xf32>) -> tensor<2x3xbf16>
  func.return %0 : tensor<2x3xf32>
}

// ONNX allows min > max: every element becomes max.
func.func @clip_min_above_max(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK-LABEL: func.func @clip_min_above_max
  // CHECK-NEXT:  %{{.*}} = tx8be.Clip %a {min = 1.000000e+00 : f64, max = -1.000000e+00 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = tx8be.Clip %a {min = 1.0 : f64, max = -1.0 : f64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// Mod (integer: sign of the divisor; fmod: sign of the dividend), Round and Atan.
func.func @mod_round_atan(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x3xi32>, %j: tensor<3xi32>) -> tensor<2x3xf32> {
  // CHECK-LABEL: func.func @mod_round_atan
  // CHECK-NEXT:  %{{.*}} = tx8be.Mod %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  // CHECK-NEXT:  %{{.*}} = tx8be.Mod %a, %b {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT:  %{{.*}} = tx8be.Round %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  // CHECK-NEXT:  %{{.*}} = tx8be.Atan %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %0 = tx8be.Mod %i, %j : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = tx8be.Mod %a, %b {fmod = true} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = tx8be.Round %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = tx8be.Atan %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}
