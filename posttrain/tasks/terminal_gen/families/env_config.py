"""Environment and config files: edit a KEY=VALUE file, read one key, derive a new env file."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words


def _env(rng: random.Random) -> dict[str, str]:
    return {
        "APP_NAME": rng.choice(words(rng, 1)),
        "PORT": str(rng.randint(3000, 8999)),
        "DB_HOST": f"{stem(rng).replace('_', '-')}.internal",
        "DB_HOST_REPLICA": f"{stem(rng).replace('_', '-')}.internal",
        "LOG_LEVEL": rng.choice(("info", "warn")),
        "WORKERS": str(rng.randint(1, 16)),
    }


def _render(env: dict[str, str], comment: str) -> str:
    return f"# {comment}\n" + "".join(f"{k}={v}\n" for k, v in env.items())


def build(difficulty: int, rng: random.Random) -> TaskParts:
    checks = VerifierTests()
    env = _env(rng)
    if difficulty == 1:
        key = rng.choice(("PORT", "WORKERS"))
        value = str(int(env[key]) + rng.randint(1, 50))
        before = _render(env, f"{key}={env[key]} is the default")  # a commented copy that must stay
        after = before.replace(f"\n{key}={env[key]}\n", f"\n{key}={value}\n")
        checks.add("only_key_changed", f"assert Path('/app/config/app.env').read_text() == {after!r}")
        return TaskParts(
            instruction=f"In /app/config/app.env, set {key} to {value}. Change nothing else.",
            files={"config/app.env": before},
            tests=checks.render(),
            steps=[f"sed -i 's/^{key}=.*/{key}={value}/' /app/config/app.env"],
        )
    if difficulty == 2:
        text = _render(env, f"DB_HOST={stem(rng)}.old was retired")
        checks.unchanged("/app/.env", text)
        checks.value("/app/db_host.txt", env["DB_HOST"])
        return TaskParts(
            instruction="Write the value of DB_HOST from /app/.env (only the value, not the key) to /app/db_host.txt.",
            files={".env": text},
            tests=checks.render(),
            steps=["grep '^DB_HOST=' /app/.env | cut -d= -f2 > /app/db_host.txt"],
        )
    stage = rng.choice(("staging", "preview", "qa"))
    base = _render(env, "LOG_LEVEL=debug only on a laptop")
    derived = base.replace(f"\nLOG_LEVEL={env['LOG_LEVEL']}\n", "\nLOG_LEVEL=debug\n") + f"APP_ENV={stage}\n"
    checks.unchanged("/app/config/base.env", base)
    checks.add(
        "derived", f"assert Path('/app/deploy/{stage}.env').read_text().rstrip(chr(10)) == {derived.rstrip(chr(10))!r}"
    )
    return TaskParts(
        instruction=f"Create /app/deploy/{stage}.env (/app/deploy does not exist yet): a copy of /app/config/base.env "
        f"with LOG_LEVEL set to debug and a last line APP_ENV={stage}. Leave base.env unchanged.",
        files={"config/base.env": base},
        tests=checks.render(),
        steps=[
            "mkdir -p /app/deploy",
            f"sed 's/^LOG_LEVEL=.*/LOG_LEVEL=debug/' /app/config/base.env > /app/deploy/{stage}.env",
            f"echo 'APP_ENV={stage}' >> /app/deploy/{stage}.env",
        ],
    )


FAMILY = Family(
    name="env-config",
    skill="read and edit KEY=VALUE environment and config files",
    levels=(
        "set one key with sed (a commented copy must stay)",
        "read one key's value (a commented and a longer key look alike)",
        "derive a new env file in a folder that does not exist",
    ),
    build=build,
)
