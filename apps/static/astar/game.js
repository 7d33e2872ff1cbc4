// The A-star game page: draws the server's state on a canvas, keeps it up to
// date from the pushes of the api/updates WebSocket, and sends the player's
// moves, walls and path requests. All URLs are relative, so the page works
// under any prefix.
//
// The page draws the map as soon as the state arrives, then joins; a page
// that cannot join (the game is full) keeps watching and tries again. The
// player leaves when the page goes away: the socket closing says so, and a
// beacon on pagehide says it too (for when the socket never opened).
"use strict";

const HEARTBEAT_MS = 15000;   // "still here" on the socket; the server expires after 60 s
const REJOIN_MS = 5000;       // retry a refused join this often
const RECONNECT_MS = 1000;    // reopen a closed socket after this long
const COLORS = ["#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4",
                "#42d4f4", "#f032e6", "#9a6324", "#469990", "#808000"];
const ME_HALO = "#ff00ff";    // the own marker's ring: no other drawing uses this colour
const canvas = document.getElementById("map");
const ctx = canvas.getContext("2d");
const statusLine = document.getElementById("status");
const playersLine = document.getElementById("players");

let state = null;        // the last state (api/state or a push), grid included
let me = null;           // my player id, once joined
let joinedAs = null;     // my player as the join answered, until a state shows me
let socket = null;       // the api/updates WebSocket
let joining = false;
let leaving = false;      // the page is going away: do not reconnect
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

// A state from a push or from api/state. A push may leave the map out when
// it has not changed. Pushes and the answers to our own requests travel on
// different connections, so a push can be older than an answer we already
// applied: our own player's move count says which position is newer, and a
// push without our player is checked against a fresh api/state before we
// conclude that we are gone.
function receive(next, fresh) {
  if (!("grid" in next)) {
    if (!state || state.walls_version !== next.walls_version) return false;
    next.grid = state.grid;
  }
  const mine = myPlayer() || (me !== null ? joinedAs : null);
  const index = next.players.findIndex(p => p.id === me);
  if (mine && index >= 0 && next.players[index].moves < mine.moves) next.players[index] = mine;
  // A push older than our join: draw us where we know we are until the
  // fresh state below says whether we are still there.
  if (mine && index < 0 && !fresh) next.players.push(mine);
  state = next;
  draw();
  if (me !== null && index < 0) {
    if (fresh) {
      me = null;         // expired, or left from elsewhere: join again
      joinedAs = null;
      join();
    } else {
      refresh();
    }
  }
  return true;
}

async function refresh() {
  const response = await fetch("api/state", {cache: "no-store"});
  receive(await response.json(), true);
}

async function join() {
  if (joining || me !== null) return;
  joining = true;
  try {
    const answer = await post("join", {name: "browser"});
    me = answer.player.id;
    joinedAs = answer.player;
    if (state && !state.players.some(p => p.id === me)) state.players.push(answer.player);
    say(`joined as player ${me}`, false);
    sendHeartbeat();
    draw();
  } catch (error) {
    say(`${error.message}: watching, joining again in ${REJOIN_MS / 1000} s`, true);
    setTimeout(join, REJOIN_MS);
  } finally {
    joining = false;
  }
}

function sendHeartbeat() {
  if (me !== null && socket && socket.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify({player: me}));
  }
}

function connect() {
  const url = new URL("api/updates", location.href);
  url.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  socket = new WebSocket(url);
  socket.onopen = sendHeartbeat;
  socket.onmessage = event => {
    if (!receive(JSON.parse(event.data), false)) refresh();  // a push without the map we lack
  };
  socket.onclose = () => {
    socket = null;
    if (!leaving) setTimeout(connect, RECONNECT_MS);
  };
}

function draw() {
  if (!state) return;
  cellSize = Math.max(4, Math.floor(Math.min(960 / state.width, 640 / state.height)));
  canvas.width = state.width * cellSize;
  canvas.height = state.height * cellSize;
  canvas.dataset.cellSize = String(cellSize);
  canvas.dataset.wallsVersion = String(state.walls_version);
  canvas.dataset.me = me === null ? "" : String(me);
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
  let mine = null;
  for (const p of state.players) {
    if (p.id === me) { mine = p; continue; }
    ctx.fillStyle = colorOf(p.id);
    ctx.beginPath();
    ctx.arc((p.x + 0.5) * cellSize, (p.y + 0.5) * cellSize, cellSize * 0.4, 0, 2 * Math.PI);
    ctx.fill();
  }
  if (mine) drawMe(mine);
  playersLine.textContent = `${state.players.length} players, map ${state.width}x${state.height},` +
    ` walls version ${state.walls_version}` + (me === null ? "" : `, you are player ${me}`);
}

// The own marker, drawn last so nothing covers it: a bigger disc in a
// black outline, inside a thick magenta ring a few cells wide.
function drawMe(p) {
  const cx = (p.x + 0.5) * cellSize, cy = (p.y + 0.5) * cellSize;
  const ring = Math.max(12, cellSize * 2);
  ctx.lineWidth = Math.max(4, cellSize / 3);
  ctx.strokeStyle = "#000000";
  ctx.beginPath();
  ctx.arc(cx, cy, ring + ctx.lineWidth / 2 + 1, 0, 2 * Math.PI);
  ctx.stroke();
  ctx.strokeStyle = ME_HALO;
  ctx.beginPath();
  ctx.arc(cx, cy, ring, 0, 2 * Math.PI);
  ctx.stroke();
  ctx.fillStyle = colorOf(p.id);
  ctx.beginPath();
  ctx.arc(cx, cy, Math.max(4, cellSize * 0.55), 0, 2 * Math.PI);
  ctx.fill();
  ctx.lineWidth = 2;
  ctx.strokeStyle = "#000000";
  ctx.stroke();
}

function myPlayer() { return state && state.players.find(p => p.id === me); }

// An action's answer changes the local state at once; the push that follows
// brings everyone else's changes.
async function act(endpoint, body, apply, done) {
  try {
    const answer = await post(endpoint, body);
    if (state) apply(answer);
    draw();
    say(done(answer), false);
  } catch (error) {
    say(error.message, true);
  }
  if (!socket || socket.readyState !== WebSocket.OPEN) await refresh();
}

function moveBy(dx, dy) {
  const p = myPlayer();
  if (!p) return;
  act("move", {player: me, x: p.x + dx, y: p.y + dy},
      a => Object.assign(myPlayer() || {}, a.player),
      a => `moved to (${a.player.x}, ${a.player.y})`);
}

function cellAt(event) {
  const box = canvas.getBoundingClientRect();
  return [Math.floor((event.clientX - box.left) / cellSize),
          Math.floor((event.clientY - box.top) / cellSize)];
}

function askPath(x, y) {
  act("path", {player: me, to: [x, y]},
      a => { if (a.path) state.paths[String(me)] = a.path; else delete state.paths[String(me)]; },
      a => a.path ? `path of ${a.path.length - 1} steps to (${x}, ${y})` : `no path to (${x}, ${y})`);
}

canvas.addEventListener("click", event => {
  if (!state || me === null) return;
  const [x, y] = cellAt(event);
  if (event.shiftKey) { askPath(x, y); return; }
  const build = !state.grid[y][x];
  act("wall", {player: me, x, y, wall: build},
      a => { state.grid[y][x] = build ? 1 : 0; state.walls_version = a.walls_version; },
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

// Leaving: a beacon still goes out while the page is being torn down.
window.addEventListener("pagehide", () => {
  leaving = true;
  if (me !== null) {
    navigator.sendBeacon("api/leave", JSON.stringify({player: me}));
    me = null;
  }
  if (socket) socket.close();
});
// Back from the back-forward cache: the player left on pagehide, so start again.
window.addEventListener("pageshow", event => { if (event.persisted) start(); });

async function start() {
  leaving = false;
  try {
    await refresh();       // draw at once, before joining
  } catch (error) {
    say("server unreachable: " + error.message, true);
  }
  connect();
  await join();
}

setInterval(sendHeartbeat, HEARTBEAT_MS);
start();
