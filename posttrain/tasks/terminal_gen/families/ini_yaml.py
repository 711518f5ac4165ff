"""INI and YAML config edits with sed, awk and python3 (PyYAML): list and add sections, set or
delete a key in one section only, read nested YAML values, change a YAML scalar or list item."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import stem, words

HELPERS = """
import configparser

import yaml


def ini(path):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(Path(path).read_text())
    return {s: dict(parser[s]) for s in parser.sections()}


def yml(path):
    return yaml.safe_load(Path(path).read_text())
"""
# every section shares some keys with another: the trap for an edit that is not scoped
SECTIONS = {
    "server": ("host", "port", "timeout", "workers"),
    "database": ("host", "port", "user", "timeout"),
    "cache": ("host", "port", "ttl"),
    "logging": ("level", "path", "timeout"),
}
PY_YAML = "python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); {}'"


def _value(rng: random.Random, key: str) -> str:
    choices = {
        "host": lambda: f"{rng.choice(words(rng, 3))}.internal",
        "port": lambda: str(rng.randint(1024, 9999)),
        "timeout": lambda: str(rng.randint(5, 120)),
        "workers": lambda: str(rng.randint(2, 32)),
        "user": lambda: rng.choice(("app", "svc", "admin")),
        "ttl": lambda: str(rng.randint(60, 3600)),
        "level": lambda: rng.choice(("info", "debug", "warning")),
        "path": lambda: f"/var/log/{stem(rng)}.log",
    }
    return choices[key]()


def _ini(rng: random.Random) -> dict[str, dict[str, str]]:
    names = rng.sample(list(SECTIONS), 3)
    if not any(n in ("server", "database") for n in names):
        names[0] = "server"
    return {s: {k: _value(rng, k) for k in SECTIONS[s]} for s in names}


def _ini_text(config: dict[str, dict[str, str]], rng: random.Random) -> str:
    head = f"; {rng.choice(('settings', 'service config', 'deployed config'))}\n"
    return head + "\n".join(f"[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in keys.items()) for s, keys in config.items())


def _ini_input(rng: random.Random, layout: Layout) -> tuple[str, dict[str, dict[str, str]], str]:
    config = _ini(rng)
    return f"{layout.folder('conf', 'service conf')}/{stem(rng)}.ini", config, _ini_text(config, rng)


def _shared_key(rng: random.Random, config: dict[str, dict[str, str]]) -> tuple[str, str]:
    """(a section, a key of it that another section has too)."""
    pairs = [(s, k) for s in config for k in config[s] if sum(k in other for other in config.values()) > 1]
    return rng.choice(pairs)


def _yaml(rng: random.Random) -> tuple[dict, str]:
    hosts = [f"web{i}.{rng.choice(('example.com', 'corp.test'))}" for i in rng.sample(range(1, 20), rng.randint(3, 5))]
    services = [{"name": w, "replicas": rng.randint(1, 9)} for w in words(rng, rng.randint(3, 5))]
    data = {
        "name": stem(rng),
        "version": f"{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
        "server": {"host": "0.0.0.0", "port": rng.randint(8000, 8999)},
        "database": {
            "primary": {"host": f"{rng.choice(words(rng, 2))}.internal", "port": rng.randint(5400, 5499)},
            "replica": {"host": f"{rng.choice(words(rng, 2))}.internal", "port": rng.randint(5500, 5599)},
        },
        "hosts": hosts,
        "backup_hosts": [hosts[0], f"backup.{hosts[0].split('.', 1)[1]}"],
        "services": services,
    }
    db = data["database"]
    text = (
        f"name: {data['name']}\nversion: {data['version']}\n"
        f"server:\n  host: 0.0.0.0\n  port: {data['server']['port']}\ndatabase:\n"
        + "".join(f"  {k}:\n    host: {v['host']}\n    port: {v['port']}\n" for k, v in db.items())
        + "hosts:\n"
        + "".join(f"  - {h}\n" for h in hosts)
        + "backup_hosts:\n"
        + "".join(f"  - {h}\n" for h in data["backup_hosts"])
        + "services:\n"
        + "".join(f"  - name: {s['name']}\n    replicas: {s['replicas']}\n" for s in services)
    )
    return data, text


def _yaml_input(rng: random.Random, layout: Layout) -> tuple[str, dict, str]:
    data, text = _yaml(rng)
    return f"{layout.folder('deploy', 'deploy config')}/{rng.choice(('app', 'service', 'stack'))}.yaml", data, text


def _parts(spec: Spec, rel: str, text: str, checks: VerifierTests, *steps: str) -> TaskParts:
    return TaskParts(spec, {rel: text}, checks.render(), list(steps))


def _mkdir_for(layout: Layout, out: str) -> str:
    """The step that makes the folder `out` goes into."""
    return f"mkdir -p {layout.sh(out.rsplit('/', 1)[0])}"


def _read_only(layout: Layout, rel: str, text: str) -> VerifierTests:
    checks = VerifierTests(HELPERS)
    checks.unchanged(layout.path(rel), text)
    return checks


def _edited(layout: Layout, rel: str, expected: object, reader: str) -> VerifierTests:
    """Checks that the file, parsed by `reader` (ini or yml), equals `expected`."""
    checks = VerifierTests(HELPERS)
    checks.add("edited", f"assert {reader}({layout.path(rel)!r}) == {expected!r}")
    return checks


# ---- difficulty 1: one command -------------------------------------------------------------


def list_sections(rng: random.Random, layout: Layout) -> TaskParts:
    rel, config, text = _ini_input(rng, layout)
    checks = _read_only(layout, rel, text)
    checks.lines(layout.path("sections.txt"), list(config))
    spec = Spec(
        goal=f"write the names of the sections of {layout.show(rel)} to {layout.show('sections.txt')}",
        output="one name per line without the brackets, in file order",
    )
    return _parts(
        spec, rel, text, checks, f"sed -n 's/^\\[\\(.*\\)\\]$/\\1/p' {layout.sh(rel)} > {layout.sh('sections.txt')}"
    )


def yaml_top_value(rng: random.Random, layout: Layout) -> TaskParts:
    rel, data, text = _yaml_input(rng, layout)
    key = rng.choice(("name", "version"))
    checks = _read_only(layout, rel, text)
    checks.value(layout.path(f"{key}.txt"), data[key])
    spec = Spec(
        goal=f"write the value of the top-level key {key} of {layout.show(rel)} to {layout.show(f'{key}.txt')}",
        output="just the value",
    )
    return _parts(spec, rel, text, checks, f"awk '/^{key}:/ {{print $2}}' {layout.sh(rel)} > {layout.sh(f'{key}.txt')}")


def add_section(rng: random.Random, layout: Layout) -> TaskParts:
    rel, config, text = _ini_input(rng, layout)
    name = rng.choice([s for s in ("metrics", "auth", "queue", "mail")])
    key, value = rng.choice((("enabled", "true"), ("interval", str(rng.randint(5, 90))), ("retries", "3")))
    checks = _edited(layout, rel, {**config, name: {key: value}}, "ini")
    spec = Spec(
        goal=f"add a section [{name}] holding {key} = {value} to the end of {layout.show(rel)}",
        notes=["Keep every existing section and key as it is."],
    )
    return _parts(spec, rel, text, checks, f"printf '\\n[{name}]\\n{key} = {value}\\n' >> {layout.sh(rel)}")


def yaml_list_items(rng: random.Random, layout: Layout) -> TaskParts:
    rel, data, text = _yaml_input(rng, layout)
    checks = _read_only(layout, rel, text)
    checks.lines(layout.path("hosts.txt"), data["hosts"])
    spec = Spec(
        goal=f"write the items of the top-level list hosts in {layout.show(rel)} to {layout.show('hosts.txt')}",
        output="one item per line, in file order",
        notes=["Other lists in the file are not wanted."],
    )
    code = PY_YAML.format('print(*d["hosts"], sep="\\n")')
    return _parts(spec, rel, text, checks, f"{code} {layout.sh(rel)} > {layout.sh('hosts.txt')}")


# ---- difficulty 2: scoped edits and nested reads ---------------------------------------------


def _scoped_edit(rng: random.Random, layout: Layout, edit: str) -> TaskParts:
    """Set (edit "set") or delete (edit "delete") a key in one section; other sections share the key."""
    rel, config, text = _ini_input(rng, layout)
    section, key = _shared_key(rng, config)
    old = config[section][key]
    value = str(int(old) + rng.randint(1, 50)) if old.isdigit() else "changed"
    if edit == "set":
        keys, action, sed = {**config[section], key: value}, f"set {key} to {value}", f"s/^{key} *=.*/{key} = {value}/"
    else:
        keys = {k: v for k, v in config[section].items() if k != key}
        action, sed = f"delete the {key} line", f"{{/^{key} *=/d}}"
    spec = Spec(
        goal=f"{action} in the [{section}] section of {layout.show(rel)}, editing the file in place",
        notes=[f"Other sections have a {key} too; they keep theirs."],
    )
    step = f"sed -i '/^\\[{section}\\]/,/^\\[/ {sed}' {layout.sh(rel)}"
    return _parts(spec, rel, text, _edited(layout, rel, {**config, section: keys}, "ini"), step)


def set_in_section(rng: random.Random, layout: Layout) -> TaskParts:
    return _scoped_edit(rng, layout, "set")


def yaml_nested_value(rng: random.Random, layout: Layout) -> TaskParts:
    rel, data, text = _yaml_input(rng, layout)
    which, field = rng.choice(("primary", "replica")), rng.choice(("host", "port"))
    checks = _read_only(layout, rel, text)
    checks.value(layout.path("value.txt"), str(data["database"][which][field]))
    spec = Spec(
        goal=f"write the value of database.{which}.{field} in {layout.show(rel)} to {layout.show('value.txt')}",
        inputs=[f"That is the key {field} under {which} under the top-level key database"],
        output="just the value",
    )
    code = PY_YAML.format(f'print(d["database"]["{which}"]["{field}"])')
    return _parts(spec, rel, text, checks, f"{code} {layout.sh(rel)} > {layout.sh('value.txt')}")


def delete_in_section(rng: random.Random, layout: Layout) -> TaskParts:
    return _scoped_edit(rng, layout, "delete")


def yaml_set_port(rng: random.Random, layout: Layout) -> TaskParts:
    rel, data, text = _yaml_input(rng, layout)
    port = rng.randint(9000, 9999)
    expected = {**data, "server": {**data["server"], "port": port}}
    spec = Spec(
        goal=f"change server.port in {layout.show(rel)} to {port}, editing the file in place",
        notes=["Other keys named port stay as they are, and the file must remain valid YAML."],
    )
    step = f"sed -i '/^server:/,/^[^ ]/ s/^  port: .*/  port: {port}/' {layout.sh(rel)}"
    return _parts(spec, rel, text, _edited(layout, rel, expected, "yml"), step)


# ---- difficulty 3: a copy in a new folder, a look-alike section or list, a header comment ------


def replace_list_item(rng: random.Random, layout: Layout) -> TaskParts:
    rel, data, text = _yaml_input(rng, layout)
    old = data["hosts"][0]  # also in backup_hosts, where it must stay
    new = f"web{rng.randint(20, 99)}.{old.split('.', 1)[1]}"
    out = f"release/{data['version']}/{rel.rsplit('/', 1)[1]}"
    checks = _read_only(layout, rel, text)
    checks.add("copy_edited", f"assert yml({layout.path(out)!r}) == {dict(data, hosts=[new, *data['hosts'][1:]])!r}")
    spec = Spec(
        goal=f"write a copy of {layout.show(rel)} to {layout.show(out)} in which the item {old} of the list hosts "
        f"is replaced by {new}",
        notes=[
            f"The folder of {layout.show(out)} does not exist yet.",
            f"{old} is also in backup_hosts; it stays there.",
            "Leave the original file as it is.",
        ],
    )
    step = f"sed '/^hosts:/,/^[^ ]/ s/^  - {old}$/  - {new}/' {layout.sh(rel)} > {layout.sh(out)}"
    return _parts(spec, rel, text, checks, _mkdir_for(layout, out), step)


def section_to_env(rng: random.Random, layout: Layout) -> TaskParts:
    rel, config, text = _ini_input(rng, layout)
    section = rng.choice(list(config))
    prefix = section.upper()
    out = f"env/{section}.env"
    checks = _read_only(layout, rel, text)
    checks.lines(layout.path(out), [f"{prefix}_{k.upper()}={v}" for k, v in config[section].items()])
    awk = (
        f'awk -F\' = \' \'/^\\[/ {{s = ($0 == "[{section}]")}} s && NF == 2 {{print "{prefix}_" toupper($1) "=" $2}}\''
    )
    spec = Spec(
        goal=f"turn every key of the [{section}] section of {layout.show(rel)} into a line {prefix}_KEY=value in "
        f"{layout.show(out)}",
        inputs=[f"{layout.show(rel)} starts with a comment line; its keys are written 'key = value'"],
        output=f"one line per key, the key in upper case after {prefix}_, in file order",
        notes=[f"The folder of {layout.show(out)} does not exist yet."],
    )
    return _parts(spec, rel, text, checks, _mkdir_for(layout, out), f"{awk} {layout.sh(rel)} > {layout.sh(out)}")


def rename_section(rng: random.Random, layout: Layout) -> TaskParts:
    rel, config, _ = _ini_input(rng, layout)
    old = next(iter(config))
    config[f"{old}-replica"] = {k: _value(rng, k) for k in SECTIONS[old]}  # a look-alike name, to leave alone
    text = _ini_text(config, rng)
    new = f"{old}-{rng.choice(('main', 'live', 'v2'))}"
    key = rng.choice([k for k in config[old] if config[old][k].isdigit()])
    value = str(int(config[old][key]) * 2)
    expected = {(new if s == old else s): ({**keys, key: value} if s == old else keys) for s, keys in config.items()}
    spec = Spec(
        goal=f"rename the section [{old}] of {layout.show(rel)} to [{new}] and set its {key} to {value}, editing "
        "the file in place",
        notes=[f"The section [{old}-replica] keeps its name and keys."],
    )
    return _parts(
        spec,
        rel,
        text,
        _edited(layout, rel, expected, "ini"),
        f"sed -i 's/^\\[{old}\\]$/[{new}]/' {layout.sh(rel)}",
        f"sed -i '/^\\[{new}\\]/,/^\\[/ s/^{key} *=.*/{key} = {value}/' {layout.sh(rel)}",
    )


def replicas_report(rng: random.Random, layout: Layout) -> TaskParts:
    rel, data, text = _yaml_input(rng, layout)
    services = sorted(data["services"], key=lambda s: s["name"])
    out = f"reports/{data['name']}/replicas.txt"
    checks = _read_only(layout, rel, text)
    checks.lines(layout.path(out), [f"{s['name']} {s['replicas']}" for s in services])
    checks.value(layout.path("total_replicas.txt"), str(sum(s["replicas"] for s in services)))
    code = PY_YAML.format('[print(s["name"], s["replicas"]) for s in d["services"]]')
    spec = Spec(
        goal=f"write each service of {layout.show(rel)} with its replicas to {layout.show(out)}, and the sum of "
        f"all replicas to {layout.show('total_replicas.txt')}",
        inputs=[f"The top-level key services of {layout.show(rel)} is a list of mappings with name and replicas"],
        output="lines 'name replicas' sorted by name, and the sum as just the integer",
        notes=[f"The folder of {layout.show(out)} does not exist yet."],
    )
    return _parts(
        spec,
        rel,
        text,
        checks,
        _mkdir_for(layout, out),
        f"{code} {layout.sh(rel)} | sort > {layout.sh(out)}",
        f"awk '{{s += $2}} END {{print s}}' {layout.sh(out)} > {layout.sh('total_replicas.txt')}",
    )


FAMILY = Family(
    name="ini-yaml",
    skill="read and edit INI sections and YAML keys with sed, awk and python3 (yaml)",
    templates={
        1: (
            Template("list-sections", "the section names of an INI file", list_sections),
            Template("yaml-top-value", "a top-level YAML value", yaml_top_value),
            Template("add-section", "append an INI section with one key", add_section),
            Template("yaml-list-items", "the items of one YAML list (another list looks alike)", yaml_list_items),
        ),
        2: (
            Template("set-in-section", "set a key in one INI section only (sed range)", set_in_section),
            Template("yaml-nested-value", "a value three levels deep in YAML", yaml_nested_value),
            Template("delete-in-section", "delete a key in one INI section only", delete_in_section),
            Template("yaml-set-port", "change one nested YAML scalar in place", yaml_set_port),
        ),
        3: (
            Template("replace-list-item", "replace a YAML list item in a copy in a new folder", replace_list_item),
            Template("section-to-env", "an INI section as PREFIX_KEY=value lines in a new folder", section_to_env),
            Template("rename-section", "rename a section (a look-alike stays) and set a key", rename_section),
            Template("replicas-report", "per-item values of a YAML list and their sum", replicas_report),
        ),
    },
)
