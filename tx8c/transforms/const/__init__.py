"""Constant passes (seed 003, "Const Management"): move-constant, const-norm. The data
lives in the module's ConstContainer (`tx8c.const_container`)."""
