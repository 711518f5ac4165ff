"""Environment and config files: edit a KEY=VALUE file, read one key, derive a new env file."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
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


def set_key(rng: random.Random, layout: Layout) -> TaskParts:
    env = _env(rng)
    key = rng.choice(("PORT", "WORKERS"))
    value = str(int(env[key]) + rng.randint(1, 50))
    before = _render(env, f"{key}={env[key]} is the default")  # a commented copy that must stay
    after = before.replace(f"\n{key}={env[key]}\n", f"\n{key}={value}\n")
    rel = f"{layout.folder('config', 'app config')}/app.env"
    checks = VerifierTests()
    checks.add("only_key_changed", f"assert Path({layout.path(rel)!r}).read_text() == {after!r}")
    return TaskParts(
        instruction=Spec(goal=f"in {layout.show(rel)}, set {key} to {value}", notes=["Change nothing else."]),
        files={rel: before},
        tests=checks.render(),
        steps=[f"sed -i 's/^{key}=.*/{key}={value}/' {layout.sh(rel)}"],
    )


def read_key(rng: random.Random, layout: Layout) -> TaskParts:
    env = _env(rng)
    text = _render(env, f"DB_HOST={stem(rng)}.old was retired")
    checks = VerifierTests()
    checks.unchanged(layout.path(".env"), text)
    checks.value(layout.path("db_host.txt"), env["DB_HOST"])
    return TaskParts(
        instruction=Spec(
            goal=f"write the value of DB_HOST from {layout.show('.env')} to {layout.show('db_host.txt')}",
            output="only the value, not the key",
        ),
        files={".env": text},
        tests=checks.render(),
        steps=[f"grep '^DB_HOST=' {layout.sh('.env')} | cut -d= -f2 > {layout.sh('db_host.txt')}"],
    )


def derive_env(rng: random.Random, layout: Layout) -> TaskParts:
    env = _env(rng)
    stage = rng.choice(("staging", "preview", "qa"))
    base = _render(env, "LOG_LEVEL=debug only on a laptop")
    derived = base.replace(f"\nLOG_LEVEL={env['LOG_LEVEL']}\n", "\nLOG_LEVEL=debug\n") + f"APP_ENV={stage}\n"
    rel, out = f"{layout.folder('config', 'app config')}/base.env", f"deploy/{stage}.env"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), base)
    checks.add(
        "derived",
        f"assert Path({layout.path(out)!r}).read_text().rstrip(chr(10)) == {derived.rstrip(chr(10))!r}",
    )
    return TaskParts(
        instruction=Spec(
            goal=f"create {layout.show(out)}: a copy of {layout.show(rel)} with LOG_LEVEL set to debug and a last "
            f"line APP_ENV={stage}",
            notes=[f"{layout.show('deploy')} does not exist yet.", "Leave base.env unchanged."],
        ),
        files={rel: base},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('deploy')}",
            f"sed 's/^LOG_LEVEL=.*/LOG_LEVEL=debug/' {layout.sh(rel)} > {layout.sh(out)}",
            f"echo 'APP_ENV={stage}' >> {layout.sh(out)}",
        ],
    )


FAMILY = Family(
    name="env-config",
    skill="read and edit KEY=VALUE environment and config files",
    templates={
        1: (Template("set-key", "set one key with sed (a commented copy must stay)", set_key),),
        2: (Template("read-key", "read one key's value (a commented and a longer key look alike)", read_key),),
        3: (Template("derive-env", "derive a new env file in a folder that does not exist", derive_env),),
    },
)
