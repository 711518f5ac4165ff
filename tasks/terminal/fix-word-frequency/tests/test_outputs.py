import re
import subprocess
import sys
from collections import Counter

sys.path.insert(0, "/app")
sys.dont_write_bytecode = True


def ref_words(text):
    out = []
    for w in re.findall(r"[a-z0-9']+", text.lower()):
        w = w.strip("'")
        if w:
            out.append(w)
    return out


def ref_top(text, n=10):
    return sorted(Counter(ref_words(text)).items(), key=lambda kv: (-kv[1], kv[0]))[:n]


TEXTS = [
    'The cat sat. The cat ran! "Cats," said the dog -- the dog\'s friend.',
    "It's the end-of-line; END of LINE. 'Tis 'quoted' words' and ''' alone. Don't don't DON'T.",
    "zeta alpha beta alpha zeta beta gamma 42 42 x2 x2 x2 café naïve crème\tTabs\nnew\nlines",
    "a b c d e f g h i j k l m n o p a b c",
    "",
]


def test_words_function():
    import wordfreq
    for t in TEXTS:
        assert wordfreq.words(t) == ref_words(t)


def test_top_words_function():
    import wordfreq
    for t in TEXTS:
        assert [tuple(x) for x in wordfreq.top_words(t)] == ref_top(t)
        assert [tuple(x) for x in wordfreq.top_words(t, 3)] == ref_top(t, 3)


def test_cli(tmp_path):
    text = "\n".join(TEXTS) * 3 + "\nHello, hello, HELLO... world's WORLD's end.\n"
    p = tmp_path / "in put.txt"
    p.write_text(text, encoding="utf-8")
    for args, n in (([], 10), (["4"], 4), (["100"], 100)):
        out = subprocess.run(["python3", "/app/wordfreq.py", str(p), *args], capture_output=True, text=True,
                             check=True).stdout
        assert out == "".join(f"{w} {c}\n" for w, c in ref_top(text, n))
