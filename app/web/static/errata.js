// errata's pages work without this script. With it, a paste is matched in place
// (the server renders the same result fragment) and code blocks get copy buttons.
"use strict";

(function () {
  var status = document.createElement("p");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  document.body.appendChild(status);

  function enableCopyButtons(root) {
    if (!navigator.clipboard) {
      return; // the clipboard needs a secure context; the code stays selectable
    }
    root.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
      var label = button.firstChild;
      button.hidden = false;
      button.addEventListener("click", function () {
        var code = document.getElementById(button.dataset.copy);
        navigator.clipboard.writeText(code.textContent).then(
          function () {
            label.nodeValue = "Copied";
            status.textContent = "Copied to the clipboard";
            setTimeout(function () { label.nodeValue = "Copy"; }, 2000);
          },
          function () { status.textContent = "Could not copy: select the code instead"; }
        );
      });
    });
  }

  function matchInPlace(form, target) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      target.setAttribute("aria-busy", "true");
      fetch(form.action + "?fragment=true", {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        headers: { Accept: "text/html" },
      })
        .then(function (response) {
          var type = response.headers.get("content-type") || "";
          if (type.indexOf("text/html") !== 0 || response.status === 413) {
            throw new Error("not a result fragment"); // a body over the limit gets a page
          }
          return response.text();
        })
        .then(function (html) {
          target.innerHTML = html; // rendered and escaped by the server
          enableCopyButtons(target);
          var heading = target.querySelector("h2");
          if (heading) {
            heading.focus();
          }
        })
        .catch(function () {
          form.submit(); // the plain round trip renders the same result, or the problem
        })
        .finally(function () {
          button.disabled = false;
          target.removeAttribute("aria-busy");
        });
    });
  }

  enableCopyButtons(document);
  var form = document.getElementById("paste-form");
  var target = document.getElementById("match-result");
  if (form && target && window.fetch && window.URLSearchParams) {
    matchInPlace(form, target);
  }
})();
