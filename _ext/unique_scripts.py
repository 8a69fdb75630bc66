"""Sphinx extension: drop duplicate <script> entries from each page.

sphinx-thebe registers its inline configuration script (``const THEBE_JS_URL = ...``) in
a way that ends up twice on every page with jupyter-book 1.0.4 and Sphinx 7.4; the second
copy throws "Identifier 'THEBE_JS_URL' has already been declared" in the browser console.
This keeps the first occurrence of every identical script.
"""

from __future__ import annotations


def _unique_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[tuple] = set()
    unique = []
    for js in scripts:
        # An inline script is registered once with filename None and once with "".
        filename = getattr(js, "filename", js) or ""
        key = (str(filename), tuple(sorted((k, str(v)) for k, v in getattr(js, "attributes", {}).items())))
        if key in seen:
            continue
        seen.add(key)
        unique.append(js)
    scripts[:] = unique


def setup(app):
    app.connect("html-page-context", _unique_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
