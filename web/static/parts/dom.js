/* DOM helpers: elements built with DOM APIs and textContent only (never innerHTML). */

const SVG_NS = "http://www.w3.org/2000/svg";

export function setAttrs(node, attrs) {
  Object.keys(attrs || {}).forEach(function (name) {
    const value = attrs[name];
    if (value === null || value === undefined || value === false) { return; }
    if (name === "text") { node.textContent = value; } else { node.setAttribute(name, String(value)); }
  });
}

/** An HTML element with attributes ("text" sets textContent) and children (strings become text nodes). */
export function el(tag, attrs, children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  (children || []).forEach(function (child) {
    if (child === null || child === undefined || child === false) { return; }
    node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  });
  return node;
}

/** An SVG element; `text` becomes its textContent. */
export function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  if (text !== undefined) { node.textContent = text; }
  return node;
}

/** Text that may break only after ".", "_", "-", "/" or ":" (instance ids and regions never break mid-word). */
export function breakable(text) {
  const out = document.createDocumentFragment();
  String(text || "").split(/([._\-/:])/).forEach(function (part, i) {
    if (!part) { return; }
    out.appendChild(document.createTextNode(part));
    if (i % 2 === 1) { out.appendChild(document.createElement("wbr")); }
  });
  return out;
}

/** A collapsible section: <details class="section KIND"><summary>title</summary>…children</details>. */
export function section(kind, title, children, open) {
  const summary = el("summary", {}, Array.isArray(title) ? title : [title]);
  return el("details", { class: "section " + kind, "data-section": kind, open: open ? "" : null },
            [summary, el("div", { class: "section-body" }, children)]);
}
