// screenpilot watch: every session live, terminals (xterm.js) and desktops (PNG frames) side by side.
//
// The token comes in the URL's fragment (#token=...), which the browser never sends over the network; it
// is kept in sessionStorage and taken off the address bar. WebSockets carry it as a subprotocol
// ("bearer.TOKEN"), as browsers cannot set an Authorization header on them.
//
// DOM (stable, for people and for scripts driving the page):
//   #connection[data-state]  connecting | live | disconnected | refused
//   #access[data-control]    "true" when this page may type and click
//   #count[data-count]       number of sessions listed
//   #sessions > section.session#session-SID[data-sid][data-kind][data-alive][data-control][data-state]
//       data-state: connecting | live | ended | disconnected
//     .session-head > .sid .kind .size[data-cols][data-rows] or [data-width][data-height] .title .access .state
//     terminals: .view.terminal-view (xterm.js), pre.screen-text[data-text] (the screen's text, one line
//                per row, trailing spaces trimmed: what `snapshot` reads), section[data-paints]
//     desktops:  .view.desktop-view > img.frame[data-width][data-height], section[data-frames],
//                section[data-pointer-x][data-pointer-y]
//     .message: the last refusal or error from the server
//   window.screenpilotWatch.text(sid): a terminal's screen text, read from xterm's buffer.
"use strict";

(function () {
  const PROTOCOL = "screenpilot.watch";
  const views = new Map(); // sid -> view
  // #sid=SID (the page a client opens for a password prompt): that session is brought into view
  // and its terminal takes the keyboard once it appears.
  let wanted = (/(?:^#|&)sid=([^&]+)/.exec(location.hash) || [])[1];
  wanted = wanted && decodeURIComponent(wanted);
  let token = takeToken();
  let control = false;

  const $ = (id) => document.getElementById(id);

  function takeToken() {
    const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (match) {
      sessionStorage.setItem("screenpilot-watch-token", match[1]);
      history.replaceState(null, "", location.pathname);
      return match[1];
    }
    return sessionStorage.getItem("screenpilot-watch-token");
  }

  function socket(path) {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(scheme + "//" + location.host + path, [PROTOCOL, "bearer." + token]);
    ws.binaryType = "arraybuffer";
    return ws;
  }

  function notice(text) {
    const p = $("notice");
    p.textContent = text;
    p.hidden = !text;
  }

  function setConnection(state, text) {
    const c = $("connection");
    c.dataset.state = state;
    c.textContent = text || state;
  }

  // The session list: one socket, a message whenever a session comes or goes.
  let retry = 250;
  function connectList() {
    if (!token) {
      setConnection("refused", "no token");
      notice("This page needs its token: open the URL that `screenpilot watch` printed (it ends in #token=...).");
      return;
    }
    setConnection("connecting");
    const ws = socket("/ws/sessions");
    let opened = false;
    ws.onopen = () => {
      opened = true;
      retry = 250;
      setConnection("live");
      notice("");
    };
    ws.onmessage = (event) => {
      const msg = JSON.parse(event.data);
      if (msg.type === "hello") {
        control = !!msg.control;
        const a = $("access");
        a.dataset.control = String(control);
        a.textContent = control ? "in control: your keys and clicks reach the sessions" : "read-only";
      } else if (msg.type === "sessions") {
        showSessions(msg.sessions);
      }
    };
    ws.onclose = () => {
      if (!opened) {
        // The server refused the upgrade: a wrong token (401), or it is gone.
        setConnection("refused", "refused or unreachable");
        notice("The server refused this page or is not running. Run `screenpilot watch` again and open the URL it prints.");
      } else {
        setConnection("disconnected");
      }
      for (const view of views.values()) view.disconnected();
      retry = Math.min(retry * 2, 5000);
      // Reconnecting after a pause is a retry policy, not synchronisation: the server may be restarting.
      setTimeout(connectList, retry);
    };
  }

  function showSessions(list) {
    const count = $("count");
    count.dataset.count = String(list.length);
    count.textContent = list.length === 1 ? "1 session" : list.length + " sessions";
    $("empty").hidden = list.length > 0;
    const seen = new Set();
    for (const info of list) {
      seen.add(info.sid);
      let view = views.get(info.sid);
      if (view && view.kind !== kindOf(info)) {
        view.remove();
        view = null;
      }
      if (!view) {
        view = kindOf(info) === "desktop" ? new DesktopView(info) : new TerminalView(info);
        views.set(info.sid, view);
        $("sessions").appendChild(view.section);
        if (info.sid === wanted) {
          wanted = null;
          view.section.scrollIntoView();
          if (view.term) view.term.focus();
        }
      }
      view.update(info);
    }
    for (const [sid, view] of views) {
      if (!seen.has(sid)) {
        view.remove();
        views.delete(sid);
      }
    }
  }

  function kindOf(info) {
    return info.kind === "desktop" ? "desktop" : "terminal";
  }

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // What both views share: the section, its header, its socket.
  class View {
    constructor(info, kind) {
      this.sid = info.sid;
      this.kind = kind;
      const s = (this.section = el("section", "session"));
      s.id = "session-" + info.sid;
      s.dataset.sid = info.sid;
      s.dataset.kind = info.kind;
      s.dataset.state = "connecting";
      s.dataset.control = "false";
      const head = el("header", "session-head");
      this.sidEl = head.appendChild(el("span", "sid", info.sid));
      this.kindEl = head.appendChild(el("span", "kind", info.kind));
      this.sizeEl = head.appendChild(el("span", "size"));
      this.titleEl = head.appendChild(el("span", "title"));
      this.accessEl = head.appendChild(el("span", "access", "read-only"));
      this.stateEl = head.appendChild(el("span", "state", "connecting"));
      s.appendChild(head);
      this.body = s.appendChild(el("div", "view " + kind + "-view"));
      this.messageEl = el("p", "message");
      this.closed = false;
    }

    open() {
      this.section.appendChild(this.messageEl);
      this.ws = socket("/ws/session/" + encodeURIComponent(this.sid));
      this.ws.onmessage = (event) => {
        if (typeof event.data === "string") this.onText(JSON.parse(event.data));
        else this.data(event.data);
      };
      this.ws.onclose = () => {
        if (!this.closed && this.section.dataset.state !== "ended") this.setState("disconnected");
      };
    }

    onText(msg) {
      if (msg.type === "hello") {
        this.setAccess(!!msg.control);
        this.setState("live");
      } else if (msg.type === "status") {
        this.section.dataset.alive = String(msg.alive);
        if (!msg.alive) this.setState("ended", msg.exit_code == null ? "ended" : "ended, exit " + msg.exit_code);
      } else if (msg.type === "refused" || msg.type === "error") {
        this.messageEl.textContent = msg.message;
      } else {
        this.message(msg);
      }
    }

    setAccess(inControl) {
      this.inControl = inControl;
      this.section.dataset.control = String(inControl);
      this.accessEl.dataset.control = String(inControl);
      this.accessEl.textContent = inControl ? "in control" : "read-only";
    }

    setState(state, text) {
      this.section.dataset.state = state;
      this.stateEl.textContent = text || state;
    }

    update(info) {
      this.section.dataset.alive = String(info.alive);
      this.titleEl.textContent = info.title || "";
      this.titleEl.title = (info.cmd || []).join(" ");
      if (!info.alive && this.section.dataset.state === "live") {
        this.setState("ended", info.exit_code == null ? "ended" : "ended, exit " + info.exit_code);
      }
    }

    send(data) {
      if (this.inControl && this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(data);
    }

    disconnected() {
      // The list reconnects and lists the session again; this view starts afresh then.
      this.remove();
      views.delete(this.sid);
    }

    remove() {
      this.closed = true;
      if (this.ws) this.ws.close();
      this.section.remove();
    }
  }

  class TerminalView extends View {
    constructor(info) {
      super(info, "terminal");
      this.paints = 0;
      this.textEl = el("pre", "screen-text");
      this.textEl.dataset.text = "";
      this.section.appendChild(this.textEl);
      this.term = new Terminal({
        cols: info.cols,
        rows: info.rows,
        scrollback: 0,
        convertEol: false,
        cursorBlink: false,
        disableStdin: true,
        fontFamily: "ui-monospace, 'DejaVu Sans Mono', monospace",
        fontSize: 13,
      });
      this.term.open(this.body);
      this.term.onTitleChange((title) => {
        this.titleEl.textContent = title;
      });
      this.encoder = new TextEncoder();
      this.term.onData((data) => this.send(this.encoder.encode(data)));
      this.term.onBinary((data) => {
        const bytes = new Uint8Array(data.length);
        for (let i = 0; i < data.length; i++) bytes[i] = data.charCodeAt(i) & 0xff;
        this.send(bytes);
      });
      this.showSize(info.cols, info.rows);
      this.open();
    }

    setAccess(inControl) {
      super.setAccess(inControl);
      this.term.options.disableStdin = !inControl;
    }

    message(msg) {
      if (msg.type === "size") {
        this.term.resize(msg.cols, msg.rows);
        this.showSize(msg.cols, msg.rows);
      }
    }

    showSize(cols, rows) {
      this.sizeEl.dataset.cols = String(cols);
      this.sizeEl.dataset.rows = String(rows);
      this.sizeEl.textContent = cols + "x" + rows;
    }

    data(buffer) {
      this.term.write(new Uint8Array(buffer), () => {
        this.paints += 1;
        this.section.dataset.paints = String(this.paints);
        const text = this.text();
        this.textEl.dataset.text = text;
        this.textEl.textContent = text;
      });
    }

    text() {
      const buffer = this.term.buffer.active;
      const lines = [];
      for (let y = 0; y < this.term.rows; y++) {
        const line = buffer.getLine(buffer.viewportY + y);
        lines.push(line ? line.translateToString(true) : "");
      }
      return lines.join("\n");
    }

    update(info) {
      super.update(info);
      if (!info.title) this.titleEl.textContent = "";
    }

    remove() {
      super.remove();
      this.term.dispose();
    }
  }

  class DesktopView extends View {
    constructor(info) {
      super(info, "desktop");
      this.frames = 0;
      this.body.tabIndex = 0;
      this.img = this.body.appendChild(el("img", "frame"));
      this.img.alt = "desktop " + info.sid;
      this.img.draggable = false;
      this.showSize(info.width, info.height);
      this.pending = null;
      this.loading = 0; // frames started
      this.shown = 0; // the newest frame shown
      // Listeners sit on the panel, not the image: each frame is a new image, swapped in once decoded.
      this.body.addEventListener("click", (e) => this.click(e, "left"));
      this.body.addEventListener("auxclick", (e) => {
        if (e.button === 1) this.click(e, "middle");
      });
      this.body.addEventListener("contextmenu", (e) => {
        if (this.inControl) {
          e.preventDefault();
          this.click(e, "right");
        }
      });
      this.body.addEventListener("wheel", (e) => {
        if (!this.inControl) return;
        e.preventDefault();
        const p = this.point(e);
        const dy = Math.sign(e.deltaY);
        const dx = Math.sign(e.deltaX);
        if (dx || dy) this.sendJson({ type: "scroll", x: p.x, y: p.y, dx, dy });
      }, { passive: false });
      this.body.addEventListener("keydown", (e) => this.key(e));
      this.open();
    }

    showSize(width, height) {
      this.sizeEl.dataset.width = String(width);
      this.sizeEl.dataset.height = String(height);
      this.sizeEl.textContent = width + "x" + height;
    }

    message(msg) {
      if (msg.type === "frame") this.pending = msg;
    }

    // A frame is decoded in an image of its own and swapped in whole, so the panel never shows a
    // half-loaded or empty image between two frames; a frame decoded after a newer one is dropped.
    data(buffer) {
      const meta = this.pending || {};
      this.pending = null;
      const seq = ++this.loading;
      const url = URL.createObjectURL(new Blob([buffer], { type: "image/png" }));
      const next = el("img", "frame");
      next.alt = this.img.alt;
      next.draggable = false;
      next.onerror = () => URL.revokeObjectURL(url);
      next.onload = () => {
        if (this.closed || seq < this.shown) {
          URL.revokeObjectURL(url);
          return;
        }
        this.shown = seq;
        if (meta.width) {
          next.dataset.width = String(meta.width);
          next.dataset.height = String(meta.height);
          this.showSize(meta.width, meta.height);
        }
        if (meta.pointer) {
          this.section.dataset.pointerX = String(meta.pointer.x);
          this.section.dataset.pointerY = String(meta.pointer.y);
        }
        this.img.replaceWith(next);
        this.img = next;
        if (this.url) URL.revokeObjectURL(this.url);
        this.url = url;
        this.frames += 1;
        this.section.dataset.frames = String(this.frames);
      };
      next.src = url;
    }

    // A page pixel to a screen pixel: the frame is the screen at full size, shown scaled to fit.
    point(e) {
      const r = this.img.getBoundingClientRect();
      const w = this.img.naturalWidth || r.width;
      const h = this.img.naturalHeight || r.height;
      const x = Math.floor(((e.clientX - r.left) * w) / r.width);
      const y = Math.floor(((e.clientY - r.top) * h) / r.height);
      return { x: Math.max(0, Math.min(w - 1, x)), y: Math.max(0, Math.min(h - 1, y)) };
    }

    click(e, button) {
      this.body.focus();
      if (!this.inControl) {
        this.sendRefusedLocally();
        return;
      }
      const p = this.point(e);
      this.sendJson({ type: "click", x: p.x, y: p.y, button });
    }

    key(e) {
      if (!this.inControl) return;
      if (["Control", "Shift", "Alt", "Meta", "AltGraph", "CapsLock"].includes(e.key)) return;
      e.preventDefault();
      const plain = e.key.length === 1 && !e.ctrlKey && !e.altKey && !e.metaKey;
      if (plain) {
        this.sendJson({ type: "text", text: e.key });
        return;
      }
      const parts = [];
      if (e.ctrlKey) parts.push("ctrl");
      if (e.altKey) parts.push("alt");
      if (e.metaKey) parts.push("super");
      if (e.shiftKey && e.key.length > 1) parts.push("shift");
      parts.push(e.key === " " ? "space" : e.key.length === 1 ? e.key.toLowerCase() : e.key);
      this.sendJson({ type: "key", keys: parts.join("+") });
    }

    sendRefusedLocally() {
      this.messageEl.textContent = "read-only: open the URL of `screenpilot watch --control` to click and type";
    }

    sendJson(msg) {
      this.send(JSON.stringify(msg));
    }

    remove() {
      super.remove();
      if (this.url) URL.revokeObjectURL(this.url);
    }
  }

  window.screenpilotWatch = {
    text(sid) {
      const view = views.get(sid);
      return view && view.text ? view.text() : null;
    },
    sids() {
      return [...views.keys()];
    },
  };

  connectList();
})();
