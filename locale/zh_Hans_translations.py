"""Chinese (Simplified) translations of the participant pages, by English message id.

Fill the catalogue after ``manage.py makemessages -l zh_Hans``: ``python locale/zh_Hans_translations.py``
writes every msgstr it knows into locale/zh_Hans/LC_MESSAGES/django.po (empty ones stay empty, so a new
English text shows up untranslated instead of silently wrong); then ``manage.py compilemessages``.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import NamedTuple

MAKEMESSAGES = ("makemessages", "-l", "zh_Hans", "--no-obsolete", "--ignore=.venv", "--ignore=tests", "--ignore=bench")
"""manage.py's arguments that regenerate the catalogue (tests/test_tang_i18n.py runs them on a copy of the code)."""

ZH_HANS: dict[str, str] = {
    "Please choose one of the answers from 0 to 100.": "请从0到100中选择一个答案。",
    "Please choose one of the answers from 0 to 100 (in steps of 5).": "请从0到100（以5为间隔）中选择一个答案。",
    "Please enter a number from 0 to 100.": "请输入一个0到100之间的数字。",
    "Please enter a whole number from 0 to 100.": "请输入一个0到100之间的整数。",
    "This link is missing your Prolific ID": "此链接缺少您的Prolific ID",
    "The address has no %(name)s. Please open the study again from Prolific (use the link or button on the study "
    "page); it adds your Prolific ID for you.":
        "网址中没有%(name)s。请从Prolific重新打开本研究（使用研究页面上的链接或按钮），它会自动为您加上Prolific ID。",
    "This link has not been filled in by Prolific": "此链接未经Prolific填写",
    "The address contains Prolific's placeholder %(value)s instead of your %(name)s. Please open the study from its "
    "page on Prolific. (Researchers: in the Prolific study settings, choose to record Prolific IDs via URL "
    "parameters.)":
        "网址中包含的是Prolific的占位符%(value)s，而不是您的%(name)s。请从Prolific上的研究页面打开本研究。"
        "（研究人员：请在Prolific的研究设置中选择通过URL参数记录Prolific ID。）",
    "This link has an invalid Prolific ID": "此链接中的Prolific ID无效",
    "The %(name)s in the address (%(value)s) is not valid: it should be 1 to 64 letters and digits. Please open the "
    "study again from Prolific.":
        "网址中的%(name)s（%(value)s）无效：它应由1到64个字母和数字组成。请从Prolific重新打开本研究。",
    "This study has not started yet": "本研究尚未开始",
    "The study is not open yet. Please try again later or return it on Prolific.":
        "本研究尚未开放。请稍后再试，或在Prolific上退回本研究。",
    "This study is closed": "本研究已结束",
    "The study is no longer accepting participants. Please return it on Prolific.":
        "本研究已不再招募参与者。请在Prolific上退回本研究。",
    "This study is not ready": "本研究尚未准备好",
    "The study has no questions yet. Please return it on Prolific.": "本研究还没有问题。请在Prolific上退回本研究。",
    "This page was already submitted": "此页面已经提交过",
    "That page was already submitted (perhaps in another tab); here is where you are now.":
        "该页面已经提交过（可能是在另一个标签页中）；这里是您现在所处的位置。",
    "Your answers are already complete.": "您已完成所有回答。",
    "This page cannot take answers now.": "此页面现在不能接收回答。",
    "That answer did not match your current question, so it was not saved. Please answer the question below.":
        "该回答与您当前的问题不符，因此没有保存。请回答下面的问题。",
    "Your answer to that question was already saved; it has not been changed.": "您对该问题的回答已经保存，没有被更改。",
    "Please answer the questions in order.": "请按顺序回答问题。",
    "Please choose an answer before continuing.": "请先选择一个答案再继续。",
    "Please choose one of the options shown.": "请从显示的选项中选择一个。",
    "Please enter a lower and an upper bound before continuing.": "请先输入下限和上限再继续。",
    "Please enter a lower bound.": "请输入下限。",
    "Please enter a upper bound.": "请输入上限。",
    "Each bound must be a number (for example 12 or -3.5).": "每个界限都必须是数字（例如12或-3.5）。",
    "The lower bound must not be greater than the upper bound.": "下限不能大于上限。",
    "Please give one answer only.": "请只给出一个答案。",
    "Lower bound": "下限",
    "Upper bound": "上限",
    "I agree": "我同意",
    "I do not agree": "我不同意",
    "Please choose whether you agree to take part.": "请选择您是否同意参加。",
    "I pledge to answer every question carefully and to the best of my ability.": "我保证认真、尽我所能地回答每一个问题。",
    "Please tick the box to confirm the pledge before you start.": "开始之前，请勾选方框以确认您的承诺。",
    "No study at this address": "此网址没有对应的研究",
    "There is no study at this address. Please check the link on Prolific.": "此网址没有对应的研究。请检查Prolific上的链接。",
    "We could not find your place in this study": "我们找不到您在本研究中的进度",
    "Please open the study again with the link on Prolific; you will continue where you left off.":
        "请使用Prolific上的链接重新打开本研究；您将从上次离开的地方继续。",
    "Skip to the content": "跳到正文",
    "Consent": "知情同意",
    "Consent to take part": "参与研究知情同意",
    "This study is part of a research project. Your answers are stored without your name and used for research only. "
    "You may stop at any time by returning the study on Prolific.":
        "本研究是一个科研项目的一部分。您的回答将以匿名方式保存，仅用于研究。您可以随时在Prolific上退回本研究以停止参与。",
    "This study is part of a research project. Your answers are stored without your name and used for research only. "
    "You may stop at any time by closing this page.":
        "本研究是一个科研项目的一部分。您的回答将以匿名方式保存，仅用于研究。您可以随时关闭本页面以停止参与。",
    "Do you agree to take part in this study?": "您是否同意参加本研究？",
    "I agree, continue": "我同意，继续",
    "You chose not to take part": "您选择了不参加",
    "Thank you for considering this study. <strong>Please return the study on Prolific</strong> (choose “Return "
    "submission” / “Stop without completing” on Prolific), so that your place goes to someone else.":
        "感谢您考虑参加本研究。<strong>请在Prolific上退回本研究</strong>（在Prolific上选择“Return submission”/"
        "“Stop without completing”），以便将名额留给其他人。",
    "We have recorded only that you chose not to take part, and when. If you change your mind, open the study "
    "link from Prolific again.":
        "我们只记录了您选择不参加以及选择的时间。如果您改变主意，请从Prolific重新打开研究链接。",
    "Back to Prolific, to return the study": "返回Prolific，退回本研究",
    "(Preview: nothing is recorded.)": "（预览：不会记录任何内容。）",
    "You have withdrawn from this study": "您已退出本研究",
    "You asked for your data to be removed from this study, and it has been. You cannot take part in it again. "
    "Please return it on Prolific.":
        "您已要求从本研究中删除您的数据，数据已被删除。您不能再次参加本研究。请在Prolific上退回本研究。",
    "This test link is not valid": "此测试链接无效",
    "The address carries a test marker that this site did not issue for this study. Researchers: copy a fresh "
    "test link from `.venv/bin/python manage.py show_links` or the admin.":
        "网址中带有的测试标记不是本网站为本研究签发的。研究人员：请从`.venv/bin/python manage.py show_links`"
        "或管理后台复制新的测试链接。",
    "Thank you": "谢谢",
    "Thank you!": "谢谢！",
    "Your answers have been saved.": "您的回答已保存。",
    "Your completion code is <strong class=\"code\" id=\"completion-code\">%(code)s</strong>":
        "您的完成代码是<strong class=\"code\" id=\"completion-code\">%(code)s</strong>",
    "Taking you back to Prolific…": "正在带您返回Prolific……",
    "Return to Prolific": "返回Prolific",
    "Thank you for considering this study. You may close this page.": "感谢您考虑参加本研究。您可以关闭此页面。",
    "Thank you for considering this study.": "感谢您考虑参加本研究。",
    "Back to %(name)s": "返回%(name)s",
    "We have recorded only that you chose not to take part, and when. If you change your mind, open the study link "
    "again.": "我们只记录了您选择不参加以及选择的时间。如果您改变主意，请重新打开研究链接。",
    "The answers you gave are kept. If you think this is a mistake, please contact the researchers.":
        "您已给出的回答会被保留。如果您认为这是一个错误，请联系研究人员。",
    "Taking you back to %(platform)s…": "正在带您返回%(platform)s……",
    "Return to %(platform)s": "返回%(platform)s",
    "This link is not valid": "此链接无效",
    "The address names a way into this study that does not exist. Please open the study again with the link you "
    "were given.": "网址指向的参与途径在本研究中不存在。请使用您收到的链接重新打开本研究。",
    "This link is missing your id": "此链接缺少您的ID",
    "The address has no %(name)s. Please open the study again with the link you were given.":
        "网址中没有%(name)s。请使用您收到的链接重新打开本研究。",
    "This link has an invalid id": "此链接中的ID无效",
    "The %(name)s in the address (%(value)s) is not valid: it should be 1 to %(max)s letters, digits, hyphens or "
    "underscores.": "网址中的%(name)s（%(value)s）无效：应为1到%(max)s个字母、数字、连字符或下划线。",
    "<strong>Test participant:</strong> you entered with a test link. Your answers are kept apart from the real "
    "data, and nothing is sent to Prolific.":
        "<strong>测试参与者：</strong>您是通过测试链接进入的。您的回答与真实数据分开保存，不会发送任何内容到Prolific。",
    "This was a test: you are not sent back to Prolific.": "这是一次测试：不会将您送回Prolific。",
    "This study has ended for you": "本研究对您已经结束",
    "You have returned this study": "您已退回本研究",
    "Prolific tells us that you returned this study, so it cannot be continued.": "Prolific通知我们您已退回本研究，因此无法继续。",
    "Your time for this study has run out": "您参加本研究的时间已用完",
    "Prolific tells us that the time allowed for this study ran out, so it cannot be continued.":
        "Prolific通知我们本研究的允许时间已用完，因此无法继续。",
    "This study is not available to you": "您无法参加本研究",
    "You cannot take part in this study.": "您不能参加本研究。",
    "The answers you gave are kept. If you think this is a mistake, please message the researchers on Prolific.":
        "您已给出的回答会被保留。如果您认为这是个错误，请在Prolific上给研究人员发消息。",
    "Instructions": "说明",
    "Two examples": "两个示例",
    "Examples": "示例",
    "Here is an example question with the answer already chosen, on the same page you will see for each question.":
        "下面是一个已选好答案的示例问题，页面与您之后回答每个问题时看到的相同。",
    "Here are example questions with the answer already chosen, on the same page you will see for each question.":
        "下面是几个已选好答案的示例问题，页面与您之后回答每个问题时看到的相同。",
    "Example %(number)s": "示例%(number)s",
    "Answer in this example: <strong>%(answer)s</strong>": "本示例的答案：<strong>%(answer)s</strong>",
    "I have read the instructions, continue": "我已阅读说明，继续",
    "Question %(number)s of %(total)s": "第%(number)s题，共%(total)s题",
    "Next": "下一题",
    "Integrity pledge": "诚信承诺",
    "Research depends on careful answers. Please read each question and answer it as well as you can, without help "
    "from other people or tools.":
        "研究依赖于认真的回答。请仔细阅读每个问题，在不借助他人或工具的情况下尽您所能地作答。",
    "Start the questions": "开始答题",
    # the participant questionnaire (surveys/questionnaire.py, templates/surveys/questionnaire.html)
    "Please answer this question.": "请回答这个问题。",
    "Please enter a number (for example 42).": "请输入一个数字（例如42）。",
    "Please enter a whole number (for example 42).": "请输入一个整数（例如42）。",
    "Please enter a number from %(min)s to %(max)s.": "请输入一个%(min)s到%(max)s之间的数字。",
    "Please enter a number of at least %(min)s.": "请输入一个不小于%(min)s的数字。",
    "Please enter a number of at most %(max)s.": "请输入一个不大于%(max)s的数字。",
    "Please keep your answer to at most %(limit_value)d characters (it has %(show_value)d).":
        "请将您的回答控制在%(limit_value)d个字符以内（目前为%(show_value)d个）。",
    "About you": "关于您",
    "Before the questions, please tell us a little about yourself.": "在开始答题之前，请简单介绍一下您自己。",
    "Last, please tell us a little about yourself.": "最后，请简单介绍一下您自己。",
    "Please check the answers marked below.": "请检查下面标出的回答。",
    "optional": "选填",
    "Continue": "继续",
    "Finish": "完成",
    # answer messages of the newer answer shapes (surveys.flow.ANSWER_MESSAGES) and their page texts
    "Please choose one of the answers on the scale.": "请在量表上选择一个答案。",
    "Please write an answer before continuing.": "请先写下您的回答再继续。",
    "Your answer holds a character that cannot be stored (NUL); please remove it.":
        "您的回答中含有一个无法保存的字符（NUL），请将其删除。",
    "Please shorten your answer: it is longer than this question allows.": "请缩短您的回答：它超出了本题允许的长度。",
    "Up to %(limit)s characters.": "最多%(limit)s个字符。",
    "Your answer:": "您的回答：",
    "(optional)": "（选填）",
    "No answer yet: move the slider, or confirm the value it shows.": "尚未作答：请移动滑块，或确认滑块当前显示的数值。",
    "Confirm this value": "确认此数值",
    # too many new participants from one address (surveys.flow.check_entry_rate)
    "Too many new participants from your network": "来自您所在网络的新参与者过多",
    "This study admits only a few new participants per network at a time. Please wait a few minutes and open the "
    "link from Prolific again.":
        "本研究每次只允许来自同一网络的少量新参与者加入。请等待几分钟，然后从Prolific重新打开链接。",
    "This study admits only a few new participants per network at a time. Please wait a few minutes and open the "
    "link you were given again.":
        "本研究每次只允许来自同一网络的少量新参与者加入。请等待几分钟，然后重新打开您收到的链接。",
    # participants of another recruitment channel than Prolific: the same pages without Prolific
    "The study is not open yet. Please try again later.": "本研究尚未开放。请稍后再试。",
    "The study is no longer accepting participants.": "本研究已不再招募参与者。",
    "The study has no questions yet. Please try again later.": "本研究还没有问题。请稍后再试。",
    "There is no study at this address. Please check the link you were given.": "此网址没有对应的研究。请检查您收到的链接。",
    "Please open the study again with the link you were given; you will continue where you left off.":
        "请使用您收到的链接重新打开本研究；您将从上次离开的地方继续。",
    "You asked for your data to be removed from this study, and it has been. You cannot take part in it again.":
        "您已要求从本研究中删除您的数据，数据已被删除。您不能再次参加本研究。",
    "<strong>Test participant:</strong> you entered with a test link. Your answers are kept apart from the real "
    "data, and you are not sent back at the end.":
        "<strong>测试参与者：</strong>您是通过测试链接进入的。您的回答与真实数据分开保存，结束时也不会将您送回。",
    "This was a test: you are not sent back to %(platform)s.": "这是一次测试：不会将您送回%(platform)s。",
    "You returned this study, so it cannot be continued.": "您已退回本研究，因此无法继续。",
    "The time allowed for this study ran out, so it cannot be continued.": "本研究的允许时间已用完，因此无法继续。",
    # conditions (issue 31): a link naming no cell, every cell full
    "This link names no condition of the study": "此链接没有指明本研究的条件",
    "The study link must name one of the study's conditions. Please open the link you were given again, or "
    "contact the researcher.":
        "研究链接必须指明本研究的一个条件。请重新打开您收到的链接，或联系研究人员。",
    "This study is full": "本研究名额已满",
    "All places in this study have been taken. Please return it; thank you for your interest.":
        "本研究的名额已全部占满。请退回本研究；感谢您的关注。",
    # checks (issue 31): the end of a study after failed attention checks
    "Some of your answers to the attention questions in this study were not the ones the questions asked for, so "
    "the study cannot continue.":
        "您对本研究中注意力问题的部分回答不是问题所要求的答案，因此研究无法继续。",
    'Your code is <strong class="code" id="screened-out-code">%(code)s</strong>':
        '您的代码是 <strong class="code" id="screened-out-code">%(code)s</strong>',
    "This was a test: you are not sent back.": "这是一次测试：不会将您送回。",
    "Please withdraw from this study where you signed up for it. The answers you gave are kept; if you think this "
    "is a mistake, please contact the researchers.":
        "请在您报名参加本研究的地方退出本研究。您已给出的回答会被保留；如果您认为这是一个错误，请联系研究人员。",
    "Please return your submission on Prolific (open the study on Prolific and choose “Return submission”). You "
    "will not be rejected. If you think this is a mistake, please message the researchers on Prolific.":
        "请在Prolific上退回您的提交（在Prolific上打开本研究并选择“Return submission”）。您不会被拒绝。"
        "如果您认为这是一个错误，请在Prolific上给研究人员发消息。",
    # the researchers' upload pages (templates/admin/surveys/study/…), which makemessages reads too
    "Django site admin": "Django 站点管理",
    "Home": "首页",
}

_MSGID = re.compile(r'^msgid ((?:".*"\n?)+)', re.M)
_FIELD = re.compile(r'^(msgctxt|msgid|msgid_plural|msgstr) ((?:".*"\n?)+)', re.M)


class PoEntry(NamedTuple):
    """One message of a .po file: its id and translation, flags (fuzzy, python-format) and the files using it."""

    msgid: str
    msgstr: str
    flags: frozenset[str]
    files: frozenset[str]


def read_po(text: str, name: str = "django.po") -> list[PoEntry]:
    """The messages of a .po file's text, without the header and obsolete ("#~") entries; ValueError, naming
    ``name`` and the message, for contexts and plurals (msgctxt, msgid_plural), which the catalogue does not use."""
    entries = []
    for block in text.strip("\n").split("\n\n"):
        fields = {key: _unquote(value) for key, value in _FIELD.findall(block + "\n")}
        if not fields.get("msgid"):
            continue
        if "msgctxt" in fields or "msgid_plural" in fields:
            raise ValueError(f"{name}: {fields['msgid']!r} has a context or plural, not read here")
        lines = block.split("\n")
        flags = {flag for line in lines if line.startswith("#,") for flag in line[2:].replace(",", " ").split()}
        files = {ref.rsplit(":", 1)[0] for line in lines if line.startswith("#:") for ref in line[2:].split()}
        entries.append(PoEntry(fields["msgid"], fields.get("msgstr", ""), frozenset(flags), frozenset(files)))
    return entries



def _unquote(lines: str) -> str:
    return "".join(line[1:-1] for line in lines.strip().split("\n")).replace('\\"', '"').replace("\\n", "\n")


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def fill(path: Path) -> list[str]:
    """Write the translations into the .po at ``path``: every entry whose message id is known gets its msgstr
    (msgmerge's fuzzy guesses and their "#|" previous ids are dropped; other flags such as python-format stay);
    returns the ids left untranslated."""
    entries = path.read_text(encoding="utf-8").strip("\n").split("\n\n")
    missing: list[str] = []
    out = []
    for entry in entries:
        match = _MSGID.search(entry)
        msgid = _unquote(match.group(1).split("msgstr")[0]) if match else ""
        if not msgid:  # the header
            entry = entry.replace("#, fuzzy\n", "", 1).replace('"Language: \\n"', '"Language: zh_Hans\\n"', 1)
        elif msgid in ZH_HANS:
            comments = [line for line in entry.split("\n") if line.startswith("#:") or line.startswith("#.")]
            flags = [flag for line in entry.split("\n") if line.startswith("#,")
                     for flag in line[2:].replace(",", " ").split() if flag != "fuzzy"]
            if flags:  # python-format and the like stay: compilemessages checks the placeholders by them
                comments.append("#, " + ", ".join(flags))
            entry = "\n".join([*comments, f"msgid {match.group(1).strip()}", f"msgstr {_quote(ZH_HANS[msgid])}"])
        elif not entry.startswith("#~"):
            missing.append(msgid)
        out.append(entry)
    path.write_text("\n\n".join(out) + "\n", encoding="utf-8")
    return missing


if __name__ == "__main__":
    po = Path(__file__).resolve().parent / "zh_Hans" / "LC_MESSAGES" / "django.po"
    left = fill(po)
    print(f"{po}: {len(left)} message(s) without a translation", *left, sep="\n  ", file=sys.stderr)
