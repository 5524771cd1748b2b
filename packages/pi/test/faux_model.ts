// Test only: a pi extension that registers pi-ai's faux provider (`--provider faux --model faux-1`)
// with a scripted model. $PI_E2E_SCENARIO picks the script:
//   seed      textual_run on the seed's counter app ($PI_E2E_APP), then computer on a desktop;
//   terminal  the package's terminal tools on a Python REPL;
//   binary    one computer screenshot (the driver changes where the binary is between runs);
//   display   computer with $DISPLAY set (the driver's Xvfb): a screenshot, a click in its far corner;
//   failures  computer actions that fail on terminal sessions: a click the REPL cannot take (nothing
//             sent), typing into a program that reads no input (outcome unknown), a click off the
//             screenshot (refused before anything runs);
//   cancel    a wait that never matches, a long Textual run, and a long computer wait on a private
//             desktop (the driver aborts all three);
//   mcp       spawn and send with until, send for the whole screen, close, textual_run on the counter,
//             desktop_start (an xterm), computer screenshot, click, type and keypress, snapshot of the title the
//             typed command set, and close, through the MCP config of the README.
// $PI_E2E_PYTHON is the interpreter (with Textual) the apps and the REPL run under.
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";

export default function (pi: any) {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1", reasoning: false }] });
  const app = process.env.PI_E2E_APP;
  const python = process.env.PI_E2E_PYTHON;
  const step = (name: string, args: object) => fauxAssistantMessage([fauxToolCall(name, args)], { stopReason: "toolUse" });
  const done = fauxAssistantMessage([fauxText("done")]);
  const computerOn = (sid: string, action: object) => step("mcp__screenpilot__computer", { sid, action });
  // A program that takes no input: raw mode (so the kernel buffers it unread), then sleeps.
  const deaf = "import tty, time; tty.setraw(0); print('deaf', flush=True); time.sleep(600)";
  const scripts: Record<string, any[]> = {
    seed: [
      step("textual_run", {
        app,
        python,
        actions: [{ press: "tab" }, { click: "#inc" }, { pause: 0.2 }, { click: "#inc" }],
        screenshot: true,
      }),
      step("computer", { action: { type: "screenshot" } }),
      step("computer", { action: { type: "click", x: 100, y: 100, button: "left" } }),
      step("computer", { action: { type: "type", text: "hello" } }),
      step("computer", { action: { type: "keypress", keys: ["ctrl", "a"] } }),
      done,
    ],
    terminal: [
      step("terminal_spawn", { sid: "pi-repl", argv: [python, "-q"] }),
      step("terminal_wait_for", { sid: "pi-repl", pattern: "^>>> $" }),
      step("terminal_send_line", { sid: "pi-repl", text: "6 * 7" }),
      step("terminal_wait_for", { sid: "pi-repl", pattern: "^42$" }),
      step("terminal_snapshot", { sid: "pi-repl" }),
      step("terminal_screenshot", { sid: "pi-repl" }),
      step("terminal_list", {}),
      step("terminal_close", { sid: "pi-repl" }),
      done,
    ],
    binary: [step("computer", { action: { type: "screenshot" } }), done],
    display: [
      step("computer", { action: { type: "screenshot" } }),
      step("computer", { action: { type: "click", x: 641, y: 480, button: "left" } }),
      done,
    ],
    failures: [
      step("terminal_spawn", { sid: "pi-repl", argv: [python, "-q"] }),
      step("terminal_wait_for", { sid: "pi-repl", pattern: "^>>> $" }),
      step("computer", { session: "pi-repl", action: { type: "click", x: 5, y: 5, button: "left" } }),
      step("terminal_spawn", { sid: "pi-deaf", argv: [python, "-c", deaf] }),
      step("terminal_wait_for", { sid: "pi-deaf", pattern: "^deaf$" }),
      // 80 KB of input, more than a pty holds unread: the write stalls and the daemon gives up.
      step("computer", { session: "pi-deaf", action: { type: "type", text: "\u{1F600}".repeat(20000) } }),
      step("computer", { session: "pi-repl", action: { type: "click", x: 5000, y: 5, button: "left" } }),
      step("terminal_close", { sid: "pi-repl" }),
      step("terminal_close", { sid: "pi-deaf" }),
      done,
    ],
    // Three prompts, "wait", "textual" and "computer", each ended by the driver's abort. The script
    // follows the prompt (pi may call the model once more after an abort, which must not eat the
    // next step).
    cancel: Array.from({ length: 14 }, () => (context: any) => {
      const messages: any[] = context.messages ?? [];
      const last = messages.map((m) => m.role).lastIndexOf("user");
      const prompt = JSON.stringify(messages[last]?.content ?? "");
      const results = messages.slice(last + 1).filter((m) => m.role === "toolResult").length;
      const scripts: Record<string, any[]> = {
        wait: [
          step("terminal_spawn", { sid: "pi-cancel", argv: [python, "-q"] }),
          step("terminal_wait_for", { sid: "pi-cancel", pattern: "^never$", timeout_ms: 600000 }),
        ],
        textual: [step("textual_run", { app, python, actions: [{ press: "tab" }, { pause: 500 }], timeout: 600000 })],
        // The first call starts the private desktop; the driver aborts the second once it runs.
        computer: [
          step("computer", { action: { type: "screenshot" } }),
          step("computer", { action: { type: "wait", ms: 60000 } }),
        ],
      };
      const script = Object.entries(scripts).find(([name]) => prompt.includes(name))?.[1] ?? [];
      return script[results] ?? done;
    }),
    mcp: [
      // The lean tools: each input carries what to wait for; a later look is only what changed.
      step("mcp__screenpilot__spawn", { sid: "pi-mcp", cmd: `${python} -q`, until: { regex: "^>>> $" } }),
      step("mcp__screenpilot__send", { sid: "pi-mcp", keys: ["6 * 7", "Enter"], until: { regex: "^42$" } }),
      step("mcp__screenpilot__send", { sid: "pi-mcp", screen: "full" }),
      step("mcp__screenpilot__close", { sid: "pi-mcp" }),
      // The seed's run through MCP too: the counter, then a desktop.
      step("mcp__screenpilot__textual_run", {
        app,
        python,
        actions: [{ press: "tab" }, { click: "#inc" }, { pause: 0.2 }, { click: "#inc" }],
        screenshot: true,
      }),
      // An xterm running bash; the typed command sets the window title, which a wait then sees.
      step("mcp__screenpilot__desktop_start", {
        sid: "pi-mcp-desktop",
        argv: ["env", "PS1=$ ", "xterm", "-T", "pi-mcp", "-geometry", "80x24+0+0", "-e", "bash", "--norc", "--noprofile"],
      }),
      computerOn("pi-mcp-desktop", { type: "screenshot" }),
      computerOn("pi-mcp-desktop", { type: "click", x: 100, y: 100, button: "left" }),
      computerOn("pi-mcp-desktop", { type: "type", text: "printf '\\033]2;%s\\007' typed-through-mcp" }),
      computerOn("pi-mcp-desktop", { type: "keypress", keys: ["Return"] }),
      step("mcp__screenpilot__snapshot", { sid: "pi-mcp-desktop" }),
      step("mcp__screenpilot__close", { sid: "pi-mcp-desktop" }),
      done,
    ],
  };
  const scenario = process.env.PI_E2E_SCENARIO ?? "seed";
  if (!scripts[scenario]) throw new Error(`PI_E2E_SCENARIO: no script named ${scenario}`);
  faux.setResponses(scripts[scenario]);
  pi.registerProvider(faux.provider);
}
