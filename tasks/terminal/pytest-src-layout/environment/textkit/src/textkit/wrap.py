def wrap(text, width):
    """Greedy word wrap.

    Words are the whitespace-separated parts of text. Lines are filled with as many words as fit,
    separated by single spaces, so that no line is longer than width characters; a word longer than
    width sits alone on its own line, unbroken. Returns the lines joined with "\\n" ("" for text
    without words). width must be >= 1, otherwise ValueError.
    """
    lines = []
    current = ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) >= width:
            lines.append(current)
            current = word
        else:
            current += " " + word
    if current:
        lines.append(current)
    return "\n".join(lines)
