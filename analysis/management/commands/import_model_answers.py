"""python manage.py import_model_answers <study> <file> --model NAME [--mode greedy|sampled] [--prompt-style S]
[--shape long|wide] [--key-column COL | --field FIELD=COL …] [--set FIELD=VALUE …] [--answer-column COL]
[--scale auto|1|100] [--refines RUN [--refine-setting single|mixed] [--candidates N]] …"""
from django.core.management.base import BaseCommand, CommandError

from access.cli import add_as_argument, acting_user
from analysis.model_answer_import import (MATCH_FIELDS, ModelAnswerFile, import_model_answers, importers,
                                          parse_assignments, shapes)
from surveys.cli import get_study
from surveys.importers import ImportFailed


class Command(BaseCommand):
    help = ("Import model answers produced elsewhere (e.g. a paper's published results) as an imported run of "
            "the study: each answer's raw text is kept and parsed by the study's instrument (unreadable answers "
            "are kept and counted); the report treats the run as any other agent. Long files (CSV or JSON Lines, "
            "one row per answer) or wide CSV files (one row per WEP, one column per context or sample, as "
            "a published 'Results - *.csv'). All or nothing: any bad row is reported with its line and column "
            "and nothing is imported; the same file cannot be imported twice into a study.")

    def add_arguments(self, parser):
        add_as_argument(parser)
        parser.add_argument("study", help="slug of the study whose items the answers belong to")
        parser.add_argument("file", help="path of the CSV or JSON Lines file (UTF-8)")
        parser.add_argument("--model", required=True,
                            help="the model's name; the run's agent in the report is '<name> (<mode>)'. It must not "
                                 "be the name of a live endpoint")
        parser.add_argument("--mode", choices=["greedy", "sampled"], default="greedy",
                            help="how the answers were produced (default greedy: temperature 0)")
        parser.add_argument("--temperature", type=float, help="sampled answers: their temperature")
        parser.add_argument("--prompt-style", default="standard",
                            help="one of the instrument's prompt styles (e.g. standard or cot); default standard")
        parser.add_argument("--zero-shot", action="store_true", help="the answers were given without demonstrations")
        parser.add_argument("--prompt-version", default="", help="the prompt version to record (default: the platform's)")
        parser.add_argument("--name", default="", help="the run's name (default: model and file name)")
        parser.add_argument("--shape", choices=shapes(), default="long",
                            help="long: one row per answer (default); wide: one row per WEP, one column per context "
                                 "or sample" + "".join(f"; {name}: {summary}" for name, summary in importers()))
        parser.add_argument("--format", choices=["csv", "jsonl"], default="",
                            help="default: jsonl for .jsonl/.ndjson files, csv otherwise")
        parser.add_argument("--answer-column", default="answer", metavar="COL",
                            help="long files: the column (JSON key) with the model's answer text (default: answer)")
        parser.add_argument("--key-column", metavar="COL", help="long files: the column with the item key")
        parser.add_argument("--field", action="append", default=[], metavar="FIELD=COL",
                            help=f"long files: the column with one of the item's fields ({', '.join(MATCH_FIELDS)}); "
                                 "repeat for several. Without --key-column and --field, the columns named like "
                                 "the fields are used")
        parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", dest="fixed",
                            help="an item field with the same value for every row, e.g. --set context=CNC "
                                 "--set language=en (both shapes)")
        parser.add_argument("--sample-column", metavar="COL",
                            help="long files: the column with the sample index (default: repeated answers to one "
                                 "item are numbered 0, 1, 2 … in file order)")
        parser.add_argument("--question-column", metavar="COL",
                            help="long files: the column with the key of the question each answer gives (a study "
                                 "with [[questions]]: required)")
        parser.add_argument("--wep-column", metavar="COL", help="wide files: the column with the WEP (default: the first)")
        parser.add_argument("--columns", default="auto", metavar="HOW",
                            help="wide files: what the answer columns stand for: samples (of the row's one item), "
                                 "position (the row's items in order of statement id), an item field their headers "
                                 "hold (e.g. statement_id), or auto (default: samples when the WEP names one item, "
                                 "else position)")
        parser.add_argument("--ignore-column", action="append", default=[], metavar="COL",
                            help="wide files: a column to ignore (avg, std, mean, sd, median are ignored anyway)")
        parser.add_argument("--alias", action="append", default=[], metavar="WRITTEN=EXPRESSION",
                            help="an expression as the file writes it and the study's expression it stands for, "
                                 "e.g. --alias 'almost certainly=almost certain' (a file that words them so); repeat for several")
        parser.add_argument("--scale", choices=["auto", "1", "100"], default="auto",
                            help="numbers in the file: 1 = probabilities 0-1 (multiplied by 100 before parsing; the "
                                 "original text is kept), 100 = as they are; auto (default) = 0-1 when every number "
                                 "is within 0-1 and one lies strictly between")
        parser.add_argument("--allow-missing", action="store_true",
                            help="wide files: import although some of the study's WEPs have no answer in the file "
                                 "(default: refused, naming them)")
        parser.add_argument("--refines", type=int, metavar="RUN",
                            help="the answers are self-refinements of run RUN of the study, made elsewhere: each "
                                 "answer is the reply's text, or the columns the study's kind rebuilds a reply from "
                                 "where a row has them (interval answers: chosen_answer and proposed_answer; the "
                                 "authors' 'answer' beside them is the true answer), and records that name their "
                                 "item by themselves are matched by the kind (the authors' selfrefine records: by "
                                 "id, hint_type and confidence_pct); a refinement prompt style of the kind, e.g. "
                                 "refine or authors-refine (default: the one a live refinement of RUN takes); the "
                                 "report scores the run in its self-refinement table, not among the agents")
        parser.add_argument("--refine-setting", choices=["single", "mixed"], default="single",
                            help="refinements: candidates from one level (single, default) or from all levels (mixed)")
        parser.add_argument("--candidates", type=int, default=3, metavar="N",
                            help="refinements: candidates shown per prompt (default 3, as the paper says)")
        parser.add_argument("--keep-missing", action="store_true",
                            help="keep empty/NA cells as unparseable answers (default: skip and count them)")

    def handle(self, *args, **options):
        study = get_study(options["study"], acting_user(options))
        try:
            fields = parse_assignments(options["field"], "--field")
            fixed = parse_assignments(options["fixed"], "--set")
            aliases = parse_assignments(options["alias"], "--alias", check_fields=False)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if options["key_column"]:
            if fields:
                raise CommandError("give either --key-column or --field, not both")
            fields = {"key": options["key_column"]}
        settings = ModelAnswerFile(
            model=options["model"], shape=options["shape"], format=options["format"],
            answer=options["answer_column"], fields=fields, fixed=fixed, sample=options["sample_column"],
            question=options["question_column"],
            wep=options["wep_column"], columns=options["columns"], ignore=tuple(options["ignore_column"]),
            scale=options["scale"], keep_missing=options["keep_missing"], allow_missing=options["allow_missing"], mode=options["mode"],
            temperature=options["temperature"], prompt_style=options["prompt_style"],
            few_shot=not options["zero_shot"], prompt_version=options["prompt_version"], name=options["name"],
            aliases=aliases, refines=options["refines"], refine_setting=options["refine_setting"],
            candidates=options["candidates"])
        try:
            summary = import_model_answers(study, options["file"], settings)
        except FileNotFoundError:
            raise CommandError(f"no such file: {options['file']}") from None
        except ImportFailed as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(self.style.SUCCESS(f"{study.slug}: {summary}"))
