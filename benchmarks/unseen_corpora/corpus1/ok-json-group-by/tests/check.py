import json, sys
try:
    data = json.load(open('/app/teams.json'))
except Exception:
    sys.exit(1)
sys.exit(0 if data == {'red': ['mia', 'zoe'], 'blue': ['adam', 'bob'], 'green': ['carl']} else 1)
