"""Item designs: modules exposing ``generate(study, **options) -> list[dict]`` (item field dicts)."""
