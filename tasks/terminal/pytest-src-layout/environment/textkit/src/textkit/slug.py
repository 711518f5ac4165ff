import re
import unicodedata


def slugify(text, max_length=None):
    """URL slug of text.

    * Accented letters lose their accents (NFKD normalization, then non-ASCII characters dropped):
      "Crème Brûlée" -> "creme-brulee".
    * The result is lowercase; every run of characters other than a-z and 0-9 becomes one "-".
    * No leading or trailing "-".
    * With max_length, the slug is cut to at most max_length characters, and a "-" left at the
      end by the cut is removed.
    """
    text = text.lower()
    slug = re.sub(r"[^a-z0-9]", "-", text).strip("-")
    if max_length is not None:
        slug = slug[:max_length]
    return slug
