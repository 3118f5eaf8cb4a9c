"""Tang et al. RQ1 design: the 17 WEPs in CNC/ENC/FCNC/MCNC contexts, English and Chinese; Chinese wording."""
from __future__ import annotations

import re

import pytest

from families.tang import design_rq1 as tang_rq1
from surveys.definition.files import shipped_definition
from surveys.instruments import get_instrument
from families.tang.wep_probability import EXPRESSIONS
from surveys.models import Item, Study

# The shipped Chinese wording's named texts (the WEPs' renderings are named by the English WEPs).
ZH_WORDING = shipped_definition("tang-rq1-zh/study.toml")["wording"]

COUNTS = {"CNC": 15, "ENC": 11, "FCNC": 10, "MCNC": 10}


@pytest.fixture
def kind():
    return get_instrument("wep_probability")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_wep_in_every_context(language, kind):
    items = tang_rq1.generate(None, language=language)
    assert len(items) == 17 * sum(COUNTS.values())
    assert len({f["key"] for f in items}) == len(items)
    for setting, n in COUNTS.items():
        rows = [f for f in items if f["context"] == setting]
        assert len({f["statement_id"] for f in rows}) == n
        for wep in EXPRESSIONS:
            assert sum(f["expression"] == wep for f in rows) == n
    for f in items:
        assert f["key"] == kind.item_key(f) and f["language"] == language
        text = kind.context_sentence(Item(**{k: v for k, v in f.items() if k != "key"}))
        assert "{" not in text and "}" not in text
        if language == "en":
            assert f["expression"] in text.lower()
        else:
            assert "{}" not in f["statement"] and ZH_WORDING[f["expression"]] in text
            assert not re.search(r"[A-Za-z]", text)


def test_settings_and_gender_pairs():
    items = tang_rq1.generate(None, settings=("FCNC", "MCNC"))
    she = {(f["statement_id"][-2:], f["expression"]): f["statement"] for f in items if f["context"] == "FCNC"}
    he = {(f["statement_id"][-2:], f["expression"]): f["statement"] for f in items if f["context"] == "MCNC"}
    assert she.keys() == he.keys()
    for key, text in she.items():
        words = re.findall(r"\w+", text.lower())
        assert "she" in words and "he" not in words
        # the male version differs only in the pronouns
        swapped = re.sub(r"\bshe\b", "he", re.sub(r"\bShe\b", "He", text))
        assert re.sub(r"\bher\b", "his", swapped) == he[key] or swapped.replace("her", "him") == he[key]
    zh = tang_rq1.generate(None, settings="FCNC MCNC", language="zh")
    assert all(("她" in f["statement"]) != (f["context"] == "MCNC") for f in zh)
    assert {f["context"] for f in tang_rq1.generate(None, settings=["ENC"])} == {"ENC"}


def test_concise_contexts_are_short_and_extended_ones_long(kind):
    def words(setting):
        rows = [f for f in tang_rq1.generate(None, settings=[setting]) if f["expression"] == "probably"]
        return [len(kind.context_sentence(Item(expression="probably", statement=f["statement"])).split()) for f in rows]
    assert max(words("CNC")) <= 10 and sum(words("ENC")) / 11 >= 20


def test_bad_options():
    with pytest.raises(tang_rq1.DesignError, match="XNC"):
        tang_rq1.generate(None, settings=["XNC"])
    with pytest.raises(tang_rq1.DesignError, match="fr"):
        tang_rq1.generate(None, language="fr")
    with pytest.raises(tang_rq1.DesignError, match="speaker_belief"):
        tang_rq1.generate(Study(instrument="speaker_belief"))


def test_chinese_renderings_agree_with_the_chinese_wording():
    """The generator's Chinese contexts write each WEP as the shipped Chinese definition does."""
    assert tang_rq1.zh_expressions() == {w: ZH_WORDING[w] for w in EXPRESSIONS}


def test_items_fit_the_model_and_chinese_page_and_prompt(db, kind):
    study = Study.objects.create(slug="tang-zh", title="Tang zh", instrument="wep_probability")
    Item.objects.bulk_create([Item(study=study, **f) for f in tang_rq1.generate(study, language="zh")])
    Item.objects.bulk_create([Item(study=study, **f) for f in tang_rq1.generate(study, language="en")])
    assert study.items.count() == 2 * 782
    item = study.items.get(key="CNC|zh|CNC-02|probably")
    page = kind.page_context(item)
    assert page["sentence"] == "根据陈述“这批货大概会在周一到达。”,你认为这批货在周一到达的概率是多少?"
    assert page["question"].startswith("请给出") and page["hints"][0].startswith("0表示")
    demos = [Item(expression="certain", language="zh", demo_answer=100, is_demonstration=True)]
    prompt = kind.build_prompt(item, demos)
    assert prompt.text.endswith(f"问题:{page['sentence']}\n你的输出只有一个0到100之间的数字。"
                                "回答问题时直接给出最终答案,不要加入中间思考过程,不要重复问题。\n答案:")
    assert "一个被描述为“肯定”的事件发生的概率是多少?" in prompt.text and "答案: 100" in prompt.text
    assert not re.search(r"[A-Za-z]", prompt.text)
    english = study.items.get(key="CNC|en|CNC-02|probably")
    assert kind.sentence(english) == 'Given the statement "The shipment will probably arrive on Monday.", how probable is it?'
    assert kind.build_prompt(english, []).text.endswith("Answer with a single number from 0 to 100.\nAnswer:")
    shipped_en = shipped_definition("tang-rq1/study.toml")["wording"]
    assert kind.study_intro(study)["task"].startswith("People use words") and kind.study_intro(study) == {
        "task": shipped_en["task_intro"], "scale_ends": shipped_en["scale_ends"]}
    study.language = "zh-hans"  # the instructions page follows the study's language, the items their own
    assert kind.study_intro(study) == {"task": ZH_WORDING["task_intro"], "scale_ends": ["0表示该事件不可能发生。",
                                                                                      "100表示该事件一定会发生。"]}
