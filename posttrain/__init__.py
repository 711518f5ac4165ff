"""posttrain: reinforcement-learning post-training of LLMs on verifiable tasks."""

__version__ = "0.1.0"
