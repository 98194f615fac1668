// errata's pages work without this script. With it, a paste is matched in place
// (the server renders the same result fragment) and code blocks get copy buttons.
"use strict";

(function () {
  var status = document.createElement("p");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  document.body.appendChild(status);

  function copied(label) {
    label.nodeValue = "Copied";
    status.textContent = "Copied to the clipboard";
    setTimeout(function () { label.nodeValue = "Copy"; }, 2000);
  }

  // Outside a secure context (plain http://host:8000) there is no navigator.clipboard:
  // select the code and ask the browser to copy the selection; if it will not, the code
  // stays selected for the reader's own Ctrl+C.
  function copySelection(code, label) {
    var range = document.createRange();
    range.selectNodeContents(code);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    var done = false;
    try {
      done = document.execCommand("copy");
    } catch (error) {
      done = false;
    }
    if (done) {
      copied(label);
    } else {
      status.textContent = "The code is selected: press Ctrl+C to copy it";
    }
  }

  function enableCopyButtons(root) {
    root.querySelectorAll("button.copy[data-copy]").forEach(function (button) {
      var label = button.firstChild;
      button.hidden = false;
      button.addEventListener("click", function () {
        var code = document.getElementById(button.dataset.copy);
        if (!navigator.clipboard) {
          copySelection(code, label);
          return;
        }
        navigator.clipboard.writeText(code.textContent).then(
          function () { copied(label); },
          function () { copySelection(code, label); }
        );
      });
    });
  }

  // With an answer shown, the paste folds to its summary line; "edit" opens it again.
  function foldPaste(form) {
    var box = document.getElementById("paste-box");
    var summary = box && box.querySelector(".paste-summary");
    if (!box || !summary) {
      return;
    }
    var lines = form.elements.text.value.split("\n").filter(function (line) {
      return line.trim() !== "";
    });
    var last = lines.length ? lines[lines.length - 1].trim() : "";
    var code = document.createElement("code");
    code.textContent = (lines.length > 1 ? lines.length + " lines, ending " : "") + last;
    summary.textContent = "Your paste: ";
    summary.appendChild(code);
    box.open = false;
  }

  function matchInPlace(form, target) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      target.setAttribute("aria-busy", "true");
      var url = new URL(form.action); // "/#match": the fragment is for the page without script
      url.hash = "";
      url.searchParams.set("fragment", "true");
      fetch(url.toString(), {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        headers: { Accept: "text/html" },
      })
        .then(function (response) {
          var type = response.headers.get("content-type") || "";
          // A body over the limit or too many requests get a whole page, not a fragment.
          if (type.indexOf("text/html") !== 0 || response.status === 413 || response.status === 429) {
            throw new Error("not a result fragment");
          }
          return response.text();
        })
        .then(function (html) {
          target.innerHTML = html; // rendered and escaped by the server
          enableCopyButtons(target);
          foldPaste(form);
          var heading = target.querySelector("h2");
          if (heading) {
            heading.focus();
            heading.scrollIntoView({ block: "start" });
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
