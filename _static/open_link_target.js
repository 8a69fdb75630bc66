// A link to a result that sits inside a closed block (a deep dive, an Erratum box, a closed
// code cell) opens the block, then scrolls to the result. Without this the address changes
// but the page does not move: the target has no height while its block is closed.
function openLinkTarget() {
  const id = decodeURIComponent(window.location.hash.slice(1));
  const target = id && document.getElementById(id);
  if (!target) return;
  let opened = false;
  for (let box = target.closest(".toggle-hidden"); box; box = box.parentElement && box.parentElement.closest(".toggle-hidden")) {
    const button = document.querySelector(`.toggle-button[data-target="${box.id}"]`);
    if (button) {
      button.click();
      opened = true;
    }
  }
  for (let details = target.closest("details:not([open])"); details; details = details.parentElement && details.parentElement.closest("details:not([open])")) {
    details.open = true;
    opened = true;
  }
  if (opened) target.scrollIntoView();
}
window.addEventListener("load", openLinkTarget);
window.addEventListener("hashchange", openLinkTarget);
