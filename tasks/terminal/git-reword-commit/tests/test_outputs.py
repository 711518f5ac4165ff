import subprocess
from pathlib import Path


def git(*args):
    return subprocess.run(["git", "-C", "/app", *args], capture_output=True, text=True, check=True).stdout


NEW_MSG = ("Fix off-by-one error in paginate()\n\nThe last page was dropped when the item count was a multiple\n"
           "of the page size.")

# newest first: tree, author time, message
EXPECTED = [
    ("1cc03f248415f9d2b6735c9a909b47ea93f47f2a", "1700021600", "Ignore __pycache__"),
    ("418db169590790fede68ff1b1600378de6e1e892", "1700018000",
     "Document usage\n\nAdds a usage example to the README.\nThe example is also used by the docs site."),
    ("93170c1c955bbd43fd369b1eac8fbcec26942dd7", "1700014400", NEW_MSG),
    ("fd1a02016d80e8fea7d50aee44a48163e8352b37", "1700010800", "Ignore bytecode"),
    ("67306a1fd5b81393b3826e75621b5d4ef6e5479c", "1700007200", "Add check script"),
    ("ed45086ae5942dbe86da9747e615fcd3be8ad592", "1700003600", "Add README"),
    ("a8f0375182757a5086f02aba5ba21a4d3af558b2", "1700000000", "Add paginate helper"),
]


def commits():
    out = []
    for h in git("rev-list", "main").split():
        tree = git("log", "-1", "--format=%T", h).strip()
        author = git("log", "-1", "--format=%an|%ae|%at", h).strip()
        msg = git("log", "-1", "--format=%B", h).strip()
        out.append((h, tree, author, msg))
    return out


def test_history_shape_and_trees():
    got = commits()
    assert len(got) == 7
    assert [c[1] for c in got] == [e[0] for e in EXPECTED]


def test_messages_and_authors():
    got = commits()
    for (h, tree, author, msg), (etree, etime, emsg) in zip(got, EXPECTED):
        assert msg == emsg
        assert author == f"Dana Dev|dana@example.com|{etime}"


def test_older_commits_keep_hashes():
    assert git("rev-parse", "main~3").strip() == "09ffbf641527cf079c6d6ba7634ad62c60c2d0eb"


def test_clean_state():
    assert git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git("status", "--porcelain") == ""
    assert not Path("/app/.git/rebase-merge").exists() and not Path("/app/.git/rebase-apply").exists()
