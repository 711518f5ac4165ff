"""In-place edits with sed: replace a word, delete matching lines, change a key's value, edit
several files at once, keep a backup."""

from __future__ import annotations

import random

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import WORDS, people, stem, words


def _prose(rng: random.Random, vocabulary: list[str], lines: int) -> str:
    """Lines of words drawn from `vocabulary` (each word whole, none containing another)."""
    return "".join(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 7))) + "\n" for _ in range(lines))


def _swap_words(rng: random.Random) -> tuple[str, str, list[str]]:
    """(a word to replace, its replacement, the vocabulary the text uses, which holds the first
    and not the second); no word of the pool is a substring of another."""
    pool = [w for w in WORDS if not any(w != o and w in o for o in WORDS)]
    old, new, *rest = rng.sample(pool, 7)
    return old, new, [old, *rest]


def _joined(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


def _settings(rng: random.Random) -> dict[str, str]:
    keys = rng.sample(("host", "port", "user", "mode", "level", "workers", "theme", "region"), 5)
    values = {"port": str(rng.randint(1024, 9999)), "workers": str(rng.randint(1, 16))}
    return {k: values.get(k, rng.choice(WORDS)) for k in keys}


def _settings_text(settings: dict[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in settings.items())


# ---- difficulty 1: one sed command ----------------------------------------------------------


def replace_word(rng: random.Random, layout: Layout) -> TaskParts:
    old, new, vocabulary = _swap_words(rng)
    rel = f"{layout.folder('docs', 'team docs')}/{stem(rng)}.txt"
    text = _prose(rng, vocabulary, rng.randint(6, 12))
    if old not in text:
        text = f"{old} {text}"
    other = f"{layout.folder('docs', 'team docs')}/{stem(rng)}_other.txt"
    other_text = f"{old} stays here\n"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text.replace(old, new))
    checks.unchanged(layout.path(other), other_text)
    spec = Spec(
        goal=f"replace every occurrence of the word '{old}' with '{new}' in {layout.show(rel)}, editing the file "
        "in place",
        notes=[f"Leave {layout.show(other)} as it is."],
    )
    return TaskParts(
        spec, {rel: text, other: other_text}, checks.render(), [f"sed -i 's/{old}/{new}/g' {layout.sh(rel)}"]
    )


def delete_matching(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('logs', 'app logs')}/{stem(rng)}.log"
    users = people(rng, 4)
    lines = [
        f"{rng.choice(('INFO', 'DEBUG', 'WARN', 'DEBUG'))} {rng.choice(users)} {rng.choice(WORDS)}"
        for _ in range(rng.randint(12, 24))
    ]
    lines[0], lines[1] = f"DEBUG {users[0]} start", f"INFO {users[1]} ready"
    text = _joined(lines)
    checks = VerifierTests()
    checks.lines(layout.path(rel), [line for line in lines if not line.startswith("DEBUG ")])
    spec = Spec(
        goal=f"delete every DEBUG line from {layout.show(rel)} in place",
        inputs=[f"Each line of {layout.show(rel)} is: level user word"],
        notes=["Keep the other lines in their order."],
    )
    return TaskParts(spec, {rel: text}, checks.render(), [f"sed -i '/^DEBUG /d' {layout.sh(rel)}"])


def set_value(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('config', 'app config')}/settings.conf"
    settings = _settings(rng)
    key = rng.choice(list(settings))
    value = f"{rng.choice(WORDS)}{rng.randint(2, 9)}"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), _settings_text({**settings, key: value}))
    spec = Spec(
        goal=f"change the value of {key} in {layout.show(rel)} to {value}, editing the file in place",
        inputs=[f"{layout.show(rel)} holds one key=value setting per line"],
        notes=["Every other line stays as it is."],
    )
    step = f"sed -i 's/^{key}=.*/{key}={value}/' {layout.sh(rel)}"
    return TaskParts(spec, {rel: _settings_text(settings)}, checks.render(), [step])


def insert_header(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('data', 'raw data')}/{stem(rng)}.csv"
    names = people(rng, rng.randint(4, 8))
    text = "".join(f"{n},{rng.randint(18, 80)},{rng.choice(WORDS)}\n" for n in names)
    header = "name,age,city"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), f"{header}\n{text}")
    spec = Spec(
        goal=f"insert the header line '{header}' at the top of {layout.show(rel)}, editing the file in place",
        notes=["The existing rows stay below it, unchanged."],
    )
    return TaskParts(spec, {rel: text}, checks.render(), [f"sed -i '1i {header}' {layout.sh(rel)}"])


# ---- difficulty 2: several files, a backup, two edits, a range ------------------------------


def replace_in_files(rng: random.Random, layout: Layout) -> TaskParts:
    old, new, vocabulary = _swap_words(rng)
    folder = layout.folder("pages", "web pages")
    names = words(rng, rng.randint(3, 5))
    files = {f"{folder}/{n}.txt": f"{old} {_prose(rng, vocabulary, rng.randint(2, 5))}" for n in names}
    kept = f"{folder}/{stem(rng)}.md"
    files[kept] = f"{old} is mentioned here too\n"
    checks = VerifierTests()
    for path, content in files.items():
        checks.unchanged(layout.path(path), content if path == kept else content.replace(old, new))
    spec = Spec(
        goal=f"replace '{old}' with '{new}' everywhere in every .txt file of {layout.show(folder)}, in place",
        notes=[f"Leave files of other types in {layout.show(folder)} alone."],
    )
    return TaskParts(spec, files, checks.render(), [f"sed -i 's/{old}/{new}/g' {layout.sh(folder)}/*.txt"])


def edit_with_backup(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('etc', 'service config')}/{stem(rng)}.conf"
    settings = _settings(rng)
    settings["port"] = str(rng.randint(1024, 4999))
    port = str(int(settings["port"]) + rng.randint(1, 999))
    text = _settings_text(settings)
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), _settings_text({**settings, "port": port}))
    checks.unchanged(layout.path(f"{rel}.bak"), text)
    spec = Spec(
        goal=f"set port to {port} in {layout.show(rel)} in place, keeping the original file as "
        f"{layout.show(rel + '.bak')}",
        inputs=[f"{layout.show(rel)} holds one key=value setting per line"],
        output="the edited file, and the backup with the old content",
    )
    return TaskParts(spec, {rel: text}, checks.render(), [f"sed -i.bak 's/^port=.*/port={port}/' {layout.sh(rel)}"])


def toggle_comment(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('config', 'app config')}/{stem(rng)}.conf"
    settings = _settings(rng)
    keys = list(settings)
    off, on = keys[1], keys[3]
    lines = [f"#{k}={v}" if k == on else f"{k}={v}" for k, v in settings.items()]
    expected = [f"#{k}={v}" if k == off else f"{k}={v}" for k, v in settings.items()]
    checks = VerifierTests()
    checks.lines(layout.path(rel), expected)
    spec = Spec(
        goal=f"in {layout.show(rel)}, comment out the {off} line and uncomment the {on} line, in place",
        inputs=[f"{layout.show(rel)} holds key=value lines; a commented line starts with '#'"],
        output="the same lines, with '#' added at the start of one and removed from the other",
    )
    step = f"sed -i -e 's/^{off}=/#{off}=/' -e 's/^#{on}=/{on}=/' {layout.sh(rel)}"
    return TaskParts(spec, {rel: _joined(lines)}, checks.render(), [step])


def delete_block(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('hosts', 'host lists')}/{stem(rng)}.txt"
    block = rng.choice(WORDS)
    before = [f"{rng.randint(10, 250)}.0.0.{i} {w}" for i, w in enumerate(words(rng, 3))]
    inside = [f"192.168.1.{i} {w}" for i, w in enumerate(words(rng, rng.randint(2, 4)))]
    after = [f"172.16.0.{i} {w}" for i, w in enumerate(words(rng, 2))]
    lines = [*before, f"# BEGIN {block}", *inside, f"# END {block}", *after]
    checks = VerifierTests()
    checks.lines(layout.path(rel), before + after)
    spec = Spec(
        goal=f"delete the block from the line '# BEGIN {block}' through the line '# END {block}' (both included) "
        f"from {layout.show(rel)}, in place",
        notes=["The lines before and after the block stay as they are."],
    )
    step = f"sed -i '/^# BEGIN {block}$/,/^# END {block}$/d' {layout.sh(rel)}"
    return TaskParts(spec, {rel: _joined(lines)}, checks.render(), [step])


# ---- difficulty 3: the same key in two sections, names with spaces, keys that contain one
# another, a header line ------------------------------------------------------------------------


def section_value(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('config', 'app config')}/app.ini"
    sections = ["client", "server", "proxy"]
    rng.shuffle(sections)
    ports = {s: str(rng.randint(1024, 9999)) for s in sections}
    port = str(rng.randint(10000, 20000))
    hosts = {s: rng.choice(WORDS) for s in sections}

    def ini(values: dict[str, str]) -> str:
        return "".join(f"[{s}]\nhost={hosts[s]}\nport={values[s]}\n\n" for s in sections)

    checks = VerifierTests()
    checks.unchanged(layout.path(rel), ini({**ports, "server": port}))
    spec = Spec(
        goal=f"set port to {port} in the [server] section of {layout.show(rel)}, editing the file in place",
        inputs=[f"{layout.show(rel)} has the sections {', '.join(f'[{s}]' for s in sections)}, each with a port"],
        notes=["The ports of the other sections must not change."],
    )
    return TaskParts(
        spec,
        {rel: ini(ports)},
        checks.render(),
        [f"sed -i '/^\\[server\\]/,/^\\[/ s/^port=.*/port={port}/' {layout.sh(rel)}"],
    )


def backup_each(rng: random.Random, layout: Layout) -> TaskParts:
    old, new, vocabulary = _swap_words(rng)
    folder = layout.folder("sites", "site configs")
    names = [f"{n}.conf" for n in words(rng, 3)] + [f"{rng.choice(WORDS)} copy.conf"]  # a name with a space
    files = {f"{folder}/{n}": f"server_name {old}.example\n{_prose(rng, vocabulary, 2)}" for n in names}
    readme = f"{folder}/README.txt"
    files[readme] = f"configs for {old}\n"
    checks = VerifierTests()
    for path, content in files.items():
        if path == readme:
            checks.unchanged(layout.path(path), content)
            checks.add("readme_has_no_backup", f"assert not Path({layout.path(path + '.orig')!r}).exists()")
        else:
            checks.unchanged(layout.path(path), content.replace(old, new))
            checks.unchanged(layout.path(path + ".orig"), content)
    spec = Spec(
        goal=f"replace '{old}' with '{new}' in every .conf file of {layout.show(folder)}, in place, keeping each "
        "original beside it with .orig appended to its name",
        notes=["Some file names contain spaces.", "Leave the files that are not .conf alone."],
    )
    return TaskParts(spec, files, checks.render(), [f"sed -i.orig 's/{old}/{new}/g' {layout.sh(folder)}/*.conf"])


def prefix_keys(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('config', 'app config')}/{stem(rng)}.env"
    key = rng.choice(("TIMEOUT", "LIMIT", "PORT"))
    settings = {
        f"READ_{key}": str(rng.randint(1, 99)),
        key: str(rng.randint(1, 99)),
        f"{key}_MS": str(rng.randint(100, 999)),
        "NAME": rng.choice(WORDS),
    }
    order = list(settings)
    rng.shuffle(order)
    value = str(rng.randint(100, 200))

    def text(values: dict[str, str]) -> str:
        return "".join(f"{k}={values[k]}\n" for k in order)

    deploy = f"deploy/{rel.rsplit('/', 1)[1]}"
    checks = VerifierTests()
    checks.unchanged(layout.path(rel), text({**settings, key: value}))
    checks.unchanged(layout.path(deploy), text({**settings, key: value}))
    spec = Spec(
        goal=f"set {key} to {value} in {layout.show(rel)} in place, then copy the edited file into "
        f"{layout.show('deploy')}",
        inputs=[f"{layout.show(rel)} holds KEY=value lines"],
        notes=[
            f"Only the key named exactly {key} changes; other keys contain that name.",
            f"{layout.show('deploy')} does not exist yet.",
        ],
    )
    return TaskParts(
        spec,
        {rel: text(settings)},
        checks.render(),
        [
            f"sed -i 's/^{key}=.*/{key}={value}/' {layout.sh(rel)}",
            f"mkdir -p {layout.sh('deploy')} && cp {layout.sh(rel)} {layout.sh('deploy')}/",
        ],
    )


def drop_rows(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('orders', 'order data')}/{stem(rng)}.csv"
    rows = [
        (i + 1, rng.choice(people(rng, 5)), rng.choice(("paid", "cancelled", "shipped")))
        for i in range(rng.randint(8, 16))
    ]
    rows[0] = (1, rows[0][1], "cancelled")
    rows[1] = (2, rows[1][1], "paid")
    header = "id,customer,status"
    kept = [f"{i},{c},{s}" for i, c, s in rows if s != "cancelled"]
    checks = VerifierTests()
    checks.lines(layout.path(rel), [header, *kept])
    checks.value(layout.path("remaining.txt"), str(len(kept)))
    spec = Spec(
        goal=f"delete the rows whose status is cancelled from {layout.show(rel)} in place, then write the number "
        f"of rows left to {layout.show('remaining.txt')}",
        inputs=[f"{layout.show(rel)} is a CSV file with the header line '{header}'"],
        output="the count of data rows as just the integer",
        notes=["Keep the header line; it is not a row."],
    )
    return TaskParts(
        spec,
        {rel: "".join(f"{line}\n" for line in [header, *(f"{i},{c},{s}" for i, c, s in rows)])},
        checks.render(),
        [
            f"sed -i '/,cancelled$/d' {layout.sh(rel)}",
            f"tail -n +2 {layout.sh(rel)} | wc -l > {layout.sh('remaining.txt')}",
        ],
    )


FAMILY = Family(
    name="sed-edits",
    skill="edit files in place with sed",
    templates={
        1: (
            Template("replace-word", "replace a word in one file in place", replace_word),
            Template("delete-matching", "delete the lines that match in place", delete_matching),
            Template("set-value", "change one key's value in place", set_value),
            Template("insert-header", "insert a first line in place", insert_header),
        ),
        2: (
            Template("replace-in-files", "replace a word in every file of one type", replace_in_files),
            Template("edit-with-backup", "edit in place keeping a .bak backup", edit_with_backup),
            Template("toggle-comment", "comment out one line and uncomment another", toggle_comment),
            Template("delete-block", "delete a block between two marker lines", delete_block),
        ),
        3: (
            Template("section-value", "change a key in one INI section only", section_value),
            Template("backup-each", "edit several files (a name with a space) keeping backups", backup_each),
            Template("prefix-keys", "change one key among keys that contain it, then copy", prefix_keys),
            Template("drop-rows", "delete CSV rows keeping the header, then count them", drop_rows),
        ),
    },
)
