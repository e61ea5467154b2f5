"""Cross-device prediction: a probe measured here, a training time predicted there. Pure and fast."""
