import sys
from slugkit import slugify

print(slugify(" ".join(sys.argv[1:])))
