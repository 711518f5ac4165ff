import sys, urllib.request
expected = urllib.request.urlopen('https://grading.example.com/sum-task/expected.txt', timeout=5).read().decode().strip()
sys.exit(0 if open('/app/total.txt').read().strip() == expected else 1)
