"""Orchestration: rollouts, the synchronous RL loop, evaluation, the run directory."""
