// The page of `pndb serve`: draws the position view the server's JSON API gives
// (pndb.describe: /api/position), plays moves, steps through the line, and plays the
// source's strategy (/api/reply). No state lives on the server: the line is in the URL.
"use strict";

const state = {
  line: [],     // the moves of the line played, by name
  at: 0,        // how many of them the board shows (back and forward move it)
  view: null,   // the PositionView shown
  replyDue: false,  // the source answers once the position is shown (after a move of the user's)
  status: "",   // the last status shown (JSON text)
};
const POLL_MS = 2000;  // a database being solved is read again this often
const $ = (id) => document.getElementById(id);

async function getJSON(path) {
  const response = await fetch(path, { cache: "no-store" });
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

const movesText = (n) => state.line.slice(0, n).join(" ");

async function show() {
  const moves = movesText(state.at);
  let view;
  try {
    view = await getJSON("api/position?moves=" + encodeURIComponent(moves));
  } catch (e) {
    return fail(e);
  }
  if (moves !== movesText(state.at)) return;  // another move came first: its own show() draws
  state.view = view;
  $("error").textContent = "";
  draw(view);
  history.replaceState(null, "", "?moves=" + encodeURIComponent(view.moves));
  document.body.dataset.shown = view.moves;  // (what a test waits for)
  reply(view);
}

function fail(error) {
  $("error").textContent = error.message;
}

// ------------------------------------------------------------------ values

const SIDE_NAME = { first: "first player (X)", second: "second player (O)" };

// A value (by name, the first player's view) as the player `side` sees it: the class and
// the short label of a move's badge.
function outlook(value, side) {
  if (value === "unknown") return ["unknown", "?"];
  if (value === "draw") return ["draw", "draw"];
  const [who, what] = value.split(/-(.*)/);  // "first", "wins" | "wont-win"
  const mine = who === side;
  if (what === "wins") return mine ? ["win", "win"] : ["loss", "loss"];
  return mine ? ["atmost", "\u2264draw"] : ["atleast", "\u2265draw"];  // "<who> wont-win"
}

// ------------------------------------------------------------------ the board

const AREA_COLOURS = [
  "#f3a5a5", "#9fcdf0", "#b5e0a0", "#f5cf98", "#cdb3f0", "#eee58f",
  "#9fe3d3", "#f2b3da", "#c0c4f2", "#d3e39f", "#e9bf9f", "#a9d3d6",
];

function boardKind(view) {
  if (view.gravity) return "gravity";
  return view.game.startsWith("go:") ? "go" : "grid";
}

function draw(view) {
  $("title").textContent = view.title;
  document.title = `pndb: ${view.title}`;
  drawBoard(view);
  drawOffBoard(view);
  drawSide(view);
  $("start").disabled = $("back").disabled = state.at === 0;
  $("forward").disabled = $("end").disabled = state.at === state.line.length;
}

function drawBoard(view) {
  const board = $("board");
  board.className = boardKind(view);
  board.style.setProperty("--columns", view.width);
  board.style.setProperty("--rows", view.height);
  const cells = new Map(view.cells.map((c) => [c.cell, c]));
  const options = new Map(view.options.map((o) => [o.cell, o]));
  const byName = new Map(view.options.map((o) => [o.move, o]));
  const area = new Map();
  view.areas.forEach((cellsOfArea, i) => cellsOfArea.forEach((c) => area.set(c, i)));
  const won = new Set(view.wins.flat());
  const nodes = [];
  for (let index = 0; index < view.width * view.height; index++) {
    const cell = cells.get(index);
    const node = document.createElement(cell ? "button" : "div");
    nodes.push(node);
    if (!cell) {
      node.className = "cell off";
      continue;
    }
    node.className = "cell";
    node.dataset.cell = index;
    node.dataset.name = cell.name;
    if (view.gravity) node.dataset.column = cell.col;
    if (index % view.width === 0) node.classList.add("left");
    if (index % view.width === view.width - 1) node.classList.add("right");
    if (index < view.width) node.classList.add("top");
    if (index >= view.width * (view.height - 1)) node.classList.add("bottom");
    if (area.has(index)) {
      node.style.setProperty("--area", AREA_COLOURS[area.get(index) % AREA_COLOURS.length]);
      node.classList.add("area");
    }
    if (won.has(index)) node.classList.add("won");
    // the cell's name, small in its corner (under gravity the column's, on the top row only)
    if (!cell.owner && (!view.gravity || cell.row === 0)) {
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = cell.name;
      node.append(name);
    }
    if (cell.owner) {
      node.dataset.owner = cell.owner;
      const stone = document.createElement("span");
      stone.className = `stone ${cell.owner}`;
      node.append(stone);
    }
    // the move this cell plays: its own, or under gravity its column's
    const option = options.get(index) || (view.gravity ? byName.get(cell.name) : undefined);
    if (option) {
      node.classList.add("legal");
      node.title = `${option.move}: ${option.value}`;
      node.addEventListener("click", () => play(option.move));
      if (view.gravity) {  // the whole column lights up: a click anywhere in it plays there
        node.addEventListener("mouseenter", () => hoverColumn(cell.col));
        node.addEventListener("mouseleave", () => hoverColumn(null));
      }
    } else {
      node.disabled = true;
    }
    const own = options.get(index);
    if (own) {
      node.dataset.value = own.value;
      node.append(badge(own.value, view.to_move));
    }
  }
  board.replaceChildren(...nodes);
}

function hoverColumn(col) {
  for (const node of $("board").children) {
    node.classList.toggle("hover", col !== null && node.dataset.column === String(col));
  }
}

function badge(value, side) {
  const [kind, label] = outlook(value, side);
  const span = document.createElement("span");
  span.className = `value ${kind}`;
  span.textContent = label;
  span.title = value;
  return span;
}

// Legal moves that take no cell (Go's pass).
function drawOffBoard(view) {
  const onBoard = new Set(view.cells.map((c) => c.cell));
  const buttons = view.options
    .filter((o) => !onBoard.has(o.cell))
    .map((o) => {
      const button = document.createElement("button");
      button.className = "legal";
      button.dataset.name = o.move;
      button.dataset.value = o.value;
      button.append(o.move + " ", badge(o.value, view.to_move));
      button.addEventListener("click", () => play(o.move));
      return button;
    });
  $("off-board").replaceChildren(...buttons);
}

function drawSide(view) {
  $("turn").textContent = view.outcome
    ? `game over: ${view.outcome_text}`
    : `to move: ${SIDE_NAME[view.to_move]}`;
  $("value").textContent = view.value;
  $("value-text").textContent = view.source === "game" ? "(the rules alone)" : `(as the ${view.source} knows)`;
  $("strategy").textContent = view.strategy_move ? `the ${view.source}'s move: ${view.strategy_move}` : "";
  $("moves").value = view.moves;
  const items = view.options.map((o) => {
    const li = document.createElement("li");
    li.dataset.move = o.move;
    li.dataset.value = o.value;
    const button = document.createElement("button");
    button.textContent = o.move;
    button.addEventListener("click", () => play(o.move));
    li.append(button, " ", badge(o.value, view.to_move), ` ${o.value}`);
    if (o.move === view.strategy_move) li.classList.add("strategy");
    return li;
  });
  $("options").replaceChildren(...items);
}

// ------------------------------------------------------------------ moving

function play(move) {
  state.line = state.line.slice(0, state.at).concat([move]);
  state.at = state.line.length;
  state.replyDue = true;
  show();
}

function step(to) {
  state.at = Math.max(0, Math.min(state.line.length, to));
  state.replyDue = false;  // stepping through a line does not make the source move
  show();
}

// Play the source's strategy move when it is its side's turn.
async function reply(view) {
  const side = $("opponent").value;
  if (!state.replyDue || !side || view.to_move !== side) return;
  state.replyDue = false;
  const line = movesText(state.at);
  let answer;
  try {
    answer = await getJSON("api/reply?moves=" + encodeURIComponent(line));
  } catch (e) {
    return fail(e);
  }
  if (movesText(state.at) === line && answer.move !== null) play(answer.move);  // (nothing moved meanwhile)
}

async function copyMoves() {
  const text = $("moves").value;
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {  // no clipboard API (a page not served from localhost): select and copy
    $("moves").select();
    document.execCommand("copy");
  }
  $("copy").textContent = "copied";
  setTimeout(() => ($("copy").textContent = "copy"), 1500);
}

// ------------------------------------------------------------------ the source's status

const STATUS_SHOWN = {
  result: "result",
  root_pn_first_wins: "root pn, first wins?",
  root_dn_first_wins: "root dn, first wins?",
  root_pn_first_avoids_loss: "root pn, first avoids loss?",
  root_dn_first_avoids_loss: "root dn, first avoids loss?",
  nodes: "nodes",
  expansions: "expansions",
  inner_nodes: "inner nodes",
  checkpoints: "checkpoints",
  seconds: "seconds",
  db_bytes: "database bytes",
  records: "records",
  partial: "partial",
  book_bytes: "book bytes",
};

async function showStatus() {
  let status;
  try {
    status = await getJSON("api/status");
  } catch (e) {
    return fail(e);
  }
  if (status === null) return false;
  const text = JSON.stringify(status);
  if (text !== state.status) {
    const changed = state.status !== "";
    state.status = text;
    $("status-panel").hidden = false;
    const rows = Object.entries(STATUS_SHOWN)
      .filter(([key]) => key in status)
      .map(([key, label]) => {
        const tr = document.createElement("tr");
        tr.dataset.key = key;
        const value = status[key] === null ? "\u221e" : String(status[key]);
        tr.innerHTML = "<th></th><td></td>";
        tr.cells[0].textContent = label;
        tr.cells[1].textContent = value;
        return tr;
      });
    $("status").replaceChildren(...rows);
    if ("series_points" in status) showSeries();
    if (changed) show();  // what the database knows of the position may have changed too
  }
  return true;
}

// ------------------------------------------------------------------ the solve over time

// The charts of a database's time series (/api/series; `pndb plot` draws the same): each a list
// of its lines, [label, colour, dashed, the point's value], and whether its scale is log.
const CHARTS = [
  ["root numbers", true, [
    ["pn: first wins?", "#c0392b", false, (p) => p.pn_first_wins],
    ["dn: first wins?", "#c0392b", true, (p) => p.dn_first_wins],
    ["pn: first avoids loss?", "#1f4fb3", false, (p) => p.pn_first_avoids_loss],
    ["dn: first avoids loss?", "#1f4fb3", true, (p) => p.dn_first_avoids_loss],
  ]],
  ["stored nodes", false, [["nodes", "#1a7f37", false, (p) => p.nodes]]],
  ["database MB", false, [["MB", "#8e44ad", false, (p) => p.db_bytes / 1e6]]],
  ["expansions / s", false, [["rate", "#5b6b86", false, (p) => p.rate]]],
];
const SVG_NS = "http://www.w3.org/2000/svg";
const compact = new Intl.NumberFormat("en", { notation: "compact", maximumFractionDigits: 1 });

function svg(name, attributes, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// One chart of `points` over their seconds, as an SVG element: a polyline per line, broken where
// a value cannot be shown (null: infinity; 0 on a log scale: the question is answered).
function chart(points, [title, log, lines]) {
  const [width, height, left, right, top, bottom] = [440, 120, 52, 10, 20, 20];
  const shown = (v) => v !== null && v !== undefined && Number.isFinite(v) && (!log || v > 0);
  const scaled = (v) => (log ? Math.log10(v) : v);
  const values = lines.flatMap(([, , , of]) => points.map(of).filter(shown).map(scaled));
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "chart" });
  root.dataset.title = title;
  root.dataset.points = points.length;
  if (points.length) root.dataset.last = JSON.stringify(lines.map(([, , , of]) => of(points[points.length - 1])));
  root.append(svg("text", { x: left, y: 13, class: "title" }, title + (log ? " (log)" : "")));
  if (!values.length) {
    root.append(svg("text", { x: left, y: height / 2, class: "axis" }, "nothing to show yet"));
    return root;
  }
  const high = Math.max(...values);
  const y0 = log ? Math.min(...values) : Math.min(0, ...values);  // a linear scale from 0
  const span = high - y0 || 1;
  const t0 = points[0].seconds;
  const tspan = points[points.length - 1].seconds - t0 || 1;
  const x = (p) => left + ((p.seconds - t0) / tspan) * (width - left - right);
  const y = (v) => top + (1 - (scaled(v) - y0) / span) * (height - top - bottom);
  root.append(svg("rect", { x: left, y: top, width: width - left - right, height: height - top - bottom, class: "frame" }));
  for (const [label, colour, dashed, of] of lines) {
    let run = [];
    const runs = [run];
    for (const p of points) {
      const v = of(p);
      if (shown(v)) run.push(`${x(p).toFixed(1)},${y(v).toFixed(1)}`);
      else if (run.length) runs.push((run = []));
    }
    for (const r of runs.filter((r) => r.length)) {
      const line = svg("polyline", { points: r.join(" "), stroke: colour, class: "line" });
      if (dashed) line.setAttribute("stroke-dasharray", "4 3");
      line.append(svg("title", {}, label));
      root.append(line);
    }
  }
  const number = (v) => compact.format(log ? 10 ** v : v);
  root.append(svg("text", { x: left - 4, y: top + 8, class: "axis end" }, number(high)));
  root.append(svg("text", { x: left - 4, y: height - bottom, class: "axis end" }, number(y0)));
  root.append(svg("text", { x: left, y: height - 4, class: "axis" }, duration(t0)));
  root.append(svg("text", { x: width - right, y: height - 4, class: "axis end" },
    `${duration(points[points.length - 1].seconds)} of solving`));
  return root;
}

function duration(seconds) {
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 180) return `${seconds.toFixed(0)} s`;
  if (seconds < 3 * 3600) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

async function showSeries() {
  let series;
  try {
    series = await getJSON("api/series");
  } catch (e) {
    return fail(e);
  }
  if (series === null) return;
  $("series-panel").hidden = false;
  $("charts").replaceChildren(...CHARTS.map((c) => chart(series.points, c)));
}

// ------------------------------------------------------------------ start

async function start() {
  const params = new URLSearchParams(location.search);
  try {
    const line = await getJSON("api/line?moves=" + encodeURIComponent(params.get("moves") || ""));
    state.line = line.moves;
  } catch (e) {
    fail(e);
  }
  state.at = state.line.length;
  $("start").addEventListener("click", () => step(0));
  $("back").addEventListener("click", () => step(state.at - 1));
  $("forward").addEventListener("click", () => step(state.at + 1));
  $("end").addEventListener("click", () => step(state.line.length));
  $("copy").addEventListener("click", copyMoves);
  $("new").addEventListener("click", () => {
    state.line = [];
    state.at = 0;
    state.replyDue = true;  // the source opens when it plays first
    show();
  });
  $("opponent").addEventListener("change", () => {
    state.replyDue = true;  // the source moves at once where it is its side's turn
    show();
  });
  document.addEventListener("keydown", (event) => {
    if (event.target.tagName === "INPUT" || event.target.tagName === "SELECT") return;
    const to = { ArrowLeft: state.at - 1, ArrowRight: state.at + 1, Home: 0, End: state.line.length }[event.key];
    if (to !== undefined) step(to);
  });
  await show();
  const source = await getJSON("api/source");
  $("source").textContent = `${source.kind} ${source.path}`;
  $("player").textContent = source.kind === "book" ? "the book" : "pndb";
  if (await showStatus()) {
    $("status-title").textContent = source.kind;
    if (source.kind === "database") setInterval(showStatus, POLL_MS);
  }
}

start();
