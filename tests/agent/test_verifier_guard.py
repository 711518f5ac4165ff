from posttrain.agent.verifier_guard import is_startup_hook, make_selector, path_dirs

IMAGE = {"/usr/bin/python3", "/usr/bin/curl", "/usr/local/bin/pytest"}


def test_startup_hooks_are_recognised():
    assert is_startup_hook("/usr/local/lib/python3.11/dist-packages/evil.pth")
    assert is_startup_hook("/usr/lib/python3/dist-packages/sitecustomize.py")
    assert not is_startup_hook("/usr/local/lib/python3.11/site-packages/__editable__.pkg-0.1.pth")
    assert not is_startup_hook("/app/sitecustomize.py")  # outside site-packages: not a startup hook


def test_selector_drops_replaced_and_shadowing_tools_and_keeps_new_ones():
    select = make_selector("/usr/local/bin:/usr/bin", lambda path: path in IMAGE)
    assert select("/usr/bin/curl", True)  # replaced in place
    assert select("/usr/local/bin/python3", False)  # new, but shadows the image's /usr/bin/python3
    assert not select("/usr/local/bin/ripgrep", False)  # a tool the agent installed
    assert not select("/usr/share/doc/readme", True)  # not on PATH
    assert select("/usr/local/lib/python3.11/dist-packages/x.pth", False)


def test_path_dirs_default():
    assert "/usr/local/bin" in path_dirs(None)
