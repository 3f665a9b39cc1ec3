// Ratchet dashboard: the one script (no inline scripts under the CSP).
// Every page works without it; with it:
//   - buttons with data-confirm ask before their form is sent;
//   - buttons with data-copy copy their value to the clipboard;
//   - <time datetime> elements show the browser's zone, relative to now,
//     the absolute local and UTC times on hover;
//   - elements with data-since tick the time elapsed since then;
//   - row checkboxes (data-select) enable the selection's actions that
//     apply to every selected row's status (data-applies);
//   - a live page (one with the data-live-bar) fetches itself again every
//     few seconds and swaps its elements marked data-live, paused by the
//     interval menu, while rows are selected, while a field of a live
//     region has the focus, and while the tab is hidden.
(function () {
  "use strict";

  document.addEventListener("click", function (e) {
    var t = e.target.closest ? e.target : null;
    if (!t) {
      return;
    }
    var b = t.closest("[data-confirm]");
    if (b && !window.confirm(b.getAttribute("data-confirm"))) {
      e.preventDefault();
      return;
    }
    var c = t.closest("[data-copy]");
    if (c) {
      e.preventDefault();
      copy(c);
    }
  });

  function copy(el) {
    var text = el.getAttribute("data-copy");
    var target = el.getAttribute("data-copy-from");
    if (target) {
      var src = document.getElementById(target);
      text = src ? src.textContent : "";
    }
    var done = function () {
      el.setAttribute("data-copied", "");
      window.setTimeout(function () { el.removeAttribute("data-copied"); }, 1200);
    };
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).then(done, function () {});
    }
  }

  // Durations as people read them: 850ms, 12s, 4m 05s, 3h 12m, 2d 4h.
  function dur(ms) {
    var neg = ms < 0;
    ms = Math.abs(ms);
    var s = Math.floor(ms / 1000), out;
    if (ms < 1000) {
      out = Math.round(ms) + "ms";
    } else if (s < 60) {
      out = s + "s";
    } else if (s < 3600) {
      out = Math.floor(s / 60) + "m " + pad(s % 60) + "s";
    } else if (s < 172800) {
      out = Math.floor(s / 3600) + "h " + pad(Math.floor(s / 60) % 60) + "m";
    } else {
      out = Math.floor(s / 86400) + "d " + (Math.floor(s / 3600) % 24) + "h";
    }
    return (neg ? "-" : "") + out;
  }

  function pad(n) {
    return n < 10 ? "0" + n : "" + n;
  }

  function sameDay(a, b) {
    return a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  }

  // localize rewrites the <time> elements under root.
  function localize(root) {
    var now = new Date();
    root.querySelectorAll("time[datetime]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d)) {
        return;
      }
      if (!el.hasAttribute("data-utc")) {
        el.setAttribute("data-utc", el.textContent);
      }
      var local = sameDay(d, now) ? d.toLocaleTimeString() : d.toLocaleString();
      var diff = d.getTime() - now.getTime();
      var rel = Math.abs(diff) < 1000 ? "now" : diff < 0 ? dur(-diff) + " ago" : "in " + dur(diff);
      // In a table's cell the relative time alone (the column stays
      // narrow), in a log the local time alone; elsewhere both.
      if (el.hasAttribute("data-abs")) {
        el.textContent = local;
      } else {
        el.textContent = el.closest("table.grid") ? rel : local + " (" + rel + ")";
      }
      el.title = d.toLocaleString() + " · " + el.getAttribute("data-utc");
    });
  }

  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-since]").forEach(function (el) {
      var t = Date.parse(el.getAttribute("data-since"));
      if (!isNaN(t)) {
        el.textContent = dur(now - t);
      }
    });
  }

  // Selection: the actions that apply to every selected row.
  function selectionChanged() {
    var boxes = document.querySelectorAll("input[data-select]");
    var picked = [];
    boxes.forEach(function (b) {
      if (b.checked) {
        picked.push(b.getAttribute("data-status"));
      }
    });
    var all = document.querySelector("input[data-select-all]");
    if (all) {
      all.checked = boxes.length > 0 && picked.length === boxes.length;
      all.indeterminate = picked.length > 0 && picked.length < boxes.length;
    }
    document.querySelectorAll("[data-selected-count]").forEach(function (el) {
      el.textContent = picked.length === 0 ? "Select rows to act on them" : picked.length + " selected";
    });
    document.querySelectorAll("button[data-applies]").forEach(function (b) {
      var ok = b.getAttribute("data-applies").split(" ");
      b.disabled = picked.length === 0 || !picked.every(function (s) { return ok.indexOf(s) >= 0; });
    });
  }

  document.addEventListener("change", function (e) {
    var t = e.target;
    if (t.matches && t.matches("input[data-select-all]")) {
      document.querySelectorAll("input[data-select]").forEach(function (b) { b.checked = t.checked; });
    }
    if (t.matches && (t.matches("input[data-select]") || t.matches("input[data-select-all]"))) {
      selectionChanged();
      live.state();
    }
  });

  // Live pages.
  var live = (function () {
    var bar = document.querySelector("[data-live-bar]");
    var menu = bar && bar.querySelector("select[data-live-every]");
    var label = bar && bar.querySelector("[data-live-state]");
    var timer = null, busy = false, stopped = "";
    var key = "ratchet.live.every";

    function every() {
      return menu ? Number(menu.value) : 0;
    }

    function why() {
      if (stopped) {
        return stopped;
      }
      if (every() === 0) {
        return "paused";
      }
      if (document.hidden) {
        return "paused while the tab is hidden";
      }
      if (document.querySelector("input[data-select]:checked")) {
        return "paused while rows are selected";
      }
      var f = document.activeElement;
      if (f && f.closest && f.closest("[data-live]") && f.matches("input, select, textarea")) {
        return "paused while you type";
      }
      return "";
    }

    function state() {
      if (label) {
        var w = why();
        label.textContent = w ? w : "live, every " + every() + " s";
      }
    }

    function schedule() {
      window.clearTimeout(timer);
      if (menu && !stopped && every() > 0) {
        timer = window.setTimeout(refresh, every() * 1000);
      }
      state();
    }

    function refresh() {
      if (why() || busy) {
        schedule();
        return;
      }
      busy = true;
      fetch(window.location.href, { headers: { "X-Ratchet-Live": "1" }, credentials: "same-origin", cache: "no-store" })
        .then(function (resp) {
          if (resp.status === 401 || resp.redirected) {
            stopped = "signed out: reload the page to sign in";
            return null;
          }
          if (!resp.ok && resp.status !== 503) {
            stopped = "stopped: the page answered " + resp.status + "; reload it";
            return null;
          }
          return resp.text();
        })
        .then(function (html) {
          if (html !== null && html !== undefined) {
            swap(new DOMParser().parseFromString(html, "text/html"));
          }
        })
        .catch(function () {
          if (label) {
            label.textContent = "the last refresh failed; retrying";
          }
        })
        .then(function () {
          busy = false;
          schedule();
        });
    }

    // swap replaces each live region with the fetched page's, keeping
    // the open or closed state of its <details> that have an id.
    function swap(doc) {
      if (why()) {
        return; // the user started selecting or typing meanwhile
      }
      document.querySelectorAll("[data-live][id]").forEach(function (old) {
        var fresh = doc.getElementById(old.id);
        if (!fresh) {
          return;
        }
        var open = {};
        old.querySelectorAll("details[id]").forEach(function (d) { open[d.id] = d.open; });
        var node = document.importNode(fresh, true);
        node.querySelectorAll("details[id]").forEach(function (d) {
          if (d.id in open) {
            d.open = open[d.id];
          }
        });
        old.replaceWith(node);
        localize(node);
      });
      tick();
      selectionChanged();
      document.dispatchEvent(new Event("ratchet:swapped"));
    }

    if (menu) {
      var saved = window.localStorage ? window.localStorage.getItem(key) : null;
      if (saved !== null && menu.querySelector('option[value="' + saved + '"]')) {
        menu.value = saved;
      }
      menu.addEventListener("change", function () {
        if (window.localStorage) {
          window.localStorage.setItem(key, menu.value);
        }
        schedule();
      });
      document.addEventListener("visibilitychange", schedule);
      document.addEventListener("focusin", state);
      document.addEventListener("focusout", state);
      schedule();
    }
    return { state: state };
  })();

  localize(document);
  tick();
  selectionChanged();
  window.setInterval(tick, 1000);
  window.setInterval(function () { localize(document); }, 30000);
})();

// On narrow screens the navigation collapses behind its Menu button
// (style.css hides the links of a collapsible nav until it is open).
(function () {
  var nav = document.querySelector("nav.side");
  var toggle = nav && nav.querySelector(".menu-toggle");
  if (!toggle) {
    return;
  }
  nav.classList.add("collapsible");
  toggle.addEventListener("click", function () {
    var open = nav.classList.toggle("open");
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });
})();

// A table wider than the page scrolls inside itself (style.css): it takes
// the keyboard focus then, so that it can be scrolled with the arrow keys.
(function () {
  function mark() {
    var tables = document.querySelectorAll("table.grid");
    for (var i = 0; i < tables.length; i++) {
      var t = tables[i];
      if (t.scrollWidth > t.clientWidth) {
        t.setAttribute("tabindex", "0");
      } else {
        t.removeAttribute("tabindex");
      }
    }
  }
  mark();
  window.addEventListener("resize", mark);
  document.addEventListener("ratchet:swapped", mark); // a live refresh's new tables
})();
