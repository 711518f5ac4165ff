"""The RL driver (driver.py) and its rollout side, inline or on the scheduler; evaluation, the run directory."""
