"""Write a copy of ``_config.yml`` that builds the book from the notebooks' stored outputs.

Usage: python scripts/config_stored_outputs.py [--book DIR] OUT.yml

`make test` runs nbval first, which re-executes every chapter and fails unless each cell
reproduces its stored output. The warnings-as-errors build that follows can then render
those stored outputs (``execute_notebooks: "off"``) instead of executing every chapter a
second time. ``make book`` keeps executing (``_config.yml`` is unchanged).

jupyter-book resolves ``sphinx.local_extensions`` relative to the configuration file, so
those paths are written out absolute; every other path stays relative to the book.
``--book DIR`` reads ``DIR/_config.yml`` instead (the student edition, whose chapters the
Colab check has just executed and stored).
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def stored_outputs_config(config: dict, book: Path = ROOT) -> dict:
    """``config`` with execution switched off and local extension folders made absolute."""
    config = dict(config)
    config["execute"] = {**config.get("execute", {}), "execute_notebooks": "off"}
    sphinx = dict(config.get("sphinx", {}))
    local = sphinx.get("local_extensions") or {}
    sphinx["local_extensions"] = {name: str((book / path).resolve()) for name, path in local.items()}
    config["sphinx"] = sphinx
    return config


def main(argv: list[str]) -> int:
    book = ROOT
    if len(argv) == 3 and argv[0] == "--book":
        book, argv = Path(argv[1]).resolve(), argv[2:]
    if len(argv) != 1 or not (book / "_config.yml").is_file():
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    config = yaml.safe_load((book / "_config.yml").read_text())
    out = Path(argv[0])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(stored_outputs_config(config, book), sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
