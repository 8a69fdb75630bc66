"""Write a copy of ``_config.yml`` that builds the book from the notebooks' stored outputs.

Usage: python scripts/config_stored_outputs.py OUT.yml

`make test` runs nbval first, which re-executes every chapter and fails unless each cell
reproduces its stored output. The warnings-as-errors build that follows can then render
those stored outputs (``execute_notebooks: "off"``) instead of executing every chapter a
second time. ``make book`` keeps executing (``_config.yml`` is unchanged).

jupyter-book resolves ``sphinx.local_extensions`` relative to the configuration file, so
those paths are written out absolute; every other path stays relative to the book.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def stored_outputs_config(config: dict) -> dict:
    """``config`` with execution switched off and local extension folders made absolute."""
    config = dict(config)
    config["execute"] = {**config.get("execute", {}), "execute_notebooks": "off"}
    sphinx = dict(config.get("sphinx", {}))
    local = sphinx.get("local_extensions") or {}
    sphinx["local_extensions"] = {name: str((ROOT / path).resolve()) for name, path in local.items()}
    config["sphinx"] = sphinx
    return config


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(stored_outputs_config(config), sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
