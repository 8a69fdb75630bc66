#!/usr/bin/env bash
# Build a one-chapter book with warnings as errors, in a temporary directory, so that a
# chapter can be checked on its own (and several chapters at once) without touching _build/.
# Every other chapter is stood in for by a stub page holding only its label and title, so
# that the chapter's links to other chapters ({ref}`chapter 9 <ch-09>`) resolve.
# Usage: scripts/build_one.sh chapters/NN_name.ipynb   (prints the HTML directory)
set -eo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
chapter="$1"
name="$(basename "$chapter" .ipynb)"
tmp="$(mktemp -d "/tmp/book_${name}_XXXX")"
mkdir -p "$tmp/chapters"
cp "$root/_config.yml" "$root/references.bib" "$root/CITATION.cff" "$tmp/"
cp -r "$root/_ext" "$root/_static" "$root/_templates" "$tmp/"
# Chapters show posenc/reference.py with literalinclude (../posenc/reference.py).
mkdir -p "$tmp/posenc" && cp "$root/posenc/reference.py" "$tmp/posenc/"
cp "$root/$chapter" "$tmp/chapters/"
if [ -d "$root/chapters/data" ]; then cp -r "$root/chapters/data" "$tmp/chapters/"; fi
printf '# Preview\n\n(sec-notation)=\n## Notation (stub)\n\n(sec-sources)=\n## The sources (stub)\n\n(sec-run)=\n## How to run it (stub)\n\n```{bibliography}\n:all:\n```\n' > "$tmp/intro.md"
printf 'format: jb-book\nroot: intro\nchapters:\n  - file: chapters/%s\n' "$name" > "$tmp/_toc.yml"
# Stubs of the other chapters: "(ch-NN)=" and "# Title", read from their first cells.
"$root/.venv/bin/python" - "$root" "$tmp" "$name" <<'PY'
import re, sys
from pathlib import Path

import nbformat

root, tmp, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
for path in sorted((root / "chapters").glob("*.ipynb")):
    if path.stem == name:
        continue
    text = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
    label = re.search(r"^\((ch-\w+)\)=$", text, flags=re.M)
    title = re.search(r"^# (.+)$", text, flags=re.M)
    stub = (f"({label.group(1)})=\n" if label else "") + f"# {title.group(1)}\n\n(stub for the one-chapter build)\n"
    # The chapter's other targets, so that links into it resolve: section labels as sections,
    # theorem-like and exercise labels as directives of the same kind (stub text).
    for other in re.findall(r"^\(([\w-]+)\)=$", text, flags=re.M):
        if other != (label.group(1) if label else None):
            stub += f"\n({other})=\n## {other}\n"
    for kind, target in re.findall(r"^`{3,}\{(prf:\w+|exercise)\}.*\n(?::\w+:.*\n)*?:label: ([\w-]+)", text, flags=re.M):
        stub += f"\n```{{{kind}}} stub\n:label: {target}\nstub\n```\n"
    (tmp / "chapters" / f"{path.stem}.md").write_text(stub)
    with open(tmp / "_toc.yml", "a") as toc:
        toc.write(f"  - file: chapters/{path.stem}\n")
PY
"$root/.venv/bin/jupyter-book" build "$tmp" -W -n --keep-going >"$tmp/build.log" 2>&1 || {
  grep -iE "warning|error" "$tmp/build.log" | head -40; echo "BUILD FAILED: see $tmp/build.log"; exit 1; }
echo "built: $tmp/_build/html/chapters/$name.html"
