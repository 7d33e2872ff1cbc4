// The A-star game page: draws the server's state on a canvas, polls it, and
// sends the player's moves, walls and path requests. All URLs are relative,
// so the page works under any prefix.
"use strict";

const POLL_MS = 300;
const COLORS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4",
                "#42d4f4", "#f032e6", "#9a6324", "#469990", "#808000"];
const canvas = document.getElementById("map");
const ctx = canvas.getContext("2d");
const statusLine = document.getElementById("status");
const playersLine = document.getElementById("players");

let state = null;        // the last /api/state answer
let me = null;           // my player id
let cellSize = 20;

function colorOf(id) { return COLORS[id % COLORS.length]; }

function say(text, isError) {
  statusLine.textContent = text;
  statusLine.className = isError ? "error" : "";
}

async function post(endpoint, body) {
  const response = await fetch("api/" + endpoint, {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || response.statusText);
  return answer;
}

async function refresh() {
  const response = await fetch("api/state", {cache: "no-store"});
  state = await response.json();
  if (me === null || !state.players.some(p => p.id === me)) await join();
  draw();
}

async function join() {
  const saved = Number(localStorage.getItem("astar-player"));
  if (state && state.players.some(p => p.id === saved)) { me = saved; return; }
  const answer = await post("join", {name: "browser"});
  me = answer.player.id;
  localStorage.setItem("astar-player", String(me));
  state.players.push(answer.player);
}

function draw() {
  if (!state) return;
  cellSize = Math.max(4, Math.floor(Math.min(960 / state.width, 640 / state.height)));
  canvas.width = state.width * cellSize;
  canvas.height = state.height * cellSize;
  canvas.dataset.cellSize = String(cellSize);
  canvas.dataset.wallsVersion = String(state.walls_version);
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = "#333333";
  state.grid.forEach((row, y) => row.forEach((cell, x) => {
    if (cell) ctx.fillRect(x * cellSize, y * cellSize, cellSize, cellSize);
  }));
  for (const [id, path] of Object.entries(state.paths)) {
    ctx.strokeStyle = colorOf(Number(id));
    ctx.lineWidth = Math.max(2, cellSize / 5);
    ctx.beginPath();
    path.forEach(([x, y], i) => {
      const cx = (x + 0.5) * cellSize, cy = (y + 0.5) * cellSize;
      if (i === 0) ctx.moveTo(cx, cy); else ctx.lineTo(cx, cy);
    });
    ctx.stroke();
  }
  for (const p of state.players) {
    ctx.fillStyle = colorOf(p.id);
    ctx.beginPath();
    ctx.arc((p.x + 0.5) * cellSize, (p.y + 0.5) * cellSize, cellSize * 0.4, 0, 2 * Math.PI);
    ctx.fill();
    if (p.id === me) {
      ctx.strokeStyle = "#000000";
      ctx.lineWidth = 2;
      ctx.stroke();
    }
  }
  playersLine.textContent = `${state.players.length} players, map ${state.width}x${state.height},` +
    ` walls version ${state.walls_version}` + (me === null ? "" : `, you are player ${me}`);
}

function myPlayer() { return state && state.players.find(p => p.id === me); }

async function act(endpoint, body, done) {
  try {
    const answer = await post(endpoint, body);
    say(done(answer), false);
  } catch (error) {
    say(error.message, true);
  }
  await refresh();
}

function moveBy(dx, dy) {
  const p = myPlayer();
  if (p) act("move", {player: me, x: p.x + dx, y: p.y + dy}, a => `moved to (${a.player.x}, ${a.player.y})`);
}

function cellAt(event) {
  const box = canvas.getBoundingClientRect();
  return [Math.floor((event.clientX - box.left) / cellSize),
          Math.floor((event.clientY - box.top) / cellSize)];
}

function askPath(x, y) {
  act("path", {player: me, to: [x, y]},
      a => a.path ? `path of ${a.path.length - 1} steps to (${x}, ${y})` : `no path to (${x}, ${y})`);
}

canvas.addEventListener("click", event => {
  if (!state || me === null) return;
  const [x, y] = cellAt(event);
  if (event.shiftKey) { askPath(x, y); return; }
  const build = !state.grid[y][x];
  act("wall", {player: me, x, y, wall: build},
      () => `${build ? "built" : "destroyed"} a wall at (${x}, ${y})`);
});

canvas.addEventListener("contextmenu", event => {
  event.preventDefault();
  if (!state || me === null) return;
  const [x, y] = cellAt(event);
  askPath(x, y);
});

const KEY_STEPS = {ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1],
                   a: [-1, 0], d: [1, 0], w: [0, -1], s: [0, 1]};

document.addEventListener("keydown", event => {
  if (event.key in KEY_STEPS) {
    event.preventDefault();
    moveBy(...KEY_STEPS[event.key]);
  } else if (event.key === " ") {
    event.preventDefault();
    const p = myPlayer(), path = state && state.paths[String(me)];
    if (p && path) {
      const at = path.findIndex(([x, y]) => x === p.x && y === p.y);
      if (at >= 0 && at + 1 < path.length) moveBy(path[at + 1][0] - p.x, path[at + 1][1] - p.y);
    }
  }
});

async function poll() {
  try { await refresh(); } catch (error) { say("server unreachable: " + error.message, true); }
  setTimeout(poll, POLL_MS);
}
poll();
