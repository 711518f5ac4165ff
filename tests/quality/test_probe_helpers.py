from posttrain.quality.probes.edited_tests import neutered_python, neutered_shell
from posttrain.quality.probes.forged_outputs import ASSIGNMENT, PRINTED, assigned_value, contained_literals, literals
from posttrain.quality.probes.injection import EVALUATES_TEXT
from posttrain.quality.probes.surroundings import TEST_FILE
from posttrain.quality.probes.task_tests import PATH_SET
from posttrain.quality.report import difficulty_histogram
from posttrain.quality.task_paths import instruction_paths


def test_instruction_paths_finds_outputs_but_not_the_harness_directories():
    text = (
        "Read `/app/data/in.csv` and write the total to /app/total.txt. Also create report.json. "
        "Tests live in /tests/test_x.py; logs in /logs/verifier/. Version 1.2.3 is fine."
    )
    assert instruction_paths(text) == ["/app/data/in.csv", "/app/total.txt", "/app/report.json"]


def test_literals_are_read_next_to_the_output_they_check():
    test = 'def test_a():\n    assert 1 == 1\n\ndef test_b():\n    assert open("/app/answer.txt").read() == "42\\n"\n'
    assert literals(test, "answer.txt")[0] == "42\n"


def test_contained_literals_are_grep_patterns_and_in_checks_on_the_output():
    shell = (
        "grep -qF 'a.b*' /app/out.txt && grep -E '^[0-9]+$' /app/out.txt\n"
        'grep -q "^total: 5$" /app/out.txt; grep -c foo /app/other.txt\n'
    )
    # -F keeps the text as it is; a regex with syntax is left out; anchors go; other files are not read
    assert contained_literals(shell, "out.txt") == ["a.b*", "total: 5"]
    python = "text = open('/app/report.md').read()\nassert 'Summary' in text\nassert \"rows: 3\" in text\n"
    assert contained_literals(python, "report.md") == ["Summary", "rows: 3"]


def test_printed_literals_are_what_programs_print_without_placeholders():
    code = (
        "print('migration applied')\necho \"backup done: $n files\"\nlogger.info(\"ready now\")\nprint(f'{x} rows')\n"
    )
    found = [m.group(1) or m.group(2) for m in PRINTED.finditer(code)]
    assert found == ["migration applied", "ready now"]


def test_values_assigned_to_the_outputs_name_or_an_answer_are_found():
    script = "#!/bin/bash\nPIN=730941  # keep\nexport SALT=abc\nHASH=$(printf %s $PIN | sha256sum)\n"
    python = "SHIFT = 17\nexpected_total: int = 99\nplain = 'x'\n"
    assignments = ASSIGNMENT.findall(script) + ASSIGNMENT.findall(python)
    assert ("HASH", "$(printf") not in assignments  # a command substitution is no value
    assert assigned_value(assignments, "/app/pin.txt") == "730941\n"
    assert assigned_value(assignments, "/app/shift.txt") == "17\n"
    assert assigned_value(ASSIGNMENT.findall(python)[1:], "/app/total.txt") is None  # no hint in 'plain'
    assert assigned_value(assignments, "/app/salt.txt") == "abc\n"


def test_tests_that_put_directories_on_path_or_source_files_are_recognised():
    text = 'export PATH="/app/tools:$PATH"\nos.environ["PATH"] = "/opt/x/bin:" + p\nexport PYTHONPATH=/app/lib\n'
    assert [m.groups() for m in PATH_SET.finditer(text)] == [
        ("PATH", "/app/tools:$PATH"),
        ("PATH", "/opt/x/bin:"),
        ("PYTHONPATH", "/app/lib"),
    ]
    assert EVALUATES_TEXT.search(". /app/build.conf 2>/dev/null\n")
    assert EVALUATES_TEXT.search("if true; then source ~/env.sh; fi\n")
    assert not EVALUATES_TEXT.search("source /tests/lib.sh\ncp a.b c\n")


def test_neutered_tests_keep_their_names_and_pass():
    source = "import x\n\ndef test_one():\n    assert False\n\nclass T:\n    def test_two(self):\n        assert 0\n"
    neutered = neutered_python(source)
    namespace: dict = {}
    exec(neutered, namespace)
    namespace["test_one"]()
    namespace["test_two"](None)
    assert neutered_python("import sys\nsys.exit(1)\n") == "import sys\nsys.exit(0)\n"


def test_test_file_names():
    assert all(
        TEST_FILE.match(n)
        for n in (
            "test_calc.py",
            "calc_test.py",
            "run_tests.sh",
            "app.spec.js",
            "grade.py",
            "check_output.sh",
            "run_checks.py",
            "tests.py",
        )
    )
    assert not any(TEST_FILE.match(n) for n in ("calc.py", "conftest.py", "latest.txt"))


def test_difficulty_histogram_bins():
    histogram = difficulty_histogram([0.0, 0.25, 0.5, 1.0, 1.0])
    assert histogram["counts"] == [1, 0, 1, 0, 0, 1, 0, 0, 0, 2]
    assert (histogram["zero"], histogram["one"]) == (1, 2)


def test_neutered_shell_helpers_succeed_sourced_or_run(tmp_path):
    import subprocess

    helper = tmp_path / "assert.sh"
    helper.write_text(
        neutered_shell('assert_eq() { [ "$1" = "$2" ]; }\nfunction check_file {\n  test -s "$1"\n}\nexit 1\n')
    )
    sourced = f". {helper}; assert_eq 1 2 && check_file /nonexistent && echo reached"
    assert subprocess.run(["bash", "-c", sourced], capture_output=True, text=True).stdout == "reached\n"
    assert subprocess.run(["sh", str(helper)]).returncode == 0
