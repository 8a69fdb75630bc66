"""The built site, loaded page by page in a real headless Chromium.

Serves ``_build/html`` on localhost and checks what a reader sees: MathJax rendered every
formula offline (no raw TeX left, no MathJax error), every image loaded, theorems and
exercises are numbered, solutions start collapsed, certifying cells (code cells holding an
``assert``) start collapsed, the console is free of errors, the
launch menu of each chapter opens it on Binder, Colab and Thebe from the repository and
branch set in ``_config.yml``, and the search page finds a known term.

Accessibility: axe-core (pinned in ``tests/browser/package.json``, installed from the npm
registry by ``make test-browser``) audits every page after MathJax and must find no serious
or critical violation beyond the exceptions in ``AXE_EXCEPTIONS`` (held to exactly); every
image has alt text that describes it (not a file name); formulas are not Tab stops; a
solution opens from the keyboard and its button shows a focus outline.

Needs Debian's ``chromium`` and ``chromium-driver``; without them (or without a built site)
the tests are skipped with a message saying so.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import json
import re
import shutil
import threading
from pathlib import Path

import pytest
import yaml
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "_build" / "html"
# Screenshots for a human to look at, taken by the chapter test on its one load of the page:
# the top of a chapter as it opens, and a chapter with its launch menu open.
SCREENSHOTS = ROOT / "_build" / "screenshots"
SCREENSHOT_PAGE, SCREENSHOT = "chapters/03_sinusoidal_construction.html", SCREENSHOTS / "chapter03.png"
LAUNCH_PAGE, LAUNCH_SCREENSHOT = "chapters/09_rope.html", SCREENSHOTS / "chapter09_launch_menu.png"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")

# Every test below is collected and, on a machine without the browser or without a built
# site, reported as skipped with the reason (a module-level skip would collect nothing, and
# pytest then exits with status 5 instead of 0).
MISSING = (
    "browser test SKIPPED: Debian's chromium and chromium-driver are not installed "
    "(.ci/run installs them with apt-get)"
    if not (CHROMIUM and CHROMEDRIVER)
    else "browser test SKIPPED: no built site in _build/html (run `make book` first)"
    if not (SITE / "index.html").is_file()
    else ""
)
pytestmark = pytest.mark.skipif(bool(MISSING), reason=MISSING)

AXE = ROOT / "tests" / "browser" / "node_modules" / "axe-core" / "axe.min.js"
AXE_TIMEOUT = 600  # seconds an axe-core audit of one page may take on a busy machine
AXE_MISSING = (
    "browser test SKIPPED: the accessibility audit needs axe-core in tests/browser/node_modules "
    "(`make test-browser` installs it with npm; npm is missing)"
)
# Serious or critical axe violations the book accepts, as {(page, rule id): count}. Empty: the
# theme's own violations are fixed in _static/accessibility.{css,js}. A new violation fails
# the test, and so does an exception that no longer occurs (the list is held to exactly).
AXE_EXCEPTIONS: dict[tuple[str, str], int] = {}

# Display formulas and printed outputs wider than their box at 1280 px (the reader would have
# to scroll sideways, and a clipped formula hides its end): none, on every chapter. Long
# displays are broken over lines (aligned) and printed lines kept to 88 characters (the 12px
# output font fits 89 in the column; blocks are narrower, so print less there). Measured with
# every block opened, since a reader who opens a deep dive must not scroll sideways either.
# What scrolls sideways: display math (MathJax's container or Sphinx's wrapper) and the
# printed output of a cell.
WIDE_JS = """
const sel = 'div.math-wrapper, div.math, mjx-container[display="true"], .cell_output pre, .output pre';
const wide = [];
document.querySelectorAll('main ' + sel).forEach(e => {
  if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 2) {
    wide.push(e.tagName.toLowerCase() + ': ' + e.textContent.trim().slice(0, 60));
  }
});
return wide;
"""

# Opens every closed block of the page: <details> (deep dives, hidden cells, solutions) and
# sphinx-togglebutton boxes (erratum boxes, dropdown admonitions).
OPEN_EVERY_BLOCK_JS = """
document.querySelectorAll('details').forEach(d => { d.open = true; });
document.querySelectorAll('.toggle-hidden').forEach(e => {
  const button = document.querySelector(`.toggle-button[data-target="${e.id}"]`);
  if (button) button.click();
});
document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
"""

PAGES = sorted(
    p.relative_to(SITE).as_posix()
    for p in SITE.rglob("*.html")
    if not p.name.startswith(("genindex", "search")) and "_static" not in p.parts and p.name != "index.html"
)
CHAPTERS = [p for p in PAGES if p.startswith("chapters/")]
REPOSITORY = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]
OWNER_NAME = REPOSITORY["url"].removeprefix("https://github.com/").strip("/")
KINDS = "Theorem|Lemma|Proposition|Corollary|Definition|Remark|Example|Property|Conjecture|Algorithm"

# Text of the rendered page outside code (where TeX in docstrings is legitimate).
VISIBLE_TEXT_JS = """
const clone = document.querySelector('main').cloneNode(true);
clone.querySelectorAll('pre, code, mjx-container, script, style, .cell_output').forEach(e => e.remove());
return clone.innerText;
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,2000",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    # Each WebDriver call may wait this long for the browser's answer (selenium's default is
    # 120 s). axe-core audits the API page in about 15 s on an idle machine, but once took
    # more than 120 s on a machine running three test suites at once.
    driver.command_executor.client_config.timeout = AXE_TIMEOUT
    yield driver
    driver.quit()


def load(driver, url: str) -> None:
    driver.get(url)
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
    # Wait until MathJax has typeset the page (it loads from _static/mathjax, offline).
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script(
            "return !window.MathJax || (MathJax.startup && MathJax.startup.promise"
            " && (window.__mjdone || (MathJax.startup.promise.then(() => window.__mjdone = true), false)));"
        )
    )


def open_launch_menu(driver):
    """Click the rocket (launch) menu of a chapter page; return the menu once it shows."""
    menu = driver.find_element(By.CSS_SELECTOR, ".dropdown-launch-buttons")
    menu.find_element(By.CSS_SELECTOR, "button.dropdown-toggle").click()
    WebDriverWait(driver, 10).until(
        lambda d: menu.find_element(By.CSS_SELECTOR, ".dropdown-menu").is_displayed()
    )
    return menu


def test_pages_were_found():
    assert "intro.html" in PAGES and "errata.html" in PAGES
    assert len(CHAPTERS) >= 6
    assert SCREENSHOT_PAGE in CHAPTERS and LAUNCH_PAGE in CHAPTERS, "the screenshots name chapters that exist"


def save_screenshot(browser, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000, "a screenshot of a rendered page is more than a blank image"


def check_rendered(server, browser, page):
    """Load ``page``: title, offline MathJax typeset everything, images loaded, no console error."""
    browser.get_log("browser")  # drop messages of earlier pages
    load(browser, f"{server}/{page}")
    assert browser.find_elements(By.CSS_SELECTOR, "main h1"), "page has no title"

    scripts = [s.get_attribute("src") for s in browser.find_elements(By.TAG_NAME, "script")]
    remote = [s for s in scripts if s and not s.startswith(server)]
    assert not remote, f"scripts fetched from outside the site: {remote}"
    formulas = browser.find_elements(By.CSS_SELECTOR, "main .math")
    unrendered = browser.execute_script(
        "return Array.from(document.querySelectorAll('main .math'))"
        ".filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80));"
    )
    assert not unrendered, f"formulas MathJax did not typeset: {unrendered[:5]}"
    if formulas:
        assert any("_static/mathjax/" in (s or "") for s in scripts), (
            "MathJax is not the bundled offline copy"
        )
    assert not browser.find_elements(By.CSS_SELECTOR, "mjx-merror"), "MathJax reported an error"
    text = browser.execute_script(VISIBLE_TEXT_JS)
    raw = re.findall(r"\$[^$\s][^$]*\$|\\\(|\\\[|\\frac|\\omega|\\sum", text)
    assert not raw, f"raw TeX left on the page: {raw[:5]}"
    if page.startswith("chapters/"):
        assert len(formulas) > 10, "a chapter should contain rendered formulas"

    broken = browser.execute_script(
        "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src);"
    )
    assert not broken, f"images that did not load: {broken}"

    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, f"console errors: {errors}"

    images = browser.execute_script(
        "return Array.from(document.querySelectorAll('main img')).map(i => [i.getAttribute('src'),"
        " i.getAttribute('alt')]);"
    )
    no_alt = [src for src, alt in images if not (alt or "").strip()]
    assert not no_alt, f"images without alt text: {no_alt}"
    file_name = re.compile(r"\.(png|svg|jpe?g)$|^_images/")
    path_alt = [alt for src, alt in images if alt.strip() == src or file_name.search(alt.strip())]
    assert not path_alt, f"alt text that is a file name, not a description: {path_alt}"
    tab_formulas = browser.execute_script(
        "return Array.from(document.querySelectorAll('mjx-container[tabindex]'))"
        ".filter(e => e.tabIndex >= 0 && !(e.scrollWidth > e.clientWidth)).length;"
    )
    assert tab_formulas == 0, f"{tab_formulas} formulas are Tab stops (only wide, scrolling ones should be)"


def axe_violations(browser) -> dict[str, int]:
    """Serious and critical axe-core violations of the loaded page, as {rule id: node count}."""
    browser.execute_script(AXE.read_text())
    browser.set_script_timeout(AXE_TIMEOUT)
    found = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".map(v => [v.id, v.nodes.length, v.nodes.slice(0, 3).map(n => n.target.join(' '))])));"
    )
    for rule, count, where in found:
        print(f"axe: {rule} x{count}: {where}")
    return {rule: count for rule, count, _ in found}


def check_accessible(browser, page) -> bool:
    """axe-core on the page already loaded: no serious or critical violation but the exceptions.

    Returns False, having checked nothing, where axe-core is not installed.
    """
    if not AXE.is_file():
        return False
    expected = {rule: n for (p, rule), n in AXE_EXCEPTIONS.items() if p == page}
    assert axe_violations(browser) == expected
    return True


# Whether an element is rendered: display, visibility, opacity and a closed <details> around it
# (the same answers as WebDriver's is_displayed for the code cells and solution bodies of
# every chapter, compared once; one script call per page instead of one call per element).
VISIBLE_JS = "const visible = e => e.checkVisibility({opacityProperty: true, visibilityProperty: true});"

# Proof and exercise titles, the visibility of each solution's body, the text of every code
# cell's input: what check_numbered_and_collapsed reads from the page.
NUMBERED_AND_COLLAPSED_JS = (
    VISIBLE_JS
    + """
const texts = selector => Array.from(document.querySelectorAll(selector), e => e.innerText);
return {
  // a result inside a closed deep dive may be unnumbered (it takes no number from the main path)
  titles: Array.from(document.querySelectorAll('div.proof > p.admonition-title'))
    .filter(e => !e.closest('.deep-dive') || /[0-9]/.test(e.innerText)).map(e => e.innerText),
  exercises: texts('div.exercise p.admonition-title'),
  solutions: Array.from(document.querySelectorAll('div.solution'), s => Array.from(
    s.querySelectorAll('section, div.section, p:not(.admonition-title)'), visible)),
  code: Array.from(document.querySelectorAll('div.cell_input pre'), e => e.textContent),
};
"""
)

# Class list and whether the input shows (null: no input), for each code cell of the page, in page order.
CODE_CELLS_JS = (
    VISIBLE_JS
    + """
return Array.from(document.querySelectorAll('main div.cell'), div => {
  const input = div.querySelector('.cell_input');
  return [div.className, input === null ? null : visible(input)];
});
"""
)


def check_nothing_scrolls_sideways(browser, page):
    """No display formula or printed output is wider than its box at 1280 px, with every
    deep dive, erratum box, hidden cell and solution opened (the last check on a page: it
    leaves every block open)."""
    browser.execute_script(OPEN_EVERY_BLOCK_JS)
    wide = browser.execute_script(WIDE_JS)
    assert not wide, f"{page}: {len(wide)} displays or outputs scroll sideways at 1280 px: {wide[:5]}"


def check_numbered_and_collapsed(browser):
    """Proofs and exercises numbered, every solution collapsed (on the page already loaded)."""
    page = browser.execute_script(NUMBERED_AND_COLLAPSED_JS)
    titles = page["titles"]
    assert titles, "a chapter states at least one theorem, lemma, proposition or definition"
    assert all(re.match(rf"({KINDS}) \d+", t) for t in titles), titles
    exercises = page["exercises"]
    assert len(exercises) >= 2 and all(re.match(r"Exercise \d+", t) for t in exercises), exercises
    assert page["solutions"], "exercises come with solutions"
    for shown in page["solutions"]:
        assert shown and not any(shown), "a solution is not collapsed"
    # nbgrader's marker lines stay in the notebooks but are not shown (_ext/solution_markers.py)
    code = page["code"]
    assert code and not [c for c in code if "BEGIN SOLUTION" in c or "END SOLUTION" in c]


# A code cell certifies a claim when it holds an assert statement or a numpy.testing check.
ASSERT = re.compile(r"^\s*assert\b|\.assert_\w+\(", flags=re.M)
# Share of a chapter's certifying cells that must start collapsed (DESIGN: the certifying cell
# under a proof is collapsed, hide-input; the code a reader is meant to read stays visible).
CERTIFYING_COLLAPSED = 0.9


def rendered_code_cells(page: str) -> list[tuple[int, list[str], str]]:
    """(notebook index, tags, source) of each code cell the page renders, in page order.

    MyST-NB renders every code cell of the chapter's notebook as a ``div.cell`` in notebook
    order, except the cells tagged ``remove-cell``; each tag ``t`` becomes the class ``tag_t``.
    """
    nb = json.loads((ROOT / page.removesuffix(".html")).with_suffix(".ipynb").read_text())
    cells = []
    for index, cell in enumerate(nb["cells"]):
        tags = cell.get("metadata", {}).get("tags", [])
        if cell["cell_type"] == "code" and "remove-cell" not in tags:
            cells.append((index, tags, "".join(cell["source"])))
    return cells


def check_certifying_cells_collapsed(browser, page):
    """At least 90% of the chapter's certifying cells show no code when the page loads.

    Certifying cells are read from the chapter's notebook (code cells with an ``assert``);
    solution cells are left out (the page shows them inside collapsed solutions, checked by
    ``check_numbered_and_collapsed``). Notebook cells and rendered cells are matched in
    order, and the match is checked by their tags.
    """
    cells = rendered_code_cells(page)
    divs = browser.execute_script(CODE_CELLS_JS)
    assert len(divs) == len(cells), (
        f"{page}: {len(divs)} rendered code cells, but its notebook has {len(cells)} code cells "
        "not tagged remove-cell: the cells cannot be matched"
    )
    collapsed, visible = 0, []
    for (class_name, input_shown), (index, tags, source) in zip(divs, cells, strict=True):
        classes = set(class_name.split())
        assert {f"tag_{t}" for t in tags} <= classes, (
            f"{page}: notebook cell {index} {tags} rendered as {classes}"
        )
        if "solution" in tags or not ASSERT.search(source):
            continue
        assert input_shown is not None, f"{page}: notebook cell {index} is rendered without its input"
        if input_shown:
            first = next((line for line in source.splitlines() if line.strip()), "")
            visible.append(f"{page}, notebook cell {index} {tags or '(no tags)'}: {first[:70]}")
        else:
            collapsed += 1
    total = collapsed + len(visible)
    assert collapsed >= CERTIFYING_COLLAPSED * total, (
        f"{page}: only {collapsed} of {total} certifying cells (with an assert) start collapsed, "
        f"fewer than {CERTIFYING_COLLAPSED:.0%}; tag these hide-input or split them into the code to "
        "read and a collapsed check:\n" + "\n".join(visible)
    )


def check_launch_buttons(browser, page):
    """The launch menu opens this chapter's notebook from the configured repository and branch."""
    notebook = page.removesuffix(".html") + ".ipynb"
    assert (ROOT / notebook).is_file(), "the launch links name a notebook that exists"
    branch = REPOSITORY["branch"]
    items = open_launch_menu(browser).find_elements(By.CSS_SELECTOR, ".dropdown-item")
    assert all(i.is_displayed() for i in items)
    assert [i.text.strip() for i in items] == ["Binder", "Colab", "Live Code"]
    hrefs = [i.get_attribute("href") for i in items[:2]]
    assert hrefs == [
        f"https://mybinder.org/v2/gh/{OWNER_NAME}/{branch}?urlpath=lab/tree/{notebook}",
        f"https://colab.research.google.com/github/{OWNER_NAME}/blob/{branch}/{notebook}",
    ]
    assert "initThebe" in items[2].get_attribute("onclick")
    thebe = browser.execute_script(
        "return document.querySelector('script[type=\"text/x-thebe-config\"]').textContent"
    )
    assert f'repo: "{OWNER_NAME}"' in thebe and f'ref: "{branch}"' in thebe, thebe
    assert "REPOSITORY_URL" not in browser.page_source, "the Colab set-up cell is hidden on the site"


def check_solution_opens_from_keyboard(browser):
    """Tab to the first solution's toggle, see its focus outline, open it with Enter."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    button = browser.find_element(By.CSS_SELECTOR, "div.solution button.toggle-button")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
    # Reach it by keyboard, so that :focus-visible applies: from the button, Shift+Tab to
    # whatever the browser puts before it in the tab order, then Tab forward again.
    browser.execute_script("arguments[0].focus();", button)
    ActionChains(browser).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    assert browser.switch_to.active_element != button, "Shift+Tab does not leave the solution button"
    browser.switch_to.active_element.send_keys(Keys.TAB)
    assert browser.switch_to.active_element == button, "Tab does not reach the solution button"
    outline = browser.execute_script(
        "const s = getComputedStyle(arguments[0]); return [s.outlineStyle, s.outlineWidth];", button
    )
    assert outline[0] != "none" and outline[1] != "0px", f"no focus outline on the solution button: {outline}"
    solution = button.find_element(By.XPATH, "./ancestor::div[contains(@class, 'solution')][1]")
    body = solution.find_element(By.CSS_SELECTOR, "section, p:not(.admonition-title)")
    assert not body.is_displayed()
    button.send_keys(Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda d: body.is_displayed())
    button.send_keys(Keys.ENTER)  # and closes again
    WebDriverWait(browser, 5).until(lambda d: not body.is_displayed())
    # A click on the title's words opens it too, and the page stays where it is: the title
    # names the exercise but does not link back to it (_ext/solution_markers.py).
    title = solution.find_element(By.CSS_SELECTOR, ".admonition-title")
    assert not title.find_elements(By.TAG_NAME, "a"), "a solution title links back to its exercise"
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", title)
    before = browser.execute_script("return [location.hash, window.scrollY];")
    browser.execute_script(
        "const r = arguments[0].getBoundingClientRect();"
        "document.elementFromPoint(r.left + 40, r.top + r.height / 2).click();",
        title,
    )
    WebDriverWait(browser, 5).until(lambda d: body.is_displayed())
    assert browser.execute_script("return [location.hash, window.scrollY];") == before
    button.send_keys(Keys.ENTER)
    WebDriverWait(browser, 5).until(lambda d: not body.is_displayed())


def test_axe_exceptions_name_existing_pages():
    assert {page for page, _ in AXE_EXCEPTIONS} <= set(PAGES)


@pytest.mark.parametrize("page", [p for p in PAGES if p not in CHAPTERS])
def test_page_renders(server, browser, page):
    check_rendered(server, browser, page)
    if not check_accessible(browser, page):
        pytest.skip(AXE_MISSING)


# One load per chapter serves all the checks and the screenshots (loading a page and
# typesetting its formulas is most of the time this test takes).
@pytest.mark.parametrize("page", CHAPTERS)
def test_chapter_renders_numbers_collapses_and_launches(server, browser, page):
    check_rendered(server, browser, page)
    if page == SCREENSHOT_PAGE:
        save_screenshot(browser, SCREENSHOT)
    check_numbered_and_collapsed(browser)
    check_certifying_cells_collapsed(browser, page)
    check_solution_opens_from_keyboard(browser)
    audited = check_accessible(browser, page)
    browser.execute_script("window.scrollTo(0, 0);")  # back to the top, where the launch menu is
    check_launch_buttons(browser, page)  # leaves the menu open
    if page == LAUNCH_PAGE:
        save_screenshot(browser, LAUNCH_SCREENSHOT)
    check_nothing_scrolls_sideways(browser, page)
    if not audited:
        pytest.skip(AXE_MISSING)


def test_search_finds_a_known_term(server, browser):
    load(browser, f"{server}/search.html?q=Toeplitz")
    WebDriverWait(browser, 30).until(lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results li"))
    hits = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "#search-results li a")]
    assert any("05_inner_products" in h for h in hits), hits


# The "Contents" list on the right marks the section being read, also after a jump into the
# middle of a long section and when scrolling back up (the theme alone marks a section only as
# its heading passes through the top third of the window; _static/toc_follows_scroll.js fixes
# that). Jumps land 400 px below a heading, so the heading itself is above the window.
TOC_SECTIONS_JS = """
const toc = document.querySelector('#pst-page-toc-nav');
const header = document.querySelector('#pst-header').getBoundingClientRect().height;
const tops = Array.from(toc.querySelectorAll("a[href^='#']"), a => {
  const s = document.getElementById(decodeURIComponent(a.hash.slice(1)));
  const h = s && (s.querySelector('h1, h2, h3, h4, h5, h6') || s);
  return h && h.getClientRects().length ? [a.hash, h.getBoundingClientRect().top + window.scrollY] : null;
}).filter(x => x);
return [header, tops];
"""
ACTIVE_TOC_JS = "return Array.from(document.querySelectorAll('#pst-page-toc-nav a.active'), a => a.hash);"


def test_contents_list_marks_the_section_in_view(server, browser):
    load(browser, f"{server}/{LAUNCH_PAGE}")
    header, tops = browser.execute_script(TOC_SECTIONS_JS)
    # sections long enough that a jump 400 px below the heading leaves the next heading low
    long = [(h, y) for (h, y), (_, y_next) in zip(tops, tops[1:], strict=False) if y_next - y > 1400]
    assert len(long) >= 3, tops

    def jump_and_check(wanted: str, y: float) -> None:
        browser.execute_script("window.scrollTo(0, arguments[0]);", y + 400 - header)
        WebDriverWait(browser, 5).until(lambda d: d.execute_script(ACTIVE_TOC_JS) == [wanted])

    for wanted, y in reversed(long):  # bottom to top: every jump goes up
        jump_and_check(wanted, y)
    jump_and_check(*long[-1])  # one long jump down again


# A link to a result inside a closed block (an Erratum box, a deep dive) opens the block and
# scrolls to the result (_static/open_link_target.js): without it the address changes and the
# page stays where it was, since the closed target has no height.
CLOSED = "details:not([open]), .toggle-hidden"
CLOSED_TARGET_JS = f"""
const closed = Array.from(document.querySelectorAll('main a.reference.internal[href^="#"]'), a =>
  document.getElementById(decodeURIComponent(a.hash.slice(1))))
  .filter(e => e && e.closest('{CLOSED}'));
return closed.length ? closed[0].id : null;
"""
OPENED_IN_VIEW_JS = f"""
const e = document.getElementById(arguments[0]), top = e.getBoundingClientRect().top;
return !e.closest('{CLOSED}') && top >= 0 && top < window.innerHeight;
"""


def test_a_link_into_a_closed_block_opens_it(server, browser):
    load(browser, f"{server}/{LAUNCH_PAGE}")
    target = browser.execute_script(CLOSED_TARGET_JS)
    assert target, "the chapter links to a result inside a closed block"
    load(browser, f"{server}/{LAUNCH_PAGE}#{target}")
    WebDriverWait(browser, 5).until(lambda d: d.execute_script(OPENED_IN_VIEW_JS, target))


# The colour-mode button is labelled "Color mode"; its <i> icons carry titles ("Light", "Dark")
# that would count as its text. _static/accessibility.js hides them (the site loads no
# fontawesome.js, which used to replace them by <svg> elements on its own schedule).
def test_colour_mode_button_is_named_by_its_label(server, browser):
    load(browser, f"{server}/intro.html")
    scripts = [s.get_attribute("src") or "" for s in browser.find_elements(By.TAG_NAME, "script")]
    assert not [s for s in scripts if "fontawesome" in s]
    icons = browser.find_elements(By.CSS_SELECTOR, ".theme-switch-button .theme-switch")
    assert len(icons) >= 2
    assert all(i.get_attribute("aria-hidden") == "true" and not i.get_attribute("title") for i in icons)
    # the icons are drawn from the web font: an <i> with a glyph, not an empty box
    content = browser.execute_script("return getComputedStyle(arguments[0], '::before').content;", icons[0])
    assert content not in ("", "none", "normal"), content
    if AXE.is_file():
        browser.execute_script(AXE.read_text())
        found = browser.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {runOnly: ['label-content-name-mismatch']})"
            ".then(r => done(r.violations.map(v => v.id)));"
        )
        assert found == []


@pytest.mark.parametrize("page", CHAPTERS)
def test_no_code_exercise_shows_its_answer(page):
    """Ask before answering: the lines of a code exercise's model answer (its nbgrader solution
    region) appear on the page only inside a closed solution, never where the exercise is asked
    (``_ext/solution_markers.py`` shows the student edition's stub there)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup((SITE / page).read_text(encoding="utf-8"), "html.parser")
    for closed in soup.select("details, .dropdown, .toggle-hidden"):
        closed.decompose()
    visible = re.sub(r"\s+", " ", soup.get_text())
    nb = json.loads((ROOT / page.removesuffix(".html")).with_suffix(".ipynb").read_text())
    asked = 0
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        region = re.search(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", source, re.S)
        if cell["cell_type"] != "code" or "exercise" not in cell["metadata"].get("tags", []) or not region:
            continue
        asked += 1
        # The answer's distinctive lines (a generic line such as ``d = x.shape[-1]`` may also
        # appear in a listing the chapter teaches): shown if half of them are on the page.
        lines = [ln.strip() for ln in region.group(1).splitlines()]
        lines = [ln for ln in lines if len(ln) >= 20 and not ln.startswith("#")]
        shown = [ln for ln in lines if re.sub(r"\s+", " ", ln) in visible]
        assert len(shown) < max(1, len(lines) // 2), f"{page}: a code exercise shows its answer: {shown[:3]}"
        assert "raise NotImplementedError" in visible, f"{page}: the exercise's stub is not shown"
    # The checker's verdict on the model answer ("correct on N inputs") waits in the solution too.
    verdicts = [c for c in soup.select("div.tag_exercise-check") if c.select(".cell_output")]
    assert asked == 0 or not verdicts, f"{page}: a checker's output shows under an unfilled stub"
    if not asked:
        pytest.skip(f"{page} has no code exercise")


# A chapter's cold load: every byte a first visit transfers, with the browser's cache off, from
# a server that compresses text files as GitHub Pages does (gzip for HTML, CSS, JavaScript,
# JSON and SVG; images and fonts are already compressed). The figures of every chapter, also
# uncompressed, go to _build/site-weight.txt.
COLD_LOAD_LIMIT = 2_500_000  # bytes
PAGES_COMPRESSES = {".html", ".css", ".js", ".json", ".svg", ".txt"}
WEIGHT_REPORT = ROOT / "_build" / "site-weight.txt"


class _PagesHandler(_QuietHandler):
    """Serves text files gzip-compressed to a browser that accepts it, like GitHub Pages."""

    def do_GET(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (accepts and path.suffix in PAGES_COMPRESSES and path.is_file()):
            return super().do_GET()
        body = gzip.compress(path.read_bytes(), compresslevel=6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def pages_server():
    handler = functools.partial(_PagesHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


LOADED_JS = """
return performance.getEntries()
  .filter(e => e.entryType === 'navigation' || e.entryType === 'resource')
  .map(e => [e.name, e.transferSize, e.decodedBodySize]);
"""


def test_a_chapter_cold_load_transfers_at_most_2_5_mb(pages_server, browser):
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    rows, heavy = [], []
    try:
        for page in CHAPTERS:
            load(browser, f"{pages_server}/{page}")
            browser.execute_async_script("document.fonts.ready.then(arguments[arguments.length - 1]);")
            entries = browser.execute_script(LOADED_JS)
            sent = sum(size for _, size, _ in entries)
            decoded = sum(size for _, _, size in entries)
            assert sent > 100_000 and len(entries) > 10, (page, entries[:3])  # measured, not cached
            rows.append(
                f"{page:48} {len(entries):4d} files {sent / 1e6:6.2f} MB sent {decoded / 1e6:6.2f} MB decoded"
            )
            if sent > COLD_LOAD_LIMIT:
                heavy.append((page, sent))
    finally:
        browser.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})
    WEIGHT_REPORT.write_text(
        "A chapter's cold load, gzip as GitHub Pages serves it\n" + "\n".join(rows) + "\n"
    )
    assert not heavy, heavy
