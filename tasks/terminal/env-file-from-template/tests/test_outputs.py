import json
import os
import stat
import subprocess

EXPECTED = r'''# Application environment -- generated from .env.template
APP_NAME=shop
APP_ENV=production

# Database
DB_HOST=db.prod.internal
DB_PORT=5432
DB_USER=
DB_PASSWORD="s3cr3t \$pecial \"quoted\" \`tick\` back\\slash #hash"

# Optional
FEATURE_FLAGS="search, checkout"
LOG_LEVEL=warn
GREETING="hi there"
'''


def test_content_exact():
    with open("/app/config/.env") as fh:
        assert fh.read() == EXPECTED


def test_mode():
    assert stat.S_IMODE(os.stat("/app/config/.env").st_mode) == 0o600


def test_sourcing_gives_values():
    values = json.load(open("/app/config/values.json"))
    script = 'set -a; . /app/config/.env; printf "%s\\0" "$DB_PASSWORD" "$FEATURE_FLAGS" "$GREETING" "$DB_USER"'
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.split("\0")[:4] == [values["DB_PASSWORD"], values["FEATURE_FLAGS"], values["GREETING"], ""]
