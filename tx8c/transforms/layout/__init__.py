"""Layout passes (seeds 000-003): layout-init, layout-transmit, layout-preset-to-npu,
layout-align-to-npu, layout-align-opt. Their shared vocabulary is `tx8c.dialect.layout`."""
