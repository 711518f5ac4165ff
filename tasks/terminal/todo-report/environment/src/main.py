import sys

# TODO: parse arguments with argparse
def main():
    data = load()  # FIXME: handle missing file
    # todo: lowercase markers are not markers
    return data


def load():
    # NOTE: this is fine
    return open("data.txt").read()  # TODOS: not a marker either
