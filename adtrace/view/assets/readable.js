// adtrace viewer: long values readable in their panels. A dict entry wraps, cut to three lines
// (viewer.css); its whole text is its tooltip, and a click shows it whole (or cut again).
(function (adtrace) {
  "use strict";

  const dicts = document.querySelector(".dicts");
  if (!dicts) return;
  dicts.addEventListener("mouseover", (event) => {
    const entry = event.target.closest && event.target.closest(".entry");
    if (entry && entry.title !== entry.textContent) entry.title = entry.textContent;
  });
  dicts.addEventListener("click", (event) => {
    const entry = event.target.closest && event.target.closest(".entry");
    if (entry) entry.classList.toggle("whole");
  });
})(window.adtrace = window.adtrace || {});
