import importlib.util

def test_greet():
    spec = importlib.util.spec_from_file_location("greet", "/app/greet.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.greet("Ada") == "Hello, Ada!"
