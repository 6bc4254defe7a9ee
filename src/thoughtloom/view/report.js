// thoughtloom run report: navigation, lazy example pages, table sorting and filtering.
// Example pages are gzip'd HTML (written by thoughtloom.view, every piece of model text
// escaped there) kept in <script type="application/x-thoughtloom-page"> blocks, which the
// browser never runs; a page is inflated only when it is opened.
(function () {
  "use strict";
  var pages = new Map();
  document.querySelectorAll("script[data-example]").forEach(function (s) {
    pages.set(s.getAttribute("data-example"), s);
  });
  var runView = document.getElementById("run");
  var exampleView = document.getElementById("example");

  function inflate(b64) {
    var raw = atob(b64.trim());
    var bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text();
  }

  function note(text) {
    var p = document.createElement("p");
    p.className = "note";
    p.textContent = text;
    return p;
  }

  function showRun() {
    exampleView.hidden = true;
    runView.hidden = false;
    document.body.removeAttribute("data-showing");
  }

  function showExample(id, node) {
    var page = pages.get(id);
    runView.hidden = true;
    exampleView.hidden = false;
    exampleView.replaceChildren();
    document.body.setAttribute("data-showing", id);
    if (!page) {
      exampleView.append(note("No example " + id + " in this report."));
      return Promise.resolve();
    }
    if (typeof DecompressionStream === "undefined") {
      exampleView.append(note("This browser cannot open example pages (no DecompressionStream)."));
      return Promise.resolve();
    }
    return inflate(page.textContent).then(function (html) {
      if (document.body.getAttribute("data-showing") !== id) return;  // another page was opened meanwhile
      exampleView.innerHTML = html;
      window.scrollTo(0, 0);
      if (node) reveal(node);
    });
  }

  function route() {
    var params = new URLSearchParams(location.hash.slice(1));
    var id = params.get("example");
    if (id === null) id = document.body.getAttribute("data-open");
    if (id === null || id === "") showRun();
    else showExample(id, params.get("node"));
  }

  // a click on a drawn node opens and shows that node's details
  function reveal(targetId) {
    var el = document.getElementById(targetId);
    if (!el) return;
    for (var p = el; p; p = p.parentElement) if (p.tagName === "DETAILS") p.open = true;
    el.scrollIntoView({block: "center"});
    el.classList.add("flash");
    setTimeout(function () { el.classList.remove("flash"); }, 1200);
  }

  document.addEventListener("click", function (ev) {
    var g = ev.target.closest ? ev.target.closest("g.gnode") : null;
    if (!g) return;
    var graph = g.closest(".graph[data-prefix]");
    if (graph) reveal(graph.getAttribute("data-prefix") + g.getAttribute("data-node"));
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter" && ev.target.matches && ev.target.matches("g.gnode")) ev.target.dispatchEvent(
      new MouseEvent("click", {bubbles: true}));
  });

  // the examples table: click a header to sort, type or pick a status to filter
  var table = document.getElementById("examples");
  if (table) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var dir = th.getAttribute("data-dir") === "asc" ? "desc" : "asc";
        table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("data-dir"); });
        th.setAttribute("data-dir", dir);
        var numeric = th.hasAttribute("data-numeric");
        rows.sort(function (a, b) {
          var x = a.cells[col].getAttribute("data-v"), y = b.cells[col].getAttribute("data-v");
          var c = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
          return dir === "asc" ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
    var text = document.getElementById("filter-text");
    var status = document.getElementById("filter-status");
    var count = document.getElementById("filter-count");
    var filter = function () {
      var q = text.value.toLowerCase(), s = status.value, shown = 0;
      rows.forEach(function (r) {
        var ok = (!s || r.getAttribute("data-status") === s) && (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
        r.hidden = !ok;
        if (ok) shown++;
      });
      count.textContent = shown + " of " + rows.length;
    };
    text.addEventListener("input", filter);
    status.addEventListener("change", filter);
    filter();
  }

  window.addEventListener("hashchange", route);
  route();
})();
