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


def _edit(rng: random.Random, layout: Layout, goal: str, edit, step: str) -> TaskParts:
    """A one-command edit of app.env: `edit(env, text)` is the expected text, `step` the sed/echo
    command with {file} for the file's path."""
    env = _env(rng)
    before = _render(env, "WORKERS=4 and DEBUG=true on a laptop")  # a commented line that must stay
    rel = f"{layout.folder('config', 'app config')}/app.env"
    checks = VerifierTests()
    checks.add("edited", f"assert Path({layout.path(rel)!r}).read_text() == {edit(env, before)!r}")
    return TaskParts(
        instruction=Spec(goal=goal.format(file=layout.show(rel)), notes=["Change nothing else."]),
        files={rel: before},
        tests=checks.render(),
        steps=[step.format(file=layout.sh(rel))],
    )


def add_key(rng: random.Random, layout: Layout) -> TaskParts:
    seconds = rng.randint(5, 120)
    return _edit(
        rng,
        layout,
        f"add the setting TIMEOUT={seconds} as a new last line of {{file}}",
        lambda env, text: text + f"TIMEOUT={seconds}\n",
        f"echo 'TIMEOUT={seconds}' >> {{file}}",
    )


def comment_out(rng: random.Random, layout: Layout) -> TaskParts:
    key = rng.choice(("PORT", "LOG_LEVEL", "APP_NAME"))
    return _edit(
        rng,
        layout,
        f"comment out the {key} line of {{file}} by putting '# ' (a hash and a space) in front of it",
        lambda env, text: text.replace(f"\n{key}=", f"\n# {key}="),
        f"sed -i 's/^{key}=/# {key}=/' {{file}}",
    )


def delete_key(rng: random.Random, layout: Layout) -> TaskParts:
    return _edit(
        rng,
        layout,
        "remove the WORKERS setting from {file}",
        lambda env, text: text.replace(f"\nWORKERS={env['WORKERS']}\n", "\n"),
        "sed -i '/^WORKERS=/d' {file}",
    )


def list_keys(rng: random.Random, layout: Layout) -> TaskParts:
    env = _env(rng)
    text = _render(env, "PASSWORD= is never stored here")
    checks = VerifierTests()
    checks.unchanged(layout.path(".env"), text)
    checks.lines(layout.path("keys.txt"), sorted(env))
    return TaskParts(
        instruction=Spec(
            goal=f"write the names of the keys set in {layout.show('.env')} to {layout.show('keys.txt')}",
            output="one key per line, sorted, comment lines ignored",
        ),
        files={".env": text},
        tests=checks.render(),
        steps=[f"grep -v '^#' {layout.sh('.env')} | cut -d= -f1 | sort > {layout.sh('keys.txt')}"],
    )


def _ini(rng: random.Random) -> tuple[dict[str, dict[str, str]], str]:
    sections = {
        "database": {"host": f"{stem(rng).replace('_', '-')}.internal", "port": str(rng.randint(5000, 5999))},
        "cache": {"host": f"{stem(rng).replace('_', '-')}.internal", "port": str(rng.randint(6000, 6999))},
        "web": {"port": str(rng.randint(7000, 8999)), "workers": str(rng.randint(1, 9))},
    }
    order = rng.sample(list(sections), 3)
    text = "".join(f"[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in sections[s].items()) + "\n" for s in order)
    return sections, text


def ini_value(rng: random.Random, layout: Layout) -> TaskParts:
    sections, text = _ini(rng)
    section = rng.choice(("cache", "database"))
    rel = f"{layout.folder('etc', 'service config')}/service.ini"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.value(layout.path("port.txt"), sections[section]["port"])
    return TaskParts(
        instruction=Spec(
            goal=f"write the port of the [{section}] section of {layout.show(rel)} to {layout.show('port.txt')}",
            inputs=[f"{layout.show(rel)} is an INI file: [section] headers, then 'key = value' lines"],
            output="just the number",
            notes=["Other sections have a port too."],
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[
            f"awk -F' = ' '/^\\[/ {{s=$0}} s==\"[{section}]\" && $1==\"port\" {{print $2}}' {layout.sh(rel)} > "
            f"{layout.sh('port.txt')}"
        ],
    )


def export_lines(rng: random.Random, layout: Layout) -> TaskParts:
    env = _env(rng)
    text = _render(env, "source this file from a shell")
    rel = f"{layout.folder('config', 'app config')}/app.env"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("app.sh"), [f"export {k}={v}" for k, v in env.items()])
    return TaskParts(
        instruction=Spec(
            goal=f"write {layout.show('app.sh')}: every KEY=VALUE line of {layout.show(rel)} as `export KEY=VALUE`",
            output="one export line per setting, in the file's order, without the comment lines",
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"grep -v '^#' {layout.sh(rel)} | sed 's/^/export /' > {layout.sh('app.sh')}"],
    )


def ini_edit(rng: random.Random, layout: Layout) -> TaskParts:
    sections, text = _ini(rng)
    port = str(rng.randint(10000, 19999))
    rel = f"{layout.folder('etc', 'service config')}/service.ini"
    lines, current, edited = text.splitlines(), None, []
    for line in lines:
        current = line if line.startswith("[") else current
        edited.append(f"port = {port}" if current == "[cache]" and line.startswith("port = ") else line)
    checks = VerifierTests()
    checks.add("edited", f"assert Path({layout.path(rel)!r}).read_text() == {''.join(e + chr(10) for e in edited)!r}")
    return TaskParts(
        instruction=Spec(
            goal=f"set the port of the [cache] section of {layout.show(rel)} to {port}, editing the file in place",
            inputs=[f"{layout.show(rel)} is an INI file: [section] headers, then 'key = value' lines"],
            notes=["The other sections' ports, and every other line, stay as they are."],
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[f"sed -i '/^\\[cache\\]/,/^\\[/ s/^port = .*/port = {port}/' {layout.sh(rel)}"],
    )


def missing_keys(rng: random.Random, layout: Layout) -> TaskParts:
    env = _env(rng)
    dropped = rng.sample(sorted(env), 2)
    prod = {k: v for k, v in env.items() if k not in dropped}
    example, actual = _render(env, "copy to prod.env and fill in"), _render(prod, f"{dropped[0]}= was set by hand")
    ex, pr = f"{layout.folder('config', 'app config')}/example.env", f"{layout.folder('config', 'app config')}/prod.env"
    checks = VerifierTests()
    checks.unchanged(layout.path(ex), example)
    checks.unchanged(layout.path(pr), actual)
    checks.lines(layout.path("report/missing_keys.txt"), sorted(dropped))
    keys = "grep -v '^#' {} | cut -d= -f1 | sort > {}"
    return TaskParts(
        instruction=Spec(
            goal=f"write the keys that {layout.show(ex)} sets but {layout.show(pr)} does not to "
            f"{layout.show('report/missing_keys.txt')}",
            output="one key per line, sorted",
            notes=["Comment lines do not set keys.", f"{layout.show('report')} does not exist yet."],
        ),
        files={ex: example, pr: actual},
        tests=checks.render(),
        steps=[
            keys.format(layout.sh(ex), "/tmp/example_keys"),
            keys.format(layout.sh(pr), "/tmp/prod_keys"),
            f"mkdir -p {layout.sh('report')} && comm -23 /tmp/example_keys /tmp/prod_keys > "
            f"{layout.sh('report/missing_keys.txt')}",
        ],
    )


def mask_secrets(rng: random.Random, layout: Layout) -> TaskParts:
    env = _env(rng) | {"DB_PASSWORD": stem(rng), "API_TOKEN": f"{rng.getrandbits(40):010x}"}
    text = _render(env, "DB_PASSWORD and API_TOKEN come from the vault")
    expected = [
        line
        if line.startswith("#") or not line.split("=")[0].endswith(("PASSWORD", "TOKEN"))
        else line.split("=")[0] + "=***"
        for line in text.splitlines()
    ]
    rel = f"{layout.folder('config', 'app config')}/app.env"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text)
    checks.lines(layout.path("share/app.env"), expected)
    return TaskParts(
        instruction=Spec(
            goal=f"write a copy of {layout.show(rel)} to {layout.show('share/app.env')} in which the value of every "
            "key ending in PASSWORD or TOKEN is replaced by ***",
            output="the same lines in the same order, e.g. DB_PASSWORD=***",
            notes=["Comment lines stay as they are.", f"{layout.show('share')} does not exist yet."],
        ),
        files={rel: text},
        tests=checks.render(),
        steps=[
            f"mkdir -p {layout.sh('share')}",
            f"sed -E 's/^([A-Z_]*(PASSWORD|TOKEN))=.*/\\1=***/' {layout.sh(rel)} > {layout.sh('share/app.env')}",
        ],
    )


FAMILY = Family(
    name="env-config",
    skill="read and edit KEY=VALUE environment and config files",
    templates={
        1: (
            Template("set-key", "set one key with sed (a commented copy must stay)", set_key),
            Template("add-key", "append a setting", add_key),
            Template("comment-out", "comment out one setting", comment_out),
            Template("delete-key", "delete one setting", delete_key),
        ),
        2: (
            Template("read-key", "read one key's value (a commented and a longer key look alike)", read_key),
            Template("list-keys", "list the keys, comments ignored", list_keys),
            Template("ini-value", "read a key of one INI section (other sections share it)", ini_value),
            Template("export-lines", "turn settings into export lines", export_lines),
        ),
        3: (
            Template("derive-env", "derive a new env file in a folder that does not exist", derive_env),
            Template("ini-edit", "edit a key in one INI section only", ini_edit),
            Template("missing-keys", "the keys one env file lacks, into a new folder", missing_keys),
            Template("mask-secrets", "mask secret values into a copy in a new folder", mask_secrets),
        ),
    },
)
