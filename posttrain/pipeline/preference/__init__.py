"""Preference training (DPO, SimPO) on users' pairs of responses: `posttrain preference`."""
