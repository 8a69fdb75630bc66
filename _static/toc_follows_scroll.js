// The "Contents" list on the right of a chapter marks the section being read. The theme marks
// a section only at the moment its heading passes through the top third of the window, so
// after a jump (a link, the End key, a search hit) or when scrolling back up the mark stays
// on a section the reader has left. Here, on every scroll, the mark goes to the last section
// whose heading is above that line, the same rule the theme applies, with the same classes.
function markSectionInView() {
  const toc = document.querySelector("#pst-page-toc-nav");
  if (!toc) return;
  const links = Array.from(toc.querySelectorAll("a[href^='#']"));
  const header = document.querySelector("#pst-header");
  const line = (header ? header.getBoundingClientRect().height : 0) + 0.3 * window.innerHeight;
  let current = links[0];
  for (const link of links) {
    const section = document.getElementById(decodeURIComponent(link.hash.slice(1)));
    if (!section) continue;
    const heading = section.querySelector("h1, h2, h3, h4, h5, h6") || section;
    if (heading.getClientRects().length === 0) continue; // inside a closed block
    if (heading.getBoundingClientRect().top > line) break; // links follow the page order
    current = link;
  }
  if (!current) return;
  for (const link of links) {
    link.classList.toggle("active", link === current);
    if (link === current) link.setAttribute("aria-current", "true");
    else link.removeAttribute("aria-current");
  }
  for (const entry of toc.querySelectorAll(".toc-entry")) {
    entry.classList.toggle("active", entry.contains(current));
  }
}
let markPending = false;
window.addEventListener("scroll", () => {
  if (markPending) return;
  markPending = true;
  window.requestAnimationFrame(() => {
    markPending = false;
    markSectionInView();
  });
}, { passive: true });
window.addEventListener("load", markSectionInView);
