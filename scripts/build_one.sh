#!/usr/bin/env bash
# Build a one-chapter book with warnings as errors, in a temporary directory, so that a
# chapter can be checked on its own (and several chapters at once) without touching _build/.
# Usage: scripts/build_one.sh chapters/NN_name.ipynb   (prints the HTML directory)
set -eo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
chapter="$1"
name="$(basename "$chapter" .ipynb)"
tmp="$(mktemp -d "/tmp/book_${name}_XXXX")"
mkdir -p "$tmp/chapters"
cp "$root/_config.yml" "$root/references.bib" "$tmp/"
cp -r "$root/_ext" "$root/_static" "$tmp/"
# Chapters show posenc/reference.py with literalinclude (../posenc/reference.py).
mkdir -p "$tmp/posenc" && cp "$root/posenc/reference.py" "$tmp/posenc/"
cp "$root/$chapter" "$tmp/chapters/"
if [ -d "$root/chapters/data" ]; then cp -r "$root/chapters/data" "$tmp/chapters/"; fi
printf '# Preview\n\n```{bibliography}\n:all:\n```\n' > "$tmp/intro.md"
printf 'format: jb-book\nroot: intro\nchapters:\n  - file: chapters/%s\n' "$name" > "$tmp/_toc.yml"
"$root/.venv/bin/jupyter-book" build "$tmp" -W -n --keep-going >"$tmp/build.log" 2>&1 || {
  grep -iE "warning|error" "$tmp/build.log" | head -40; echo "BUILD FAILED: see $tmp/build.log"; exit 1; }
echo "built: $tmp/_build/html/chapters/$name.html"
