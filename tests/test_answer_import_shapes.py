"""Human answers imported in long form are read by the answer shape of the question they answer (a scale's
number, an option's key or text, free text as written, an interval), one row per question for a study with
[[questions]]; a cell the page would refuse is refused naming its line and column, and nothing is written.
Before, every cell was read as a number into ``value``: a choice study got numbers and no choice, a free-text
study a number and no text, and a study with several questions answers that belonged to no question."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from generic_studies import CHOICE, FREE_TEXT, SCALE_1_7, generic_study
from surveys.answer_import import ResponseColumns, import_responses, import_wide
from surveys.importers import ImportFailed
from surveys.models import Assignment, Participant, Response
from test_questions_flow import questions_study

pytestmark = pytest.mark.django_db
BY_TEXT = ResponseColumns(participant="pid", value="answer", text="statement")


def csv(*rows: str, header: str = "pid,statement,answer") -> io.StringIO:
    return io.StringIO("\n".join((header, *rows)) + "\n")


def stored() -> list[tuple[str, str, str]]:
    return sorted((r.participant.prolific_pid, r.item.key, r.question, r.answer.text())
                  for r in Response.objects.select_related("participant", "item"))


def refused(study, source, columns=BY_TEXT) -> list[tuple[int, str, str]]:
    with pytest.raises(ImportFailed) as failed:
        import_responses(study, source, columns)
    assert not Participant.objects.filter(study=study).exists() and not Response.objects.exists()
    return [(e.line, e.column, e.message) for e in failed.value.errors]


def test_a_choice_is_read_by_its_key_or_its_text_and_anything_else_is_refused():
    study = generic_study("opinion", CHOICE, items=2)
    assert refused(study, csv("p1,Statement number 1 is true.,3", "p1,Statement number 2 is true.,maybe")) == [
        (2, "answer", "'3' is not an option of item s1 (its options: agree (I agree); unsure (I am not sure); "
                      "disagree (I disagree); na (Does not apply))"),
        (3, "answer", "'maybe' is not an option of item s2 (its options: agree (I agree); unsure (I am not sure); "
                      "disagree (I disagree); na (Does not apply))")]
    summary = import_responses(study, csv("p1,Statement number 1 is true.,agree",
                                          "p1,Statement number 2 is true.,i am  NOT sure"), BY_TEXT)
    assert (summary.participants, summary.responses) == (1, 2)
    assert [(r.value, r.choice) for r in Response.objects.order_by("item__key")] == [(None, "agree"),
                                                                                     (None, "unsure")]


def test_free_text_is_kept_as_written_and_an_empty_answer_is_refused():
    study = generic_study("why", FREE_TEXT, items=2)
    assert refused(study, csv('p1,Statement number 1 is true.,"  "')) == [(2, "answer", "is empty")]
    import_responses(study, csv('p1,Statement number 1 is true.,"Because  it says ""doubt"",\nnot ""sure""."'),
                     BY_TEXT)
    answer = Response.objects.get()
    assert answer.text == 'Because  it says "doubt",\nnot "sure".' and answer.value is None


def test_a_scale_takes_any_number_on_it_as_before():
    study = generic_study("likert", SCALE_1_7, items=2)
    assert refused(study, csv("p1,Statement number 1 is true.,8")) == [(2, "answer", "8 is outside 1–7")]
    import_responses(study, csv("p1,Statement number 1 is true.,2.5", "p1,Statement number 2 is true.,7"), BY_TEXT)
    assert stored() == [("p1", "s1", "", "2.5"), ("p1", "s2", "", "7")]


def test_several_questions_per_item_each_row_names_its_question_and_an_item_keeps_one_slot():
    study = questions_study("three", items=2)
    rows = ("p1,Statement 1.,rating,6", "p1,Statement 1.,estimate,55", "p1,Statement 1.,range,\"[40, 60]\"",
            "p1,Statement 2.,estimate,10", "p2,Statement 2.,rating,1")
    header = "pid,statement,question,answer"
    with_question = ResponseColumns(participant="pid", value="answer", text="statement", question="question")
    assert refused(study, csv(*rows, header=header)) == [
        (1, "-", "study 'three' asks several questions per item (rating, estimate, range): give the column that "
                 "names each answer's question (--question)")]
    assert refused(study, csv("p1,Statement 1.,size,6", "p1,Statement 1.,,6", "p1,Statement 1.,rating,9",
                              "p1,Statement 1.,range,\"60, 40\"", header=header), with_question) == [
        (2, "question", "'size' is not a question of the study (rating, estimate, range)"),
        (3, "question", "is empty (the question's key)"),
        (4, "answer", "9 is outside 1–7"),
        (5, "answer", "'60, 40': The lower bound must not be greater than the upper bound.")]
    assert refused(study, csv(*rows, "p1,Statement 1.,rating,5", header=header), with_question) == [
        (7, "pid", "participant 'p1' answers question 'rating' of item s1 again (first on line 2)")]

    summary = import_responses(study, csv(*rows, header=header), with_question)
    assert (summary.participants, summary.responses) == (2, 5)
    assert stored() == [("p1", "s1", "estimate", "55"), ("p1", "s1", "range", "[40, 60]"),
                        ("p1", "s1", "rating", "6"), ("p1", "s2", "estimate", "10"), ("p2", "s2", "rating", "1")]
    slots = {(s.participant.prolific_pid, s.item.key): s.position
             for s in Assignment.objects.select_related("participant", "item")}
    assert slots == {("p1", "s1"): 1, ("p1", "s2"): 2, ("p2", "s2"): 1}  # one slot per item, not per answer


def test_a_question_column_for_a_study_with_one_question_is_refused():
    study = generic_study("likert", SCALE_1_7, items=1)
    columns = ResponseColumns(participant="pid", value="answer", text="statement", question="question")
    assert refused(study, csv("p1,Statement number 1 is true.,rating,3", header="pid,statement,question,answer"),
                   columns) == [(1, "question", "study 'likert' asks one question per item: leave out the question "
                                                "column")]


def test_a_wide_file_is_refused_for_answers_that_are_not_one_number():
    for study, why in ((generic_study("opinion", CHOICE, items=1), "takes choice answers"),
                       (questions_study("three", items=1), "asks several questions per item")):
        with pytest.raises(ImportFailed, match=f"study '{study.slug}' {why}: import it in long form"):
            import_wide(study, io.StringIO("id,agree\nr1,3\n"), id_column="id")
    assert not Response.objects.exists()


def test_the_command_takes_the_question_column(tmp_path):
    questions_study("three", items=1)
    path = tmp_path / "answers.csv"
    path.write_text("pid,statement,question,answer\np1,Statement 1.,rating,4\np1,Statement 1.,estimate,70\n",
                    encoding="utf-8")
    out = io.StringIO()
    call_command("import_responses", "three", str(path), "--participant", "pid", "--text", "statement",
                 "--value", "answer", "--question", "question", stdout=out)
    assert "imported 2 answers of 1 participants" in out.getvalue()
    assert stored() == [("p1", "s1", "estimate", "70"), ("p1", "s1", "rating", "4")]


def test_the_admin_form_and_the_api_take_the_question_column(client, django_user_model):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse
    from rest_framework.authtoken.models import Token

    study = questions_study("three", items=1)
    staff = django_user_model.objects.create_superuser("boss", "b@example.org", "pw")
    client.force_login(staff)
    page = reverse("admin:analysis_studyanalysis_import_responses", args=[study.pk])
    form = {"participant": "pid", "text": "statement", "value": "answer", "time_unit": "ms"}
    data = b"pid,statement,question,answer\np1,Statement 1.,rating,4\np1,Statement 1.,estimate,70\n"
    response = client.post(page, form | {"file": SimpleUploadedFile("a.csv", data)})
    assert response.status_code == 400 and "give the column that names each answer&#x27;s question" in \
        response.content.decode()
    response = client.post(page, form | {"question": "question", "file": SimpleUploadedFile("a.csv", data)},
                           follow=True)
    assert "imported 2 answers of 1 participants" in response.content.decode()

    token = Token.objects.create(user=staff)
    response = client.post(f"/api/studies/{study.slug}/import-responses/",
                           form | {"question": "question", "file": SimpleUploadedFile(
                               "b.csv", data.replace(b"p1", b"p2"))}, HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 201 and response.json()["responses"] == 2
    assert stored() == [("p1", "s1", "estimate", "70"), ("p1", "s1", "rating", "4"),
                        ("p2", "s1", "estimate", "70"), ("p2", "s1", "rating", "4")]


def test_model_answers_to_several_questions_name_their_question_and_are_parsed_by_its_shape(tmp_path):
    """A long file of a model's answers to a study with [[questions]]: each row's question column says which
    question it answers; each is parsed as a live answer to that question; samples count per question."""
    from analysis.model_answer_import import ModelAnswerFile, import_model_answers
    from elicitation.models import ModelResponse

    study = questions_study("three", items=2)
    path = tmp_path / "model.csv"
    path.write_text("key,question,answer\ns1,rating,6\ns1,estimate,0.55\ns1,estimate,0.6\ns2,rating,I'd say 9\n"
                    "s2,range,\"[10, 30]\"\n", encoding="utf-8")
    without = ModelAnswerFile(model="m-published", fields={"key": "key"})
    with pytest.raises(ImportFailed, match=r"asks several questions per item \(rating, estimate, range\): give the "
                                           r"column that names each answer's question"):
        import_model_answers(study, path, without)
    bad = tmp_path / "bad.csv"
    bad.write_text("key,question,answer\ns1,size,6\ns1,rating,6\ns1,rating,5\n", encoding="utf-8")
    with pytest.raises(ImportFailed) as failed:
        import_model_answers(study, bad, ModelAnswerFile(model="m-published", fields={"key": "key"},
                                                         question="question"))
    assert [(e.line, e.column, e.message) for e in failed.value.errors] == [
        (2, "question", "'size' is not a question of the study (rating, estimate, range)")]
    assert not ModelResponse.objects.exists()

    summary = import_model_answers(study, path, ModelAnswerFile(model="m-published", fields={"key": "key"},
                                                                question="question"))
    assert (summary.answers, summary.unparseable, summary.items) == (5, 1, 2)
    assert summary.scale_note == "estimate: every number in the file lies within 0–1: read as probabilities (× 100)"
    rows = sorted((r.item.key, r.question, r.sample_index, r.status, r.answer.text() if r.status == "ok" else "")
                  for r in ModelResponse.objects.filter(run=summary.run).select_related("item"))
    assert rows == [("s1", "estimate", 0, "ok", "55"), ("s1", "estimate", 1, "ok", "60"), ("s1", "rating", 0, "ok", "6"),
                    ("s2", "range", 0, "ok", "[10, 30]"), ("s2", "rating", 0, "unparseable", "")]
    assert summary.run.samples_per_item == 2


def test_rows_named_by_expression_alone_that_several_items_share_say_so_once():
    study = generic_study("likert", SCALE_1_7, items=2)
    study.items.update(expression="probably")
    errors = refused(study, csv("p1,probably,3", header="pid,expr,answer"),
                     ResponseColumns(participant="pid", value="answer", expression="expr"))
    assert [(line, column) for line, column, _ in errors] == [(2, "expr")]
    assert errors[0][2].startswith("2 items share expression 'probably'; they differ in statement")
