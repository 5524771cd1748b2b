// Test only: a pi extension that registers pi-ai's faux provider (`--provider faux --model faux-1`)
// with a scripted model that calls textual_run on the seed's counter app, then computer on a desktop.
// The app path comes from $PI_E2E_APP.
import { fauxAssistantMessage, fauxProvider, fauxText, fauxToolCall } from "@earendil-works/pi-ai";

export default function (pi: any) {
  const faux = fauxProvider({ provider: "faux", models: [{ id: "faux-1", reasoning: false }] });
  const app = process.env.PI_E2E_APP;
  const step = (name: string, args: object) => fauxAssistantMessage([fauxToolCall(name, args)], { stopReason: "toolUse" });
  faux.setResponses([
    step("textual_run", {
      app,
      python: process.env.PI_E2E_PYTHON,
      actions: [{ press: "tab" }, { click: "#inc" }, { pause: 0.2 }, { click: "#inc" }],
      screenshot: true,
    }),
    step("computer", { action: { type: "screenshot" } }),
    step("computer", { action: { type: "click", x: 100, y: 100, button: "left" } }),
    step("computer", { action: { type: "type", text: "hello" } }),
    step("computer", { action: { type: "keypress", keys: ["ctrl", "a"] } }),
    fauxAssistantMessage([fauxText("done")]),
  ]);
  pi.registerProvider(faux.provider);
}
