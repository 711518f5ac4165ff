import re
import shlex
from pathlib import Path


def parse_unit(path):
    """systemd-style: [Section] headers, Key=Value lines, repeated keys allowed, # and ; comments."""
    sections = {}
    current = None
    for raw in Path(path).read_text().splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = re.fullmatch(r"\[([A-Za-z]+)\]", line)
        if m:
            assert m.group(1) not in sections, f"duplicate section {m.group(1)}"
            current = sections.setdefault(m.group(1), {})
            continue
        assert current is not None and "=" in line, f"bad line: {raw!r}"
        key, value = line.split("=", 1)
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


def words(values):
    return [w for v in values for w in v.split()]


def test_service_sections_and_keys():
    s = parse_unit("/app/deploy/webapp.service")
    assert set(s) == {"Unit", "Service", "Install"}
    assert set(s["Unit"]) == {"Description", "After", "Wants"}
    assert set(s["Service"]) == {"Type", "User", "Group", "WorkingDirectory", "EnvironmentFile", "Environment",
                                 "ExecStart", "Restart", "RestartSec", "LimitNOFILE"}
    assert set(s["Install"]) == {"WantedBy"}


def test_service_values():
    s = parse_unit("/app/deploy/webapp.service")
    u, svc, inst = s["Unit"], s["Service"], s["Install"]
    assert u["Description"] == ["Shop web application"]
    assert sorted(words(u["After"])) == ["network-online.target", "postgresql.service"]
    assert words(u["Wants"]) == ["network-online.target"]
    for key, want in (("Type", "simple"), ("User", "shop"), ("Group", "shop"), ("WorkingDirectory", "/srv/shop"),
                      ("EnvironmentFile", "/etc/shop/env"), ("Restart", "on-failure"), ("LimitNOFILE", "65536")):
        assert svc[key] == [want], key
    assert svc["RestartSec"] in (["5"], ["5s"])
    env = {}
    for v in svc["Environment"]:
        for assignment in shlex.split(v):
            k, val = assignment.split("=", 1)
            env[k] = val
    assert env == {"PORT": "8080", "WORKERS": "4"}
    assert len(svc["ExecStart"]) == 1
    assert shlex.split(svc["ExecStart"][0]) == ["/srv/shop/venv/bin/gunicorn", "--bind", "0.0.0.0:8080", "--workers",
                                                "4", "app:app"]
    assert words(inst["WantedBy"]) == ["multi-user.target"]


def test_timer():
    t = parse_unit("/app/deploy/webapp-backup.timer")
    assert set(t) == {"Unit", "Timer", "Install"}
    assert t["Unit"] == {"Description": ["Nightly shop backup"]}
    assert set(t["Timer"]) == {"OnCalendar", "Persistent", "Unit"}
    assert t["Timer"]["OnCalendar"] == ["*-*-* 03:15:00"]
    assert t["Timer"]["Persistent"][0].lower() in ("true", "yes", "1", "on") and len(t["Timer"]["Persistent"]) == 1
    assert t["Timer"]["Unit"] == ["webapp-backup.service"]
    assert t["Install"] == {"WantedBy": ["timers.target"]}
