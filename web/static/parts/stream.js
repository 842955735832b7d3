/* POST /api/chat/stream and its Server-Sent Events: progress, verdict, delta, final, error. */

/** One SSE block as {event, data} (data parsed as JSON), or null for a comment or a malformed block. */
export function parseSse(block) {
  let event = "message";
  const data = [];
  block.split(/\r?\n/).forEach(function (line) {
    if (!line || line.charAt(0) === ":") { return; }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") { event = value; } else if (field === "data") { data.push(value); }
  });
  if (!data.length) { return null; }
  try { return { event: event, data: JSON.parse(data.join("\n")) }; } catch (e) { return null; }
}

/** Send `body`, call handlers.progress/verdict/delta as events arrive; resolves to {result} or {error}. */
export async function chatStream(api, body, handlers) {
  let response;
  try {
    response = await fetch(api + "/api/chat/stream", {
      method: "POST", headers: { "Content-Type": "application/json", "Accept": "text/event-stream" },
      body: JSON.stringify(body)
    });
  } catch (e) {
    return { error: { code: "network", message: String(e && e.message || e) } };
  }
  if (!response.ok || !response.body) {
    const payload = await response.json().catch(function () { return {}; });
    const error = (payload && payload.error) || { code: "default", message: "HTTP " + response.status };
    error.retryAfter = response.headers.get("Retry-After");
    return { error: error };
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const chunk = await reader.read();
      buffer += decoder.decode(chunk.value || new Uint8Array(), { stream: !chunk.done });
      const blocks = buffer.split(/\r?\n\r?\n/);
      buffer = chunk.done ? "" : blocks.pop();
      for (let i = 0; i < blocks.length; i++) {
        const message = parseSse(blocks[i]);
        if (!message) { continue; }
        if (message.event === "progress") { handlers.progress(message.data); }
        else if (message.event === "verdict") { handlers.verdict(message.data); }
        else if (message.event === "delta") { handlers.delta(message.data); }
        else if (message.event === "final") { return { result: message.data.result || {} }; }
        else if (message.event === "error") { return { error: message.data }; }
      }
      if (chunk.done) { return { error: { code: "network", message: "stream ended early" } }; }
    }
  } catch (e) {
    return { error: { code: "network", message: String(e && e.message || e) } };
  } finally {
    reader.cancel().catch(function () {});
  }
}
