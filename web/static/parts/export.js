/* "Launch with SkyPilot": asks the server for the recommendation as a SkyPilot task and downloads task.yaml. */

import { el } from "./dom.js";
import { t } from "./i18n.js";

/** The fields of a result the export needs (the server ignores the rest). */
function exportBody(result) {
  return JSON.stringify({ language: result.language, spec: result.spec || {}, estimate: result.estimate || null,
                          offers: (result.offers || []).slice(0, 1), catalog: result.catalog || null });
}

/** A button that downloads the task file; a failure is shown next to it in one line. */
export function skypilotButton(api, result) {
  const status = el("span", { class: "export-status", role: "status" });
  const button = el("button", { type: "button", class: "export-skypilot", text: t("skypilot_download") });
  button.addEventListener("click", async function () {
    button.disabled = true;
    status.textContent = "";
    try {
      const response = await fetch(api + "/api/export/skypilot", {
        method: "POST", headers: { "Content-Type": "application/json" }, body: exportBody(result)
      });
      const body = await response.json();
      if (!response.ok) { throw new Error(body && body.error ? body.error.message : String(response.status)); }
      const link = el("a", { href: URL.createObjectURL(new Blob([body.yaml], { type: "application/yaml" })),
                             download: body.filename });
      document.body.appendChild(link);
      link.click();
      link.remove();
      status.textContent = (body.note ? body.note + " " : "") + t("skypilot_launch") + " " + body.launch_command;
    } catch (error) {
      status.textContent = t("skypilot_error") + " " + error.message;
    } finally {
      button.disabled = false;
    }
  });
  return el("p", { class: "export" }, [button, " ", status]);
}
