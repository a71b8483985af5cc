/* teach.js - the teaching page's player (sim/teach/page.c inlines it).
 *
 * The data (script#baton-data) is the simulator's record of each run: every
 * rank's buffer at the start, and every message with the places it wrote and
 * the receiver's values there afterwards, grouped in steps (the instants at
 * which messages arrived). A player shows one run, or several side by side
 * on one clock; step k shows every buffer after the messages that arrived by
 * the k-th instant. Nothing here computes a sum: the numbers are the
 * simulator's. */
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("baton-data").textContent);
  const NS = "http://www.w3.org/2000/svg";

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    return e;
  }
  function fmtTime(t) {
    const x = t * D.scale;
    return (Math.abs(x) >= 100 ? x.toFixed(0) : String(Number(x.toPrecision(4)))) + " " + D.unit;
  }
  function rowName(r) { return D.names[r] || ("switch " + r); }
  function colName(T, i) { return T.cols[i] !== undefined ? T.cols[i] : String(i); }

  /* A number with each digit in the colour of the rank whose place it is
   * (with D.digits, rank r owns the digit 10^r); zeros are dimmed. */
  function number(v, p) {
    const span = el("span");
    const s = String(v);
    if (!D.digits || p > 9) { span.textContent = s; return span; }
    for (let j = 0; j < s.length; j++) {
      const r = s.length - 1 - j;
      const d = el("span", { class: s[j] === "0" ? "d0" : "r" + (r % 8), title: rowName(r) }, s[j]);
      span.appendChild(d);
    }
    return span;
  }
  /* A rank's colour; a reducing switch (a row past the ranks) has none. */
  function swatch(T, r) { return el("span", { class: "sw " + (r < T.p ? "b" + (r % 8) : "helper"), "aria-hidden": "true" }); }

  /* The buffers of tape T after every step whose time is <= t; the moves of
   * the step at exactly t with the values before them, for the narration. */
  function state(T, t) {
    const W = T.width, buf = T.start.slice(), said = new Array(T.rows).fill(0), heard = new Array(T.rows).fill(0);
    let now = null;
    const flying = [];
    for (const st of T.steps) {
      if (st[0] > t) {             /* sent but not yet arrived: in flight */
        for (let m = st[1]; m < st[1] + st[2]; m++) if (T.moves[m][0] < t) flying.push(T.moves[m]);
        continue;
      }
      const current = st[0] === t;
      if (current) now = [];
      for (let m = st[1]; m < st[1] + st[2]; m++) {
        const mv = T.moves[m], before = [];
        for (let j = 0; j < mv[5].length; j++) {
          before.push(buf[mv[3] * W + mv[5][j]]);
          buf[mv[3] * W + mv[5][j]] = mv[6][j];
        }
        said[mv[2]] += mv[5].length;
        heard[mv[3]] += mv[5].length;
        if (current) now.push({ mv: mv, before: before });
      }
    }
    return { buf: buf, said: said, heard: heard, now: now || [], flying: flying };
  }

  function table(T, cls) {
    const t = el("table", { class: "buf " + cls });
    const hr = el("tr");
    hr.appendChild(el("th", { scope: "col" }, ""));
    for (let i = 0; i < T.width; i++) {
      const th = el("th", { scope: "col" });
      if (D.candy) th.appendChild(el("span", { class: "sw candy" + (i % 4), "aria-hidden": "true" }));
      th.appendChild(document.createTextNode(colName(T, i)));
      hr.appendChild(th);
    }
    const head = el("thead");
    head.appendChild(hr);
    t.appendChild(head);
    t.appendChild(el("tbody"));
    return t;
  }
  /* A box the table scrolls in when it is wider than the page. */
  function scroller(t) {
    const box = el("div", { class: "scroll" });
    box.appendChild(t);
    return box;
  }
  function rowHead(T, r) {
    const th = el("th", { scope: "row", class: "who" });
    th.appendChild(swatch(T, r));
    th.appendChild(document.createTextNode(rowName(r)));
    return th;
  }

  /* The contract: every rank's buffer before, and what it must hold after
   * (a dot where the collective leaves it free). */
  function contract(T) {
    const box = el("div", { class: "contract" });
    const before = table(T, "before"), after = table(T, "after");
    before.insertBefore(el("caption", {}, "before"), before.firstChild);
    const names = { allreduce: "all-reduce", reducescatter: "reduce-scatter", allgather: "all-gather", alltoall: "all-to-all" };
    after.insertBefore(el("caption", {}, "after " + (names[T.coll] || T.coll)), after.firstChild);
    for (let r = 0; r < T.p; r++) {
      const a = el("tr"), b = el("tr");
      a.appendChild(rowHead(T, r));
      b.appendChild(rowHead(T, r));
      for (let i = 0; i < T.width; i++) {
        const tdb = el("td", { class: "v" });
        tdb.appendChild(number(T.start[r * T.width + i], T.p));
        a.appendChild(tdb);
        const tda = el("td", { class: "v" });
        if (T.fixed[r * T.width + i]) tda.appendChild(number(T.want[r * T.width + i], T.p));
        else tda.textContent = "\u00b7";
        b.appendChild(tda);
      }
      before.tBodies[0].appendChild(a);
      after.tBodies[0].appendChild(b);
    }
    box.appendChild(scroller(before));
    box.appendChild(el("div", { class: "arrow", "aria-hidden": "true" }, "\u2192"));
    box.appendChild(scroller(after));
    return box;
  }

  /* The ranks on a circle, reducing switches inside it, this step's
   * messages as black arrows and those still in flight as grey ones. */
  function net(T, now, flying) {
    const n = T.p, h = T.rows - T.p, R = n > 4 ? 30 + 7 * n : 55, c = R + 22, size = 2 * c;
    const s = svg("svg", { class: "net", width: size, height: size, viewBox: "0 0 " + size + " " + size, role: "img" });
    const title = svg("title", {});
    title.textContent = now.length ? now.length + " message(s) arrive in this step" : "no message arrives";
    s.appendChild(title);
    const pos = [];
    for (let r = 0; r < n + h; r++) {
      const inner = r >= n, k = inner ? r - n : r, m = inner ? h : n, rad = inner ? (h > 1 ? R / 2 : 0) : R;
      const a = -Math.PI / 2 + 2 * Math.PI * k / m;
      pos.push([c + rad * Math.cos(a), c + rad * Math.sin(a)]);
    }
    const arrow = (mv, colour, width, marker) => {
      const a = pos[mv[2]], b = pos[mv[3]];
      const dx = b[0] - a[0], dy = b[1] - a[1], L = Math.hypot(dx, dy) || 1, k = 20 / L;
      s.appendChild(svg("line", { x1: a[0] + dx * k, y1: a[1] + dy * k, x2: b[0] - dx * k, y2: b[1] - dy * k,
        stroke: colour, "stroke-width": width, "stroke-dasharray": mv[4] ? "" : "5 3", "marker-end": marker }));
    };
    for (const mv of flying) arrow(mv, "#b0b0b0", 1.5, "url(#baton-flying)");
    for (const x of now) arrow(x.mv, "#1a1a1a", 2, "url(#baton-arrow)");
    for (let r = 0; r < n + h; r++) {
      s.appendChild(svg("circle", { cx: pos[r][0], cy: pos[r][1], r: 17, fill: r < n ? "var(--r" + (r % 8) + ")" : "#fff",
        stroke: "#333", "stroke-dasharray": r < n ? "" : "3 2" }));
      const t = svg("text", { x: pos[r][0], y: pos[r][1] + 4, "text-anchor": "middle" });
      t.textContent = rowName(r).slice(0, 4);
      s.appendChild(t);
    }
    return s;
  }

  function places(T, mv) {
    const p = mv[5];
    if (p.length > 4) return colName(T, p[0]) + "\u2026" + colName(T, p[p.length - 1]) + " (" + p.length + ")";
    return p.map((i) => colName(T, i)).join(" ");
  }
  function narrate(T, now, flying) {
    const ul = el("ul", { class: "moves", "aria-live": "polite" });
    for (const mv of flying) {
      ul.appendChild(el("li", { class: "flying" }, rowName(mv[2]) + " \u2192 " + rowName(mv[3]) + ": " + places(T, mv) +
        ", on its way (arrives at " + fmtTime(mv[1]) + ")"));
    }
    for (const x of now) {
      const mv = x.mv, li = el("li");
      const what = mv[4] ? "adds" : "copies";
      li.textContent = rowName(mv[2]) + " \u2192 " + rowName(mv[3]) + ": " + places(T, mv) + ", " + what + " (now ";
      for (let j = 0; j < mv[6].length && j < 4; j++) {
        if (j) li.appendChild(document.createTextNode(" "));
        li.appendChild(number(mv[6][j], T.p));
      }
      li.appendChild(document.createTextNode((mv[6].length > 4 ? " \u2026" : "") + ")"));
      ul.appendChild(li);
    }
    return ul;
  }

  function Panel(T, i) {
    this.T = T;
    this.root = el("div", { class: "panel", "data-tape": i });
    const h = el("h3", {}, T.title + " ");
    h.appendChild(el("span", { class: "done" }, "(done at " + fmtTime(T.time) + ")"));
    this.root.appendChild(h);
    this.netBox = el("div");
    this.root.appendChild(this.netBox);
    this.table = table(T, "run");
    const hr = this.table.tHead.rows[0];
    hr.appendChild(el("th", { scope: "col" }, "said"));
    hr.appendChild(el("th", { scope: "col" }, "heard"));
    this.root.appendChild(scroller(this.table));
    this.movesBox = el("div");
    this.root.appendChild(this.movesBox);
  }
  Panel.prototype.show = function (t) {
    const T = this.T, S = state(T, t), body = el("tbody"), hit = {};
    for (const x of S.now) for (const pl of x.mv[5]) hit[x.mv[3] * T.width + pl] = 1;
    for (let r = 0; r < T.rows; r++) {
      const tr = el("tr", { "data-row": r });
      tr.appendChild(rowHead(T, r));
      for (let i = 0; i < T.width; i++) {
        const td = el("td", { class: "v" + (hit[r * T.width + i] ? " hit" : ""), "data-place": i });
        td.appendChild(number(S.buf[r * T.width + i], T.p));
        tr.appendChild(td);
      }
      tr.appendChild(el("td", { class: "load said" }, String(S.said[r])));
      tr.appendChild(el("td", { class: "load heard" }, String(S.heard[r])));
      body.appendChild(tr);
    }
    this.table.replaceChild(body, this.table.tBodies[0]);
    this.netBox.replaceChildren(net(T, S.now, S.flying));
    this.movesBox.replaceChildren(narrate(T, S.now, S.flying));
  };

  function Player(P, idx) {
    this.P = P;
    this.k = 0;
    this.timer = null;
    this.sel = P.chosen || 0;
    for (const T of P.tapes) T.cols = P.cols;
    this.root = el("section", { class: "player", tabindex: "0", "data-player": idx, "aria-label": P.title });
    this.root.appendChild(el("h2", {}, P.title));
    if (P.text) this.root.appendChild(el("p", { class: "intro" }, P.text));
    if (P.contract) this.root.appendChild(contract(P.tapes[0]));
    this.controls();
    this.panels = P.tapes.map((T, i) => new Panel(T, i));
    const box = el("div", { class: "panels" });
    for (const pn of this.panels) box.appendChild(pn.root);
    this.root.appendChild(box);
    this.root.addEventListener("keydown", (e) => this.key(e));
    this.choose(this.sel);
  }
  Player.prototype.button = function (label, name, fn) {
    const b = el("button", { type: "button", "aria-label": name, title: name }, label);
    b.addEventListener("click", fn);
    this.bar.appendChild(b);
    return b;
  };
  Player.prototype.controls = function () {
    this.bar = el("div", { class: "controls" });
    if (this.P.pick) {
      const s = el("select", { "aria-label": "algorithm", class: "pick" });
      this.P.tapes.forEach((T, i) => s.appendChild(el("option", { value: i }, T.title)));
      s.value = String(this.sel);
      s.addEventListener("change", () => this.choose(Number(s.value)));
      this.bar.appendChild(s);
    }
    this.button("|\u25c0 start", "to the start (Home)", () => this.go(0));
    this.button("\u25c0 back", "step back (left arrow)", () => this.go(this.k - 1));
    this.playButton = this.button("\u25b6 play", "play or pause (space)", () => this.toggle());
    this.button("step \u25b6", "step forward (right arrow)", () => this.go(this.k + 1));
    this.button("end \u25b6|", "to the end (End)", () => this.go(this.times.length));
    const sp = el("select", { "aria-label": "speed", class: "speed" });
    for (const v of [0.5, 1, 2, 4]) sp.appendChild(el("option", { value: v }, v + " steps/s"));
    sp.value = "1";
    sp.addEventListener("change", () => { if (this.timer) { this.toggle(); this.toggle(); } });
    this.speed = sp;
    this.bar.appendChild(sp);
    this.clock = el("span", { class: "clock", "aria-live": "polite" });
    this.bar.appendChild(this.clock);
    this.root.appendChild(this.bar);
    this.root.appendChild(el("div", { class: "keys" },
      "Keys: \u2192 step, \u2190 back, space play/pause, Home start, End end. Arrows: solid adds, dashed copies, grey still on its way."));
  };
  /* The instants of the shown runs: one run's steps, or all runs' merged. */
  Player.prototype.choose = function (sel) {
    this.sel = sel;
    const shown = this.P.pick ? [this.P.tapes[sel]] : this.P.tapes, set = new Set();
    for (const T of shown) for (const st of T.steps) set.add(st[0]);
    this.times = Array.from(set).sort((a, b) => a - b);
    this.panels.forEach((pn, i) => { pn.root.hidden = this.P.pick && i !== sel; });
    this.go(0);
  };
  Player.prototype.go = function (k) {
    this.k = Math.max(0, Math.min(this.times.length, k));
    const t = this.k ? this.times[this.k - 1] : -Infinity;
    for (const pn of this.panels) if (!pn.root.hidden) pn.show(t);
    this.clock.textContent = "t = " + (this.k ? fmtTime(t) : "0 " + D.unit) + " \u00b7 step " + this.k + " of " +
      this.times.length;
    if (this.k === this.times.length && this.timer) this.toggle();
  };
  Player.prototype.toggle = function () {
    if (this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    } else {
      if (this.k === this.times.length) this.go(0);
      this.timer = setInterval(() => this.go(this.k + 1), 1000 / Number(this.speed.value));
    }
    this.playButton.textContent = this.timer ? "|| pause" : "\u25b6 play";
  };
  Player.prototype.key = function (e) {
    const tag = e.target.tagName;
    if (tag === "SELECT" || (tag === "BUTTON" && (e.key === " " || e.key === "Enter"))) return;
    const act = { ArrowRight: () => this.go(this.k + 1), ArrowLeft: () => this.go(this.k - 1), " ": () => this.toggle(),
      Home: () => this.go(0), End: () => this.go(this.times.length) }[e.key];
    if (!act) return;
    e.preventDefault();
    act();
  };

  const main = document.getElementById("players");
  const players = D.players.map((P, i) => new Player(P, i));
  for (const pl of players) main.appendChild(pl.root);
  /* Keys pressed with nothing focused go to the first player. */
  document.addEventListener("keydown", (e) => {
    if (e.target === document.body && players.length) players[0].key(e);
  });
  window.batonPlayers = players;
})();
