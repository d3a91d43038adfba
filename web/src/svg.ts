// Small helpers to build SVG and HTML elements, and what every board shares (seat colours).

const SVG_NS = "http://www.w3.org/2000/svg";

type Attributes = Record<string, string | number | undefined>;

/** An SVG element with attributes and children (strings become text). */
export function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Node | string | undefined | null | false)[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) element.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

/** An HTML element with attributes and children. */
export function html<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Node | string | undefined | null | false)[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined) element.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    element.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return element;
}

/** A text label. */
export function label(x: number, y: number, text: string, attributes: Attributes = {}): SVGTextElement {
  return svg("text", { x, y, "font-size": 13, ...attributes }, text);
}

/** A text label that stays within `width` (user units): a text that would run longer is
 * narrowed to fit (textLength), so it never runs out of the box or past the board it is drawn on.
 * The full text is its tooltip. */
export function fittedLabel(x: number, y: number, text: string, width: number, attributes: Attributes = {}): SVGTextElement {
  const element = label(x, y, text, attributes);
  const size = Number(attributes["font-size"] ?? 13);
  // A generous estimate of the drawn width (system-ui glyphs average about 0.6 em, bold more).
  const estimate = text.length * size * (attributes["font-weight"] === "bold" ? 0.64 : 0.58);
  if (estimate > width) {
    element.setAttribute("textLength", String(width));
    element.setAttribute("lengthAdjust", "spacingAndGlyphs");
    element.append(svg("title", {}, text));
  }
  return element;
}

/** The smallest tap target on a phone, in screen pixels (issue #31: 40 px or more). */
export const TAP_PX = 40;
/** The phone layout draws a board 1000 units wide at 1200 px (app.css), so a tap target of
 * `TAP_PX` needs this many units. */
export const TAP_UNITS = Math.ceil(TAP_PX / 1.2);

/** A spot on the board that takes clicks: `shapes` as drawn, over a transparent `hit` area that
 * widens a small spot to a finger's size (a Manila disc, a La Strada hamlet). The group is the
 * element to make clickable; its hover outline goes to the shapes, not to the hit area (app.css). */
export function spot(hit: SVGElement, ...shapes: (SVGElement | undefined)[]): SVGGElement {
  hit.setAttribute("class", "hit");
  hit.setAttribute("fill", "transparent");
  hit.setAttribute("stroke", "none");
  return svg("g", {}, hit, ...shapes);
}

/** Adds a tooltip (the SVG <title>) to an element. */
export function titled<T extends SVGElement>(element: T, title: string): T {
  element.append(svg("title", {}, title));
  return element;
}

/** One colour per seat, in seat order (up to six seats). */
export const SEAT_COLOURS = ["#c0392b", "#2e6fd8", "#27a047", "#e08e0b", "#8e44ad", "#16a5a5"];

export function seatColour(seat: number | undefined): string {
  return seat === undefined ? "#999" : (SEAT_COLOURS[seat % SEAT_COLOURS.length] ?? "#999");
}

/** A board's root element: a scalable picture `width`×`height`. */
export function board(width: number, height: number, title: string): SVGSVGElement {
  return svg(
    "svg",
    {
      viewBox: `0 0 ${width} ${height}`,
      width: "100%",
      role: "img",
      "aria-label": title,
      class: "board",
      "font-family": "system-ui, sans-serif",
    },
    svg("title", {}, title),
  );
}
