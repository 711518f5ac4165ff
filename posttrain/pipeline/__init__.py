"""The RL driver (driver.py) and its rollout side, inline or on the dispatcher; evaluation, the run directory."""
