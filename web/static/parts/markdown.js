/* The answer's markdown subset: paragraphs, "- " bullets, **bold**, `code`, [n] citation markers; and the split
 * of an answer into a short lead and titled blocks ("**Memoria:** …", "Ipotesi:" + bullets) for collapsible sections. */

import { el } from "./dom.js";
import { t } from "./i18n.js";

/** Inline text: **bold**, `code` and [n] citation markers; everything else is a text node. */
export function inline(text, citations) {
  const out = document.createDocumentFragment();
  const pattern = /\*\*([^*]+)\*\*|`([^`]+)`|\[(\d{1,2})\]/g;
  let last = 0;
  let match;
  while ((match = pattern.exec(text)) !== null) {
    out.appendChild(document.createTextNode(text.slice(last, match.index)));
    if (match[1] !== undefined) {
      out.appendChild(el("strong", { text: match[1] }));
    } else if (match[2] !== undefined) {
      out.appendChild(el("code", { text: match[2] }));
    } else {
      out.appendChild(citationMarker(Number(match[3]), citations));
    }
    last = pattern.lastIndex;
  }
  out.appendChild(document.createTextNode(text.slice(last)));
  return out;
}

function citationMarker(n, citations) {
  if (!citations || n < 1 || n > citations.length) { return document.createTextNode("[" + n + "]"); }
  const button = el("button", { type: "button", class: "cite", "aria-label": t("sources") + " " + n,
                                text: "[" + n + "]" });
  button.addEventListener("click", function () {
    const bubble = button.closest(".bubble");
    const target = bubble && bubble.querySelector('details[data-cite="' + n + '"]');
    if (!target) { return; }
    const holder = target.closest("details.section");
    if (holder) { holder.open = true; }
    target.open = true;
    target.scrollIntoView({ block: "nearest" });
    target.querySelector("summary").focus();
  });
  return el("sup", {}, [button]);
}

/** Paragraphs (blank-line separated, single newlines kept as line breaks) and "- " bullet lists. */
export function markdown(text, citations) {
  const root = el("div", { class: "md" });
  let list = null;
  let para = null;
  String(text || "").split(/\r?\n/).forEach(function (raw) {
    const line = raw.trim();
    const bullet = /^(?:[-*•]\s+)(.*)$/.exec(line);
    if (!line) { list = null; para = null; return; }
    if (bullet) {
      para = null;
      if (!list) { list = root.appendChild(el("ul")); }
      list.appendChild(el("li", {}, [inline(bullet[1], citations)]));
      return;
    }
    list = null;
    if (para) { para.appendChild(el("br")); } else { para = root.appendChild(el("p")); }
    para.appendChild(inline(line, citations));
  });
  return root;
}

const LABELLED = /^\*\*([^*]{1,40}?):?\*\*:?\s*(.*)$/;
const LIST_TITLE = /^([^\n]{1,40}):$/;

/** {lead, blocks}: the lead is the first block and the plain paragraphs before the first titled block; each titled
 * block ({title, text}) collects the plain paragraphs after it. A list whose bullets are all "[n] …" (the sources,
 * shown from the citations instead) is dropped. */
export function splitAnswer(text) {
  const parts = String(text || "").split(/\n\s*\n/).map(function (b) { return b.trim(); }).filter(Boolean);
  const lead = [];
  const blocks = [];
  parts.forEach(function (part, i) {
    const lines = part.split(/\r?\n/);
    const labelled = LABELLED.exec(lines[0]);
    const listTitle = LIST_TITLE.exec(lines[0].trim());
    const bullets = lines.slice(1).filter(function (l) { return /^\s*[-*•]\s+/.test(l); });
    if (i > 0 && listTitle && bullets.length === lines.length - 1 && bullets.length) {
      if (bullets.every(function (l) { return /^\s*[-*•]\s+\[\d{1,2}\]/.test(l); })) { return; }
      blocks.push({ title: listTitle[1], text: lines.slice(1).join("\n") });
    } else if (i > 0 && labelled) {
      blocks.push({ title: labelled[1], text: [labelled[2]].concat(lines.slice(1)).join("\n") });
    } else if (blocks.length) {
      blocks[blocks.length - 1].text += "\n\n" + part;
    } else {
      lead.push(part);
    }
  });
  return { lead: lead.join("\n\n"), blocks: blocks };
}
