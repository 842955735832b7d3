/*
 * The comparison table on any page, with one tag (an iframe of /compare put where the tag is):
 *   <script src="https://HOST/widget/compare-embed.js" data-api="https://HOST" data-lang="it"
 *           data-job="QLoRA su Llama 3 8B, budget 50 euro" data-height="720" defer></script>
 * data-lang, data-job and data-height are optional.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script) { return; }
  var api = (script.dataset.api || new URL(script.src, document.baseURI).origin).replace(/\/+$/, "");
  var params = new URLSearchParams();
  if (script.dataset.lang) { params.set("lang", script.dataset.lang); }
  if (script.dataset.job) { params.set("job", script.dataset.job); }
  params.set("embed", "1");
  var frame = document.createElement("iframe");
  frame.src = api + "/compare?" + params.toString();
  frame.title = script.dataset.title || "GPU offers";
  frame.loading = "lazy";
  frame.className = "gpu-advisor-compare";
  frame.style.cssText = "width:100%;border:0;display:block;height:" + (parseInt(script.dataset.height, 10) || 720) + "px";
  script.parentNode.insertBefore(frame, script.nextSibling);
})();
