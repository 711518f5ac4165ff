import sys
sys.exit(0 if open('/app/total.txt').read().strip() == '15' else 1)
