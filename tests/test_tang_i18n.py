"""Participant pages in the study's language (Study.language), not the browser's: Chinese and English."""
from __future__ import annotations

import gettext
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse
from django.utils import translation

from surveys.page_tokens import slot_token
from surveys import flow
from families.tang import design_rq1 as tang_rq1
from surveys.flow import Step
from surveys.models import Item, Participant, Study

PID = "5f1a2b3c4d5e6f7a8b9c0d1e"
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture
def zh_study(db):
    study = Study.objects.create(slug="tang-zh", title="WEP 研究", instrument="wep_probability", status="live",
                                 language="zh-hans", items_per_expression=1, controls_per_participant=0)
    Item.objects.bulk_create([Item(study=study, **f) for f in tang_rq1.generate(study, settings=["CNC"], language="zh")])
    for order, (expression, answer) in enumerate((("certain", 100), ("impossible", 0)), start=1):
        Item.objects.create(study=study, key=f"demo-{order}", expression=expression, language="zh",
                            is_demonstration=True, demo_order=order, demo_answer=answer)
    return study


def url(study: Study, step: str) -> str:
    return reverse(f"surveys:{step}", kwargs={"slug": study.slug})


def page(client: Client, study: Study, step: str) -> str:
    response = client.get(url(study, step))
    assert response.status_code == 200, response
    return response.content.decode()


def enter(client: Client, study: Study) -> None:
    params = urlencode({"PROLIFIC_PID": PID, "STUDY_ID": "abc123", "SESSION_ID": "sess42"})
    assert client.get(f"/s/{study.slug}/?{params}").status_code == 302


def test_chinese_study_pages_are_chinese_whatever_the_browser_asks(zh_study):
    client = Client(HTTP_ACCEPT_LANGUAGE="en-US,en;q=0.9")
    enter(client, zh_study)
    consent = page(client, zh_study, "consent")
    assert 'lang="zh-Hans"' in consent
    for text in ("参与研究知情同意", "您是否同意参加本研究？", "我同意，继续", "我不同意", "本研究是一个科研项目的一部分"):
        assert text in consent
    assert "I agree" not in consent and "Consent to take part" not in consent
    client.post(url(zh_study, "consent"), {"step": "consent", "choice": "agree"})
    # a stale consent form: the message shown on the next page is Chinese too
    client.post(url(zh_study, "consent"), {"step": "consent", "choice": "agree"})
    instructions = page(client, zh_study, "instructions")
    for text in ("说明", "两个示例", "示例1", "本示例的答案：<strong>100</strong>", "我已阅读说明，继续",
                 "该页面已经提交过", "人们会用", "一个被描述为“肯定”的事件发生的概率是多少?"):
        assert text in instructions, text
    client.post(url(zh_study, "instructions"), {"step": "instructions"})
    pledge = page(client, zh_study, "pledge")
    assert "诚信承诺" in pledge and "我保证认真" in pledge and "开始答题" in pledge
    refused = client.post(url(zh_study, "pledge"), {"step": "pledge"}).content.decode()
    assert "开始之前，请勾选方框以确认您的承诺。" in refused
    client.post(url(zh_study, "pledge"), {"step": "pledge", "pledge": "on"})
    item = page(client, zh_study, "item")
    assert 'data-message-empty="请先选择一个答案再继续。"' in item  # what the page script shows without an answer
    for text in ("第1题，共17题", "下一题", "根据陈述“", "请先选择一个答案再继续。", "0表示该事件不可能发生。"):
        assert text in item, text
    assert not re.search(r"\b(Question|Next|Please)\b", item)
    participant = Participant.objects.get(study=zh_study)
    slot = flow.current_step(participant).slot
    bad = client.post(url(zh_study, "item"), {"step": "item", "position": slot.position, "item": slot.item_id,
                                             "value": "abc", "token": slot_token(slot)}).content.decode()
    assert "请输入一个0到100之间的数字。" in bad
    while flow.current_step(participant).step == Step.ITEM:
        slot = flow.current_step(participant).slot
        client.post(url(zh_study, "item"), {"step": "item", "position": slot.position, "item": slot.item_id,
                                           "value": "50", "token": slot_token(slot)})
        participant.refresh_from_db()
    done = page(client, zh_study, "done")
    assert "谢谢！" in done and "您的回答已保存。" in done and "您的完成代码是" in done and "返回Prolific" in done
    assert translation.get_language() in ("en-us", "en")  # nothing leaks out of the request


def test_english_study_stays_english_for_a_chinese_browser(zh_study):
    study = Study.objects.create(slug="tang-en", title="WEP", instrument="wep_probability", status="live",
                                 items_per_expression=1, controls_per_participant=0)
    assert study.language == "en"
    Item.objects.bulk_create([Item(study=study, **f) for f in tang_rq1.generate(study, settings=["CNC"])])
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-CN,zh-Hans;q=0.9")
    enter(client, study)
    consent = page(client, study, "consent")
    assert 'lang="en"' in consent and "Consent to take part" in consent and "I agree, continue" in consent
    assert not HAN.search(consent)
    client.post(url(study, "consent"), {"step": "consent", "choice": "agree"})
    client.post(url(study, "instructions"), {"step": "instructions"})
    client.post(url(study, "pledge"), {"step": "pledge", "pledge": "on"})
    item = page(client, study, "item")
    assert "Question 1 of 17" in item and ">Next<" in item and not HAN.search(item)


def test_problem_pages_of_a_chinese_study_are_chinese(zh_study):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    missing = client.get(f"/s/{zh_study.slug}/").content.decode()
    assert "此链接缺少您的Prolific ID" in missing
    assert "我们找不到您在本研究中的进度" in client.get(url(zh_study, "consent")).content.decode()
    # no study, no language: English
    assert "No study at this address" in client.get("/s/nothing-here/?PROLIFIC_PID=abc").content.decode()


ROOT = Path(__file__).resolve().parents[1]
CATALOGUE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
NOT_COPIED = {".git", ".venv", "tests", "bench", "var", "site", "build", "reports", "__pycache__", "node_modules"}


def translations_module():
    """locale/zh_Hans_translations.py: the translations by message id, MAKEMESSAGES and read_po."""
    spec = importlib.util.spec_from_file_location("zh_hans_translations", ROOT / "locale" / "zh_Hans_translations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _not_read_by_makemessages(directory: str, names: list[str]) -> set[str]:
    """copytree's ignore: keep the files makemessages reads (.py, .html, .txt) and the committed .po."""
    def skipped(name: str) -> bool:
        if Path(directory, name).is_dir():
            return name in NOT_COPIED or name.startswith(".")
        return Path(name).suffix not in {".py", ".html", ".txt", ".po"}
    return {name for name in names if skipped(name)}


def regenerate_catalogue(copy: Path) -> str:
    """The catalogue makemessages makes today, with the project's options, from a copy of the code and the
    committed .po: texts the committed .po lacks come out untranslated, changed ones fuzzy."""
    shutil.copytree(ROOT, copy, ignore=_not_read_by_makemessages)
    done = subprocess.run([sys.executable, "manage.py", *translations_module().MAKEMESSAGES], cwd=copy,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return (copy / CATALOGUE.relative_to(ROOT)).read_text(encoding="utf-8")


def untranslated(entries) -> list[str]:
    """Message ids without a usable translation (empty or fuzzy), but for those only admin pages use (the
    catalogue leaves Django's admin wording to Django)."""
    return [entry.msgid for entry in entries if (not entry.msgstr or "fuzzy" in entry.flags)
            and not all(name.startswith("templates/admin/") for name in entry.files)]


@pytest.mark.skipif(not shutil.which("xgettext") or not shutil.which("msgmerge"),
                    reason="makemessages needs GNU gettext (apt-get install gettext)")
def test_catalogue_is_complete_and_compiled(tmp_path):
    """Every text the participant code and templates use today has a Chinese translation in the committed
    catalogue (makemessages run again on a copy finds nothing new, changed or untranslated), and the committed
    .mo holds exactly the committed .po's translations (a fresh clone needs no gettext tools)."""
    module = translations_module()
    committed = module.read_po(CATALOGUE.read_text(encoding="utf-8"), str(CATALOGUE))
    regenerated = module.read_po(regenerate_catalogue(tmp_path / "copy"), "regenerated django.po")
    assert not untranslated(regenerated), untranslated(regenerated)
    translations = {entry.msgid: entry.msgstr for entry in committed if entry.msgstr and "fuzzy" not in entry.flags}
    # nothing stale either: the committed catalogue is the regenerated one (--no-obsolete drops unused ids)
    assert {entry.msgid for entry in committed} == {entry.msgid for entry in regenerated}
    assert {entry.msgid: entry.msgstr for entry in regenerated if entry.msgstr} == translations
    with open(CATALOGUE.with_suffix(".mo"), "rb") as handle:
        mo = gettext.GNUTranslations(handle)
    assert {msgid: msgstr for msgid, msgstr in mo._catalog.items() if msgid} == translations  # compiled from it
    for msgid, msgstr in module.ZH_HANS.items():  # the translations fill() writes are the ones compiled
        assert translations.get(msgid) == msgstr, msgid
    with translation.override("zh-hans"):  # and Django finds each one
        for msgid, msgstr in translations.items():
            assert translation.gettext(msgid) == msgstr, msgid


# A channel participant (not Prolific's) refused before admission to a Chinese study: (case, title, message).
CHANNEL_REFUSALS = [
    ("draft", "本研究尚未开始", "本研究尚未开放。请稍后再试。"),
    ("closed", "本研究已结束", "本研究已不再招募参与者。"),
    ("no items", "本研究尚未准备好", "本研究还没有问题。请稍后再试。"),
    ("entry limit", "来自您所在网络的新参与者过多",
     "本研究每次只允许来自同一网络的少量新参与者加入。请等待几分钟，然后重新打开您收到的链接。"),
    ("withdrawn", "您已退出本研究", "您已要求从本研究中删除您的数据，数据已被删除。您不能再次参加本研究。"),
]


@pytest.mark.parametrize("case, title, message", CHANNEL_REFUSALS, ids=[r[0] for r in CHANNEL_REFUSALS])
def test_a_channel_participant_refused_by_a_chinese_study_reads_chinese(zh_study, settings, case, title, message):
    from surveys.models import RecruitmentChannel, Withdrawal
    from surveys.withdrawal import respondent_id

    RecruitmentChannel.objects.create(study=zh_study, name="sona", id_param="id")
    if case in ("draft", "closed"):
        zh_study.status = Study.Status.DRAFT if case == "draft" else Study.Status.CLOSED
        zh_study.save()
    elif case == "no items":
        zh_study.items.all().delete()
    elif case == "entry limit":
        settings.ENTRY_MAX_PER_CLIENT = 1
        Client(REMOTE_ADDR="203.0.113.7").get(f"/s/{zh_study.slug}/?channel=sona&id=first")
    elif case == "withdrawn":
        Withdrawal.objects.create(study=zh_study, study_slug=zh_study.slug, respondent_id=respondent_id("sona-abc123"),
                                  requested_by="test", participant_status="started")
    response = Client(REMOTE_ADDR="203.0.113.7", HTTP_ACCEPT_LANGUAGE="en").get(
        f"/s/{zh_study.slug}/?channel=sona&id=abc123")
    page = response.content.decode()
    assert response.status_code >= 400 and title in page and message in page, page
    assert "Prolific" not in page and not re.search(r"\b(Please|study|participants?)\b", page)


def test_chinese_free_text_and_slider_texts_are_chinese():
    """The free-text limit and the slider's state and button of a Chinese page (templates/surveys/answers/)."""
    from django.template.loader import render_to_string

    question = {"question": "问题", "hints": [], "max_length": 500,
                "scale": {"min": 0, "max": 100, "step": 1, "middle": 50, "labels": []}}
    context = {"q": question, "name": "value", "prefix": "a", "selected": None, "readonly": False, "error": ""}
    with translation.override("zh-hans"):
        free_text = render_to_string("surveys/answers/free_text.html", {**context, "name": "text"})
        slider = render_to_string("surveys/answers/slider.html", context)
    assert "最多500个字符。" in free_text
    for text in ("您的回答：", "尚未作答：请移动滑块，或确认滑块当前显示的数值。", "确认此数值"):
        assert text in slider, text
    assert not re.search(r"\b(Up to|Your answer|No answer|Confirm)\b", free_text + slider)


def test_preview_of_a_chinese_study_is_chinese(zh_study, django_user_model):
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    researcher = django_user_model.objects.create_user("r", password="x", is_staff=True)
    researcher.user_permissions.add(*Permission.objects.filter(codename__in=["view_study", "view_item"]))
    zh_study.shared_with.add(researcher)
    client.force_login(researcher)
    consent = client.get(f"/s/{zh_study.slug}/preview/?restart=1", follow=True).content.decode()
    assert "参与研究知情同意" in consent and "我同意，继续" in consent


def test_chinese_page_wording_uses_full_width_punctuation():
    """Chinese page texts in the catalogue use full-width punctuation (，：；？！（）); placeholders, HTML tags and
    commands stay as they are. The instruments' own Chinese wording (the prompt as well as the page) is not in the
    catalogue, so stored prompts do not change."""
    module = translations_module()
    catalogue = [entry.msgstr for entry in module.read_po(CATALOGUE.read_text(encoding="utf-8"))]
    for msgstr in [*module.ZH_HANS.values(), *catalogue]:
        text = re.sub(r"%\(\w+\)[sd]|<[^>]*>|`[^`]*`", "", msgstr)
        assert not re.search(r"[,;:?!()]|\.\.\.|(?<!…)…(?!…)", text), msgstr  # and the Chinese ellipsis is ……
    assert module.ZH_HANS["Question %(number)s of %(total)s"] == "第%(number)s题，共%(total)s题"


def test_chinese_prompts_do_not_depend_on_the_catalogue(zh_study):
    from elicitation.prompts import build_prompt, prompt_hash

    item = zh_study.main_items().order_by("id").first()
    english = build_prompt(zh_study, item, few_shot=True)
    with translation.override("zh-hans"):
        chinese = build_prompt(zh_study, item, few_shot=True)
    assert prompt_hash(chinese.messages) == prompt_hash(english.messages) and chinese.text == english.text
    assert "根据陈述“" in english.text and "?" in english.text  # the instrument's wording, ASCII as stored


def test_chinese_test_banner_has_a_full_width_colon(zh_study):
    """The test participant's banner of a Chinese study reads 测试参与者：您是… (walk of issue 23: the colon after
    the label was outside the catalogue and stayed ASCII, followed by a space)."""
    from surveys.test_mode import pilot_link

    client = Client()
    assert client.get(pilot_link("", zh_study)).status_code == 302
    banner = re.search(r'<div[^>]*id="test-banner"[^>]*>(.*?)</div>', page(client, zh_study, "consent"), re.S).group(1)
    text = re.sub(r"<[^>]*>", "", banner).strip()
    assert text.startswith("测试参与者：您是通过测试链接进入的") and ":" not in text  # no ASCII colon, no space
