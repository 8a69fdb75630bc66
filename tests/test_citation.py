"""LICENSE and CITATION.cff exist, agree with the project, and CITATION.cff is valid CFF 1.2.0.

The schema is the Citation File Format's own (tests/data/cff-1.2.0.schema.json, kept in
the repository so the check runs offline), applied with jsonschema.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "tests" / "data" / "cff-1.2.0.schema.json").read_text())


def validation_errors(citation: dict) -> list[str]:
    validator = jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    return [e.message for e in validator.iter_errors(citation)]


@pytest.fixture(scope="module")
def citation() -> dict:
    # CFF dates are plain strings in the schema; YAML would read 2026-11-24 as a date
    text = (ROOT / "CITATION.cff").read_text()
    return yaml.load(text, Loader=yaml.BaseLoader)


def test_citation_file_is_valid_cff(citation):
    assert validation_errors(citation) == []


def test_the_schema_check_can_fail(citation):
    broken = {k: v for k, v in citation.items() if k != "authors"}
    assert any("authors" in e for e in validation_errors(broken))
    assert validation_errors({**citation, "licence": "MIT"})  # a misspelt key


def test_citation_agrees_with_the_project(citation):
    # pyproject's [project] version (tomllib is not in Python 3.10, which the package supports)
    version = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), flags=re.M).group(1)
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert citation["version"] == version
    assert citation["repository-code"] == config["repository"]["url"]
    assert citation["title"] == config["title"]
    assert sorted(citation["license"]) == ["CC-BY-4.0", "MIT"]


def test_licence_covers_text_and_code_and_shows_in_the_footer():
    text = (ROOT / "LICENSE").read_text()
    assert "Creative Commons Attribution 4.0" in text and "MIT License" in text
    assert re.search(r"Permission is hereby granted, free of charge", text)
    footer = yaml.safe_load((ROOT / "_config.yml").read_text())["html"]["extra_footer"]
    assert "CC BY 4.0" in footer and "MIT" in footer


def newest_release(changelog: str) -> str:
    """The version of the first ``## [x.y.z] - date`` heading of a Keep a Changelog file."""
    match = re.search(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, flags=re.M)
    assert match, "CHANGELOG.md has no released version heading"
    return match.group(1)


def test_one_version_everywhere(citation):
    import posenc

    pyproject = (ROOT / "pyproject.toml").read_text()
    version = re.search(r'^version = "([^"]+)"$', pyproject, flags=re.M).group(1)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert changelog.splitlines()[0] == "# Changelog"
    assert "## [Unreleased]" in changelog
    assert {citation["version"], posenc.__version__, newest_release(changelog)} == {version}
    assert re.search(rf"^\[{re.escape(version)}\]: https://", changelog, flags=re.M), (
        "no link for the release"
    )


def test_the_version_check_can_fail():
    changelog = "## [Unreleased]\n\n## [0.2.0] - 2026-12-01\n\n## [0.1.0] - 2026-11-24\n"
    assert newest_release(changelog) == "0.2.0"
    with pytest.raises(AssertionError):
        newest_release("## [Unreleased]\n")
