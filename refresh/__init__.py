"""The refresh module: change-rate estimates and the sqrt(r·λ) refresh schedule (paper §6)."""
