/* Interface strings (i18n.json), number and money formatting. The interface language changes only when the user
 * picks it; `lang` arguments let an answer's own parts follow the language the user wrote in. */

export const LANGS = ["it", "id", "en"];

let strings = {};
let uiLang = "en";

export function setStrings(data) { strings = data && typeof data === "object" ? data : {}; }
export function setLang(lang) { uiLang = hasLang(lang) ? lang : "en"; }
export function uiLanguage() { return uiLang; }
export function hasLang(lang) { return LANGS.indexOf(lang) >= 0; }
export function langName(code) { return (strings[code] && strings[code].lang_name) || code; }
export function knownError(code) { return Boolean(code && strings.en && strings.en.errors && strings.en.errors[code]); }

export function pickLang(value) {
  const lang = String(value || navigator.language || "en").slice(0, 2).toLowerCase();
  return hasLang(lang) ? lang : "en";
}

/** The string at dotted `key` in `lang` (default: the interface language), with {name} placeholders filled. */
export function t(key, values, lang) {
  const table = strings[lang || uiLang] || strings.en || {};
  let text = key.split(".").reduce(function (node, part) { return node && node[part]; }, table);
  if (typeof text !== "string") { text = key; }
  return text.replace(/\{(\w+)\}/g, function (all, name) {
    return values && values[name] !== undefined && values[name] !== null ? String(values[name]) : "";
  });
}

/** A number with exactly `digits` decimals in the language's locale; "–" for a missing value. */
export function number(value, digits, lang) {
  if (typeof value !== "number" || !isFinite(value)) { return "–"; }
  return new Intl.NumberFormat(t("locale", null, lang), { maximumFractionDigits: digits, minimumFractionDigits: digits })
    .format(value);
}

/** An amount of money in a currency (ISO code), e.g. "3,07 USD" in Italian. */
export function money(value, currency, lang) {
  if (typeof value !== "number" || !isFinite(value)) { return "–"; }
  try {
    return new Intl.NumberFormat(t("locale", null, lang), { style: "currency", currency: currency || "USD",
                                                            currencyDisplay: "code" }).format(value);
  } catch (e) {
    return number(value, 2, lang) + " " + (currency || "USD");
  }
}

/** Hours as "0,4 h" (one decimal; two below 0.1 h). */
export function hours(value, lang) {
  if (typeof value !== "number" || !isFinite(value)) { return "–"; }
  return number(value, value < 0.1 ? 2 : 1, lang) + " h";
}
