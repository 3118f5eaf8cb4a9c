"""A definition file to a study, all or nothing (``manage.py load_study``, ``POST /api/studies/``, the admin).

:func:`load` validates the file, reads its items, checks every template against the items' fields, and then
creates or updates the study in one transaction. Any problem (every one found, each naming the file and the key
path or the item file's line and column) raises DefinitionError and writes nothing.

Versions: a study whose content (wording and items, surveys/definition/versions.py) changes gets a new
``StudyVersion``; once answers exist, that needs ``new_version=True`` (``--new-version``), so earlier answers
are never silently re-attached to other wording.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping

from django.db import transaction

from surveys.checks import check_problems
from surveys.designs import DesignError, get_design
from surveys.instruments import get_instrument
from surveys.models import Item, Study, StudyVersion
from surveys.questions import question_kind, questions_of, several

from . import versions
from .agent_checks import agent_problems
from .design_checks import design_problems
from .exclusion_checks import exclusion_problems
from .errors import DefinitionError, Problem
from .files import definition_path, parse_toml, validate
from .items_file import ITEM_COLUMNS, demonstration_fields, read_items
from .schema import Definition
from .study_fields import CODE_FIELDS, STUDY_FIELDS
from .templates import TemplateProblem, shown_fields, template_fields

# Names the prompt assembly gives templates besides the item's fields (surveys/definition/wording.py), and
# ``page``, the rendered page a prompt quotes (Instrument.prompt_context).
ASSEMBLY_NAMES = frozenset({"wording", "demos", "question", "shots", "system", "with_answer", "answer", "page"})

FileReader = Callable[[str], bytes]


@dataclass
class Loaded:
    """What a load did."""

    study: Study
    version: StudyVersion
    created: bool
    new_version: bool
    items: int
    demonstrations: int
    removed: int = 0
    returned: bool = False  # the file has an earlier version's content again: that version is current again
    agents: str = ""  # how the declared agents changed (they are outside the content: no new version)
    kept: list[str] = field(default_factory=list)  # keys of items gone from the file but kept (they have answers)
    notes: list[str] = field(default_factory=list)
    inspected: Any = None

    def summary(self) -> str:
        what = "created" if self.created else ("updated" if self.new_version else "unchanged")
        if what == "unchanged" and self.agents:
            what = "agents updated"
        if self.returned:
            what = "back to an earlier version"
        lines = [f"study {self.study.slug!r} {what}: version {self.version.number} ({self.version.sha256[:12]}), "
                 f"{self.items} items, {self.demonstrations} demonstrations"]
        if self.returned:
            lines.append(f"the file has version {self.version.number}'s content again: version "
                         f"{self.version.number} is current again (new answers join its answers); the versions "
                         "made since are kept with their answers")
        if self.removed:
            lines.append(f"{self.removed} items no longer in the file were removed")
        if self.kept:
            lines.append(f"{len(self.kept)} items no longer in the file were kept: they have answers")
        if self.agents and not self.created:
            lines.append(f"agents: {self.agents} (agents are not part of the study's content: same version)")
        return "\n".join(lines + self.notes)


def files_beside(path: Path) -> FileReader:
    """A reader of the files a definition at ``path`` names: relative paths inside its folder only."""
    folder = path.resolve().parent

    def read(name: str) -> bytes:
        target = (folder / name).resolve()
        if folder not in target.parents:
            raise FileNotFoundError(name)
        return target.read_bytes()

    return read


def uploaded_files(files: Mapping[str, bytes]) -> FileReader:
    """A reader of the files a definition names among ``files`` (uploaded with it: by their base name)."""

    def read(name: str) -> bytes:
        try:
            return files[name.rsplit("/", 1)[-1]]
        except KeyError:
            raise FileNotFoundError(name) from None

    return read


def load_as(user: Any, raw: bytes, file: str, read_file: FileReader | None, *, slug: str | None = None,
            new_version: bool = False) -> Loaded:
    """:func:`load` for ``user`` (the admin and the API): a study of the same slug that ``user`` may not see or
    change is refused, never overwritten; a created study is theirs."""
    from access.ownership import visible

    target = slug or (parse_toml(raw.decode("utf-8", "replace"), file).get("study") or {}).get("slug")
    existing = Study.objects.filter(slug=target).first() if isinstance(target, str) else None
    if existing is not None and not (visible(Study.objects.filter(pk=existing.pk), user).exists()
                                     and user.has_perm("surveys.change_study")):
        raise DefinitionError([Problem(file, "study.slug", f"a study called {target!r} exists and is not yours to "
                                       "change: load it under another slug")])
    return load(raw, file, read_file, slug=slug, new_version=new_version, owner=user)


def load_file(path: str | Path, **options: Any) -> Loaded:
    """Load the definition file at ``path`` (its item files read from beside it), or the shipped study of that
    name (:func:`definition_path`); see :func:`load`."""
    path = definition_path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DefinitionError([Problem(str(path), "", "no such file")]) from None
    return load(raw, str(path), files_beside(path), **options)


def load(raw: bytes | str, file: str, read_file: FileReader | None = None, *, slug: str | None = None,
         new_version: bool = False, owner: Any = None, commit: bool = True,
         inspect: Callable[[Study], Any] | None = None, check_reference: bool = True) -> Loaded:
    """Create or update the study ``raw`` (a definition's TOML) defines, all or nothing.

    ``read_file`` gives the bytes of an item file the definition names (None: it may name none);
    ``slug`` overrides ``[study] slug``; ``owner`` owns a created study; ``commit=False`` checks everything
    and rolls back (``check_study``); ``inspect(study)`` runs inside the transaction, its value in
    ``Loaded.inspected``; ``check_reference=False`` leaves ``[study] reference`` unchecked (a check without the
    project's database, surveys/definition/scratch_db.py)."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DefinitionError([Problem(file, f"byte {exc.start}", "not UTF-8 text")]) from None
    definition = validate(parse_toml(raw, file), file)
    dump = definition.model_dump(mode="json")
    if slug:
        dump["study"]["slug"] = slug
    study = Study.objects.filter(slug=dump["study"]["slug"]).first()
    probe = Study(slug=dump["study"]["slug"], instrument=dump["study"]["kind"], definition=dump,
                  language=dump["study"]["language"])
    kind = get_instrument(probe.instrument).for_study(probe)
    item_rows, demo_rows, problems = _items(definition, dump, kind, probe, file, read_file)
    problems += _check_templates(dump, kind, probe, item_rows + demo_rows, file)
    problems += _empty_cells(dump, item_rows)
    problems += _demonstration_answers(dump, kind, probe, demo_rows, file)
    problems += agent_problems(dump, tuple(kind.prompt_styles), file)
    problems += design_problems(dump, item_rows, file)
    problems += check_problems(dump, file)
    problems += exclusion_problems(dump, kind.shape.name, item_rows, file, kind.attention_rule)
    if problems:  # the item files' problems and the templates' together, in one answer
        raise DefinitionError(problems)
    sha = versions.content_hash(dump, item_rows + demo_rows)
    return _write(study, dump, item_rows, demo_rows, sha, file, new_version, owner, commit, inspect,
                  check_reference)


def _items(definition: Definition, dump: dict[str, Any], kind: Any, probe: Study, file: str,
           read_file: FileReader | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[Problem]]:
    """(main items' fields, demonstrations' fields, problems) the definition gives."""
    problems: list[Problem] = []
    rows: list[dict[str, Any]] = []
    design = definition.design
    if design.items:
        name = design.items
        if PurePosixPath(name).is_absolute() or ".." in PurePosixPath(name).parts or read_file is None:
            problems.append(Problem(file, "design.items", f"{name!r}: an item file is named relative to the "
                                    "definition, inside its folder"))
        else:
            try:
                data = read_file(name)
            except (FileNotFoundError, IsADirectoryError):
                problems.append(Problem(file, "design.items", f"no item file {name!r} beside the definition"))
            else:
                rows, found = read_items(kind, data, name, design.key)
                problems.extend(found)
    elif design.generator:
        try:
            chosen = get_design(design.generator)
            if chosen.instrument != probe.instrument:
                raise DesignError(f"design {chosen.name!r} makes {chosen.instrument} items, not {probe.instrument}")
            unknown = sorted(set(design.options) - set(chosen.options()))
            if unknown:
                raise DesignError(f"design {chosen.name!r} takes no option {', '.join(unknown)} "
                                  f"(its options: {', '.join(chosen.options()) or 'none'})")
            rows = chosen.function()(probe, **design.options)
            defaults = chosen.report_defaults(design.options)
            for key, value in defaults.items():
                dump["report"]["options"].setdefault(key, value)
        except (DesignError, ValueError, TypeError) as exc:
            problems.append(Problem(file, "design.generator", str(exc)))
    demos, found = demonstration_fields(dump["demonstrations"], file)
    problems.extend(found)
    keys = {row["key"] for row in rows}
    for number, demo in enumerate(demos):
        if demo["key"] in keys:
            problems.append(Problem(file, f"demonstrations[{number}].key", f"{demo['key']!r} is also an item's key"))
    return rows, demos, problems


def _template_paths(dump: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key path, template) of every template in the definition."""
    out = []
    page = dump.get("page") or {}
    for key in ("sentence", "question"):
        if page.get(key):
            out.append((f"page.{key}", page[key]))
    out += [(f"page.hints[{i}]", hint) for i, hint in enumerate(page.get("hints") or [])]
    prompt = dump.get("prompt") or {}
    for key in ("system", "block", "text", "user", "answer"):
        if prompt.get(key):
            out.append((f"prompt.{key}", prompt[key]))
    for style, templates in (prompt.get("styles") or {}).items():
        for key, template in templates.items():
            if template:
                out.append((f"prompt.styles.{style}.{key}", template))
    for number, question in enumerate(dump.get("questions") or []):
        out.append((f"questions[{number}].question", question["question"]))
        for key, template in (question.get("prompt") or {}).items():
            if template:
                out.append((f"questions[{number}].prompt.{key}", template))
    return out


def _check_templates(dump: dict[str, Any], kind: Any, probe: Study, rows: list[dict[str, Any]],
                     file: str) -> list[Problem]:
    """The problems of templates that do not parse or name fields the items (or the kind, or the prompt
    assembly) do not give."""
    known = set(ITEM_COLUMNS) | ASSEMBLY_NAMES | ({"condition"} if dump.get("factors") else set())
    for row in rows:
        known |= set(row.get("extra") or {})
    if rows:
        sample = Item(study=probe, **{k: v for k, v in rows[0].items() if k != "source_row"})
        try:
            known |= set(kind.template_context(sample))
        except Exception:  # e.g. a page template naming a missing field: the names without the page's wording
            try:
                bare = Study(slug=probe.slug, instrument=probe.instrument, language=probe.language,
                             definition={**probe.definition, "page": {"sentence": "", "question": "", "hints": []}})
                sample.study = bare
                known |= set(bare.kind.template_context(sample)) | {"sentence", "question", "hints", "page"}
            except Exception:  # a kind whose context needs saved items: its names are checked on render
                pass
    problems = []
    for path, template in _template_paths(dump):
        try:
            missing = sorted(template_fields(template) - known)
        except TemplateProblem as exc:
            problems.append(Problem(file, path, f"the template does not parse: {exc}"))
            continue
        if missing:
            problems.append(Problem(file, path, f"names field{'s' if len(missing) > 1 else ''} "
                                    f"{', '.join(repr(m) for m in missing)} that the items do not have"))
    group_by = dump.get("report", {}).get("group_by") or []
    questionnaire = {f["name"] for f in dump.get("questionnaire") or []}
    for i, name in enumerate(group_by):
        if name not in known and name not in questionnaire:
            problems.append(Problem(file, f"report.group_by[{i}]", f"{name!r} is neither an item field nor a "
                                    "questionnaire field"))
    return problems


def _empty_cells(dump: Mapping[str, Any], rows: list[dict[str, Any]]) -> list[Problem]:
    """The item file's empty cells that a page or prompt template shows whatever their value (outside any
    ``{% if %}``): the item would be worded with a gap. One problem per field (its first empty row, and how many)."""
    name = (dump.get("design") or {}).get("items")
    if not name or not rows:
        return []
    shown: dict[str, str] = {}
    for path, template in _template_paths(dump):
        try:
            for field in sorted(shown_fields(template)):
                shown.setdefault(field, path)
        except TemplateProblem:
            continue  # named by _check_templates
    columns = set(ITEM_COLUMNS)
    extra_names = {k for row in rows for k in (row.get("extra") or {})}
    cell = "column" if name.lower().endswith(".csv") else "field"
    problems = []
    for field, path in shown.items():
        if field not in columns and field not in extra_names:
            continue  # not an item field (the kind's or the assembly's)
        empty = [row for row in rows
                 if (row.get(field) if field in columns else (row.get("extra") or {}).get(field)) in ("", None)]
        if empty:
            more = f" (and {len(empty) - 1} more item(s))" if len(empty) > 1 else ""
            problems.append(Problem(name, f"line {empty[0].get('source_row', '?')}, {cell} {field!r}",
                                    f"empty, but {path} shows it for every item{more}: fill it in, or show it "
                                    f"only when set ({{% if {field} %}}…{{% endif %}})"))
    return problems


def _demonstration_answers(dump: Mapping[str, Any], kind: Any, probe: Study, demos: list[dict[str, Any]],
                           file: str) -> list[Problem]:
    """The worked examples whose answer the study's answer shape does not take (9 on a 1–7 scale, a choice
    that is no option): read as a model's answer is read."""
    declared = dump.get("demonstrations") or []
    if len(declared) != len(demos):
        return []  # a demonstration with problems of its own is named already
    problems = []
    for number, (demo, fields) in enumerate(zip(declared, demos)):
        answer = demo.get("answer")
        raw = f"{answer:g}" if isinstance(answer, (int, float)) and not isinstance(answer, bool) else str(answer)
        item = Item(study=probe, **{k: v for k, v in fields.items() if k != "source_row"})
        try:
            parsed = kind.parse_model_answer(raw, item)
        except NotImplementedError:
            continue
        except Exception as exc:  # noqa: BLE001 - a parser's own complaint about the text
            parsed = None
            reason = str(exc)
        else:
            reason = parsed.error
        if parsed is None or not parsed.ok or (parsed.value is not None and isinstance(answer, (int, float))
                                               and abs(parsed.value - float(answer)) > 1e-9):
            problems.append(Problem(file, f"demonstrations[{number}].answer", f"{repr(answer) if isinstance(answer, str) else raw} is not an answer this "
                                    f"study takes{': ' + reason if reason else ''}"))
    return problems


def _study_values(dump: Mapping[str, Any], file: str, loader: Any = None,
                  check_reference: bool = True) -> dict[str, Any]:
    """The study's fields from ``dump``; ``[study] reference`` is looked up among the studies ``loader`` may
    see (their own or shared with them: the rule of the API's field and the admin's form), all studies when
    no user loads it (``load_study`` without ``--as``), so another owner's study is "no other study".
    ``check_reference=False`` (a check without the project's database) leaves the reference out."""
    from access.ownership import visible

    values = {target: dump[table][key] for (table, key), target in STUDY_FIELDS.items()}
    values.update({name: dump["prolific"][name] for name in CODE_FIELDS if dump["prolific"][name]})
    reference = dump["study"].get("reference") or ""
    if reference and not check_reference:
        values["reference_study"] = None
    elif reference:
        candidates = Study.objects.all() if loader is None else visible(Study.objects.all(), loader)
        values["reference_study"] = candidates.filter(slug=reference).first()
        if values["reference_study"] is None or reference == dump["study"]["slug"]:
            yours = "" if loader is None else " that you own or that is shared with you"
            raise DefinitionError([Problem(file, "study.reference", f"no other study called {reference!r}{yours} "
                                           "to score this one against: load that one first"
                                           + ("" if loader is None else ", or ask its owner to share it"))])
    else:
        values["reference_study"] = None
    return values


class _Rollback(Exception):
    pass


def _write(study: Study | None, dump: dict[str, Any], rows: list[dict[str, Any]], demos: list[dict[str, Any]],
           sha: str, file: str, new_version: bool, owner: Any, commit: bool,
           inspect: Callable[[Study], Any] | None = None, check_reference: bool = True) -> Loaded:
    current = versions.current_version(study) if study else None
    if study is not None and study.instrument != dump["study"]["kind"]:
        raise DefinitionError([Problem(file, "study.kind", f"study {study.slug!r} exists with kind "
                                       f"{study.instrument!r}; a study's kind cannot change (load it under "
                                       "another slug)")])
    unchanged = current is not None and current.sha256 == sha
    earlier = versions.earlier_version(study, sha) if study is not None and not unchanged else None
    if study is not None and not unchanged and versions.has_answers(study) and not new_version:
        change = (f"returns to version {earlier.number}'s wording and items, which makes version {earlier.number} "
                  "current again" if earlier else "changes its wording or items, which makes a new version")
        raise DefinitionError([Problem(file, "", f"study {study.slug!r} already has answers given under version "
                                       f"{current.number if current else '0 (before versions)'}; this file {change}: "
                                       "load it with --new-version (earlier answers keep their version)")])
    result: Loaded | None = None
    try:
        with transaction.atomic():
            created = study is None
            values = _study_values(dump, file, owner, check_reference)
            if created:
                study = Study(slug=dump["study"]["slug"], owner=owner, **values)
            else:
                study = Study.objects.select_for_update().get(pk=study.pk)
                if versions.has_answers(study):
                    versions.ensure_first_version(study)  # its answers were given under the wording it has now
                for name, value in values.items():
                    setattr(study, name, value)
            agents = _agent_changes((study.definition or {}).get("agents") or [], dump.get("agents") or [])
            study.full_clean(exclude=["owner"])
            for name in CODE_FIELDS:  # generated codes are part of the stored definition
                dump["prolific"][name] = getattr(study, name)
            study.definition = dump
            study.save()
            removed, kept = _store_items(study, rows, demos)
            if unchanged:
                version = current
            else:
                version = versions.add_version(study, sha, dump)
            _render_first(study, file)
            result = Loaded(study=study, version=version, created=created, new_version=not unchanged and not created,
                            items=len(rows), demonstrations=len(demos), removed=removed, kept=kept,
                            returned=earlier is not None, agents="" if created else agents)
            if inspect is not None:
                result.inspected = inspect(study)
            if not commit:
                raise _Rollback
    except _Rollback:
        pass
    except Exception as exc:
        from django.core.exceptions import ValidationError

        if isinstance(exc, ValidationError):
            raise DefinitionError([Problem(file, _study_key(name), "; ".join(messages))
                                   for name, messages in exc.message_dict.items()]) from None
        raise
    assert result is not None
    return result


def _agent_changes(before: list[Mapping[str, Any]], after: list[Mapping[str, Any]]) -> str:
    """The declared agents added, removed and changed, in words ("" when none)."""
    old, new = {a["name"]: a for a in before}, {a["name"]: a for a in after}
    parts = []
    for label, names in (("added", [n for n in new if n not in old]), ("removed", [n for n in old if n not in new]),
                         ("changed", [n for n in new if n in old and dict(new[n]) != dict(old[n])])):
        if names:
            parts.append(f"{label} {', '.join(names)}")
    return "; ".join(parts)


def _study_key(field_name: str) -> str:
    for (table, key), target in STUDY_FIELDS.items():
        if target == field_name:
            return f"{table}.{key}"
    return "study." + field_name


def _store_items(study: Study, rows: list[dict[str, Any]], demos: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """Create, update or remove the study's items to match ``rows`` + ``demos`` (by key); items that have
    answers and are gone from the file are kept. (removed count, kept keys)."""
    wanted = {row["key"]: row for row in rows + demos}
    existing = {item.key: item for item in study.items.all()}
    new, changed = [], []
    for key, row in wanted.items():
        fields = {k: v for k, v in row.items() if k != "key"}
        item = existing.get(key)
        if item is None:
            new.append(Item(study=study, key=key, **fields))
            continue
        defaults = {f: Item._meta.get_field(f).get_default() for f in ITEM_COLUMNS if f != "key"}
        values = {**defaults, **fields}
        if any(getattr(item, name) != value for name, value in values.items()):
            for name, value in values.items():
                setattr(item, name, value)
            changed.append(item)
    Item.objects.bulk_create(new, batch_size=500)
    for item in changed:
        item.save()
    gone = [item for key, item in existing.items() if key not in wanted]
    used = set(Item.objects.filter(pk__in=[i.pk for i in gone], assignments__isnull=False).values_list("pk", flat=True))
    # model answers through the reverse relation elicitation declares (no import of the layer above)
    used |= set(Item.objects.filter(pk__in=[i.pk for i in gone], model_responses__isnull=False)
                .values_list("pk", flat=True))
    removable = [item.pk for item in gone if item.pk not in used]
    Item.objects.filter(pk__in=removable).delete()
    return len(removable), sorted(item.key for item in gone if item.pk in used)


def _render_first(study: Study, file: str, count: int = 20) -> None:
    """Render the page and the prompt of the first items: a template that fails on real items is refused."""
    kind = study.kind
    problems = []
    demos = study.demonstrations()
    asked = questions_of(study) if several(study) else []
    for item in study.main_items().order_by("id")[:count]:
        try:
            kind.page_context(item)
        except TemplateProblem as exc:
            problems.append(Problem(file, "page", f"item {item.key!r}: {exc}"))
            break
        except NotImplementedError:
            break
        for number, question in enumerate(asked):
            try:
                question_kind(study, question).page_context(item)
            except TemplateProblem as exc:
                problems.append(Problem(file, f"questions[{number}].question", f"item {item.key!r}: {exc}"))
        if problems:
            break
        try:
            for style in kind.prompt_styles:
                if style != "refine":
                    kind.build_prompt(item, demos, True, style)
        except TemplateProblem as exc:
            problems.append(Problem(file, "prompt", f"item {item.key!r}: {exc}"))
            break
        except NotImplementedError:
            pass
    if problems:
        raise DefinitionError(problems)
