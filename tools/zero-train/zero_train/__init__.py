"""zero-train: one config file (DeepSpeed's vocabulary and Zero's own keys)
to a compiled, cached, launched ZeRO training program. See docs/zero-train.md."""
