"""Line endings and encodings: CRLF to LF and back, a missing final newline, latin-1 to UTF-8,
a UTF-8 byte order mark. The files are written as plain UTF-8 text with LF endings; the setup
commands give them their CRLF endings, BOMs and latin-1 bytes, and the tests compare bytes."""

from __future__ import annotations

import hashlib
import random
import shlex

from posttrain.tasks.terminal_gen.generated_task import Family, TaskParts, Template
from posttrain.tasks.terminal_gen.instruction_spec import Spec
from posttrain.tasks.terminal_gen.layout import Layout
from posttrain.tasks.terminal_gen.verifier_tests import VerifierTests
from posttrain.tasks.terminal_gen.vocabulary import WORDS, people, stem, words

BOM = "\ufeff"
ACCENTED = ("café", "naïve", "crème", "señor", "façade", "résumé", "über", "déjà")


class _Bytes(VerifierTests):
    """VerifierTests that also check a file's exact bytes (as the setup leaves them)."""

    def exact(self, path: str, content: bytes) -> _Bytes:
        digest = hashlib.sha256(content).hexdigest()
        name = "".join(c if c.isalnum() else "_" for c in path.rsplit("/", 1)[-1]).lower()
        self.add(f"bytes_{name}", f"assert digest({path!r}) == {digest!r}")
        return self


def _crlf(layout: Layout, paths: list[str]) -> str:
    """A setup command turning each file's LF endings into CRLF."""
    return "sed -i 's/$/\\r/' " + " ".join(shlex.quote(layout.path(p)) for p in paths)


def _latin1(layout: Layout, paths: list[str]) -> str:
    """A setup command re-encoding each file from UTF-8 to latin-1."""
    return " && ".join(
        f"iconv -f UTF-8 -t LATIN1 {q} > {q}.tmp && mv {q}.tmp {q}"
        for q in (shlex.quote(layout.path(p)) for p in paths)
    )


def _bom(layout: Layout, path: str) -> str:
    return f"sed -i '1s/^/\\xef\\xbb\\xbf/' {layout.sh(path)}"


def _lines(rng: random.Random, n: int) -> str:
    return "".join(f"{' '.join(words(rng, rng.randint(2, 5)))}\n" for _ in range(n))


def _accented(rng: random.Random, n: int) -> str:
    return "".join(
        f"{rng.choice(people(rng, 3)).title()} {rng.choice(ACCENTED)} {rng.randint(1, 99)}\n" for _ in range(n)
    )


def _crlf_bytes(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode()


# ---- difficulty 1: one command ----------------------------------------------------------------------


def crlf_sed(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('import', 'windows files')}/{stem(rng)}.txt"
    text = _lines(rng, rng.randint(4, 9))
    checks = _Bytes()
    checks.exact(layout.path(rel), text.encode())
    spec = Spec(
        goal=f"convert the line endings of {layout.show(rel)} from Windows (CRLF) to Unix (LF), editing the file in "
        "place",
        notes=["Nothing else in the file changes."],
    )
    step = f"sed -i 's/\\r$//' {layout.sh(rel)}"
    return TaskParts(spec, {rel: text}, checks.render(), [step], [_crlf(layout, [rel])])


def crlf_copy(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('import', 'windows files')}/{stem(rng)}.csv"
    out = f"{rel.rsplit('/', 1)[1].removesuffix('.csv')}_unix.csv"
    text = "".join(f"{w},{rng.randint(1, 500)}\n" for w in words(rng, rng.randint(4, 8)))
    checks = _Bytes()
    checks.exact(layout.path(out), text.encode())
    checks.exact(layout.path(rel), _crlf_bytes(text))
    spec = Spec(
        goal=f"write a copy of {layout.show(rel)} with Unix line endings (LF instead of CRLF) to {layout.show(out)}",
        notes=[f"Leave {layout.show(rel)} itself unchanged."],
    )
    step = f"tr -d '\\r' < {layout.sh(rel)} > {layout.sh(out)}"
    return TaskParts(spec, {rel: text}, checks.render(), [step], [_crlf(layout, [rel])])


def final_newline(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('src', 'source files')}/{stem(rng)}.py"
    text = "".join(f"{w} = {rng.randint(1, 99)}\n" for w in words(rng, rng.randint(3, 6)))
    checks = _Bytes()
    checks.exact(layout.path(rel), text.encode())
    spec = Spec(
        goal=f"add the missing newline at the end of the last line of {layout.show(rel)}",
        output="the same file ending in exactly one newline character",
    )
    return TaskParts(spec, {rel: text[:-1]}, checks.render(), [f"sed -i -e '$a\\' {layout.sh(rel)}"])


def strip_bom(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('export', 'spreadsheet export')}/{stem(rng)}.csv"
    text = "name,score\n" + "".join(f"{p},{rng.randint(1, 100)}\n" for p in people(rng, rng.randint(3, 6)))
    checks = _Bytes()
    checks.exact(layout.path(rel), text.encode())
    spec = Spec(
        goal=f"remove the UTF-8 byte order mark (BOM) from the start of {layout.show(rel)}, editing it in place",
        notes=["The rest of the file stays byte for byte the same."],
    )
    step = f"sed -i '1s/^\\xEF\\xBB\\xBF//' {layout.sh(rel)}"
    return TaskParts(spec, {rel: text}, checks.render(), [step], [_bom(layout, rel)])


# ---- difficulty 2: encodings, which files, the other direction, counting -----------------------------


def latin1_in_place(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('legacy', 'legacy data')}/{stem(rng)}.txt"
    text = _accented(rng, rng.randint(4, 8))
    checks = _Bytes()
    checks.exact(layout.path(rel), text.encode())
    spec = Spec(
        goal=f"convert {layout.show(rel)} from latin-1 (ISO-8859-1) to UTF-8, replacing the file",
        output="the same text, encoded as UTF-8, under the same name",
    )
    steps = [
        f"iconv -f LATIN1 -t UTF-8 {layout.sh(rel)} > {layout.sh(rel + '.new')}",
        f"mv {layout.sh(rel + '.new')} {layout.sh(rel)}",
    ]
    return TaskParts(spec, {rel: text}, checks.render(), steps, [_latin1(layout, [rel])])


def which_crlf(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("notes", "shared notes")
    names = [f"{w}.txt" for w in words(rng, rng.randint(5, 8))]
    windows = sorted(rng.sample(names, rng.randint(2, len(names) - 2)))
    files = {f"{folder}/{n}": _lines(rng, rng.randint(2, 5)) for n in names}
    out = "crlf_files.txt"
    checks = _Bytes()
    checks.lines(layout.path(out), windows)
    for n in names:
        content = files[f"{folder}/{n}"]
        checks.exact(layout.path(f"{folder}/{n}"), _crlf_bytes(content) if n in windows else content.encode())
    spec = Spec(
        goal=f"write the names of the files in {layout.show(folder)} that have Windows (CRLF) line endings to "
        f"{layout.show(out)}",
        output="file names only, one per line, sorted alphabetically",
        notes=["Do not change the files."],
    )
    step = f"cd {layout.sh(folder)} && grep -l $'\\r' *.txt | sort > {layout.sh(out)}"
    return TaskParts(spec, files, checks.render(), [step], [_crlf(layout, [f"{folder}/{n}" for n in windows])])


def to_crlf(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('share', 'shared files')}/{stem(rng)}.txt"
    out = f"windows/{rel.rsplit('/', 1)[1]}"
    text = _lines(rng, rng.randint(3, 7))
    checks = _Bytes()
    checks.exact(layout.path(out), _crlf_bytes(text))
    checks.unchanged(layout.path(rel), text)
    spec = Spec(
        goal=f"write a copy of {layout.show(rel)} with Windows line endings (CRLF) to {layout.show(out)}",
        notes=[f"{layout.show('windows')} does not exist yet.", "The original keeps its Unix endings."],
    )
    steps = [f"mkdir -p {layout.sh('windows')}", f"sed 's/$/\\r/' {layout.sh(rel)} > {layout.sh(out)}"]
    return TaskParts(spec, {rel: text}, checks.render(), steps)


def count_crlf(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('logs', 'merged logs')}/{stem(rng)}.log"
    lines = [f"{rng.choice(WORDS)} {rng.randint(1, 999)}" for _ in range(rng.randint(8, 16))]
    crlf = sorted(rng.sample(range(len(lines)), rng.randint(2, len(lines) - 2)))
    text = "".join(line + "\n" for line in lines)
    checks = _Bytes()
    checks.value(layout.path("crlf_count.txt"), str(len(crlf)))
    raw = "".join(line + ("\r\n" if i in crlf else "\n") for i, line in enumerate(lines)).encode()
    checks.exact(layout.path(rel), raw)
    spec = Spec(
        goal=f"count the lines of {layout.show(rel)} that end in CRLF (a carriage return before the newline) and "
        f"write the count to {layout.show('crlf_count.txt')}",
        inputs=[f"{layout.show(rel)} mixes Windows and Unix line endings"],
        output="just the integer",
    )
    step = f"grep -c $'\\r$' {layout.sh(rel)} > {layout.sh('crlf_count.txt')}"
    script = ";".join(f"{i + 1}s/$/\\r/" for i in crlf)  # those lines only get a carriage return
    setup = f"sed -i '{script}' {layout.sh(rel)}"
    return TaskParts(spec, {rel: text}, checks.render(), [step], [setup])


# ---- difficulty 3: a file to leave alone, names with spaces, a header line, a new folder -------------


def normalize_folder(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("docs", "team docs")
    names = [*(f"{w}.txt" for w in words(rng, 3)), f"{rng.choice(WORDS)} draft.txt"]
    bat = f"{folder}/{rng.choice(WORDS)}.bat"  # a Windows script: it keeps its CRLF endings
    files = {f"{folder}/{n}": _lines(rng, rng.randint(2, 5)) for n in names}
    files[bat] = "@echo off\necho hello\n"
    checks = _Bytes()
    for path, content in files.items():
        checks.exact(layout.path(path), _crlf_bytes(content) if path == bat else content.encode())
    spec = Spec(
        goal=f"convert every .txt file in {layout.show(folder)} from CRLF to LF line endings, in place",
        notes=["Some names contain spaces.", "The .bat file must keep its Windows line endings."],
    )
    step = f"find {layout.sh(folder)} -name '*.txt' -exec sed -i 's/\\r$//' {{}} +"
    return TaskParts(spec, files, checks.render(), [step], [_crlf(layout, list(files))])


def excel_export(rng: random.Random, layout: Layout) -> TaskParts:
    rel = f"{layout.folder('downloads', 'excel downloads')}/{stem(rng)}.csv"
    header = "id,customer,total"
    rows = [f"{i + 1},{p},{rng.randint(5, 900)}" for i, p in enumerate(people(rng, rng.randint(4, 9)))]
    text = header + "\n" + "".join(r + "\n" for r in rows)
    out = f"clean/{rel.rsplit('/', 1)[1]}"
    checks = _Bytes()
    checks.exact(layout.path(out), text.encode())
    checks.exact(layout.path(rel), (BOM + text).replace("\n", "\r\n").encode())
    checks.value(layout.path("row_count.txt"), str(len(rows)))
    spec = Spec(
        goal=f"write a clean copy of {layout.show(rel)} to {layout.show(out)}, without the byte order mark and with "
        f"Unix line endings, then write its number of data rows to {layout.show('row_count.txt')}",
        inputs=[f"{layout.show(rel)} was saved by a spreadsheet: a UTF-8 BOM, CRLF endings and a header line"],
        output="the count as just the integer",
        notes=[f"{layout.show('clean')} does not exist yet.", "The header line is not a data row."],
    )
    steps = [
        f"mkdir -p {layout.sh('clean')}",
        f"sed -e '1s/^\\xEF\\xBB\\xBF//' -e 's/\\r$//' {layout.sh(rel)} > {layout.sh(out)}",
        f"tail -n +2 {layout.sh(out)} | wc -l > {layout.sh('row_count.txt')}",
    ]
    return TaskParts(spec, {rel: text}, checks.render(), steps, [f"{_crlf(layout, [rel])} && {_bom(layout, rel)}"])


def latin1_batch(rng: random.Random, layout: Layout) -> TaskParts:
    source, dest = layout.folder("legacy", "legacy data"), "utf8"
    names = [*(f"{w}.txt" for w in words(rng, 2)), f"{rng.choice(WORDS)} list.txt"]
    files = {f"{source}/{n}": _accented(rng, rng.randint(2, 5)) for n in names}
    readme = f"{source}/README.md"
    files[readme] = "These files are latin-1.\n"
    checks = _Bytes()
    checks.add("converted", f"assert sorted(os.listdir({layout.path(dest)!r})) == {sorted(names)!r}")
    for n in names:
        checks.exact(layout.path(f"{dest}/{n}"), files[f"{source}/{n}"].encode())
        checks.exact(layout.path(f"{source}/{n}"), files[f"{source}/{n}"].encode("latin-1"))
    checks.unchanged(layout.path(readme), files[readme])
    spec = Spec(
        goal=f"convert every .txt file of {layout.show(source)} from latin-1 to UTF-8, writing each under the same "
        f"name into {layout.show(dest)}",
        notes=[
            f"{layout.show(dest)} does not exist yet; the originals stay as they are.",
            "One name contains a space.",
        ],
    )
    steps = [
        f"mkdir -p {layout.sh(dest)}",
        f'cd {layout.sh(source)} && for f in *.txt; do iconv -f LATIN1 -t UTF-8 "$f" > {layout.sh(dest)}/"$f"; done',
    ]
    return TaskParts(spec, files, checks.render(), steps, [_latin1(layout, [f"{source}/{n}" for n in names])])


def final_newlines(rng: random.Random, layout: Layout) -> TaskParts:
    folder = layout.folder("conf.d", "conf parts")
    names = words(rng, rng.randint(4, 6))
    texts = {f"{folder}/{n}.conf": "".join(f"{w}={rng.randint(1, 9)}\n" for w in words(rng, 3)) for n in names}
    missing = set(rng.sample(sorted(texts), rng.randint(1, len(texts) - 1)))
    files = {p: t[:-1] if p in missing else t for p, t in texts.items()}
    backup = f"{folder}/{names[0]}.conf.bak"
    files[backup] = "old=1"  # no final newline either, but it is no .conf file: it stays
    out = "fixed.txt"
    checks = _Bytes()
    for path, content in texts.items():
        checks.exact(layout.path(path), content.encode())
    checks.unchanged(layout.path(backup), "old=1")
    checks.value(layout.path(out), str(len(missing)))
    spec = Spec(
        goal=f"write how many .conf files of {layout.show(folder)} do not end with a newline to {layout.show(out)}, "
        "then add the missing final newline to each of them",
        output="the count as just the integer",
        notes=["Files that already end with a newline must not get a second one; other files stay as they are."],
    )
    steps = [
        f'cd {layout.sh(folder)} && for f in *.conf; do tail -c 1 "$f" | grep -q . && echo "$f"; done | wc -l '
        f"> {layout.sh(out)}",
        f"sed -i -e '$a\\' {layout.sh(folder)}/*.conf",
    ]
    return TaskParts(spec, files, checks.render(), steps)


FAMILY = Family(
    name="line-endings",
    skill="convert line endings and text encodings",
    templates={
        1: (
            Template("crlf-sed", "CRLF to LF in place with sed", crlf_sed),
            Template("crlf-copy", "an LF copy of a CRLF file with tr", crlf_copy),
            Template("final-newline", "add a missing final newline", final_newline),
            Template("strip-bom", "strip a UTF-8 byte order mark", strip_bom),
        ),
        2: (
            Template("latin1-in-place", "latin-1 to UTF-8 with iconv, replacing the file", latin1_in_place),
            Template("which-crlf", "the files that have CRLF endings", which_crlf),
            Template("to-crlf", "a CRLF copy in a new folder", to_crlf),
            Template("count-crlf", "count the CRLF lines of a mixed file", count_crlf),
        ),
        3: (
            Template(
                "normalize-folder",
                "CRLF to LF for one file type (a name with a space), one file stays",
                normalize_folder,
            ),
            Template(
                "excel-export", "strip a BOM and CRLF into a new folder, count rows past the header", excel_export
            ),
            Template("latin1-batch", "latin-1 files (a name with a space) to UTF-8 in a new folder", latin1_batch),
            Template("final-newlines", "count and fix the files without a final newline, others stay", final_newlines),
        ),
    },
)
