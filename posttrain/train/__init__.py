"""The trainer: logprob recomputation, micro-batching, checkpoints (models load in posttrain.models)."""
