// What the theme and MyST-NB write that a screen reader or a keyboard cannot use, mended as each page loads.
document.addEventListener("DOMContentLoaded", () => {
  // The sidebar's section captions are headings without a level (Sphinx's toctree captions).
  for (const caption of document.querySelectorAll('.caption[role="heading"]:not([aria-level])'))
    caption.setAttribute("aria-level", "2");
  // A hidden cell's toggle is named "Toggle hidden content" but reads "Show code cell source": its name becomes what
  // it reads, which is what a reader using voice control says to press it.
  for (const summary of document.querySelectorAll("details > summary[aria-label]")) summary.removeAttribute("aria-label");
  // A table wider than the column scrolls sideways: the keyboard can reach it, to scroll it.
  for (const wrapper of document.querySelectorAll(".table-wrapper"))
    if (wrapper.scrollWidth > wrapper.clientWidth) wrapper.tabIndex = 0;
});
