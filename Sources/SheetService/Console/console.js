// The operator console (GET /console): catalog, history, experiments, stats and users over the
// admin API. Served as a file of its own (the CSP allows no inline script) and embedded in the
// binary at build time. Every value from the API is attacker-controlled text: it is only ever put
// into the page with textContent or as a text node (the `el` helper); the CSP's Trusted Types
// requirement makes any markup string assignment throw.
"use strict";

const TOKEN_KEY = "sheetd.console.token";
const DISMISS_METHODS = ["swipe", "scrim", "closeButton", "cancelButton", "action", "programmatic"];
const Z95 = 1.959963984540054;
let token = sessionStorage.getItem(TOKEN_KEY);
let leavePage = []; // what the current page must stop when another opens (streams, charts)

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const $ = (id) => document.getElementById(id);

/** An element with properties and children; strings become text nodes, never markup. */
function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "value" || key === "checked" || key === "selected") node[key] = value;
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Replaces a node's children; arrays are flattened and null, undefined and false left out. */
function fill(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

/** A labelled control: <div class=field><label for=id>text</label>control</div>. */
function field(text, control) {
  return el("div", { class: "field" }, el("label", { for: control.id, text }), control);
}

function options(select, values, selected) {
  fill(select, ...values.map((v) => {
    const [value, label] = Array.isArray(v) ? v : [v, v];
    return el("option", { value, selected: value === selected }, label);
  }));
  return select;
}

const json = (value) => JSON.stringify(value, null, 2);
const percent = (x, digits = 2) => (x === null || x === undefined ? "–" : (100 * x).toFixed(digits) + " %");
const path = (...segments) => segments.map((s) => encodeURIComponent(s)).join("/");

function say(message, isError) {
  $("status").textContent = message;
  $("status").className = isError ? "error" : "";
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { $("status").textContent = ""; }, isError ? 12000 : 5000);
}

/** A problem+json answer in one line. */
function problemText(result) {
  const b = result.body || {};
  const params = (b["invalid-params"] || []).map((p) => p.name + " " + p.reason).join("; ");
  return result.status + " " + (b.title || "") + (b.detail ? ": " + b.detail : "") + (params && !String(b.detail || "").includes(params) ? " (" + params + ")" : "");
}

/** The comment of a catalog write goes in a header: printable ASCII only (fetch refuses the rest). */
function commentProblem(comment) {
  return /^[\x20-\x7e]*$/.test(comment) ? null : "the comment is sent as an HTTP header: use ASCII characters only";
}

// ---------------------------------------------------------------------------------------------
// The token and the API
// ---------------------------------------------------------------------------------------------

function askForToken(message) {
  token = null;
  sessionStorage.removeItem(TOKEN_KEY);
  stopPage();
  $("main").hidden = true;
  $("nav").hidden = true;
  $("forget-token").hidden = true;
  $("token-panel").hidden = false;
  $("token-message").textContent = message || "";
  $("token-input").focus();
}

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  token = $("token-input").value.trim();
  $("token-input").value = "";
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  start();
});

$("forget-token").addEventListener("click", () => askForToken());

/** One API call with the token; resolves to {status, ok, headers, body (parsed JSON or null)}. */
async function api(method, url, options = {}) {
  const init = { method, headers: { Authorization: "Bearer " + token, ...(options.headers || {}) }, cache: "no-store" };
  if (options.body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  if (options.signal) init.signal = options.signal;
  const response = await fetch(url, init);
  const text = await response.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = null; }
  if (response.status === 401) askForToken("The server did not accept that token (" + ((body && body.detail) || "401") + ").");
  return { status: response.status, ok: response.ok, headers: response.headers, body };
}

/** An API call that must succeed: the parsed body, or an Error with the problem's text. */
async function must(method, url, options) {
  const result = await api(method, url, options);
  if (!result.ok) throw Object.assign(new Error(problemText(result)), { result });
  return result;
}

/** The whole catalog (every page) and its ETag, the tag `If-Match` compares with. */
async function loadCatalog() {
  for (let attempt = 0; attempt < 3; attempt++) {
    let sheets = [], after = null, etag = null, consistent = true;
    do {
      const result = await must("GET", "/v1/sheets?limit=500" + (after ? "&after=" + encodeURIComponent(after) : ""));
      const tag = result.headers.get("ETag");
      if (etag && tag !== etag) consistent = false;
      etag = tag;
      sheets = sheets.concat(result.body.sheets);
      after = result.body.next;
    } while (after);
    if (consistent) return { sheets, etag };
  }
  throw new Error("the catalog kept changing while it was read; try again");
}

/** A definition as PUT takes it: what the server reports about it (`warnings`) left out. */
function editable(sheet) {
  const copy = { ...sheet };
  delete copy.warnings;
  return copy;
}

/** The rendered definitions of a catalog, as a catalog file (`{"sheets": [...]}`). */
const catalogFile = (sheets) => ({ sheets: sheets.map(editable) });

// ---------------------------------------------------------------------------------------------
// The confirmation dialog
// ---------------------------------------------------------------------------------------------

/** Asks to confirm; resolves to null when cancelled, else {comment}. */
function confirmAction(title, text, { withComment = false, confirmLabel = "Confirm" } = {}) {
  const dialog = $("confirm");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-ok").textContent = confirmLabel;
  $("confirm-comment-row").hidden = !withComment;
  $("confirm-comment").value = "";
  return new Promise((resolve) => {
    const done = (value) => { cleanup(); if (dialog.open) dialog.close(); resolve(value); };
    const submit = (event) => {
      event.preventDefault();
      const comment = $("confirm-comment").value.trim();
      const problem = withComment && commentProblem(comment);
      if (problem) { say(problem, true); return; }
      done({ comment });
    };
    const cancel = () => done(null);
    const cleanup = () => {
      $("confirm-form").removeEventListener("submit", submit);
      $("confirm-cancel").removeEventListener("click", cancel);
      dialog.removeEventListener("cancel", cancel);
    };
    $("confirm-form").addEventListener("submit", submit);
    $("confirm-cancel").addEventListener("click", cancel);
    dialog.addEventListener("cancel", cancel);
    dialog.showModal();
    (withComment ? $("confirm-comment") : $("confirm-ok")).focus();
  });
}

// ---------------------------------------------------------------------------------------------
// Routing: #/catalog, #/sheet/ID, #/history, #/experiments, #/experiment/ID, #/stats/ID, #/users/ID
// ---------------------------------------------------------------------------------------------

const pages = {};

function stopPage() {
  for (const stop of leavePage) { try { stop(); } catch { /* already stopped */ } }
  leavePage = [];
}

async function route() {
  if (!token) return askForToken();
  stopPage();
  const [name, ...rest] = (location.hash.replace(/^#\/?/, "") || "catalog").split("/");
  const argument = rest.length ? decodeURIComponent(rest.join("/")) : null;
  const page = pages[name] || pages.catalog;
  const section = { sheet: "catalog", experiment: "experiments" }[name] || (pages[name] ? name : "catalog");
  for (const link of document.querySelectorAll("#nav a")) {
    if (link.dataset.section === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const main = $("main");
  fill(main, el("p", { class: "muted", text: "Loading…" }));
  main.dataset.page = name;
  main.dataset.ready = "false";
  try {
    await page(main, argument);
  } catch (error) {
    fill(main, el("div", { class: "banner bad", role: "alert" }, "Could not load this page: " + error.message));
  }
  main.dataset.ready = "true";
}

window.addEventListener("hashchange", route);

async function start() {
  // The admin API answers 403 to a user token: say so at once rather than on every page.
  const check = await api("GET", "/v1/catalog/revisions?limit=1");
  if (check.status === 401) return;
  if (check.status === 403) return askForToken("That is not the admin token (403): the console needs the admin token.");
  $("token-panel").hidden = true;
  $("main").hidden = false;
  $("nav").hidden = false;
  $("forget-token").hidden = false;
  await route();
}

// ---------------------------------------------------------------------------------------------
// Catalog
// ---------------------------------------------------------------------------------------------

/** What governs a sheet, in words: schedule, audience, caps, cooldown and experiment. */
function governs(sheet) {
  const parts = [];
  if (sheet.schedule) parts.push("schedule " + (sheet.schedule.start || "…") + " → " + (sheet.schedule.end || "…"));
  const a = sheet.audience;
  if (a) {
    const bits = [];
    if (a.platforms) bits.push(a.platforms.join("/"));
    if (a.idioms) bits.push(a.idioms.join("/"));
    if (a.minAppVersion || a.maxAppVersion) bits.push("app " + (a.minAppVersion || "") + "–" + (a.maxAppVersion || ""));
    if (a.locales) bits.push("locales " + a.locales.join(", "));
    if (a.segments) bits.push("segments " + a.segments.join(", "));
    if (bits.length) parts.push("audience: " + bits.join("; "));
  }
  if (sheet.frequency) parts.push("cap " + sheet.frequency.max + " per " + sheet.frequency.periodSeconds + " s");
  if (sheet.cooldownSeconds) parts.push("cooldown " + sheet.cooldownSeconds + " s");
  return parts;
}

const platformsOf = (sheet) => (sheet.audience && sheet.audience.platforms) || ["ios", "android"];

pages.catalog = async (main) => {
  const { sheets } = await loadCatalog();
  const platform = options(el("select", { id: "catalog-platform" }), [["", "every platform"], "ios", "android"], "");
  const filter = el("input", { id: "catalog-filter", type: "search", placeholder: "id, title or screen" });
  const body = el("div");
  const draw = () => {
    const needle = filter.value.trim().toLowerCase();
    const shown = sheets.filter((s) => (!platform.value || platformsOf(s).includes(platform.value))
      && (!needle || [s.id, s.title || "", s.screen].some((t) => t.toLowerCase().includes(needle))));
    const screens = [...new Set(shown.map((s) => s.screen))].sort();
    fill(body, ...screens.map((screen) => {
      const rows = shown.filter((s) => s.screen === screen)
        .sort((a, b) => (a.tab || "").localeCompare(b.tab || "") || b.priority - a.priority || a.id.localeCompare(b.id));
      return el("section", { class: "panel", "aria-label": "Screen " + screen },
        el("h2", {}, "Screen ", el("code", { text: screen })),
        el("div", { class: "scroll" }, el("table", { class: "catalog-table" },
          el("thead", {}, el("tr", {}, ["Tab", "Sheet", "Kind", "Size / style", "Priority", "Platforms", "Governed by"]
            .map((h) => el("th", { scope: "col", text: h })))),
          el("tbody", {}, rows.map((s) => el("tr", { dataset: { sheetId: s.id } },
            el("td", { text: s.tab || "–" }),
            el("td", {}, el("a", { href: "#/sheet/" + path(s.id), text: s.id }), s.title ? el("div", { class: "muted", text: s.title }) : null),
            el("td", { text: s.kind }),
            el("td", { text: s.size + " / " + s.style }),
            el("td", { class: "num", text: s.priority }),
            el("td", { text: platformsOf(s).join(", ") }),
            el("td", {}, governs(s).map((g) => el("span", { class: "tag", text: g })),
              s.experiment ? el("a", { class: "tag " + s.experiment.status, href: "#/experiment/" + path(s.experiment.id),
                text: "experiment " + s.experiment.id + " (" + s.experiment.status + ")" }) : null,
              !governs(s).length && !s.experiment ? el("span", { class: "muted", text: "always eligible" }) : null)))))));
    }));
    if (!screens.length) fill(body, el("p", { class: "muted", text: "No sheet matches." }));
  };
  platform.addEventListener("change", draw);
  filter.addEventListener("input", draw);
  const newId = el("input", { id: "new-sheet-id", pattern: "[A-Za-z0-9._:@-]{1,128}", autocomplete: "off" });
  fill(main,
    el("h2", { text: "Catalog (" + sheets.length + " sheets)" }),
    el("div", { class: "panel" }, field("Platform", platform), field("Find", filter),
      el("form", { class: "field", id: "new-sheet-form", onsubmit: (e) => {
        e.preventDefault();
        if (newId.value.trim()) location.hash = "#/sheet/" + path(newId.value.trim());
      } }, field("New sheet id", newId), el("button", { type: "submit", text: "Create a sheet" }))),
    body);
  draw();
};

// ---------------------------------------------------------------------------------------------
// A sheet: definition, phone frames, editor (validation, impact, If-Match write, 412)
// ---------------------------------------------------------------------------------------------

/** A sketch of the sheet in the preview's phone frame: detent height, grabber, title, button. */
function phoneDrawing(sheet, platform) {
  const ios = platform === "ios";
  const screenHeight = ios ? 852 : 915, safeTop = ios ? 59 : 24;
  const large = screenHeight - safeTop - 10;
  const contentGuess = { cards: 330, input: 140 + 60 * (sheet.inputCount || 1), action: 300, informational: 420 }[sheet.kind] || 360;
  const height = sheet.size === "medium" ? Math.round(screenHeight / 2) : sheet.size === "large" ? large : Math.min(contentGuess, large);
  const drawn = el("div", { class: "sheet", "data-role": "sheet" },
    sheet.style !== "strict" ? el("div", { class: "grabber" }) : null,
    sheet.title ? el("div", { class: "sheet-title", "data-role": "title", text: sheet.title }) : null,
    el("div", { class: "sheet-body" }, el("div", { class: "sid", text: sheet.id }),
      el("div", { class: "line" }), el("div", { class: "line" }), el("div", { class: "line" })),
    sheet.primaryButton ? el("div", { class: "primary", "data-role": "primary-button", text: sheet.primaryButton.label || "" }) : null);
  drawn.style.height = height + "px"; // CSSOM, not a style attribute: allowed by the CSP
  if (sheet.cornerRadius) {
    drawn.style.borderTopLeftRadius = sheet.cornerRadius + "px";
    drawn.style.borderTopRightRadius = sheet.cornerRadius + "px";
  }
  const label = (ios ? "iPhone" : "Android phone") + ": " + sheet.id + ", " + sheet.size + " (" + height + (ios ? " pt" : " dp") + ")"
    + (sheet.title ? ", titled " + sheet.title : "");
  return el("figure", { class: "phone-box", dataset: { platform } },
    el("div", { class: "device", dataset: { platform }, role: "img", "aria-label": label },
      el("div", { class: "screen" }, el("div", { class: "app-title", text: sheet.screen }),
        el("div", { class: "cell" }), el("div", { class: "cell" }), el("div", { class: "scrim" }), drawn)),
    el("figcaption", { text: (ios ? "iOS" : "Android") + " · " + sheet.size }));
}

/** Member-by-member differences of two definitions: [{member, before, after}]. */
function memberChanges(before, after) {
  const names = [...new Set(Object.keys(before || {}).concat(Object.keys(after || {})))].filter((n) => n !== "warnings").sort();
  return names.filter((n) => JSON.stringify((before || {})[n] ?? null) !== JSON.stringify((after || {})[n] ?? null))
    .map((member) => ({ member, before: (before || {})[member] ?? null, after: (after || {})[member] ?? null }));
}

function changesTable(changes, caption) {
  if (!changes.length) return el("p", { class: "muted", text: "No member differs." });
  return el("div", { class: "scroll" }, el("table", { class: "diff-table" },
    el("caption", { text: caption }),
    el("thead", {}, el("tr", {}, ["Member", "Before", "After"].map((h) => el("th", { scope: "col", text: h })))),
    el("tbody", {}, changes.map((c) => el("tr", { dataset: { member: c.member } },
      el("th", { scope: "row", text: c.member }),
      el("td", { class: "diff-before" }, el("pre", { text: json(c.before) })),
      el("td", { class: "diff-after" }, el("pre", { text: json(c.after) })))))));
}

/** The impact answer: counts per change and examples. */
function impactView(impact) {
  const c = impact.changes || [];
  return el("div", { id: "impact", "data-changed": impact.changed, "data-decisions": impact.decisions },
    el("p", {}, el("strong", { text: impact.changed + " of " + impact.decisions + " decisions change" }),
      " (" + impact.sample.users + " stored users sampled" + (impact.sample.complete ? "" : ", stopped at the time budget") + "; sheets added: "
      + (impact.sheets.added.join(", ") || "none") + ", removed: " + (impact.sheets.removed.join(", ") || "none")
      + ", changed: " + (impact.sheets.changed.join(", ") || "none") + ")."),
    el("div", { class: "scroll" }, el("table", {},
      el("thead", {}, el("tr", {}, ["Change", "Decisions", "Examples"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, c.map((change) => el("tr", { dataset: { change: change.change } },
        el("td", { text: change.change }),
        el("td", { class: "num", text: change.decisions }),
        el("td", {}, change.examples.slice(0, 3).map((x) => el("div", { class: "mono",
          text: x.userId + " · " + x.screen + (x.tab ? "/" + x.tab : "") + " · " + x.platform + ": "
            + (x.before.sheetId || "nothing") + " " + (x.before.variant || "") + " → " + (x.after.sheetId || "nothing") + " " + (x.after.variant || "") })))))))));
}

/** The latest revision's summary (to say which revision a write made). */
async function latestRevision() {
  const result = await must("GET", "/v1/catalog/revisions?limit=1");
  return result.body.revisions[0] || null;
}

pages.sheet = async (main, id) => {
  let catalog = await loadCatalog();
  let base = catalog.sheets.find((s) => s.id === id) || null; // the definition the edit started from
  const isNew = !base;
  const template = { id, kind: "informational", size: "medium", style: "flexible", screen: "home" };
  const textarea = el("textarea", { id: "editor", spellcheck: "false", "aria-describedby": "validation" });
  textarea.value = json(base ? editable(base) : template);
  const validation = el("div", { id: "validation", "aria-live": "polite" });
  const impactBox = el("div", { id: "impact-box" });
  const conflictBox = el("div", { id: "conflict-box" });
  const commentInput = el("input", { id: "comment", maxlength: "1000", autocomplete: "off" });
  const saveButton = el("button", { type: "button", id: "save", text: "Save…" });
  const writeButton = el("button", { type: "button", id: "write", text: "Write with If-Match", hidden: true });
  const phones = el("div", { class: "phones", id: "phones" });
  const definition = el("pre", { id: "definition" });
  const drawDefinition = (sheet) => {
    definition.textContent = sheet ? json(sheet) : "(not in the catalog yet)";
    fill(phones, ...(sheet ? ["ios", "android"].map((p) => phoneDrawing(sheet, p)) : []));
  };
  drawDefinition(base);

  /** The proposed catalog: the current one with this sheet replaced by the editor's JSON. */
  function proposed(edited) {
    return catalogFile(catalog.sheets.filter((s) => s.id !== id).concat([edited]));
  }
  function parseEditor() {
    try {
      const value = JSON.parse(textarea.value);
      if (!value || typeof value !== "object" || Array.isArray(value)) return { error: "the definition must be a JSON object" };
      if (value.id !== id) return { error: "id must stay " + JSON.stringify(id) };
      return { value };
    } catch (error) { return { error: "not JSON: " + error.message }; }
  }
  function showProblems(problems) {
    validation.dataset.valid = problems.length ? "false" : "true";
    fill(validation, problems.length
      ? el("ul", { class: "problems" }, problems.map((p) => el("li", { text: p })))
      : el("p", { class: "ok", text: "Valid by the server's rules." }));
    saveButton.disabled = problems.length > 0;
  }
  /** The server's own validation: the impact route validates before it samples (one user here). */
  async function validate() {
    const parsed = parseEditor();
    if (parsed.error) return showProblems([parsed.error]), null;
    validation.dataset.valid = "pending";
    const result = await api("POST", "/v1/catalog/impact?users=1", { body: proposed(parsed.value) });
    if (result.status === 429) { setTimeout(scheduleValidation, 500); return null; }
    if (result.status === 400) {
      const index = proposed(parsed.value).sheets.length - 1;
      const prefix = "sheets[" + index + "].";
      const problems = ((result.body && result.body["invalid-params"]) || [])
        .map((p) => (p.name.startsWith(prefix) ? p.name.slice(prefix.length) : p.name) + " " + p.reason);
      showProblems(problems.length ? problems : [problemText(result)]);
      return null;
    }
    if (!result.ok) { showProblems([problemText(result)]); return null; }
    showProblems([]);
    return parsed.value;
  }
  let validationTimer = null;
  function scheduleValidation() {
    clearTimeout(validationTimer);
    writeButton.hidden = true;
    fill(impactBox);
    validationTimer = setTimeout(validate, 350);
  }
  textarea.addEventListener("input", scheduleValidation);
  leavePage.push(() => clearTimeout(validationTimer));

  let pending = null; // the validated definition waiting for "Write"
  async function showImpact() {
    const edited = await validate();
    if (!edited) return;
    saveButton.disabled = true;
    fill(impactBox, el("p", { class: "muted", text: "Comparing stored users' decisions…" }));
    const result = await api("POST", "/v1/catalog/impact", { body: proposed(edited) });
    saveButton.disabled = false;
    if (!result.ok) { fill(impactBox, el("div", { class: "banner bad", role: "alert", text: problemText(result) })); return; }
    pending = edited;
    fill(impactBox, el("h3", { text: "Impact of this change" }), impactView(result.body),
      changesTable(memberChanges(base, edited), "What this write changes in " + id));
    writeButton.hidden = false;
    writeButton.focus();
  }
  saveButton.addEventListener("click", showImpact);

  writeButton.addEventListener("click", async () => {
    const comment = commentInput.value.trim();
    const problem = commentProblem(comment);
    if (problem) return say(problem, true);
    const headers = { "If-Match": catalog.etag };
    if (comment) headers["Sheetd-Comment"] = comment;
    writeButton.disabled = true;
    const result = await api("PUT", "/v1/sheets/" + path(id), { body: pending, headers });
    writeButton.disabled = false;
    if (result.status === 412) return showConflict();
    if (!result.ok) return impactBox.append(el("div", { class: "banner bad", role: "alert", text: problemText(result) }));
    const revision = await latestRevision();
    catalog = await loadCatalog();
    base = catalog.sheets.find((s) => s.id === id) || result.body;
    drawDefinition(base);
    textarea.value = json(editable(base));
    writeButton.hidden = true;
    fill(conflictBox);
    fill(impactBox, el("div", { class: "banner good", id: "saved", role: "status", dataset: { revision: revision ? revision.revision : "" } },
      "Saved as revision " + (revision ? revision.revision : "?") + ".",
      (result.body.warnings || []).length ? " Warnings: " + result.body.warnings.map((w) => w.message || JSON.stringify(w)).join("; ") : "",
      " ", el("a", { href: "#/history", text: "See the history" })));
    commentInput.value = "";
  });

  /** 412: someone changed the catalog since it was read. Show what changed meanwhile; offer to re-apply. */
  async function showConflict() {
    const theirs = await loadCatalog();
    const now = theirs.sheets.find((s) => s.id === id) || null;
    const revision = await latestRevision();
    writeButton.hidden = true;
    const reapply = el("button", { type: "button", id: "reapply", text: "Re-apply my change on the new catalog" });
    reapply.addEventListener("click", async () => {
      catalog = theirs;
      base = now;
      drawDefinition(base);
      fill(conflictBox);
      await showImpact();
    });
    fill(conflictBox, el("div", { class: "banner warn", role: "alert", id: "conflict" },
      el("p", {}, el("strong", { text: "Not written: the catalog changed since you opened this sheet (412)." }),
        revision ? " Latest revision " + revision.revision + " by " + revision.actor + " at " + revision.createdAt
          + (revision.comment ? ": “" + revision.comment + "”" : "") + "." : ""),
      changesTable(memberChanges(base, now), "What changed in " + id + " meanwhile (your starting point → now)"),
      el("p", { text: "Your edit is kept in the editor. Re-applying compares it with the new catalog (impact again), then writes with the new ETag." }),
      el("div", { class: "actions" }, reapply)));
    reapply.focus();
  }

  fill(main,
    el("p", {}, el("a", { href: "#/catalog", text: "← Catalog" })),
    el("h2", {}, isNew ? "New sheet " : "Sheet ", el("code", { text: id })),
    el("div", { class: "grid" },
      el("section", { class: "panel", "aria-labelledby": "def-title" }, el("h3", { id: "def-title", text: "Definition" }), definition,
        el("h3", { text: "In the phone frame (iOS and Android)" }), phones,
        el("p", { class: "muted" }, "A sketch from the definition; ", el("a", { href: "/preview", text: "the live preview" }),
          " draws a user's actual decision.")),
      el("section", { class: "panel", "aria-labelledby": "edit-title" }, el("h3", { id: "edit-title", text: "Edit (JSON, checked by the server as you type)" }),
        el("label", { for: "editor", text: "Definition to write" }), textarea, validation,
        field("Comment (kept with the revision)", commentInput),
        el("div", { class: "actions" }, saveButton, writeButton),
        conflictBox, impactBox)));
  if (base && base.experiment) main.append(el("p", {}, el("a", { href: "#/experiment/" + path(base.experiment.id), text: "Experiment " + base.experiment.id })));
  main.append(el("p", {}, el("a", { href: "#/stats/" + path(id), text: "Stats of " + id })));
  validate();
};

// ---------------------------------------------------------------------------------------------
// History: revisions, a diff between any two, restore
// ---------------------------------------------------------------------------------------------

/** Differences between two catalogs (revision answers): added, removed, changed sheets by member. */
function catalogDiff(older, newer) {
  const a = new Map(older.catalog.sheets.map((s) => [s.id, s]));
  const b = new Map(newer.catalog.sheets.map((s) => [s.id, s]));
  const ids = [...new Set([...a.keys(), ...b.keys()])].sort();
  const diff = { added: [], removed: [], changed: [] };
  for (const id of ids) {
    if (!a.has(id)) diff.added.push(b.get(id));
    else if (!b.has(id)) diff.removed.push(a.get(id));
    else {
      const changes = memberChanges(a.get(id), b.get(id));
      if (changes.length) diff.changed.push({ id, changes });
    }
  }
  diff.settings = memberChanges(older.catalog.settings, newer.catalog.settings);
  return diff;
}

pages.history = async (main) => {
  const rows = el("tbody");
  const diffBox = el("div", { id: "diff" });
  const fromSelect = el("select", { id: "diff-from" });
  const toSelect = el("select", { id: "diff-to" });
  let revisions = [], next = null;
  const more = el("button", { type: "button", class: "secondary", id: "older", text: "Older revisions" });

  async function loadPage() {
    const result = await must("GET", "/v1/catalog/revisions?limit=50" + (next ? "&after=" + next : ""));
    revisions = revisions.concat(result.body.revisions);
    next = result.body.next;
    more.hidden = !next;
    fill(rows, ...revisions.map((r) => el("tr", { dataset: { revision: r.revision } },
      el("td", { class: "num", text: r.revision }),
      el("td", { text: r.createdAt }),
      el("td", { text: r.actor }),
      el("td", { class: "comment", text: r.comment || "" }),
      el("td", { text: r.restoredFrom ? "restores " + r.restoredFrom : "" }),
      el("td", { class: "num", text: r.sheetCount }),
      el("td", {}, el("button", { type: "button", class: "secondary restore", "aria-label": "Restore revision " + r.revision,
        onclick: () => restore(r), text: "Restore…" })))));
    const choices = revisions.map((r) => [String(r.revision), r.revision + " · " + r.actor + " · " + (r.comment || r.createdAt)]);
    options(fromSelect, choices, fromSelect.value || (revisions[1] ? String(revisions[1].revision) : choices[0] && choices[0][0]));
    options(toSelect, choices, toSelect.value || (choices[0] && choices[0][0]));
  }
  more.addEventListener("click", loadPage);

  async function showDiff() {
    const [older, newer] = await Promise.all([fromSelect.value, toSelect.value]
      .map((r) => must("GET", "/v1/catalog/revisions/" + encodeURIComponent(r)).then((x) => x.body)));
    const diff = catalogDiff(older, newer);
    fill(diffBox, el("h3", { text: "Revision " + older.revision + " → " + newer.revision }),
      el("p", { id: "diff-summary", dataset: { added: diff.added.length, removed: diff.removed.length, changed: diff.changed.length } },
        diff.added.length + " added, " + diff.removed.length + " removed, " + diff.changed.length + " changed"
        + (diff.settings.length ? ", settings changed" : "") + "."),
      diff.added.map((s) => el("div", { class: "diff-sheet", dataset: { sheetId: s.id, kind: "added" } },
        el("h4", { text: "Added: " + s.id }), el("pre", { class: "diff-after", text: json(s) }))),
      diff.removed.map((s) => el("div", { class: "diff-sheet", dataset: { sheetId: s.id, kind: "removed" } },
        el("h4", { text: "Removed: " + s.id }), el("pre", { class: "diff-before", text: json(s) }))),
      diff.changed.map((c) => el("div", { class: "diff-sheet", dataset: { sheetId: c.id, kind: "changed" } },
        el("h4", { text: "Changed: " + c.id }), changesTable(c.changes, c.changes.length + " members differ"))),
      diff.settings.length ? changesTable(diff.settings, "Settings") : null);
  }

  async function restore(revision) {
    const answer = await confirmAction("Restore revision " + revision.revision + "?",
      "The catalog and the settings become those of revision " + revision.revision + " (by " + revision.actor + ", "
      + revision.createdAt + "). A new revision records it; restoring the one before undoes it.",
      { withComment: true, confirmLabel: "Restore" });
    if (!answer) return;
    const { etag } = await loadCatalog();
    const headers = { "If-Match": etag };
    if (answer.comment) headers["Sheetd-Comment"] = answer.comment;
    const result = await api("POST", "/v1/catalog/revisions/" + revision.revision + "/restore", { headers });
    if (!result.ok) return say("Not restored: " + problemText(result), true);
    say("Restored revision " + revision.revision + " as revision " + result.body.revision + ".");
    revisions = []; next = null;
    await loadPage();
  }

  fill(main, el("h2", { text: "History" }),
    el("section", { class: "panel" }, el("div", { class: "scroll" }, el("table", { id: "revisions" },
      el("thead", {}, el("tr", {}, ["Revision", "When (UTC)", "Who", "Comment", "", "Sheets", ""].map((h) => el("th", { scope: "col", text: h })))),
      rows)), more),
    el("section", { class: "panel", "aria-labelledby": "diff-title" }, el("h3", { id: "diff-title", text: "Compare two revisions" }),
      field("From", fromSelect), field("To", toSelect),
      el("button", { type: "button", id: "show-diff", onclick: showDiff, text: "Show the diff" }), diffBox));
  await loadPage();
};

// ---------------------------------------------------------------------------------------------
// Experiments: status and arms, results as charts, sample ratio banner, pins, stop with a winner
// ---------------------------------------------------------------------------------------------

/** The Wilson score 95 % interval of a proportion (stays inside [0, 1], sensible at 0 and n small). */
function wilson(successes, n) {
  if (!n) return [0, 0];
  const p = successes / n, z2 = Z95 * Z95;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z95 / (1 + z2 / n)) * Math.sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

function chart(canvas, config) {
  const instance = new Chart(canvas, config);
  leavePage.push(() => instance.destroy());
  return instance;
}

/** A chart of point estimates with their 95 % intervals (floating bars) per label, values in %. */
function intervalChart(canvas, labels, points, intervals, pointLabel, yTitle) {
  return chart(canvas, {
    type: "bar",
    data: {
      labels,
      datasets: [
        { type: "line", label: pointLabel, data: points.map((x) => 100 * x), showLine: false, pointRadius: 6,
          pointStyle: "rectRot", borderColor: "#16181d", backgroundColor: "#16181d", order: 0 },
        { type: "bar", label: "95 % interval", data: intervals.map(([lo, hi]) => [100 * lo, 100 * hi]),
          backgroundColor: "rgba(10, 91, 211, .35)", borderColor: "#0a5bd3", borderWidth: 1, barPercentage: .4, order: 1 },
      ],
    },
    options: { responsive: true, maintainAspectRatio: false, animation: false,
      scales: { y: { title: { display: true, text: yTitle } } },
      plugins: { tooltip: { callbacks: { label: (c) => c.dataset.label + ": " + (Array.isArray(c.raw)
        ? c.raw.map((v) => v.toFixed(2)).join(" to ") : Number(c.raw).toFixed(2)) + " %" } } } },
  });
}

function experimentsOf(sheets) {
  return sheets.filter((s) => s.experiment).map((s) => ({ sheet: s, experiment: s.experiment }));
}

pages.experiments = async (main) => {
  const { sheets } = await loadCatalog();
  const list = experimentsOf(sheets);
  fill(main, el("h2", { text: "Experiments" }),
    list.length ? el("section", { class: "panel" }, el("div", { class: "scroll" }, el("table", { id: "experiments" },
      el("thead", {}, el("tr", {}, ["Experiment", "Sheet", "Status", "Arms", "Winner"].map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, list.map(({ sheet, experiment }) => el("tr", { dataset: { experimentId: experiment.id } },
        el("td", {}, el("a", { href: "#/experiment/" + path(experiment.id), text: experiment.id })),
        el("td", {}, el("a", { href: "#/sheet/" + path(sheet.id), text: sheet.id })),
        el("td", {}, el("span", { class: "tag " + experiment.status, text: experiment.status })),
        el("td", { text: experiment.arms.map((a) => a.id + " (" + a.weight + (a.holdout ? ", holdout" : "") + ")").join(", ") }),
        el("td", { text: experiment.winner || "–" })))))))
      : el("p", { class: "muted", text: "No sheet runs an experiment. Add an `experiment` to a sheet's definition in the catalog editor." }));
};

pages.experiment = async (main, experimentId) => {
  const catalog = await loadCatalog();
  const found = experimentsOf(catalog.sheets).find((x) => x.experiment.id === experimentId);
  if (!found) throw new Error("no sheet in the catalog runs the experiment " + experimentId);
  const { sheet, experiment } = found;
  const results = (await must("GET", "/v1/experiments/" + path(experimentId) + "/results")).body;
  const arms = results.arms;
  const intervals = arms.map((a) => wilson(a.convertedUsers, a.exposedUsers));
  const comparisons = results.comparisons.filter((c) => c.difference !== null);
  const ratesCanvas = el("canvas", { id: "rates-chart", role: "img", "aria-label": "Conversion rate per arm with its 95 % interval; the table below has the numbers" });
  const liftCanvas = el("canvas", { id: "lift-chart", role: "img", "aria-label": "Each arm's difference from the baseline with its 95 % interval; the table below has the numbers" });

  const pinUser = el("input", { id: "pin-user", autocomplete: "off" });
  const pinArm = options(el("select", { id: "pin-arm" }), experiment.arms.map((a) => a.id), experiment.arms[0].id);
  const pinResult = el("p", { id: "pin-result", "aria-live": "polite" });
  async function pin(remove) {
    const user = pinUser.value.trim();
    if (!user) return say("Enter a user id to pin.", true);
    const url = "/v1/experiments/" + path(experimentId) + "/pins/" + path(user);
    const result = remove ? await api("DELETE", url) : await api("PUT", url, { body: { arm: pinArm.value } });
    if (!result.ok) return say(problemText(result), true);
    pinResult.textContent = result.body.arm ? result.body.userId + " is pinned to " + result.body.arm + "." : result.body.userId + " is not pinned.";
  }

  const winner = options(el("select", { id: "winner" }), experiment.arms.map((a) => a.id), experiment.winner || experiment.arms[0].id);
  async function stop() {
    const answer = await confirmAction("Stop " + experimentId + " with the winner " + winner.value + "?",
      "Every user then gets the arm " + winner.value + " of " + sheet.id + "; results stay readable.",
      { withComment: true, confirmLabel: "Stop the experiment" });
    if (!answer) return;
    const fresh = await loadCatalog();
    const current = fresh.sheets.find((s) => s.id === sheet.id);
    const body = editable(current);
    body.experiment = { ...current.experiment, status: "stopped", winner: winner.value };
    const headers = { "If-Match": fresh.etag };
    if (answer.comment) headers["Sheetd-Comment"] = answer.comment;
    const result = await api("PUT", "/v1/sheets/" + path(sheet.id), { body, headers });
    if (!result.ok) return say("Not stopped: " + problemText(result), true);
    say("Stopped " + experimentId + "; the winner is " + winner.value + ".");
    await route();
  }

  fill(main,
    el("p", {}, el("a", { href: "#/experiments", text: "← Experiments" })),
    el("h2", {}, "Experiment ", el("code", { text: experimentId }), " ", el("span", { class: "tag " + results.status, id: "experiment-status", text: results.status })),
    results.sampleRatio && results.sampleRatio.mismatch ? el("div", { class: "banner bad", role: "alert", id: "srm-banner" },
      el("strong", { text: "Sample ratio mismatch. " }),
      "The exposed users per arm do not match the weights (chi-square " + results.sampleRatio.chiSquare.toFixed(2)
        + ", p = " + results.sampleRatio.pValue.toExponential(2) + "): look for a bug in the exposure before reading the results.") : null,
    el("p", {}, "On sheet ", el("a", { href: "#/sheet/" + path(sheet.id), text: sheet.id }), "; conversion window " + experiment.conversionWindowSeconds + " s"
      + (results.winner ? "; winner " + results.winner : "") + "; " + results.unattributed + " conversions unattributed."),
    el("div", { class: "grid" },
      el("section", { class: "panel", "aria-labelledby": "rates-title" }, el("h3", { id: "rates-title", text: "Conversion rate per arm" }),
        el("div", { class: "chart-box" }, ratesCanvas)),
      el("section", { class: "panel", "aria-labelledby": "lift-title" }, el("h3", { id: "lift-title", text: "Lift over " + (comparisons[0] ? comparisons[0].baseline : "the baseline") }),
        comparisons.length ? el("div", { class: "chart-box" }, liftCanvas) : el("p", { class: "muted", text: "No comparison yet: an arm has no exposed user." }))),
    el("section", { class: "panel" }, el("div", { class: "scroll" }, el("table", { id: "arms" },
      el("caption", { text: "Rate intervals: Wilson score, 95 %. Lift: the difference of conversion rates from the baseline with the server's 95 % interval (unpooled) and the two-proportion z-test's p-value." }),
      el("thead", {}, el("tr", {}, ["Arm", "Weight", "Exposed", "Impressions", "Converted", "Conversions", "Rate", "95 % interval", "Lift", "Lift 95 % interval", "p", "Payload"]
        .map((h) => el("th", { scope: "col", text: h })))),
      el("tbody", {}, arms.map((a, i) => {
        const c = results.comparisons.find((x) => x.arm === a.id);
        const definition = experiment.arms.find((x) => x.id === a.id) || {};
        return el("tr", { dataset: { arm: a.id, rate: a.conversionRate, low: intervals[i][0], high: intervals[i][1],
          difference: c && c.difference !== null ? c.difference : "", liftLow: c && c.ci95 ? c.ci95[0] : "", liftHigh: c && c.ci95 ? c.ci95[1] : "" } },
          el("th", { scope: "row", text: a.id + (a.holdout ? " (holdout)" : "") }),
          el("td", { class: "num", text: a.weight }), el("td", { class: "num", text: a.exposedUsers }), el("td", { class: "num", text: a.impressions }),
          el("td", { class: "num", text: a.convertedUsers }), el("td", { class: "num", text: a.conversions }),
          el("td", { class: "num rate", text: percent(a.conversionRate) }),
          el("td", { class: "num interval", text: percent(intervals[i][0]) + " – " + percent(intervals[i][1]) }),
          el("td", { class: "num", text: c && c.difference !== null ? (c.difference >= 0 ? "+" : "") + percent(c.difference) : "baseline" }),
          el("td", { class: "num", text: c && c.ci95 ? percent(c.ci95[0]) + " – " + percent(c.ci95[1]) : "–" }),
          el("td", { class: "num", text: c && c.pValue !== null ? c.pValue.toPrecision(3) : "–" }),
          el("td", {}, el("pre", { class: "payload", text: json(definition.payload ?? null) })));
      }))))),
    el("div", { class: "grid" },
      el("section", { class: "panel", "aria-labelledby": "pins-title" }, el("h3", { id: "pins-title", text: "Pin a QA user to an arm" }),
        field("User id", pinUser), field("Arm", pinArm),
        el("div", { class: "actions" }, el("button", { type: "button", id: "pin", onclick: () => pin(false), text: "Pin" }),
          el("button", { type: "button", id: "unpin", class: "secondary", onclick: () => pin(true), text: "Remove the pin" })), pinResult),
      el("section", { class: "panel", "aria-labelledby": "stop-title" }, el("h3", { id: "stop-title", text: "Stop with a winner" }),
        experiment.status === "stopped" ? el("p", { text: "Stopped; the winner is " + (experiment.winner || "none") + "." }) : null,
        field("Winner", winner),
        el("div", { class: "actions" }, el("button", { type: "button", id: "stop", class: "danger", onclick: stop,
          disabled: experiment.status === "stopped", text: "Stop the experiment…" })))));

  intervalChart(ratesCanvas, arms.map((a) => a.id), arms.map((a) => a.conversionRate), intervals, "Conversion rate", "conversion rate (%)");
  if (comparisons.length) {
    intervalChart(liftCanvas, comparisons.map((c) => c.arm + " − " + c.baseline), comparisons.map((c) => c.difference),
      comparisons.map((c) => c.ci95), "Difference", "difference (percentage points)");
  }
};

// ---------------------------------------------------------------------------------------------
// Stats: a sheet's counters over time (hour or day buckets) with a date range
// ---------------------------------------------------------------------------------------------

const isoDay = (date) => date.toISOString().slice(0, 10);

pages.stats = async (main, sheetId) => {
  const { sheets } = await loadCatalog();
  const ids = sheets.map((s) => s.id).sort();
  const chosen = sheetId && ids.includes(sheetId) ? sheetId : ids[0];
  const sheetSelect = options(el("select", { id: "stats-sheet" }), ids, chosen);
  const today = new Date();
  const since = el("input", { id: "stats-since", type: "date", value: isoDay(new Date(today.getTime() - 6 * 86400000)) });
  const until = el("input", { id: "stats-until", type: "date", value: isoDay(today) });
  const bucket = options(el("select", { id: "stats-bucket" }), [["day", "day"], ["hour", "hour"]], "day");
  const out = el("div", { id: "stats-out" });
  let charts = [];

  async function draw() {
    for (const c of charts) c.destroy();
    charts = [];
    if (!since.value || !until.value) return say("Choose both dates.", true);
    // The range is whole UTC days: from the first day's midnight to the midnight after the last day.
    const from = since.value + "T00:00:00Z";
    const to = new Date(Date.parse(until.value + "T00:00:00Z") + 86400000).toISOString().replace(".000Z", "Z");
    const query = "since=" + encodeURIComponent(from) + "&until=" + encodeURIComponent(to) + "&bucket=" + bucket.value;
    const result = await api("GET", "/v1/sheets/" + path(sheetSelect.value) + "/stats/series?" + query);
    if (!result.ok) { fill(out, el("div", { class: "banner bad", role: "alert", text: problemText(result) })); return; }
    const series = result.body;
    const labels = series.buckets.map((b) => bucket.value === "day" ? b.start.slice(0, 10) : b.start.slice(5, 16).replace("T", " "));
    const sum = (f) => series.buckets.reduce((n, b) => n + f(b), 0);
    const totals = { impressions: sum((b) => b.impressions), uniqueUsers: sum((b) => b.uniqueUsers),
      latchReleases: sum((b) => b.latchReleases), openedFrom: sum((b) => b.openedFrom), dismissals: {} };
    for (const m of DISMISS_METHODS) totals.dismissals[m] = sum((b) => b.dismissals[m] || 0);
    const canvases = ["stats-impressions", "stats-dismissals", "stats-latches"].map((id, i) =>
      el("canvas", { id, role: "img", "aria-label": ["Impressions and unique users", "Dismissals by method", "Latch releases and presentations opened from the sheet"][i]
        + " per " + bucket.value + "; the totals are in the table" }));
    fill(out,
      el("p", { class: "muted", text: "Counted from " + series.countedFrom + " to " + series.countedUntil + " (UTC), " + series.buckets.length + " " + bucket.value + " buckets. "
        + "Unique users: users whose latest impression falls in the bucket, so they add up to the distinct users of the range." }),
      el("div", { class: "grid" },
        el("section", { class: "panel" }, el("h3", { text: "Impressions and unique users" }), el("div", { class: "chart-box" }, canvases[0])),
        el("section", { class: "panel" }, el("h3", { text: "Dismissals by method" }), el("div", { class: "chart-box" }, canvases[1])),
        el("section", { class: "panel" }, el("h3", { text: "Latch releases and presentations opened" }), el("div", { class: "chart-box" }, canvases[2])),
        el("section", { class: "panel" }, el("h3", { text: "Totals over the range" }), el("table", { id: "stats-totals", dataset: { totals: JSON.stringify(totals) } },
          el("tbody", {}, [["Impressions", totals.impressions], ["Unique users", totals.uniqueUsers],
            ...DISMISS_METHODS.map((m) => ["Dismissed by " + m, totals.dismissals[m]]), ["Latch releases", totals.latchReleases], ["Opened from it", totals.openedFrom]]
            .map(([k, v]) => el("tr", {}, el("th", { scope: "row", text: k }), el("td", { class: "num", text: v }))))))));
    const common = { responsive: true, maintainAspectRatio: false, animation: false, interaction: { mode: "index", intersect: false } };
    charts.push(new Chart(canvases[0], { type: "line", data: { labels, datasets: [
      { label: "impressions", data: series.buckets.map((b) => b.impressions), borderColor: "#0a5bd3", backgroundColor: "#0a5bd3", tension: .2 },
      { label: "unique users", data: series.buckets.map((b) => b.uniqueUsers), borderColor: "#1b6e34", backgroundColor: "#1b6e34", tension: .2 }] },
      options: { ...common, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } } }));
    const colours = ["#0a5bd3", "#8a4b00", "#1b6e34", "#a4161a", "#6750a4", "#4a5160"];
    charts.push(new Chart(canvases[1], { type: "bar", data: { labels, datasets: DISMISS_METHODS.map((m, i) => (
      { label: m, data: series.buckets.map((b) => b.dismissals[m] || 0), backgroundColor: colours[i] })) },
      options: { ...common, scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } } }));
    charts.push(new Chart(canvases[2], { type: "bar", data: { labels, datasets: [
      { label: "latch releases", data: series.buckets.map((b) => b.latchReleases), backgroundColor: "#6750a4" },
      { label: "opened from it", data: series.buckets.map((b) => b.openedFrom), backgroundColor: "#8a4b00" }] },
      options: { ...common, scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } } }));
  }
  leavePage.push(() => { for (const c of charts) c.destroy(); });
  for (const control of [sheetSelect, since, until, bucket]) control.addEventListener("change", () => {
    if (control === sheetSelect) history.replaceState(null, "", "#/stats/" + path(sheetSelect.value));
    main.dataset.ready = "false";
    draw().finally(() => { main.dataset.ready = "true"; });
  });
  fill(main, el("h2", { text: "Stats" }),
    el("div", { class: "panel" }, field("Sheet", sheetSelect), field("From (UTC day)", since), field("To (UTC day, included)", until), field("Bucket", bucket)),
    out);
  await draw();
};

// ---------------------------------------------------------------------------------------------
// Users: stored state, the live decision with its trace, experiments and pins, erase
// ---------------------------------------------------------------------------------------------

/** Calls onEvent({type, data, id}) for each event of a text/event-stream body. */
async function readEvents(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "", type = "", data = [], id = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + (buffer.startsWith("\r\n", newline) ? 2 : 1));
      if (line === "") {
        if (data.length) onEvent({ type: type || "message", data: data.join("\n"), id });
        type = ""; data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      let text = colon < 0 ? "" : line.slice(colon + 1);
      if (text.startsWith(" ")) text = text.slice(1);
      if (name === "event") type = text;
      else if (name === "data") data.push(text);
      else if (name === "id") id = text;
    }
  }
}

/** Follows a decision over its Server-Sent Events stream (fetch: EventSource cannot send the token). */
function followDecision(url, onDecision, onState) {
  const controller = new AbortController();
  let stopped = false;
  (async () => {
    while (!stopped) {
      try {
        const response = await fetch(url, { headers: { Authorization: "Bearer " + token, Accept: "text/event-stream" },
          cache: "no-store", signal: controller.signal });
        if (!response.ok || !response.body) {
          onState("not live (" + response.status + ")");
          const once = await api("GET", url.replace("/decision/stream?", "/decision?"));
          if (once.ok) onDecision(once.body);
          return;
        }
        onState("live (stream)");
        await readEvents(response.body, (event) => { if (event.type === "decision") onDecision(JSON.parse(event.data)); });
      } catch (error) {
        if (stopped) return;
      }
      if (!stopped) { onState("reconnecting"); await new Promise((resolve) => setTimeout(resolve, 2000)); }
    }
  })();
  return () => { stopped = true; controller.abort(); };
}

pages.users = async (main, userId) => {
  const { sheets } = await loadCatalog();
  const screens = [...new Set(sheets.map((s) => s.screen))].sort();
  const userInput = el("input", { id: "user-id", autocomplete: "off", value: userId || "" });
  const screen = options(el("select", { id: "user-screen" }), screens, screens.includes("home") ? "home" : screens[0]);
  const tab = el("select", { id: "user-tab" });
  const platform = options(el("select", { id: "user-platform" }), ["ios", "android"], "ios");
  const fillTabs = () => options(tab, [["", "(none)"], ...[...new Set(sheets.filter((s) => s.screen === screen.value && s.tab).map((s) => s.tab))].sort()], tab.value);
  fillTabs();
  const out = el("div", { id: "user-out" });
  fill(main, el("h2", { text: "Users" }),
    el("form", { class: "panel", id: "user-form", onsubmit: (e) => {
      e.preventDefault();
      const id = userInput.value.trim();
      if (!id) return;
      if (location.hash !== "#/users/" + path(id)) location.hash = "#/users/" + path(id);
      else route();
    } }, field("User id", userInput), el("button", { type: "submit", id: "user-lookup", text: "Look up" })),
    out);
  if (!userId) { userInput.focus(); return; }

  const stateResult = await api("GET", "/v1/users/" + path(userId) + "/state");
  if (!stateResult.ok) { fill(out, el("div", { class: "banner bad", role: "alert", text: problemText(stateResult) })); return; }
  const state = stateResult.body;
  const liveText = el("span", { id: "live", class: "tag", text: "connecting" });
  const decisionBox = el("div", { id: "decision" });
  let stopFollowing = null;
  const follow = () => {
    if (stopFollowing) stopFollowing();
    const q = new URLSearchParams({ screen: screen.value, platform: platform.value });
    if (tab.value) q.set("tab", tab.value);
    fill(decisionBox, el("p", { class: "muted", text: "Waiting for the decision…" }));
    stopFollowing = followDecision("/v1/users/" + path(userId) + "/decision/stream?" + q.toString(), showDecision, (s) => { liveText.textContent = s; });
  };
  leavePage.push(() => stopFollowing && stopFollowing());
  function showDecision(d) {
    const experiment = d.sheet && d.sheet.experiment;
    decisionBox.dataset.sheetId = d.sheetId || (d.sheet && d.sheet.id) || "";
    fill(decisionBox,
      el("p", {}, el("strong", { text: d.present ? "Presents " + ((d.sheet && d.sheet.id) || "") : "Presents nothing" }), " (reason: " + d.reason + ")"),
      experiment ? el("p", { id: "decision-experiment" }, "Experiment ", el("a", { href: "#/experiment/" + path(experiment.id), text: experiment.id }),
        ": arm " + experiment.arm + ", payload ", el("code", { text: JSON.stringify(experiment.payload) })) : null,
      (d.held || []).length ? el("p", { text: "Held: " + d.held.map((h) => h.sheetId + " (" + h.reason + ")").join(", ") }) : null,
      (d.yielded || []).length ? el("p", { text: "Yielded: " + d.yielded.join(", ") }) : null,
      el("h3", { text: "Trace" }), el("ol", { id: "trace" }, (d.trace || []).map((t) => el("li", { text: t }))),
      el("details", {}, el("summary", { text: "The decision as received" }), el("pre", { text: json(d) })));
  }
  for (const control of [screen, tab, platform]) control.addEventListener("change", () => { if (control === screen) fillTabs(); follow(); });

  const experiments = experimentsOf(sheets).map((x) => x.experiment);
  const pinExperiment = options(el("select", { id: "user-pin-experiment" }), experiments.map((e) => e.id), experiments[0] && experiments[0].id);
  const pinArm = el("select", { id: "user-pin-arm" });
  const fillArms = () => {
    const e = experiments.find((x) => x.id === pinExperiment.value);
    options(pinArm, e ? e.arms.map((a) => a.id) : [], pinArm.value);
  };
  fillArms();
  pinExperiment.addEventListener("change", fillArms);
  async function pin(remove) {
    const url = "/v1/experiments/" + path(pinExperiment.value) + "/pins/" + path(userId);
    const result = remove ? await api("DELETE", url) : await api("PUT", url, { body: { arm: pinArm.value } });
    if (!result.ok) return say(problemText(result), true);
    say(result.body.arm ? userId + " is pinned to " + result.body.arm + " of " + result.body.experimentId + "." : userId + " is not pinned in " + result.body.experimentId + ".");
  }
  async function erase() {
    const answer = await confirmAction("Erase " + userId + "?", "Everything stored about " + userId
      + " (counts, latches, impressions, segments, exposures, event ids) is deleted. Counted statistics stay. This cannot be undone.",
      { confirmLabel: "Erase" });
    if (!answer) return;
    const result = await api("DELETE", "/v1/users/" + path(userId));
    if (!result.ok) return say("Not erased: " + problemText(result), true);
    say(userId + " is erased.");
    await route();
  }

  fill(out, el("div", { class: "grid" },
    el("section", { class: "panel", "aria-labelledby": "state-title" }, el("h3", { id: "state-title", text: "Stored state" }),
      el("p", { text: state.containers.length + " containers, " + state.latches.length + " latches, " + state.stack.length + " sheets open, segments: "
        + (state.segments.join(", ") || "none") }),
      el("pre", { id: "user-state", text: json(state) })),
    el("section", { class: "panel", "aria-labelledby": "decision-title" }, el("h3", { id: "decision-title" }, "Decision ", liveText),
      field("Screen", screen), field("Tab", tab), field("Platform", platform), decisionBox)),
    el("div", { class: "grid" },
      el("section", { class: "panel", "aria-labelledby": "user-pins-title" }, el("h3", { id: "user-pins-title", text: "Experiments and pins" }),
        experiments.length ? [field("Experiment", pinExperiment), field("Arm", pinArm),
          el("div", { class: "actions" }, el("button", { type: "button", id: "user-pin", onclick: () => pin(false), text: "Pin" }),
            el("button", { type: "button", class: "secondary", id: "user-unpin", onclick: () => pin(true), text: "Remove the pin" }))]
          : el("p", { class: "muted", text: "No experiment in the catalog." })),
      el("section", { class: "panel", "aria-labelledby": "erase-title" }, el("h3", { id: "erase-title", text: "Erase" }),
        el("p", { text: "Deletes everything stored about the user (a data subject's request)." }),
        el("button", { type: "button", class: "danger", id: "erase", onclick: erase, text: "Erase " + userId + "…" }))));
  follow();
};

// ---------------------------------------------------------------------------------------------

if (token) start(); else askForToken();
