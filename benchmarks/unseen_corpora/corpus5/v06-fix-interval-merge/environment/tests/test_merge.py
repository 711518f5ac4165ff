from intervals.merge import merge

def test_disjoint():
    assert merge([[1, 2], [4, 5]]) == [[1, 2], [4, 5]]

def test_overlap():
    assert merge([[1, 3], [2, 6]]) == [[1, 6]]

def test_touching():
    assert merge([[1, 2], [2, 5]]) == [[1, 5]]
