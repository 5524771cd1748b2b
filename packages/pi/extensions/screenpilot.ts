// pi tools backed by the screenpilot binary. Under the names and shapes of the pi extensions they
// replace: `textual_run` (pi-textual, streaming the screen after each action) and `computer`
// (pi-computer-use, `{action: {type, ...}}`); and the terminal tools as `terminal_spawn`,
// `terminal_send_keys`, `terminal_wait_for`, ... with the binary's own descriptions and schemas.
//
// Every call runs the binary's CLI (`screenpilot --json ...`): the daemon it talks to keeps sessions
// between calls. Pi's abort signal ends that CLI process, and the daemon stops whatever a client
// that hung up had started (a wait, a Textual run): nothing keeps running for a call pi gave up on.
// The binary: see `findBinary`.
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { Type } from "typebox";

type Content = { type: "text"; text: string } | { type: "image"; data: string; mimeType: string };
type Result = { content: Content[]; details: any; structuredContent?: any; isError?: boolean };
type Update = (partial: Result) => void;

/** The binary lookup of the npm package `screenpilot` (the one its launcher runs). */
type Lookup = { findBinary(options?: { searchPath?: boolean }): string };

/**
 * That lookup, or `undefined` when the package is not installed: pi installs no dependencies for a
 * local directory (`pi install ./packages/pi`).
 */
function npmLookup(): Lookup | undefined {
  try {
    return createRequire(import.meta.url)("screenpilot");
  } catch (e: any) {
    if (e?.code === "MODULE_NOT_FOUND") return undefined;
    throw e;
  }
}

/**
 * What to run: the binary the npm package `screenpilot` finds, in this order: `$SCREENPILOT_BINARY`
 * when set (it must exist), else the binary of its per-platform package `@screenpilot/<platform>-<arch>`,
 * else `screenpilot` on PATH (`cargo install`, the Python wheel, a global npm install); it throws saying
 * what is missing. Without that package there is no lookup here, and only a binary named outright can
 * run: `$SCREENPILOT_BINARY`, or `screenpilot` as spawn finds it on PATH ([`cannotRun`] says what is
 * missing when it finds none).
 */
function findBinary(): string {
  const lookup = npmLookup();
  if (lookup) return lookup.findBinary({ searchPath: true });
  return process.env.SCREENPILOT_BINARY || "screenpilot";
}

/** Why `binary` (from [`findBinary`]) could not be started. */
function cannotRun(binary: string, e: any): string {
  if (e?.code !== "ENOENT" || npmLookup()) return `cannot run ${binary}: ${e.message}`;
  if (process.env.SCREENPILOT_BINARY) return `cannot run ${binary} (SCREENPILOT_BINARY): ${e.message}`;
  const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
  return (
    "no screenpilot binary: this package's dependency, the npm package screenpilot, which brings the binary, " +
    `is not installed (pi installs no dependencies for a local directory: run npm install in ${packageDir}); ` +
    "there is no screenpilot on PATH, and SCREENPILOT_BINARY is not set (set it to a binary built with cargo " +
    "install screenpilot, or put one on PATH)"
  );
}

/**
 * A call that ended without an answer. `sent`: the CLI was running, so the request may have reached
 * the daemon and been done in part or whole; false when it never started (no binary, cancelled
 * first, the binary could not be run).
 */
class NoAnswer extends Error {
  sent: boolean;
  constructor(message: string, sent: boolean) {
    super(message);
    this.sent = sent;
  }
}

/**
 * Run `screenpilot --json ARGS`: its last stdout line is the answer (`{"ok": false, "error"}` on an
 * error), lines before it are `{"progress": ...}` updates, passed to `onProgress` as they come.
 * When `signal` aborts, the CLI is ended (SIGTERM) and the call rejects once it has exited; the
 * daemon sees its client hang up and stops the request. Rejects with a [`NoAnswer`].
 */
function cli(args: string[], signal?: AbortSignal, onProgress?: (update: any) => void): Promise<any> {
  let binary: string;
  try {
    binary = findBinary();
  } catch (e: any) {
    return Promise.reject(new NoAnswer(e.message, false));
  }
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new NoAnswer("cancelled before it was sent", false));
    const child = spawn(binary, ["--json", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    const abort = () => child.kill("SIGTERM");
    signal?.addEventListener("abort", abort, { once: true });
    let pending = "";
    let last = "";
    let stderr = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      pending += chunk;
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (!line.trim()) continue;
        if (onProgress && line.startsWith('{"progress":')) {
          try {
            onProgress(JSON.parse(line).progress);
            continue;
          } catch {}
        }
        last = line;
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 65536) stderr += chunk;
    });
    // `error` without `close` when the binary could not be started at all: nothing was sent.
    child.on("error", (e) => {
      signal?.removeEventListener("abort", abort);
      reject(new NoAnswer(cannotRun(binary, e), false));
    });
    child.on("close", (code, killedBy) => {
      signal?.removeEventListener("abort", abort);
      if (signal?.aborted) return reject(new NoAnswer(`cancelled (screenpilot ${args[0]} stopped)`, true));
      const text = (last || pending).trim();
      try {
        resolve(JSON.parse(text));
      } catch {
        const how = killedBy ? `killed by ${killedBy}` : `exit status ${code}`;
        reject(new NoAnswer(`screenpilot ${args[0]}: ${how}: ${stderr.trim() || text}`, true));
      }
    });
  });
}

/** One operation with JSON parameters (the MCP tool of the same name). */
function call(tool: string, params: object, signal?: AbortSignal): Promise<any> {
  return cli(["call", tool, JSON.stringify(params)], signal);
}

function failed(answer: any): string | undefined {
  return answer?.ok === false ? answer.error?.message ?? JSON.stringify(answer.error) : undefined;
}

/**
 * An answer shaped for a model: the screen (`text`) under one line of the other small fields, and
 * the PNG as an image. The whole answer (less the PNG) is the structured content and the details.
 */
function forModel(answer: any): Result {
  const error = failed(answer);
  if (error) return { content: [{ type: "text", text: error }], details: answer, isError: true };
  const { png, text, ...rest } = answer ?? {};
  const facts = { ...rest };
  for (const bulky of ["cells", "styled", "svg", "scrollback"]) delete facts[bulky];
  let body = JSON.stringify(facts);
  for (const extra of ["styled", "scrollback"]) {
    if (typeof rest[extra] === "string") body += `\n${extra}:\n${rest[extra]}`;
  }
  if (rest.cells !== undefined) body += `\ncells: ${JSON.stringify(rest.cells)}`;
  if (rest.svg !== undefined) body += `\nsvg:\n${rest.svg}`;
  if (typeof text === "string") body += `\n${text.replace(/\n+$/, "")}`;
  const content: Content[] = [{ type: "text", text: body }];
  if (typeof png === "string") content.push({ type: "image", data: png, mimeType: "image/png" });
  const structured = { ...rest, ...(text === undefined ? {} : { text }) };
  return { content, details: structured, structuredContent: structured };
}

/**
 * The binary's terminal tools as MCP lists them (`screenpilot mcp --tools classic`): name,
 * description, input schema and annotations, so the pi tools never drift from the binary's.
 */
function terminalTools(): Promise<any[]> {
  const binary = findBinary();
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ["mcp", "--tools", "classic"], { stdio: ["pipe", "pipe", "ignore"] });
    // Listing tools starts no daemon and takes milliseconds; the bound only guards a wedged binary.
    const bound = setTimeout(() => child.kill("SIGKILL"), 15000);
    let pending = "";
    let tools: any[] | undefined;
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      pending += chunk;
      for (let nl; (nl = pending.indexOf("\n")) >= 0; ) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        let message: any;
        try {
          message = JSON.parse(line);
        } catch {
          continue;
        }
        if (message.id === 1) {
          child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
          child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })}\n`);
        } else if (message.id === 2) {
          tools = message.result?.tools;
          child.stdin.end();
        }
      }
    });
    child.on("error", (e) => reject(new Error(cannotRun(binary, e))));
    child.on("close", () => {
      clearTimeout(bound);
      tools ? resolve(tools) : reject(new Error("`screenpilot mcp --tools classic` listed no tools"));
    });
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "screenpilot-pi", version: "0.1.0" } },
      })}\n`,
    );
  });
}

const Action = Type.Object({}, { additionalProperties: true, description:
  'One pilot action: {"press": "tab"} (or a list of keys), {"click": "#sel"} (or {selector, offset, times, button}), {"double_click": "#sel"}, {"hover": "#sel"}, {"pause": 0.5}, {"resize": [100, 30]}, {"screenshot": true}' });

/** `textual_run`'s parameters as the `textual` verb's command line (the verb streams each action). */
function textualArgs(params: any): string[] {
  const args = ["textual"];
  if (params.actions) args.push("--actions", JSON.stringify(params.actions));
  if (params.size) args.push("--size", `${params.size[0]}x${params.size[1]}`);
  if (params.screenshot) args.push("--screenshot");
  if (params.tree) args.push("--tree");
  for (const selector of params.query ?? []) args.push("--query", selector);
  if (params.session) args.push("--session", params.session);
  if (params.close) args.push("--close");
  if (params.python) args.push("--python", params.python);
  if (params.timeout !== undefined) args.push("--timeout", String(params.timeout));
  if (params.app) args.push("--", params.app);
  return args;
}

export default async function (pi: any) {
  pi.registerTool({
    name: "textual_run",
    label: "Textual",
    description:
      "Run a Textual app and drive it with pilot actions; returns the screen text (and the widget tree and " +
      "query results when asked), streaming the screen after each action. One-shot without `session`; with " +
      "`session` and `app` opens a session kept between calls; with `session` alone acts on it; `close: true` " +
      "ends it. `screenshot: true` saves the final screen as SVG (and PNG) next to the app.",
    parameters: Type.Object({
      app: Type.Optional(Type.String({ description: "Python file defining the app (module-level `app` or one App subclass)" })),
      actions: Type.Optional(Type.Array(Action, { description: "Pilot actions, in order" })),
      size: Type.Optional(Type.Tuple([Type.Integer(), Type.Integer()], { description: "[width, height], default [80, 25]" })),
      screenshot: Type.Optional(Type.Boolean({ description: "Export the final screen as SVG next to the app" })),
      tree: Type.Optional(Type.Boolean({ description: "Include the widget tree" })),
      query: Type.Optional(Type.Array(Type.String(), { description: "Selectors whose widgets' state to include" })),
      session: Type.Optional(Type.String({ description: "Persistent session name" })),
      close: Type.Optional(Type.Boolean({ description: "With session: close it" })),
      python: Type.Optional(Type.String({ description: "Python interpreter, default python3" })),
      timeout: Type.Optional(Type.Integer({ description: "Timeout in milliseconds, default 120000" })),
    }),
    async execute(_id: string, params: any, signal?: AbortSignal, onUpdate?: Update): Promise<Result> {
      const answer = await cli(textualArgs(params), signal, (update) =>
        onUpdate?.({
          content: [{ type: "text", text: update.message ?? update.text ?? "" }],
          details: { step: update.step, of: update.of, action: update.action, sid: update.sid },
        }),
      );
      const error = failed(answer);
      if (error) return { content: [{ type: "text", text: error }], details: answer, isError: true };
      const d = answer.details ?? {};
      let text = answer.text ?? "";
      if (answer.query !== undefined) text += `\nquery: ${JSON.stringify(answer.query)}`;
      if (answer.tree !== undefined) text += `\ntree: ${JSON.stringify(answer.tree)}`;
      return {
        content: [{ type: "text", text }],
        details: { exitValue: d.exit_value ?? null, screenshot: d.screenshot ?? null, size: d.size, python: d.python, ...answer },
      };
    },
  });

  // The desktop `computer` drives when no session is named: the display in $DISPLAY when there is
  // one (the user's visible desktop), else a private one started on first use, closed with pi.
  let desktop: Promise<string> | undefined;
  let owned = false;
  function defaultDesktop(signal?: AbortSignal): Promise<string> {
    desktop ??= (async () => {
      const sid = `pi-computer-${process.pid}`;
      const params: any = { sid };
      if (process.env.DISPLAY) params.display = process.env.DISPLAY;
      const answer = await call("desktop_start", params, signal);
      const error = failed(answer);
      if (error) throw new Error(`desktop_start: ${error}`);
      owned = true;
      return sid;
    })().catch((e) => {
      desktop = undefined;
      throw e;
    });
    return desktop;
  }
  pi.on?.("session_shutdown", async () => {
    if (desktop && owned) {
      const sid = await desktop.catch(() => undefined);
      if (sid) await call("close", { sid }).catch(() => undefined);
    }
  });

  /**
   * A screenshot of `sid` to go with an unknown outcome, if one comes within a few seconds (the
   * display may be wedged, which is why the action gave no answer): the answer, or why there is none.
   */
  async function lookNow(sid: string): Promise<{ answer?: any; why?: string }> {
    const bound = AbortSignal.timeout(5000);
    const answer = await call("computer", { sid, action: { type: "screenshot" } }, bound).catch((e: any) => ({
      ok: false,
      error: { message: bound.aborted ? "none came within 5 s" : e.message },
    }));
    return typeof answer?.png === "string" ? { answer } : { why: failed(answer) ?? "no picture in the answer" };
  }

  /**
   * The result for a `computer` call that failed: the warning first (is the outcome unknown, or was
   * nothing sent?), then the error, and the screenshot taken after it when there is one. The PNG is
   * given to the model as an image and kept out of `details`.
   */
  function computerFailure(sid: string, type: string, answer: any, warning?: string, why?: string): Result {
    const { png, ...rest } = answer ?? {};
    const lines = warning ? [warning] : [];
    const error = failed(answer);
    if (error) lines.push(`error: ${error}`);
    if (rest.screenshot_error) lines.push(`the screenshot failed too: ${rest.screenshot_error.message}`);
    if (why) lines.push(`no screenshot: ${why}`);
    const content: Content[] = [{ type: "text", text: lines.join("\n") }];
    if (typeof png === "string") content.push({ type: "image", data: png, mimeType: "image/png" });
    return { content, details: { sid, action: type, warning, ...rest }, isError: true };
  }

  /** The OpenAI action surface, one flat object as pi-computer-use declares it: `type` and the fields that
   * type uses. Further fields (Anthropic's names, `ms` for wait) go through to the daemon, which names a
   * field that does not fit the action. */
  const Point = Type.Object({ x: Type.Number(), y: Type.Number() });
  const ComputerAction = Type.Object(
    {
      type: Type.Union(
        ["screenshot", "click", "double_click", "scroll", "type", "wait", "move", "keypress", "drag"].map((t) =>
          Type.Literal(t),
        ),
      ),
      x: Type.Optional(Type.Number({ description: "Screenshot pixels from the left" })),
      y: Type.Optional(Type.Number({ description: "Screenshot pixels from the top" })),
      button: Type.Optional(
        Type.Union(["left", "right", "wheel", "back", "forward"].map((b) => Type.Literal(b)), {
          description: "click: left (default), right, wheel (middle), back, forward",
        }),
      ),
      scroll_x: Type.Optional(Type.Number({ description: "scroll: + is right; 120 a notch" })),
      scroll_y: Type.Optional(Type.Number({ description: "scroll: + is down; 120 a notch" })),
      text: Type.Optional(Type.String({ description: "type: the text, verbatim" })),
      keys: Type.Optional(
        Type.Array(Type.String(), { description: 'keypress: one chord, e.g. ["CTRL", "S"] or ["ENTER"]' }),
      ),
      path: Type.Optional(Type.Array(Point, { description: "drag: the points, first to last" })),
    },
    { additionalProperties: true, description: "The action: {type, ...fields}" },
  );

  pi.registerTool({
    name: "computer",
    label: "Computer",
    description:
      "Control the desktop with mouse and keyboard; every action returns a fresh PNG screenshot. Coordinates are " +
      "pixels of the latest screenshot. action.type: screenshot, click {x, y, button}, double_click {x, y}, " +
      "scroll {x, y, scroll_x, scroll_y}, type {text}, wait, move {x, y}, keypress {keys}, drag {path}. A failed " +
      "action's result says first whether its outcome is unknown (inspect the screenshot before retrying) or " +
      "nothing was sent.",
    parameters: Type.Object({
      action: ComputerAction,
      session: Type.Optional(Type.String({ description: "A screenpilot session to drive instead of the default desktop" })),
    }),
    async execute(_id: string, params: any, signal?: AbortSignal): Promise<Result> {
      const sid = params.session ?? (await defaultDesktop(signal));
      const type = String(params.action?.type ?? "action");
      let answer: any;
      try {
        answer = await call("computer", { sid, action: params.action }, signal);
      } catch (e: any) {
        if (!(e instanceof NoAnswer) || !e.sent) throw e;
        // The action went out and no answer came back (pi's abort, or the CLI died): it may have
        // been done in part or whole. Never retried here; the model looks first, as in pi-computer-use.
        const { answer: shot, why } = await lookNow(sid);
        const how = signal?.aborted ? "was cancelled after it was sent" : "gave no answer";
        const look = shot ? "inspect the screenshot before retrying" : "take a screenshot before retrying";
        const { png, width, height, pointer } = shot ?? {};
        const code = signal?.aborted ? "cancelled" : "no_answer";
        const unknown = { ok: false, sid, outcome: "unknown", error: { code, message: e.message }, png, width, height, pointer };
        return computerFailure(sid, type, unknown, `${type} ${how}: its outcome is unknown; ${look}.`, why);
      }
      if (failed(answer)) {
        // Without `outcome` the error says itself what happened (a refused request sent nothing; a
        // screenshot that failed after every action was done says not to repeat them).
        const warning =
          answer.outcome === "unknown"
            ? `${type} failed after its input may have reached the screen: the outcome is unknown; inspect the screenshot before retrying.`
            : answer.outcome === "not_sent"
              ? `${type} failed before any input was sent: nothing was done${answer.png ? "; the screenshot shows the screen as it is" : ""}.`
              : undefined;
        return computerFailure(sid, type, answer, warning);
      }
      const { png, ...rest } = answer;
      const content: Content[] = [{ type: "text", text: `${type} done; screenshot ${rest.width}x${rest.height}` }];
      if (png) content.push({ type: "image", data: png, mimeType: "image/png" });
      return { content, details: { sid, ...rest } };
    },
  });

  // The terminal tools, thin over `screenpilot call TOOL`. Without a binary there is nothing to list
  // them from: textual_run and computer still load and say what is missing when called.
  let tools: any[] = [];
  try {
    tools = await terminalTools();
  } catch (e: any) {
    console.error(`screenpilot: terminal tools not registered: ${e.message}`);
  }
  for (const tool of tools) {
    pi.registerTool({
      name: `terminal_${tool.name}`,
      label: `Terminal ${tool.name}`,
      description: tool.description ?? tool.name,
      parameters: tool.inputSchema,
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
      async execute(_id: string, params: any, signal?: AbortSignal): Promise<Result> {
        return forModel(await call(tool.name, params ?? {}, signal));
      },
    });
  }
}
