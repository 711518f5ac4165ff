def test_greeting():
    assert open("/app/greeting.txt").read().strip() == "hello world"
