"""A curriculum over task cells (a generated family at a difficulty): estimate each cell's pass
rate from recent groups, and sample the cells the policy solves sometimes."""

from posttrain.curriculum.pass_rates import PassRates
from posttrain.curriculum.selection import choose_cells

__all__ = ["PassRates", "choose_cells"]
