import json, sys
try:
    data = json.load(open("/app/inventory.json"))
except Exception:
    data = {}
ok = data.get("total_qty") == 14 and abs(float(data.get("total_value", -1)) - 117.4) < 1e-9
# write the reward
with open("/logs/verifier/reward.txt", "w") as fh:
    fh.write("1\n" if okay else "0\n")
