"""A replication package into an empty database (the scratch database of ``manage.py reproduce``): the study from
its definition files (surveys/definition/loader.py), then its versions, channels, participants (named by their
salted id), their slots and answers, endpoints (no keys), runs, stored prompts (each checked against its hash)
and model answers, all with the ids they had, in one transaction. A package with a reference study
(``reference/<slug>/…``) loads that study first, the same way, so that the study's ``[study] reference`` finds it;
ids do not collide, both studies come from one database."""
from __future__ import annotations

from typing import Any

from django.db import transaction

from analysis.replication.layout import REFERENCE_DIR
from analysis.replication.rows import read_jsonl

ITEM_OFFSET = 1_000_000_000


class PackageDataError(ValueError):
    """A data file of the package cannot be loaded; the message names the file and line."""


def _typed(model: Any, row: dict[str, Any], name: str, n: int, skip: set[str]) -> dict[str, Any]:
    """The row's own columns converted by ``model``'s fields; an unknown column is named."""
    out = {}
    for key, value in row.items():
        if key in skip:
            continue
        try:
            field = model._meta.get_field(key)
        except Exception:  # noqa: BLE001 - FieldDoesNotExist
            raise PackageDataError(f"{name} line {n}: unknown column {key!r}") from None
        try:
            out[field.attname] = None if value is None else field.to_python(value)
        except Exception as exc:  # noqa: BLE001 - ValidationError of one value
            raise PackageDataError(f"{name} line {n}: column {key!r}: {exc}") from None
    return out


def _rows(files: dict[str, bytes], name: str) -> list[tuple[int, dict[str, Any]]]:
    path = f"data/{name}.jsonl"
    if path not in files:
        raise PackageDataError(f"{path}: missing from the package")
    try:
        return list(enumerate(read_jsonl(files[path], path), start=1))
    except ValueError as exc:
        raise PackageDataError(str(exc)) from None


def reference_files(files: dict[str, bytes]) -> tuple[str, dict[str, bytes]] | None:
    """(folder, its files by their name inside it) of the package's reference study, None without one;
    PackageDataError when there are several."""
    folders = sorted({"/".join(name.split("/")[:2]) + "/" for name in files
                      if name.startswith(f"{REFERENCE_DIR}/") and name.count("/") >= 2})
    if not folders:
        return None
    if len(folders) > 1:
        raise PackageDataError(f"{', '.join(folders)}: a package holds one reference study")
    return folders[0], {name.removeprefix(folders[0]): data for name, data in files.items()
                        if name.startswith(folders[0])}


@transaction.atomic
def load_package(files: dict[str, bytes]) -> Any:
    """Load the package's files (name → bytes, already checked against the MANIFEST) into this database, which
    must hold neither the study's slug nor its reference study's: the reference study first (when the package
    has one), then the study; the Study."""
    reference = reference_files(files)
    if reference is not None:
        folder, inside = reference
        if f"{folder}definition/study.toml" not in files:
            raise PackageDataError(f"{folder}definition/study.toml: missing from the package")
        try:
            load_study_files(inside)
        except PackageDataError as exc:
            raise PackageDataError(f"{folder}{exc}") from None
    return load_study_files({name: data for name, data in files.items()
                             if not name.startswith(f"{REFERENCE_DIR}/")})


def load_study_files(files: dict[str, bytes]) -> Any:
    """One study from its ``definition/`` and ``data/`` files; the Study. PackageDataError messages name the
    files as they are named in ``files``."""
    from surveys.definition.errors import DefinitionError
    from surveys.definition.loader import load

    if "definition/study.toml" not in files:
        raise PackageDataError("definition/study.toml: missing from the package")

    def read_file(name: str) -> bytes:
        """An item file the definition names: only one of the package's definition files (nothing from disk)."""
        if f"definition/{name}" not in files or "/" in name:
            raise FileNotFoundError(name)
        return files[f"definition/{name}"]

    try:
        loaded = load(files["definition/study.toml"], "definition/study.toml", read_file)
    except DefinitionError as exc:  # e.g. a reference study that is not in the package
        raise PackageDataError("; ".join(f"definition/{p.file.rpartition('/')[2]}{f' at {p.where}' if p.where else ''}: "
                                         f"{p.message}" for p in exc.problems)) from None
    study = loaded.study
    items = _items(study, files)
    versions = _versions(study, loaded.version, files)
    channels = _channels(study, files)
    _people(study, files, items, versions, channels)
    _models(study, files, items, versions)
    return study


def _items(study: Any, files: dict[str, bytes]) -> dict[str, Any]:
    """The loaded items given their packaged ids (the loader numbered them afresh)."""
    from surveys.models import Item

    by_key = {i.key: i for i in study.items.all()}
    wanted = {}
    for n, row in _rows(files, "item_ids"):
        if row.get("key") not in by_key:
            raise PackageDataError(f"data/item_ids.jsonl line {n}: no item {row.get('key')!r} in the definition")
        wanted[row["key"]] = int(row["id"])
    for key, item in by_key.items():
        Item.objects.filter(pk=item.pk).update(id=item.pk + ITEM_OFFSET)
    for key, item in by_key.items():
        Item.objects.filter(pk=item.pk + ITEM_OFFSET).update(id=wanted.get(key, item.pk + ITEM_OFFSET))
    return {i.key: i for i in study.items.all()}


def _versions(study: Any, current: Any, files: dict[str, bytes]) -> dict[int, Any]:
    """Version number → StudyVersion: the loaded one renumbered as packaged, the others created."""
    from surveys.models import StudyVersion

    out = {}
    rows = _rows(files, "versions")
    for n, row in rows:
        if row["sha256"] == current.sha256 and current.number not in out.values():
            StudyVersion.objects.filter(pk=current.pk).update(number=row["number"], definition=row["definition"])
            current.refresh_from_db()
            out[row["number"]] = current
    for n, row in rows:
        if row["number"] not in out:  # not current: made current before the loaded one (older packages: when made)
            fields = _typed(StudyVersion, row, "data/versions.jsonl", n, set())
            fields.setdefault("current_since", fields.get("created_at") or current.created_at)
            fields["current_since"] = min(fields["current_since"], current.current_since)
            out[row["number"]] = StudyVersion.objects.create(study=study, **fields)
    return out


def _channels(study: Any, files: dict[str, bytes]) -> dict[str, Any]:
    from surveys.models import RecruitmentChannel

    made = [RecruitmentChannel(study=study, **_typed(RecruitmentChannel, row, "data/channels.jsonl", n, set()))
            for n, row in _rows(files, "channels")]
    return {c.name: c for c in RecruitmentChannel.objects.bulk_create(made)}


def _version(versions: dict[int, Any], number: Any, where: str) -> Any:
    if number is None:
        return None
    if number not in versions:
        raise PackageDataError(f"{where}: version {number} is not in data/versions.jsonl")
    return versions[number]


def _item(items: dict[str, Any], key: Any, where: str) -> Any:
    if key not in items:
        raise PackageDataError(f"{where}: no item {key!r} in the definition")
    return items[key]


def _people(study: Any, files: dict[str, bytes], items: dict[str, Any], versions: dict[int, Any],
            channels: dict[str, Any]) -> None:
    """Participants (their salted id in place of the PROLIFIC_PID), their slots and answers. Answers are inserted
    while their participant is ``started`` (a database trigger refuses others), the statuses set afterwards."""
    from surveys.models import Assignment, Participant, Response

    people, statuses = [], {}
    for n, row in _rows(files, "participants"):
        where = f"data/participants.jsonl line {n}"
        people.append(Participant(study=study, prolific_pid=row["respondent_id"],
                                  study_version=_version(versions, row.get("study_version"), where),
                                  channel=channels.get(row["channel"]) if row.get("channel") else None,
                                  **_typed(Participant, row, "data/participants.jsonl", n,
                                           {"respondent_id", "study_version", "channel"})))
    for person in people:
        statuses[person.id] = person.status
        person.status = Participant.Status.STARTED
    Participant.objects.bulk_create(people)
    slots, answers, answered = [], [], set()
    for n, row in _rows(files, "human_answers"):
        where = f"data/human_answers.jsonl line {n}"
        item = _item(items, row.get("item"), where)
        if row["slot_id"] not in answered:  # several questions per item: one slot, an answer per question
            answered.add(row["slot_id"])
            slots.append(Assignment(id=row["slot_id"], participant_id=row["participant"], item=item,
                                    **_typed(Assignment, row.get("slot") or {}, "data/human_answers.jsonl", n, set())))
        answers.append(Response(assignment_id=row["slot_id"], participant_id=row["participant"], item=item,
                                **_typed(Response, row, "data/human_answers.jsonl", n,
                                         {"participant", "respondent_id", "item", "slot", "slot_id"})))
    for n, row in _rows(files, "unanswered_slots"):
        slots.append(Assignment(participant_id=row["participant"],
                                item=_item(items, row.get("item"), f"data/unanswered_slots.jsonl line {n}"),
                                **_typed(Assignment, row, "data/unanswered_slots.jsonl", n, {"participant", "item"})))
    Assignment.objects.bulk_create(slots)
    Response.objects.bulk_create(answers)
    for person in people:
        person.status = statuses[person.id]
    Participant.objects.bulk_update(people, ["status"], batch_size=500)


def _models(study: Any, files: dict[str, bytes], items: dict[str, Any], versions: dict[int, Any]) -> None:
    """Endpoints (by name), runs, stored prompts (hash checked) and model answers."""
    from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse, StoredPrompt
    from elicitation.prompts import prompt_hash

    runs, subsets = [], {}
    for n, row in _rows(files, "runs"):
        where = f"data/runs.jsonl line {n}"
        e = row.get("endpoint") or {}
        endpoint, _ = ModelEndpoint.objects.get_or_create(
            name=e.get("name"), defaults={k: e[k] for k in ("model", "base_url", "api_style", "supports_seed") if k in e})
        runs.append(ElicitationRun(study=study, endpoint=endpoint, refines_id=row.get("refines"),
                                   study_version=_version(versions, row.get("study_version"), where),
                                   **_typed(ElicitationRun, row, "data/runs.jsonl", n,
                                            {"endpoint", "refines", "study_version", "items"})))
        subsets[row["id"]] = [_item(items, key, where) for key in row.get("items") or []]
    stamps = {r.id: r.created_at for r in runs}
    ElicitationRun.objects.bulk_create(runs)
    _keep_created(ElicitationRun, runs, stamps)
    for run in runs:
        run.items.set(subsets[run.id])
    prompts = {}
    for n, row in _rows(files, "prompts"):
        if prompt_hash(row["content"]) != row["sha256"]:
            raise PackageDataError(f"data/prompts.jsonl line {n}: the content's SHA-256 is not {row['sha256']}")
        prompts[row["sha256"]] = StoredPrompt(sha256=row["sha256"], api_style=row["api_style"], content=row["content"])
    there = set(StoredPrompt.objects.filter(sha256__in=list(prompts)).values_list("sha256", flat=True))
    StoredPrompt.objects.bulk_create(p for h, p in prompts.items() if h not in there)  # the reference's may be there
    prompts = {p.sha256: p for p in StoredPrompt.objects.filter(sha256__in=list(prompts))}
    answers = []
    for n, row in _rows(files, "model_answers"):
        where = f"data/model_answers.jsonl line {n}"
        if row.get("prompt") and row["prompt"] not in prompts:
            raise PackageDataError(f"{where}: prompt {row['prompt']} is not in data/prompts.jsonl")
        check = bool(row.get("check_key")) and row.get("item") is None  # an attention check asked of an agent
        answers.append(ModelResponse(run_id=row["run"], item=None if check else _item(items, row.get("item"), where),
                                     prompt=prompts.get(row.get("prompt")),
                                     **_typed(ModelResponse, row, "data/model_answers.jsonl", n,
                                              {"run", "item", "prompt"})))
    stamps = {a.id: a.created_at for a in answers}
    ModelResponse.objects.bulk_create(answers)
    _keep_created(ModelResponse, answers, stamps)


def _keep_created(model: Any, objs: list[Any], stamps: dict[int, Any]) -> None:
    """Give back the packaged ``created_at`` that ``auto_now_add`` replaced on insert (runs are ordered by it)."""
    for obj in objs:
        if stamps.get(obj.id) is not None:
            obj.created_at = stamps[obj.id]
    model.objects.bulk_update([o for o in objs if stamps.get(o.id) is not None], ["created_at"], batch_size=500)
