"""The answer shapes of the instrument contract (surveys/instruments/shapes.py): what a page may submit and
what a model's text becomes, for each shape."""
from __future__ import annotations

import pytest

from surveys.instruments import Answer, AnswerError, Option
from surveys.instruments.shapes import ChoiceShape, IntervalShape, PickShape, ScaleShape, plain_number, read_option

FIVE = [Option("A", "is almost certainly"), Option("B", "is likely to be"), Option("C", "is maybe"),
        Option("D", "is unlikely to be"), Option("E", "is almost certainly not")]


class Kind:
    """The part of an instrument the shapes call."""

    scale_min, scale_max = 0, 100
    final_choice_marker = "I choose:"

    def options(self, item):
        return FIVE

    def validate(self, raw):
        return float(raw)


@pytest.mark.parametrize("text, key", [
    ("B", "B"), ("B.", "B"), ("(D)", "D"), ("B. is likely to be", "B"), ("The answer is C", "C"),
    ("is almost certainly not", "E"),   # the longest option text wins over its prefix "is almost certainly"
    ("is almost certainly", "A"), ("IS  Likely to be!", "B"),
    ("Let me think. A or B? ... I choose: D", "D"),  # a chain of thought: what follows the marker decides
])
def test_choice_reads_a_key_or_an_option_text(text, key):
    parsed = ChoiceShape().parse(Kind(), object(), text)
    assert parsed.ok and parsed.answer == Answer(choice=key)


@pytest.mark.parametrize("text", ["", "no idea", "A or B", "maybe",
                                  # an answer that repeats the choices lists every option: no choice
                                  "A.is almost certainly B.is likely to be C.is maybe D.is unlikely to be",
                                  "is likely to be or is unlikely to be"])
def test_an_unreadable_choice_is_an_error_not_a_guess(text):
    parsed = ChoiceShape().parse(Kind(), object(), text)
    assert not parsed.ok and parsed.error and parsed.raw == text


def test_a_page_may_submit_only_an_offered_option():
    assert ChoiceShape().validate(Kind(), None, {"choice": "C"}) == Answer(choice="C")
    for bad in ("F", "c", "", "A,B", " C "):
        with pytest.raises(AnswerError, match="one of the options"):
            PickShape().validate(Kind(), None, {"choice": bad})


def test_interval_from_the_page():
    shape = IntervalShape()
    assert shape.validate(Kind(), None, {"lower": "-3.5", "upper": "12"}) == Answer(lower=-3.5, upper=12)
    assert shape.validate(Kind(), None, {"lower": "4", "upper": "4"}) == Answer(lower=4, upper=4)
    with pytest.raises(AnswerError, match="must not be greater"):
        shape.validate(Kind(), None, {"lower": "18", "upper": "12"})
    with pytest.raises(AnswerError, match="upper bound"):
        shape.validate(Kind(), None, {"lower": "18", "upper": ""})
    with pytest.raises(AnswerError, match="must be a number"):
        shape.validate(Kind(), None, {"lower": "1e2", "upper": "200"})
    assert shape.raw({"lower": "1", "upper": "2"}) == "lower=1;upper=2"
    assert shape.is_empty({"lower": " ", "upper": ""}) and not shape.is_empty({"lower": "1"})
    with pytest.raises(AnswerError, match="must be a number"):
        shape.validate(Kind(), None, {"lower": " 1", "upper": "2"})
    with pytest.raises(AnswerError, match="must be a number"):
        shape.validate(Kind(), None, {"lower": "5\n", "upper": "7"})


def test_a_field_posted_twice_is_refused_not_read_as_its_last_value():
    """A page posts each field once; a tampered form with two ``value`` fields (a QueryDict keeps both, and
    ``get`` would give the last) is refused, for every shape."""
    from django.http import QueryDict

    with pytest.raises(AnswerError, match="one answer only"):
        ScaleShape().form_data(QueryDict("value=50&value=70"))
    with pytest.raises(AnswerError, match="one answer only"):
        IntervalShape().form_data(QueryDict("lower=1&upper=5&upper=9"))
    with pytest.raises(AnswerError, match="one answer only"):
        ChoiceShape().form_data(QueryDict("choice=A&choice=B"))
    assert ScaleShape().form_data(QueryDict("value=50&other=1&other=2")) == {"value": "50"}  # other fields: not read


@pytest.mark.parametrize("text, number", [("50", 50.0), ("-3.5", -3.5), ("0.25", 0.25), ("1e2", None),
                                          ("1_0", None), ("٥٠", None), ("inf", None), (" 5", None), ("", None),
                                          ("5\n", None), ("5\r\n", None), ("5 ", None), ("+5", None)])
def test_plain_numbers_only(text, number):
    assert plain_number(text) == number


def test_scale_parses_the_first_number_on_the_scale():
    shape = ScaleShape()
    assert shape.parse(Kind(), None, "I'd say 75, maybe 80").answer == Answer(value=75)
    assert not shape.parse(Kind(), None, "120").ok
    assert shape.form_data("50") == {"value": "50"}
    assert shape.validate(Kind(), None, {"value": "50"}) == Answer(value=50.0)


def test_answer_columns_and_text():
    assert Answer(choice="B").columns() == {"value": None, "choice": "B", "lower": None, "upper": None, "text": ""}
    assert [Answer(value=37.5).text(), Answer(choice="B").text(), Answer(lower=1, upper=2.5).text()] == \
        ["37.5", "B", "[1, 2.5]"]
    assert read_option("a or b", FIVE) is None  # lower-case letters are words, not keys
