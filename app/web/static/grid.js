// The translator's grid, driven from the keyboard. Without this file every cell is a plain form (POST, then the
// page again); with it, the same forms are sent with fetch and answered in JSON, and the keys below work:
//   Alt+Down / Alt+Up   next / previous cell          Ctrl+Enter   save, then the next cell that needs work
//   Alt+R               flag for review / clear it    Alt+C        copy the source text
//   Alt+1 .. Alt+3      take suggestion 1 to 3
// Served from the app itself (the CSP allows no inline script and no other origin).
"use strict";

(function () {
  const grid = document.getElementById("grid");
  if (!grid) return;
  const NEEDS_WORK = ["untranslated", "flagged"];
  const CHECK_DELAY = 300; // ms after the last key before the checks run on what was typed
  const MAX_CHECKED_CHARS = 2000; // longer texts are checked on save (a GET's URL stays short)

  const cells = () => Array.from(grid.querySelectorAll(".cell"));
  const cellOf = (node) => node && node.closest(".cell");
  const field = (cell) => cell.querySelector("textarea");

  function focusCell(cell) {
    if (!cell || !field(cell)) return;
    const area = field(cell);
    area.focus();
    area.setSelectionRange(area.value.length, area.value.length);
    cell.scrollIntoView({block: "nearest"});
  }

  function move(from, step) {
    const all = cells();
    focusCell(all[all.indexOf(from) + step]);
  }

  function nextNeedingWork(from) {
    const all = cells();
    const next = all.slice(all.indexOf(from) + 1).find((cell) => NEEDS_WORK.includes(cell.dataset.state));
    if (next) focusCell(next);
    else if (grid.dataset.next) window.location.assign(grid.dataset.next);
  }

  // ------------------------------------------------------------------ talking to the server
  async function send(form, extra) {
    const body = new URLSearchParams(new FormData(form));
    for (const [name, value] of Object.entries(extra || {})) body.set(name, value);
    const response = await fetch(form.action, {method: "POST", body, credentials: "same-origin",
                                               headers: {"Accept": "application/json"}});
    return {status: response.status, answer: await response.json()};
  }

  function showChecks(cell, problems) {
    const list = cell.querySelector(".checks");
    list.replaceChildren(...problems.map((problem) => {
      const item = document.createElement("li");
      item.textContent = problem;
      return item;
    }));
  }

  function showState(cell, answer) {
    cell.dataset.state = answer.state;
    cell.className = cell.className.replace(/\bstate-\S+/, "state-" + answer.state);
    const badge = cell.querySelector(".status");
    badge.textContent = answer.flag ? answer.flag.charAt(0).toUpperCase() + answer.flag.slice(1) : answer.state;
    badge.className = "status status-" + (answer.flag || answer.state);
    cell.querySelector("form.save input[name=base]").value = answer.text;
    const flagForm = cell.querySelector("form.set-flag");
    if (flagForm) {
      flagForm.hidden = answer.state === "untranslated";
      flagForm.querySelector("input[name=flag]").value = answer.flag ? "" : grid.dataset.reviewFlag;
      flagForm.querySelector("button").textContent = answer.flag ? "Clear flag" : "Flag for review";
    }
    showChecks(cell, answer.checks || []);
  }

  function showConflict(cell, answer) {
    cell.querySelector(".conflict")?.remove();
    const box = document.createElement("div");
    box.className = "conflict";
    box.setAttribute("role", "alert");
    const said = document.createElement("p");
    said.textContent = (answer.theirs.author || "Someone") + " saved another text meanwhile. Theirs:";
    const theirs = document.createElement("p");
    theirs.className = "theirs text";
    theirs.textContent = answer.theirs.text;
    const keep = document.createElement("button");
    keep.type = "button";
    keep.className = "keep-mine";
    keep.textContent = "Keep mine";
    const take = document.createElement("button");
    take.type = "button";
    take.className = "take-theirs secondary";
    take.textContent = "Take theirs";
    keep.addEventListener("click", () => {
      cell.querySelector("form.save input[name=base]").value = answer.theirs.text;
      box.remove();
      focusCell(cell);
      save(cell, false);
    });
    take.addEventListener("click", () => {
      field(cell).value = answer.theirs.text;
      cell.querySelector("form.save input[name=base]").value = answer.theirs.text;
      box.remove();
      focusCell(cell);
    });
    box.append(said, theirs, keep, take);
    cell.querySelector(".target").append(box);
    keep.focus();  // the keyboard answers: Enter keeps mine, Tab then Enter takes theirs
  }

  async function save(cell, thenNext) {
    const form = cell.querySelector("form.save");
    if (!form || cell.dataset.busy) return;
    cell.dataset.busy = "1";
    try {
      const {status, answer} = await send(form);
      if (status === 409) showConflict(cell, answer);
      else if (status === 200) {
        showState(cell, answer);
        cell.classList.add("saved");
        if (thenNext) nextNeedingWork(cell);
      } else showChecks(cell, [answer.error || "Not saved (" + status + ")"]);
    } finally {
      delete cell.dataset.busy;
    }
  }

  async function toggleFlag(cell) {
    const form = cell.querySelector("form.set-flag");
    if (!form || form.hidden) return;  // an untranslated cell has nothing to flag
    const {status, answer} = await send(form);
    if (status === 200) showState(cell, answer);
  }

  // ------------------------------------------------------------------ suggestions and checks
  async function loadSuggestions(cell) {
    if (cell.suggestions) return cell.suggestions;
    const url = grid.dataset.suggestions + "?asset=" + encodeURIComponent(cell.dataset.asset);
    const response = await fetch(url, {headers: {"Accept": "application/json"}, credentials: "same-origin"});
    cell.suggestions = response.ok ? await response.json() : [];
    const list = cell.querySelector(".suggestions");
    list.replaceChildren(...cell.suggestions.map((suggestion, index) => {
      const item = document.createElement("li");
      const key = document.createElement("kbd");
      key.textContent = "Alt+" + (index + 1);
      const text = document.createElement("span");
      text.className = "suggestion-text";
      text.textContent = suggestion.text;
      const meta = document.createElement("span");
      meta.className = "meta";
      meta.textContent = " " + suggestion.score + "% · " + (suggestion.author || "") + " · source: ";
      for (const [changed, piece] of suggestion.diff || []) {  // the words its source differs in are marked
        const part = document.createElement(changed ? "mark" : "span");
        part.textContent = piece;
        meta.append(part);
      }
      item.append(key, " ", text, meta);
      return item;
    }));
    list.hidden = cell.suggestions.length === 0;
    return cell.suggestions;
  }

  async function takeSuggestion(cell, index) {
    const found = (await loadSuggestions(cell))[index];
    if (!found) return;
    field(cell).value = found.text;
    field(cell).dispatchEvent(new Event("input", {bubbles: true}));
  }

  async function runChecks(cell) {
    const text = field(cell).value;
    if (text.length > MAX_CHECKED_CHARS) return;
    const url = grid.dataset.checks + "?asset=" + encodeURIComponent(cell.dataset.asset) + "&text=" +
      encodeURIComponent(text);
    const response = await fetch(url, {headers: {"Accept": "application/json"}, credentials: "same-origin"});
    if (response.ok && field(cell).value === text) showChecks(cell, (await response.json()).checks);
  }

  // ------------------------------------------------------------------ wiring
  grid.addEventListener("submit", (event) => {
    const cell = cellOf(event.target);
    if (!cell) return;
    event.preventDefault();
    if (event.target.matches("form.save")) save(cell, false);
    else if (event.target.matches("form.set-flag")) toggleFlag(cell);
  });

  grid.addEventListener("focusin", (event) => {
    const cell = cellOf(event.target);
    if (cell && event.target.matches("textarea")) {
      grid.querySelectorAll(".cell.active").forEach((other) => other.classList.remove("active"));
      cell.classList.add("active");
      loadSuggestions(cell);
    }
  });

  const timers = new WeakMap();
  grid.addEventListener("input", (event) => {
    const cell = cellOf(event.target);
    if (!cell || !event.target.matches("textarea")) return;
    cell.classList.remove("saved");
    clearTimeout(timers.get(cell));
    timers.set(cell, setTimeout(() => runChecks(cell), CHECK_DELAY));
  });

  grid.addEventListener("keydown", (event) => {
    const cell = cellOf(event.target);
    if (!cell || !event.target.matches("textarea")) return;
    let handled = true;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") save(cell, true);
    else if (event.altKey && !event.ctrlKey && event.key === "ArrowDown") move(cell, 1);
    else if (event.altKey && !event.ctrlKey && event.key === "ArrowUp") move(cell, -1);
    else if (event.altKey && !event.ctrlKey && event.code === "KeyR") toggleFlag(cell);
    else if (event.altKey && !event.ctrlKey && event.code === "KeyC") {
      field(cell).value = cell.querySelector(".source-text").textContent;
      field(cell).dispatchEvent(new Event("input", {bubbles: true}));
    } else if (event.altKey && !event.ctrlKey && /^Digit[1-3]$/.test(event.code)) {
      takeSuggestion(cell, Number(event.code.slice(5)) - 1);
    } else handled = false;
    if (handled) event.preventDefault();
  });

  grid.classList.add("scripted");
  const first = cells().find((cell) => NEEDS_WORK.includes(cell.dataset.state)) || cells()[0];
  if (first && !document.activeElement?.matches("input, textarea, select")) focusCell(first);
})();
