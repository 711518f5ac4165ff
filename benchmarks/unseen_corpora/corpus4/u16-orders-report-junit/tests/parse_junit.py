import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse("/logs/verifier/junit.xml").getroot()
except Exception:
    sys.exit(1)
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
tests = fails = 0
for s in suites:
    tests += int(s.get("tests", 0))
    fails += int(s.get("failures", 0)) + int(s.get("errors", 0)) + int(s.get("skipped", 0))
names = {c.get("name") for s in suites for c in s.iter("testcase")}
want = {"test_keys", "test_counts", "test_top_customers", "test_types"}
sys.exit(0 if tests == 4 and fails == 0 and names == want else 1)
