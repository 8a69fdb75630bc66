"""The GitHub workflows: `test` runs what CI runs, `publish` deploys the built site to Pages.

`make lint` validates them against GitHub's workflow schema and audits them with zizmor
(offline); these tests hold what those tools cannot know: which commands run and where the
site comes from.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"


def load(name: str) -> dict:
    # BaseLoader: YAML 1.1 would read the key `on` as True
    return yaml.load((WORKFLOWS / name).read_text(), Loader=yaml.BaseLoader)


def steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_every_action_is_pinned_to_a_commit():
    for path in WORKFLOWS.glob("*.yml"):
        for step in steps(load(path.name)):
            if "uses" in step:
                assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", step["uses"]), (path.name, step["uses"])


def test_the_test_workflow_runs_ci_on_pushes_and_pull_requests():
    workflow = load("test.yml")
    assert set(workflow["on"]) == {"push", "pull_request"}
    assert [step["run"] for step in steps(workflow) if "run" in step] == ["bash .ci/run"]
    assert workflow["permissions"] == {"contents": "read"}


def test_the_publish_workflow_deploys_the_built_site_from_main_and_tags():
    workflow = load("publish.yml")
    assert workflow["on"]["push"]["branches"] == ["main"]
    assert workflow["on"]["push"]["tags"] == ["v*"]
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    runs = [step["run"] for step in build["steps"] if "run" in step]
    assert runs == ["bash .ci/system-packages", "make book"]
    upload = [step for step in build["steps"] if "upload-pages-artifact" in step.get("uses", "")]
    assert upload and upload[0]["with"]["path"] == "_build/html"
    assert deploy["needs"] == "build"
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert any("actions/deploy-pages@" in step.get("uses", "") for step in deploy["steps"])
    assert workflow["permissions"] == {}, "no job gets more than it asks for"
