"""The supervised warm start before RL: demonstrations, rejection sampling, the SFT loop."""
