# TODO: vendored code is excluded
