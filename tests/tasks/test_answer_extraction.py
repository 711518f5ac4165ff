import pytest

from posttrain.tasks.answer_extraction import extract_answer


@pytest.mark.parametrize(
    "text, rule, expected",
    [
        ("  42 \n", "full", "42"),
        ("Let me think.\n\nThe answer is 17.", "last_line", "17"),
        ("x\nAnswer: blue", "last_line", "blue"),
        ("<answer>a</answer> then <answer> b </answer>", "answer_tag", "b"),
        ("no tags here", "answer_tag", ""),
        ("so \\boxed{\\frac{1}{2}} done", "boxed", "\\frac{1}{2}"),
        ("unclosed \\boxed{3", "boxed", ""),
        ("5 + 9 = 14", "last_number", "14"),
        ("it is -3.5 or 1,234", "last_number", "1234"),
        ("none", "last_number", ""),
    ],
)
def test_extraction_rules(text, rule, expected):
    assert extract_answer(text, rule) == expected


def test_unknown_rule():
    with pytest.raises(ValueError, match="unknown answer extraction rule 'xml'"):
        extract_answer("1", "xml")
