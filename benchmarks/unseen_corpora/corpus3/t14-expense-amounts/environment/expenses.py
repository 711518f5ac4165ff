def parse_amount(text):
    """Return the amount in `text` as integer cents."""
    raise NotImplementedError
