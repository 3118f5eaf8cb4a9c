/* Participant pages: guard against double submission, measure the time spent on an item page,
   ask again when no answer is chosen, and let Enter submit from the answer buttons.
   The server enforces all of this too; the page works without JavaScript. */
(function () {
  "use strict";
  var started = performance.now();

  // The next question comes back as the reply to an answer's POST. Replacing the history entry makes a reload
  // (or a return to this page) ask for the question page again instead of sending the answer once more; without
  // JavaScript the browser asks before sending it again, and the server keeps the first answer.
  if (window.history && history.replaceState) history.replaceState(history.state, "", location.href);

  document.querySelectorAll("form[method=post]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (event.defaultPrevented) return;
      if (form.hasAttribute("data-submitting")) { event.preventDefault(); return; }
      form.setAttribute("data-submitting", "");
    });
  });
  // A page restored from the back/forward cache may be submitted again (the server decides).
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) {
      document.querySelectorAll("form[data-submitting]").forEach(function (f) { f.removeAttribute("data-submitting"); });
      started = performance.now();
    }
  });

  var form = document.querySelector("form[data-answer-form]");
  if (!form) return;

  // Every question is at the same URL, so a browser restoring a form (Back, Forward, reload) could put the
  // answer given to another question into this one. The form says autocomplete="off", which tells the browser
  // not to; and the answer is set back to what the server sent (nothing, or a refused answer shown again).
  // A page shown again from the back/forward cache is an old question: ask the server for the current one.
  function resetAnswer() {
    form.querySelectorAll("input[data-answer], textarea[data-answer]").forEach(function (input) {
      if (input.type === "radio" || input.type === "checkbox") input.checked = input.defaultChecked;
      else input.value = input.defaultValue;
    });
    form.querySelectorAll("[data-slider-value]").forEach(function (field) {
      field.value = field.getAttribute("data-initial") || "";
    });
  }
  // Only a reload or Back/Forward restores a form: on a page freshly loaded, an answer chosen before this
  // script ran (a slow connection) is the participant's own and stays.
  var navigation = performance.getEntriesByType ? performance.getEntriesByType("navigation")[0] : null;
  if (!navigation || navigation.type !== "navigate") resetAnswer();
  window.addEventListener("pageshow", function (event) {
    if (event.persisted) { resetAnswer(); location.reload(); }
  });
  var error = form.querySelector("[data-answer-error]");
  var clientTime = form.querySelector("input[name=client_time_ms]");

  // The answer widget's inputs carry data-answer: radio buttons (a scale, a choice) need one checked;
  // number inputs (an interval) and a text area (free text) need every one filled, in order when the widget
  // says data-ordered; a slider (data-untouched) must have been moved or confirmed.
  // A page of several questions ([data-question], each with its own message): each is checked alone, an
  // optional one (no data-required) only when something is entered in it.
  function answerProblem(scope, optional) {
    scope = scope || form;
    var untouched = scope.querySelector("[data-answer][data-untouched]");
    var radios = scope.querySelectorAll("input[data-answer][type=radio]");
    var numbers = scope.querySelectorAll("input[data-answer]:not([type=radio]):not([type=range]), textarea[data-answer]");
    if (optional) {
      var entered = !!scope.querySelector("input[data-answer]:checked");
      for (var j = 0; j < numbers.length; j++) if (numbers[j].value.trim()) entered = true;
      if (!entered) return null;
    }
    if (untouched && !optional) return ["empty", untouched];
    if (radios.length && !scope.querySelector("input[data-answer]:checked")) return ["empty", radios[0]];
    for (var i = 0; i < numbers.length; i++) {
      if (!numbers[i].value.trim()) return ["empty", numbers[i]];
      if (!numbers[i].checkValidity()) return ["number", numbers[i]];
    }
    var ordered = scope.querySelector("[data-ordered]");
    if (ordered && numbers.length === 2 && parseFloat(numbers[0].value) > parseFloat(numbers[1].value)) {
      return ["order", numbers[0]];
    }
    return null;
  }
  var questions = Array.prototype.slice.call(form.querySelectorAll("[data-question]"));
  function parts() {
    if (!questions.length) return [[form, false, error]];
    return questions.map(function (q) {
      return [q, !q.hasAttribute("data-required"), q.querySelector("[data-answer-error]")];
    });
  }

  // Capture: runs before the double-submission guard, which skips a submission cancelled here.
  form.addEventListener("submit", function (event) {
    var first = null;
    parts().forEach(function (part) {
      var problem = answerProblem(part[0], part[1]);
      if (!problem) return;
      var message = part[2];
      if (message) {
        message.textContent = message.getAttribute("data-message-" + problem[0]) || message.getAttribute("data-message-empty");
        message.hidden = false;
      }
      if (!first) first = problem[1];
    });
    if (first) {
      event.preventDefault();
      first.focus();
      return;
    }
    if (clientTime) clientTime.value = String(Math.round(performance.now() - started));
  }, true);

  // Once an answer is chosen, the "please choose an answer" request no longer applies. Number fields: as soon
  // as they are typed in ("input"), not on blur ("change"), so the message does not vanish under the pointer
  // that is clicking Next (the button would move up and the click would miss it).
  function hideSolved(event) {
    if (!event.target.matches("[data-answer]")) return;
    parts().forEach(function (part) {
      if (part[2] && part[0].contains(event.target) && !answerProblem(part[0], part[1])) part[2].hidden = true;
    });
  }
  form.addEventListener("change", hideSolved);
  form.addEventListener("input", hideSolved);

  // A slider posts its value (the hidden data-slider-value field) only once moved (pointer, touch, arrow keys)
  // or confirmed with its button: a slider left in the middle is no answer.
  form.querySelectorAll("[data-slider]").forEach(function (widget) {
    var range = widget.querySelector("input[type=range]");
    var field = widget.querySelector("[data-slider-value]");
    var output = widget.querySelector("[data-slider-output]");
    var chosen = widget.querySelector("[data-slider-chosen]");
    var unchosen = widget.querySelector("[data-slider-unchosen]");
    var confirm = widget.querySelector("[data-slider-confirm]");
    function choose() {
      range.removeAttribute("data-untouched");
      field.value = range.value;
      output.textContent = range.value;
      if (chosen) chosen.hidden = false;
      if (unchosen) unchosen.hidden = true;
      parts().forEach(function (part) {
        if (part[2] && part[0].contains(widget) && !answerProblem(part[0], part[1])) part[2].hidden = true;
      });
    }
    range.addEventListener("input", choose);
    range.addEventListener("change", choose);
    if (confirm) confirm.addEventListener("click", choose);
    // moved before this script ran (a slow connection, and not a restored form): the move counts
    if (range.hasAttribute("data-untouched") && Number(range.value) !== Number(range.defaultValue)) choose();
  });

  form.setAttribute("data-ready", "");  // lets tests wait until the page measures time
  form.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && event.target.matches("input[type=radio]")) {
      event.preventDefault();  // submits the choice made (never the merely focused button)
      if (form.requestSubmit) form.requestSubmit(); else form.submit();
    }
  });
})();
