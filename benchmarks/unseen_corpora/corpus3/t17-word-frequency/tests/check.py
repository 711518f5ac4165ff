import sys
sys.path.insert(0, '/app')
from wordfreq import top_words
text = "It's the end. The END? it's not the end, said the cat's cat."
assert top_words(text, 3) == [('the', 4), ('end', 3), ("it's", 2)]
assert top_words(text, 1) == [('the', 4)]
assert top_words('', 5) == []
