"""Tasks, verifiers, task sources and the domain mixture."""
