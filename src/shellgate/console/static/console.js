// shellgate console: reload the approvals page when the queue changes, unless
// the person is typing a message. A static file: the page's CSP allows no inline script.
(function () {
  "use strict";
  var marker = document.querySelector("[data-poll]");
  if (!marker) { return; }
  var url = marker.getAttribute("data-poll");
  var seen = null;
  function busy() {
    var active = document.activeElement;
    if (active && active.tagName === "INPUT" && active.type === "text") { return true; }
    var inputs = document.querySelectorAll("input[name=message]");
    for (var i = 0; i < inputs.length; i++) { if (inputs[i].value) { return true; } }
    return false;
  }
  function poll() {
    fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) {
        if (!body) { return; }
        if (seen !== null && body.state !== seen && !busy()) { window.location.reload(); return; }
        seen = body.state;
      })
      .catch(function () {})
      .then(function () { window.setTimeout(poll, 2000); });
  }
  poll();
}());
