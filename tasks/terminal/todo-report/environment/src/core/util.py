def clamp(x, lo, hi):
    """TODO: support reversed bounds"""
    return max(lo, min(x, hi))
