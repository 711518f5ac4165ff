"""The trainer: model loading, logprob recomputation, micro-batching, checkpoints."""
