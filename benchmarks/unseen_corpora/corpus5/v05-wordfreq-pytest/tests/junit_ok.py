import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
tot = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
print(tot)
sys.exit(0 if tot == {"tests": int(sys.argv[2]), "failures": 0, "errors": 0, "skipped": 0} else 1)
