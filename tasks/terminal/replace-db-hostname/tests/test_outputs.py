import os
from pathlib import Path

ROOT = Path("/app/etc")

EXPECTED = {
    "app.conf": """# Application settings
# The database used to live on old-db.internal (migrated 2024-02).
[database]
host = db.prod.internal
port = 5432
dsn = postgres://app@db.prod.internal:5432/app
fallback = cold-db.internal

[cache]
host = cache.internal
""",
    "db/primary.conf": """primary_host=db.prod.internal
replica_hosts=old-db.internal.eu,db.prod.internal,replica-old-db.internal
  # old-db.internal stays in this indented comment
backup_target=db.prod.internal/backups
url=http://db.prod.internal
""",
    "db/replica.conf": """upstream db.prod.internal;  # primary
allow 10.0.0.0/8;
mirror_of=OLD-DB.INTERNAL
""",
    "services/worker.conf": """queue=redis://queue.internal:6379
results=db.prod.internal
notes="talks to db.prod.internal and old-db-internal"
""",
    "services/worker.conf.disabled": "results=old-db.internal\n",
    "README.md": "Configs here used to point at old-db.internal.\n",
}


def test_file_set_unchanged():
    found = set()
    for d, _, files in os.walk(ROOT):
        for f in files:
            found.add(os.path.relpath(os.path.join(d, f), ROOT))
    assert found == set(EXPECTED)


def test_contents_exact():
    for rel, text in EXPECTED.items():
        assert (ROOT / rel).read_text() == text, rel
