// Strozzi: the card being decided on, the three ports with the ships placed there (owner, flag,
// speed), the four tracks (Venice, Rome, Naples, Florence) with every seat's marker and the bonus
// spaces, the face-up progress tiles, the cards set aside, and each seat's flags, money and tiles.

import { Category, City, Flag, Goods, Phase, type ProgressTile, type ShipCard, type View } from "../../gen/tabula/strozzi/v1/strozzi_pb";
import { board, fittedLabel, label, seatColour, svg, titled } from "../svg";
import type { BoardContext } from "./index";

const CITY_COLOURS: Record<number, string> = {
  [City.VENICE]: "#1f77b4",
  [City.ROME]: "#c0392b",
  [City.NAPLES]: "#e6a100",
  [City.FLORENCE]: "#6a3d9a",
};

const FLAG_WORDS: Record<number, string> = { [Flag.PIRATE]: "pirate", [Flag.PLUS_ONE]: "+1", [Flag.GOODS]: "goods" };
const CATEGORY_WORDS: Record<number, string> = { [Category.ART]: "art", [Category.SCIENCE]: "science", [Category.ARCHITECTURE]: "architecture" };

function cityName(city: City): string {
  const name = City[city] ?? "?";
  return name[0] + name.slice(1).toLowerCase();
}

function cardText(card: ShipCard): string {
  const goods = [card.gold ? `gold ${card.gold}` : "", card.grain ? `grain ${card.grain}` : "", card.cloth ? `cloth ${card.cloth}` : ""].filter(Boolean).join(", ");
  return `${card.label}: ${card.sails} sails${goods ? `, ${goods}` : ""}${card.scrolls ? `, ${card.scrolls} scrolls` : ""}${card.progress ? ", progress" : ""}`;
}

/** A ship card: sails, goods, scrolls and the progress mark. */
function card(x: number, y: number, ship: ShipCard, scale = 1, edge = "#333"): SVGGElement {
  const w = 92 * scale;
  const h = 112 * scale;
  const group = svg(
    "g",
    { class: "ship-card", "pointer-events": "none" },
    svg("rect", { x, y, width: w, height: h, rx: 6, fill: "#fdf6e3", stroke: edge, "stroke-width": 2 }),
    label(x + w / 2, y + 15 * scale, ship.label || `card ${ship.id}`, { "text-anchor": "middle", "font-size": 11 * scale, "font-weight": "bold" }),
    label(x + w / 2, y + 36 * scale, `${ship.sails} sails`, { "text-anchor": "middle", "font-size": 14 * scale, "font-weight": "bold" }),
  );
  const lines = cardLines(ship);
  lines.forEach((line, index) => group.append(label(x + w / 2, y + (56 + index * 14) * scale, line, { "text-anchor": "middle", "font-size": 11 * scale })));
  return titled(group, cardText(ship));
}

/** The lines of a card below its sails: its goods, scrolls and progress mark. */
function cardLines(ship: ShipCard): string[] {
  return [
    ship.gold ? `gold ${ship.gold}` : "",
    ship.grain ? `grain ${ship.grain}` : "",
    ship.cloth ? `cloth ${ship.cloth}` : "",
    ship.scrolls ? `scrolls ${ship.scrolls}` : "",
    ship.progress ? "★ progress" : "",
  ].filter(Boolean);
}

/** The width and height of a placed ship's card in a port (`compactCard`). */
const COMPACT_W = 54;
const COMPACT_H = 66;

/** A placed ship's card in a port: the card shrunk to its berth, its words kept at the size of
 * the board's smallest text (10 units, 12 px on a phone, issue #31) rather than shrunk with it:
 * its name, its sails, then up to three lines of goods, the last taking any more. */
function compactCard(x: number, y: number, ship: ShipCard, edge: string): SVGGElement {
  const middle = x + COMPACT_W / 2;
  const inside = COMPACT_W - 4;
  const group = svg(
    "g",
    { class: "ship-card", "pointer-events": "none" },
    svg("rect", { x, y, width: COMPACT_W, height: COMPACT_H, rx: 5, fill: "#fdf6e3", stroke: edge, "stroke-width": 2 }),
    fittedLabel(middle, y + 12, ship.label || `card ${ship.id}`, inside, { "text-anchor": "middle", "font-size": 10, "font-weight": "bold" }),
    fittedLabel(middle, y + 25, `${ship.sails} sails`, inside, { "text-anchor": "middle", "font-size": 11, "font-weight": "bold" }),
  );
  const lines = cardLines(ship);
  const shown = lines.length > 3 ? [...lines.slice(0, 2), lines.slice(2).join(", ")] : lines;
  shown.forEach((line, index) => group.append(fittedLabel(middle, y + 37 + index * 11, line, inside, { "text-anchor": "middle", "font-size": 10 })));
  return titled(group, cardText(ship));
}

function progressTile(x: number, y: number, tile: ProgressTile, clickable: boolean): SVGGElement {
  const colours: Record<number, string> = { [Category.ART]: "#c2185b", [Category.SCIENCE]: "#00796b", [Category.ARCHITECTURE]: "#5d4037" };
  const colour = colours[tile.category] ?? "#555";
  return titled(
    svg(
      "g",
      { class: clickable ? "progress-tile clickable" : "progress-tile", "data-tile": tile.id },
      svg("rect", { x, y, width: 86, height: 58, rx: 6, fill: colour, stroke: "#222" }),
      label(x + 43, y + 18, CATEGORY_WORDS[tile.category] ?? "?", { "text-anchor": "middle", fill: "#fff", "font-size": 12 }),
      label(x + 43, y + 38, String(tile.value), { "text-anchor": "middle", fill: "#fff", "font-size": 17, "font-weight": "bold" }),
      tile.goods ? label(x + 43, y + 52, (Goods[tile.goods] ?? "").toLowerCase(), { "text-anchor": "middle", fill: "#fff", "font-size": 10 }) : undefined,
    ),
    `Progress tile: ${CATEGORY_WORDS[tile.category]} ${tile.value}${tile.goods ? `, ${(Goods[tile.goods] ?? "").toLowerCase()}` : ""}`,
  );
}

export function drawStrozzi(view: View, context: BoardContext): SVGSVGElement {
  const width = 1000;
  const height = 700;
  const names = context.seats;
  const picture = board(width, height, "Strozzi board");
  picture.append(svg("rect", { x: 0, y: 0, width, height, fill: "#efe6d2" }));
  const phaseWords: Record<number, string> = {
    [Phase.DECIDING]: "deciding on the revealed card",
    [Phase.PLACING_SHIP]: "placing the ship in a port",
    [Phase.CHOOSING_TILE]: "choosing a progress tile",
    [Phase.FINISHED]: "game over",
  };
  picture.append(
    label(16, 26, `Round ${view.round} of 3 · ${phaseWords[view.phase] ?? ""} · card revealed by ${names[view.activeSeat]}`, { "font-size": 17, "font-weight": "bold" }),
    label(16, 46, `Deck: ${view.deckCount} cards · removed face down: ${view.removedCount} · progress stack: ${view.stackCount}`, { "font-size": 13, fill: "#444" }),
  );

  // The card on the table and who claims it.
  picture.append(svg("rect", { x: 10, y: 58, width: 220, height: 200, rx: 8, fill: "#fff", stroke: "#a98" }), label(20, 78, "Card on the table", { "font-weight": "bold" }));
  if (view.card) picture.append(card(20, 88, view.card, 1.05));
  else picture.append(label(20, 110, "none", { fill: "#777" }));
  const claimLines: string[] = [];
  if (view.claim) claimLines.push(`claim: ${names[view.claim.seat]} (${FLAG_WORDS[view.claim.flag] ?? "?"})`);
  if (view.taker) claimLines.push(`taken by ${names[view.taker.seat]} (${FLAG_WORDS[view.taker.flag] ?? "?"})`);
  if (view.deciders.length > 0) claimLines.push(`to decide: ${view.deciders.map((seat) => names[seat]).join(", ")}`);
  claimLines.forEach((line, index) => picture.append(label(20, 222 + index * 15, line, { "font-size": 11 })));

  // The ports with their ships.
  view.ports.forEach((port, index) => {
    const x = 240 + index * 250;
    const colour = CITY_COLOURS[port.city] ?? "#555";
    const placeAction = context.legal.find((entry) => {
      const act = entry.action?.game.case === "strozzi" ? entry.action.game.value : undefined;
      return act?.kind.case === "placeShip" && act.kind.value.port === port.city;
    });
    const frame = svg("rect", { x, y: 58, width: 240, height: 200, rx: 8, fill: "#fff", stroke: colour, "stroke-width": placeAction ? 4 : 2, class: placeAction ? "clickable" : undefined, "data-port": cityName(port.city) });
    if (placeAction?.action) {
      const action = placeAction.action;
      frame.addEventListener("click", () => context.pick(action));
      frame.append(svg("title", {}, `Place the ship in ${cityName(port.city)}`));
    }
    picture.append(frame, label(x + 10, 78, `Port of ${cityName(port.city)}`, { "font-weight": "bold", fill: colour, "font-size": 15, "pointer-events": "none" }));
    port.ships.forEach((berth, slot) => {
      const shipX = x + 8 + (slot % 4) * 58;
      const shipY = 88 + Math.floor(slot / 4) * 84;
      if (berth.card) picture.append(compactCard(shipX, shipY, berth.card, seatColour(berth.owner)));
      picture.append(label(shipX + 26, shipY + 78, `${FLAG_WORDS[berth.flag] ?? ""} ${berth.speed}`, { "text-anchor": "middle", "font-size": 10, fill: seatColour(berth.owner), "pointer-events": "none" }));
    });
    if (port.ships.length === 0) picture.append(label(x + 10, 110, "no ships yet", { fill: "#777", "pointer-events": "none" }));
  });

  // The tracks.
  const trackTop = 280;
  view.tracks.forEach((track, index) => {
    const y = trackTop + index * 62;
    const colour = CITY_COLOURS[track.city] ?? "#555";
    const cell = Math.min(52, (width - 160) / (track.top + 1));
    picture.append(label(16, y + 30, cityName(track.city), { "font-weight": "bold", fill: colour, "font-size": 15 }));
    for (let position = 0; position <= track.top; position++) {
      const x = 110 + position * cell;
      const bonus = track.bonusSpaces.find((space) => space.position === position);
      picture.append(svg("rect", { x, y, width: cell - 2, height: 48, rx: 4, fill: bonus ? "#fff3c4" : "#fff", stroke: colour }));
      picture.append(label(x + 3, y + 12, String(position), { "font-size": 10, fill: "#888" }));
      if (bonus) picture.append(label(x + cell - 5, y + 12, `${bonus.coins}¢`, { "font-size": 10, fill: "#9a6a00", "text-anchor": "end" }));
      const space = track.spaces.find((entry) => entry.position === position);
      space?.seats.forEach((seat, order) => {
        picture.append(titled(svg("circle", { cx: x + 9 + (order % 4) * 11, cy: y + 24 + Math.floor(order / 4) * 12, r: 5, fill: seatColour(seat), stroke: "#222" }), `${names[seat]} on ${cityName(track.city)} ${position}`));
      });
    }
  });

  // Progress tiles face up, cards set aside, and the players.
  const lowerY = trackTop + view.tracks.length * 62 + 6;
  picture.append(label(16, lowerY + 14, "Progress tiles:", { "font-weight": "bold" }));
  view.display.forEach((tile, index) => {
    const pick = context.legal.find((entry) => {
      const act = entry.action?.game.case === "strozzi" ? entry.action.game.value : undefined;
      return act?.kind.case === "takeProgressTile" && act.kind.value.tileId === tile.id;
    });
    const drawn = progressTile(130 + index * 94, lowerY, tile, pick !== undefined);
    if (pick?.action) {
      const action = pick.action;
      drawn.addEventListener("click", () => context.pick(action));
    }
    picture.append(drawn);
  });
  if (view.setAside.length > 0) {
    picture.append(label(430, lowerY + 14, `Set aside: ${view.setAside.map((entry) => `${entry.label} (${entry.sails} sails)`).join(", ")}`, { "font-size": 12 }));
  }
  const playersY = lowerY + 66;
  view.players.forEach((player, index) => {
    const x = 16 + index * 162;
    const flags = player.flags.map((flag) => FLAG_WORDS[flag] ?? "?").join(" ") || "no flags";
    picture.append(
      svg("rect", { x, y: playersY, width: 156, height: 44, rx: 6, fill: "#fff", stroke: seatColour(player.seat), "stroke-width": context.toAct === player.seat ? 4 : 1.5 }),
      label(x + 6, playersY + 16, `${names[player.seat]}${player.money !== undefined ? ` · ${player.money} coins` : ""}`, { "font-size": 12, "font-weight": "bold", fill: seatColour(player.seat) }),
      label(x + 6, playersY + 34, `flags: ${flags} · ${player.tiles.length} tiles`, { "font-size": 10.5 }),
    );
  });
  return picture;
}
