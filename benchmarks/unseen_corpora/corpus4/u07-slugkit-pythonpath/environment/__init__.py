"""slugkit: turn titles into URL slugs."""


def slugify(text):
    raise NotImplementedError
