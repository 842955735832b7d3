/*
 * gpu-advisor chat widget. Embed with one tag:
 *   <script src="https://HOST/widget/widget.js" data-api="https://HOST" data-lang="it" defer></script>
 * This loader reads the tag and imports the widget's modules from parts/ next to this file (plain ES modules served
 * by the app: no bundler, no CDN). A launcher button and a chat panel live in a Shadow DOM, so the host page's CSS
 * cannot reach them. Server text is only set with textContent or DOM APIs: never innerHTML.
 *
 *   parts/app.js       shell: launcher, panel, language menu, saved state, sending turns
 *   parts/stream.js    POST /api/chat/stream and its Server-Sent Events
 *   parts/answer.js    one answer: verdict card, lead, collapsible sections, quick-reply chips
 *   parts/verdict.js   the verdict card and "what changed"
 *   parts/offers.js    the offers table (zone duplicates merged)
 *   parts/charts.js    memory bar and cost/time chart (ticks, legends)
 *   parts/markdown.js  the answer's markdown subset and its split into sections
 *   parts/i18n.js      strings (i18n.json), number/money formatting
 *   parts/dom.js       element helpers
 */
(function () {
  "use strict";

  var script = document.currentScript;
  if (!script || window.__gpuAdvisorWidget) { return; }
  window.__gpuAdvisorWidget = true;

  var scriptUrl = new URL(script.src, document.baseURI);
  var options = {
    api: (script.dataset.api || scriptUrl.origin).replace(/\/+$/, ""),
    assets: scriptUrl.href.replace(/[?#].*$/, "").replace(/[^/]*$/, ""),
    lang: script.dataset.lang
  };

  function load() {
    import(options.assets + "parts/app.js").then(function (app) { return app.start(options); }).catch(function (error) {
      if (window.console) { window.console.warn("gpu-advisor widget could not start:", error); }
    });
  }

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", load); } else { load(); }
})();
