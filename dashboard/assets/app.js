// Ratchet dashboard: the one script (no inline scripts under the CSP).
// Buttons with data-confirm ask before their form is sent.
document.addEventListener("click", function (e) {
  var b = e.target.closest ? e.target.closest("[data-confirm]") : null;
  if (b && !window.confirm(b.getAttribute("data-confirm"))) {
    e.preventDefault();
  }
});
