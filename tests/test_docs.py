"""The documentation site (issue 23 point 15): `mkdocs build --strict` succeeds (a warning, such as a link to a
missing page or anchor, fails it), the command reference holds every command's --help, and README.md's links
lead to existing pages."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent
APPS = ("surveys", "elicitation", "analysis", "prolific")


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    result = build(ROOT / "mkdocs.yml", site)
    assert result.returncode == 0, result.stdout + result.stderr
    return site


def test_the_site_builds_strictly_with_every_page_in_the_navigation(site):
    pages = {p.relative_to(ROOT / "docs").with_suffix(".html") for p in (ROOT / "docs").rglob("*.md")}
    assert len(pages) > 20
    assert all((site / page).exists() for page in pages)  # plain .html files: the site works opened from disk


@pytest.mark.browser
def test_search_works_in_the_site_opened_from_disk(site):
    """The built site opened as files (file://…/index.html, no server) finds pages with its search box (issue 32
    point 10): Material's offline plugin ships the index as a script, which a page opened from disk may load, and
    runs the search worker through the iframe-worker shim, shipped in docs/javascripts."""
    from test_browser import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (make browser)")
    from playwright.sync_api import sync_playwright

    assert (site / "search" / "search_index.js").exists()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            offsite: list[str] = []
            page.route("http*://**", lambda route: (offsite.append(route.request.url), route.abort()))
            page.goto((site / "index.html").as_uri())
            page.locator("input[data-md-component=search-query]").click()
            page.keyboard.type("participant", delay=20)
            meta = page.locator(".md-search-result__meta")
            meta.filter(has_text="matching documents").wait_for(timeout=30_000)
            assert int(meta.inner_text().split()[0]) > 5
            first = page.locator(".md-search-result__link").first.get_attribute("href")
            assert re.match(r"file://.*\.html(\?h=[^#]*)?(#.*)?$", first), first  # a page file, opened from disk
            assert offsite == []  # the site loads nothing from the network (the shim is shipped)
        finally:
            browser.close()


def test_the_command_reference_holds_every_command_and_its_options(site):
    page = (site / "reference" / "commands.html").read_text(encoding="utf-8")
    ours = [name for name, app in get_commands().items() if app.split(".")[-1] in APPS]
    assert len(ours) > 15
    for name in ours:
        assert f'<h3 id="{name}">' in page, name
    assert "--items-per-participant" in page and "--estimate-only" in page and "checksum" in page
    assert page.count("--pythonpath") == 1  # Django's common options are named once, not per command


def test_the_site_publishes_the_api_schema_generated_from_the_code(site):
    schema = yaml.safe_load((site / "reference" / "openapi.yaml").read_text(encoding="utf-8"))
    assert schema["openapi"].startswith("3.")
    assert "/api/studies/{slug}/report/" in schema["paths"] and "/api/runs/" in schema["paths"]


def test_a_broken_internal_link_fails_the_build(tmp_path):
    """The site's own settings (validation, strict) on two small pages, one linking to a missing page."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config.pop("hooks")
    config["nav"] = ["index.md", "page.md"]
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\nSee [the page](page.md#usage).\n")
    (tmp_path / "docs" / "page.md").write_text("# Page\n\nSee [the settings](reference/setings.md).\n")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    result = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0
    assert "reference/setings.md" in result.stdout + result.stderr
    assert "#usage" in result.stdout + result.stderr  # a missing anchor too


def test_the_readme_links_lead_to_existing_pages():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)", readme)
    local = [link for link in links if "://" not in link]
    assert len(local) > 15
    assert not [link for link in local if not (ROOT / link).exists()]


def test_every_setting_the_code_reads_is_in_the_settings_reference():
    """Environment variables read by config/settings.py (env_str, env_int, …) and by the apps' own settings
    helpers (elicitation/conf.py's _float, os.environ.get): each has a row in docs/reference/settings.md."""
    pattern = re.compile(r"(?:env_[a-z]+|_float|_int|environ\.get|getenv)\(\s*\"([A-Z][A-Z0-9_]+)\"")
    names = {name for folder in ("config", *APPS) for path in (ROOT / folder).rglob("*.py")
             for name in pattern.findall(path.read_text(encoding="utf-8"))}
    assert len(names) > 40
    reference = (ROOT / "docs" / "reference" / "settings.md").read_text(encoding="utf-8")
    assert sorted(name for name in names if f"`{name}`" not in reference) == []
