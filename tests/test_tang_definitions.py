"""Tang et al.'s shipped definitions (studies/tang-rq1/, studies/tang-rq1-zh/, studies/tang-rq2/): loaded with
``load_study`` they say exactly what the studies built the old way say (the wording baseline's tang-en, tang-zh
and tang-rq2 rows, every prompt hash and page), they survive ``export_study`` and a second ``load_study``
unchanged, and the family's kinds keep no wording of their own."""
from __future__ import annotations

import inspect
import re
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

import prompt_baseline as baseline
from families.tang import wep_choice, wep_probability
from surveys.definition.files import STUDIES_DIR, read_definition, shipped_definition
from surveys.instruments import get_instrument
from surveys.models import Item, Study

# shipped file → the baseline study built the old way (create_study + generate_items) with the same items
SHIPPED = {"tang-rq1/study.toml": "tang-en", "tang-rq1-zh/study.toml": "tang-zh", "tang-rq2/study.toml": "tang-rq2"}


def rows_as(rows: list[dict], slug: str) -> list[dict]:
    return [{**row, "study": slug} for row in rows]


def load(relative: str, *extra: str) -> str:
    out = StringIO()
    call_command("load_study", str(STUDIES_DIR / relative), *extra, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("relative", sorted(SHIPPED))
def test_shipped_files_are_valid_definitions(relative):
    definition, _ = read_definition(STUDIES_DIR / relative)
    assert definition.study.kind in ("wep_probability", "wep_choice")
    assert definition.design.generator in ("tang-rq1", "tang-rq2")


@pytest.mark.django_db
@pytest.mark.parametrize("relative", sorted(SHIPPED))
def test_a_loaded_shipped_study_says_what_the_baseline_says(relative, tmp_path):
    """load_study of the file: the same items, every prompt (both styles, with and without demonstrations) and
    page as the baseline study built with create_study + generate_items."""
    slug = shipped_definition(relative)["study"]["slug"]
    if 'numbers = "paper"' in (STUDIES_DIR / relative).read_text():
        # the shipped replication uses the authors' numbers; the baseline's twin drew them with seed 0
        copy = tmp_path / "study.toml"
        copy.write_text((STUDIES_DIR / relative).read_text().replace('numbers = "paper"', "seed = 0"))
        call_command("load_study", str(copy), stdout=StringIO())
    else:
        load(relative)
    reference = SHIPPED[relative]
    prompts = baseline.compare(slug, "prompts", rows_as(baseline.read_jsonl(baseline.PROMPTS, [reference]), slug),
                               baseline.prompt_rows(slug), baseline.PROMPT_KEY)
    pages = baseline.compare(slug, "pages", rows_as(baseline.read_jsonl(baseline.PAGES, [reference]), slug),
                             baseline.page_rows(slug), baseline.PAGE_KEY)
    assert prompts.ok, baseline.describe(prompts)
    assert pages.ok, baseline.describe(pages)
    assert prompts.matching > 0 and pages.matching > 0


@pytest.mark.django_db
def test_tang_rq2_loads_exports_and_loads_again_with_the_same_prompt_hashes(tmp_path):
    """manage.py load_study studies/tang-rq2/study.toml, export_study, load_study of the export under another
    slug: the same items, prompt hashes (both styles) and pages, the same content hash and report options."""
    load("tang-rq2/study.toml")
    first = Study.objects.get(slug="tang-rq2")
    assert first.report_options == {"reading": "authors"} and first.items_per_participant == 30
    out = tmp_path / "export"
    call_command("export_study", "tang-rq2", "--out", str(out), stdout=StringIO())
    assert (out / "study.toml").exists() and (out / "items.jsonl").exists()
    call_command("load_study", str(out / "study.toml"), "--slug", "tang-rq2-copy", stdout=StringIO())
    copy = Study.objects.get(slug="tang-rq2-copy")
    assert copy.kind.name == "wep_choice" and copy.report_options == {"reading": "authors"}
    assert copy.versions.get().sha256 == first.versions.get().sha256

    def strip(rows):
        return sorted(({k: v for k, v in row.items() if k != "study"} for row in rows), key=repr)

    prompts = baseline.prompt_rows("tang-rq2")
    assert len(prompts) == 360 * 2 * 2
    assert strip(baseline.prompt_rows("tang-rq2-copy")) == strip(prompts)
    assert strip(baseline.page_rows("tang-rq2-copy")) == strip(baseline.page_rows("tang-rq2"))


@pytest.mark.django_db
def test_a_study_of_its_own_is_worded_by_its_definition():
    """A loaded study's wording comes from its own definition: changing the stored definition changes its pages
    and prompts, not those of a study created the old way (worded by the shipped file)."""
    load("tang-rq1-zh/study.toml")
    study = Study.objects.get(slug="tang-rq1-zh")
    item = study.main_items().order_by("key").first()
    before = study.kind.build_prompt(item, [], False).text
    definition = study.definition
    definition["wording"]["answer_cue"] = "回答:"
    Study.objects.filter(pk=study.pk).update(definition=definition)
    item = Item.objects.get(pk=item.pk)
    after = item.study.kind.build_prompt(item, [], False).text
    assert before.endswith("\n答案:") and after == before[: -len("答案:")] + "回答:"
    old_way = Study.objects.create(slug="old-way", title="old", instrument="wep_probability")
    twin = Item.objects.create(study=old_way, key="x", expression=item.expression, statement=item.statement,
                               language="zh", extra=item.extra)
    assert old_way.kind.build_prompt(twin, [], False).text == before


@pytest.mark.django_db
def test_what_a_file_leaves_unworded_comes_from_the_shipped_file(tmp_path):
    """A file that names only the kind and the design is worded by the shipped file (RQ2: the same prompts as
    the old way); one that changes a named text changes only what uses it."""
    minimal = tmp_path / "minimal" / "study.toml"
    minimal.parent.mkdir()
    minimal.write_text('[study]\nslug = "rq2-min"\ntitle = "t"\nkind = "wep_choice"\n\n'
                       '[design]\ngenerator = "tang-rq2"\n[design.options]\nnumbers = "paper"\n', encoding="utf-8")
    call_command("load_study", str(minimal), stdout=StringIO())
    load("tang-rq2/study.toml")
    shipped = Study.objects.get(slug="tang-rq2")
    study = Study.objects.get(slug="rq2-min")
    assert not study.definition["page"]["sentence"] and not study.definition["prompt"]["block"]
    for style in ("standard", "cot"):
        item, twin = (s.main_items().get(key="sound|3|wide|0.725|outside") for s in (study, shipped))
        assert study.kind.build_prompt(item, [], False, style).text == shipped.kind.build_prompt(twin, [], False, style).text
    assert study.kind.page_context(item) == shipped.kind.page_context(twin)
    assert study.kind.study_intro(study)["task"].startswith("Each question shows 20 numbers")
    renamed = tmp_path / "renamed" / "study.toml"
    renamed.parent.mkdir()
    renamed.write_text(minimal.read_text(encoding="utf-8").replace("rq2-min", "rq2-named")
                       + '\n[wording]\ninstruction = "Pick the phrase."\n', encoding="utf-8")
    call_command("load_study", str(renamed), stdout=StringIO())
    named = Study.objects.get(slug="rq2-named")
    item = named.main_items().get(key="sound|3|wide|0.725|outside")
    assert named.kind.page_context(item)["instruction"] == "Pick the phrase."
    assert named.kind.build_prompt(item, [], False).text == shipped.kind.build_prompt(twin, [], False).text


@pytest.mark.django_db
def test_a_chinese_study_created_the_old_way_exports_its_chinese_wording(tmp_path):
    """create_study --language zh + generate_items --language zh, exported and loaded again: the Chinese file's
    wording, the same prompt hashes and pages."""
    call_command("create_study", "zh-old", "--instrument", "wep_probability", "--language", "zh", stdout=StringIO())
    call_command("generate_items", "zh-old", "--design", "tang-rq1", "--language", "zh", "--contexts", "CNC",
                 stdout=StringIO())
    call_command("export_study", "zh-old", "--out", str(tmp_path / "zh"), stdout=StringIO())
    exported, _ = read_definition(tmp_path / "zh" / "study.toml")
    assert exported.wording["answer_cue"] == "答案:" and exported.study.language == "zh-hans"
    call_command("load_study", str(tmp_path / "zh" / "study.toml"), "--slug", "zh-copy", stdout=StringIO())

    def strip(rows):
        return sorted(({k: v for k, v in row.items() if k != "study"} for row in rows), key=repr)

    assert strip(baseline.prompt_rows("zh-copy")) == strip(baseline.prompt_rows("zh-old"))
    assert strip(baseline.page_rows("zh-copy")) == strip(baseline.page_rows("zh-old"))


@pytest.mark.django_db
def test_a_chinese_study_created_the_old_way_shows_the_chinese_instructions():
    study = Study.objects.create(slug="zh", title="zh", instrument="wep_probability", language="zh-hans")
    named = shipped_definition("tang-rq1-zh/study.toml")["wording"]
    assert study.kind.wording(study)["study"]["slug"] == "tang-rq1-zh"
    assert study.kind.study_intro(study) == {"task": named["task_intro"], "scale_ends": named["scale_ends"]}
    english = Study.objects.create(slug="en", title="en", instrument="wep_probability")
    assert english.kind.wording(english)["study"]["slug"] == "tang-rq1"


@pytest.mark.parametrize("module", [wep_probability, wep_choice])
def test_the_kinds_keep_no_wording(module):
    """The prompts' and pages' sentences live in the definition files, not in the kinds' modules (their source
    has none of the shipped files' named texts or prompt sentences)."""
    source = inspect.getsource(module)
    texts = []
    for relative in SHIPPED:
        definition = shipped_definition(relative)
        for value in definition["wording"].values():
            texts.extend([value] if isinstance(value, str) else value)
        texts += [definition["page"]["question"]]
    for text in texts:
        if len(text) > 12:  # the Chinese WEP renderings are short; longer texts are sentences
            assert text not in source, text
    assert "Complete the following sentence" not in source and "First compute" not in source
    assert not re.search(r"[\u4e00-\u9fff]", source)  # no Chinese wording either


def test_the_cot_prompt_asks_for_what_the_parser_reads():
    """The shipped CoT prompt asks for the final choice after the marker the wep_choice parser reads it after."""
    cot = shipped_definition("tang-rq2/study.toml")["prompt"]["styles"]["cot"]["block"]
    assert f'Give your final choice after "{get_instrument("wep_choice").final_choice_marker}".' in cot


def test_default_definitions_are_shipped_files():
    for name, relative in (("wep_probability", "tang-rq1/study.toml"), ("wep_choice", "tang-rq2/study.toml")):
        assert get_instrument(name).default_definition == relative
        assert Path(STUDIES_DIR / relative).is_file()
    assert wep_probability.DEFINITIONS["zh"] == "tang-rq1-zh/study.toml"


@pytest.mark.django_db
def test_the_shipped_rq2_replication_uses_the_authors_numbers():
    from families.tang.design_rq2 import PAPER_NARROW, PAPER_WIDE

    load("tang-rq2/study.toml")
    study = Study.objects.get(slug=shipped_definition("tang-rq2/study.toml")["study"]["slug"])
    assert study.report_option("reading") == "authors"
    samples = {item.extra["numbers"]: tuple(item.extra["sample"]) for item in study.main_items()
               if item.extra["scenario"] == "sound"}
    assert samples == {"narrow": PAPER_NARROW, "wide": PAPER_WIDE}
