// Accessibility fixes for the theme (checked by the browser test with axe-core).
document.addEventListener("DOMContentLoaded", () => {
  // An accessible name must contain the words a button shows (WCAG 2.5.3, label in name).
  // The search buttons say "Search Ctrl+K" but are labelled "Search"; the collapsed code
  // cells say "Show code cell source" but are labelled "Toggle hidden content". Without the
  // label, the name is what the reader sees.
  document
    .querySelectorAll('.search-button__button[aria-label], summary[aria-label="Toggle hidden content"]')
    .forEach((el) => el.removeAttribute("aria-label"));
  // The colour-mode button is labelled "Color mode", but its icons carry titles ("Light",
  // "Dark") that count as its text; they are decoration, the label names the button.
  // (The theme's fontawesome.js, which the site no longer loads, turned each <i> into an
  // <svg> with a <title>; those are removed too, should a page still load it.)
  document.querySelectorAll(".theme-switch-button .theme-switch").forEach((icon) => {
    icon.removeAttribute("title");
    icon.querySelectorAll("title").forEach((title) => title.remove());
    icon.removeAttribute("aria-labelledby");
    icon.setAttribute("aria-hidden", "true");
  });
  // The bibliography is marked up as a list whose entries are not list items.
  document.querySelectorAll('.citation-list[role="list"] > .citation').forEach((el) => {
    el.setAttribute("role", "listitem");
  });
  // Formulas are out of the Tab order (_config.yml), except a displayed formula wider than
  // the page: it scrolls sideways, and a keyboard reader must be able to reach it to scroll.
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(() => {
      document.querySelectorAll('mjx-container[display="true"]').forEach((el) => {
        if (el.scrollWidth > el.clientWidth) el.setAttribute("tabindex", "0");
      });
    });
  }
});
