// pi tools backed by the screenpilot binary, under the names and shapes of the pi extensions they
// replace: `textual_run` (pi-textual) and `computer` (pi-computer-use, `{action: {type, ...}}`).
// Each call runs `screenpilot --json call TOOL PARAMS`; the daemon it talks to keeps Textual
// sessions and desktops between calls. The binary: $SCREENPILOT_BINARY, else the one the
// `screenpilot` npm package installed, else `screenpilot` on PATH.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, join } from "node:path";
import { Type } from "typebox";

type Result = { content: any[]; details: any; isError?: boolean };

function findBinary(): string {
  const given = process.env.SCREENPILOT_BINARY;
  if (given) {
    if (!existsSync(given)) throw new Error(`SCREENPILOT_BINARY is ${given}, which does not exist`);
    return given;
  }
  const require = createRequire(import.meta.url);
  try {
    return require.resolve(`@screenpilot/${process.platform}-${process.arch}/bin/screenpilot`);
  } catch {}
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, "screenpilot"))) return join(dir, "screenpilot");
  }
  throw new Error(
    "no screenpilot binary: install the npm package `screenpilot` (npm install -g screenpilot), " +
      "put screenpilot on PATH, or set SCREENPILOT_BINARY",
  );
}

/** Run one screenpilot operation; the parsed JSON answer. Pi's signal stops the call. */
function call(tool: string, params: object, signal?: AbortSignal): Promise<any> {
  const binary = findBinary();
  return new Promise((resolve, reject) => {
    const child = execFile(
      binary,
      ["--json", "call", tool, JSON.stringify(params)],
      { maxBuffer: 256 * 1024 * 1024, signal, killSignal: "SIGINT" },
      (error, stdout, stderr) => {
        if (signal?.aborted) return reject(new Error(`${tool} cancelled`));
        try {
          resolve(JSON.parse(stdout));
        } catch {
          reject(new Error(`${tool}: ${error?.message ?? ""} ${stderr}`.trim()));
        }
      },
    );
    void child;
  });
}

function failed(answer: any): string | undefined {
  return answer?.ok === false ? answer.error?.message ?? JSON.stringify(answer.error) : undefined;
}

const Action = Type.Object({}, { additionalProperties: true, description:
  'One pilot action: {"press": "tab"} (or a list of keys), {"click": "#sel"} (or {selector, offset, times, button}), {"double_click": "#sel"}, {"hover": "#sel"}, {"pause": 0.5}, {"resize": [100, 30]}, {"screenshot": true}' });

export default function (pi: any) {
  pi.registerTool({
    name: "textual_run",
    label: "Textual",
    description:
      "Run a Textual app headless and drive it with pilot actions; returns the screen text. One-shot without " +
      "`session`; with `session` and `app` opens a session kept between calls; with `session` alone acts on it; " +
      "`close: true` ends it. `screenshot: true` saves the final screen as SVG (and PNG) next to the app.",
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
    async execute(_id: string, params: any, signal?: AbortSignal): Promise<Result> {
      const answer = await call("textual_run", params, signal);
      const error = failed(answer);
      if (error) return { content: [{ type: "text", text: error }], details: answer, isError: true };
      const d = answer.details ?? {};
      return {
        content: [{ type: "text", text: answer.text ?? "" }],
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

  pi.registerTool({
    name: "computer",
    label: "Computer",
    description:
      "Control the desktop with mouse and keyboard; every action returns a fresh PNG screenshot. Coordinates are " +
      "pixels of the latest screenshot. action.type: screenshot, click {x, y, button}, double_click {x, y}, " +
      "scroll {x, y, scroll_x, scroll_y}, type {text}, wait, move {x, y}, keypress {keys}, drag {path}.",
    parameters: Type.Object({
      action: Type.Object({ type: Type.String() }, { additionalProperties: true, description: "The action: {type, ...fields}" }),
      session: Type.Optional(Type.String({ description: "A screenpilot session to drive instead of the default desktop" })),
    }),
    async execute(_id: string, params: any, signal?: AbortSignal): Promise<Result> {
      const sid = params.session ?? (await defaultDesktop(signal));
      let answer: any;
      let warning: string | undefined;
      try {
        answer = await call("computer", { sid, action: params.action }, signal);
      } catch (e: any) {
        warning = `the outcome of ${params.action?.type} is unknown (${e.message}); inspect the screenshot before retrying`;
        answer = await call("computer", { sid, action: { type: "screenshot" } }).catch(() => undefined);
      }
      const error = failed(answer);
      if (error) return { content: [{ type: "text", text: error }], details: answer, isError: true };
      const { png, ...rest } = answer ?? {};
      const text = warning ?? `${params.action?.type} done; screenshot ${rest.width}x${rest.height}`;
      const content: any[] = [{ type: "text", text }];
      if (png) content.push({ type: "image", data: png, mimeType: "image/png" });
      return { content, details: { sid, warning, ...rest } };
    },
  });
}
