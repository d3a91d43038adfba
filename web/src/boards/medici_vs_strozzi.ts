// Medici vs Strozzi: three harbours, each with its monopoly tracks (marker toward Medici on the
// left, toward Strozzi on the right) and the ship each player placed there; the players' money
// and unplaced ships; the lot on offer, its price, the bag and the discards. Loading a bought lot
// is the spatial choice (spec B4: the whole lot onto one of the buyer's ships, an empty one placed
// in a harbour now): the buyer's docked ships that may take it are clickable, and in each harbour
// where it may place an empty ship, one clickable berth per ship it may place there.

import { Goods, Phase, type Action as MvsAction, type Ship, type Tile, type View } from "../../gen/tabula/medici_vs_strozzi/v1/medici_vs_strozzi_pb";
import type { Action } from "../../gen/tabula/v1/tabula_pb";
import { board, fittedLabel, label, seatColour, svg, titled } from "../svg";
import { capitalized } from "../words";
import type { BoardContext } from "./index";

/** "harbour B": harbours 0, 1, 2 are lettered A, B, C on the board (as the server's words say). */
export function harbourName(harbour: number): string {
  return `harbour ${String.fromCharCode(65 + harbour)}`;
}

export const GOODS_COLOURS: Record<number, string> = {
  [Goods.DYE]: "#8e44ad",
  [Goods.FUR]: "#8b5a2b",
  [Goods.SPICE]: "#e67e22",
  [Goods.CLOTH]: "#2980b9",
  [Goods.GOLD]: "#d4ac0d",
};

function goodsName(goods: Goods): string {
  return (Goods[goods] ?? "?").toLowerCase();
}

const TILE = 30;

/** A goods tile: coloured by its goods, with its value. */
function tile(x: number, y: number, piece: Tile): SVGGElement {
  return titled(
    svg(
      "g",
      { class: "tile" },
      svg("rect", { x, y, width: TILE - 2, height: TILE - 2, rx: 4, fill: GOODS_COLOURS[piece.goods] ?? "#777", stroke: "#222" }),
      svg("text", { x: x + (TILE - 2) / 2, y: y + 12, "text-anchor": "middle", "font-size": 10, fill: "#fff" }, goodsName(piece.goods)),
      svg("text", { x: x + (TILE - 2) / 2, y: y + 25, "text-anchor": "middle", "font-size": 13, "font-weight": "bold", fill: "#fff" }, String(piece.value)),
    ),
    `${goodsName(piece.goods)} ${piece.value}`,
  );
}

/** A ship: a hull with one slot per capacity, its tiles in the slots. */
function ship(x: number, y: number, vessel: Ship, colour: string, name: string): SVGGElement {
  const width = vessel.capacity * TILE + 16;
  const group = svg(
    "g",
    { class: "ship", "data-capacity": vessel.capacity },
    svg("path", {
      d: `M ${x} ${y + 8} L ${x + width} ${y + 8} L ${x + width - 14} ${y + TILE + 14} L ${x + 14} ${y + TILE + 14} Z`,
      fill: colour,
      "fill-opacity": 0.25,
      stroke: colour,
      "stroke-width": 2,
    }),
  );
  for (let slot = 0; slot < vessel.capacity; slot++) {
    const slotX = x + 8 + slot * TILE;
    const piece = vessel.tiles[slot];
    group.append(piece ? tile(slotX, y + 1, piece) : svg("rect", { x: slotX, y: y + 1, width: TILE - 2, height: TILE - 2, rx: 4, fill: "#fff", stroke: "#bbb", "stroke-dasharray": "3 2" }));
  }
  const value = vessel.tiles.reduce((sum, piece) => sum + piece.value, 0);
  group.append(fittedLabel(x + width + 6, y + 22, `${vessel.capacity}-ship · value ${value}`, 104, { "font-size": 11, fill: "#333" }));
  return titled(group, `${name}'s ${vessel.capacity}-ship: ${vessel.tiles.map((piece) => `${goodsName(piece.goods)} ${piece.value}`).join(", ") || "empty"}`);
}

/** The viewer's legal LoadLot actions: the ship (by capacity), the harbour it names (if any). */
function loadChoices(context: BoardContext): { ship: number; harbour?: number; action: Action }[] {
  const choices = [];
  for (const entry of context.legal) {
    const act = entry.action?.game.case === "mediciVsStrozzi" ? (entry.action.game.value as MvsAction) : undefined;
    if (entry.action && act?.kind.case === "loadLot") choices.push({ ship: act.kind.value.ship, harbour: act.kind.value.harbour, action: entry.action });
  }
  return choices;
}

/** Makes `element` pick `action` when clicked. */
function clickable<T extends SVGElement>(element: T, action: Action, context: BoardContext, what: string): T {
  element.classList.add("clickable");
  element.addEventListener("click", () => context.pick(action));
  return titled(element, what);
}

export function drawMediciVsStrozzi(view: View, context: BoardContext): SVGSVGElement {
  const width = 1000;
  const height = 640;
  const picture = board(width, height, "Medici vs Strozzi board");
  picture.append(svg("rect", { x: 0, y: 0, width, height, fill: "#f4ecd8" }));
  const names = context.seats;
  const medici = view.players.find((player) => player.seat === 0);
  const strozzi = view.players.find((player) => player.seat === 1);

  // The two players: money and ships not yet placed in a harbour.
  const playerStrip = (seat: number, y: number) => {
    const player = seat === 0 ? medici : strozzi;
    const colour = seatColour(seat);
    const active = context.toAct === seat;
    picture.append(
      svg("rect", { x: 10, y, width: width - 20, height: 56, rx: 8, fill: "#fff", stroke: colour, "stroke-width": active ? 4 : 1.5 }),
      label(24, y + 24, `${names[seat]}${active ? " — to act" : ""}`, { "font-size": 18, "font-weight": "bold", fill: colour }),
      label(24, y + 46, `Money: ${player?.money ?? 0} florins`, { "font-size": 14 }),
    );
    // The ships left to place, each with its caption to its right: three fit in the strip.
    const first = 260;
    let x = first;
    for (const vessel of player?.ships ?? []) {
      if (vessel.harbour !== undefined) continue;
      picture.append(ship(x, y + 8, vessel, colour, names[seat]));
      x += vessel.capacity * TILE + 120;
    }
    if (x === first) picture.append(label(first, y + 34, "all ships placed in harbours", { fill: "#777" }));
  };
  playerStrip(0, 8);
  playerStrip(1, 470);

  // The harbours.
  const harbourWidth = (width - 40) / Math.max(view.harbourCount, 1);
  for (let harbour = 0; harbour < view.harbourCount; harbour++) {
    const x = 20 + harbour * harbourWidth;
    const top = 74;
    picture.append(
      svg("rect", { x: x + 4, y: top, width: harbourWidth - 8, height: 388, rx: 10, fill: "#d6e9f5", stroke: "#5d8aa8" }),
      label(x + harbourWidth / 2, top + 20, capitalized(harbourName(harbour)), { "text-anchor": "middle", "font-size": 16, "font-weight": "bold", fill: "#234" }),
    );
    const docked = (seat: number) => (seat === 0 ? medici : strozzi)?.ships.find((vessel) => vessel.harbour === harbour);
    const mediciShip = docked(0);
    const strozziShip = docked(1);
    // The viewer's loading choices here: a docked ship of its own, or an empty ship to place.
    const loads = loadChoices(context);
    const berth = (seat: number, docked: Ship | undefined, y: number) => {
      if (docked) {
        const drawn = ship(x + 16, y, docked, seatColour(seat), names[seat]);
        const load = seat === context.mySeat ? loads.find((choice) => choice.ship === docked.capacity && (choice.harbour === undefined || choice.harbour === harbour)) : undefined;
        if (load) {
          // The whole ship and its caption take the click, outlined to show it may be chosen.
          drawn.prepend(svg("rect", { x: x + 10, y: y - 2, width: harbourWidth - 20, height: TILE + 20, rx: 8, fill: "#fff", "fill-opacity": 0.01, stroke: seatColour(seat), "stroke-width": 2.5, "stroke-dasharray": "6 3" }));
          clickable(drawn, load.action, context, `Load the lot onto this ${docked.capacity}-ship`);
        }
        picture.append(drawn);
        return;
      }
      const places = seat === context.mySeat ? loads.filter((choice) => choice.harbour === harbour) : [];
      if (places.length === 0) {
        picture.append(label(x + 20, y + 26, `no ${names[seat]} ship`, { fill: "#789", "font-size": 12 }));
        return;
      }
      places.forEach((choice, index) => {
        const spotX = x + 14 + index * 94;
        picture.append(
          clickable(
            svg(
              "g",
              { class: "place-ship", "data-ship": choice.ship, "data-harbour": harbour },
              svg("rect", { x: spotX, y: y + 4, width: 88, height: 38, rx: 8, fill: "#fff", "fill-opacity": 0.7, stroke: seatColour(seat), "stroke-width": 2.5, "stroke-dasharray": "6 3" }),
              label(spotX + 44, y + 20, `⚓ ${choice.ship}-ship`, { "text-anchor": "middle", "font-size": 12, "font-weight": "bold", fill: seatColour(seat) }),
              label(spotX + 44, y + 35, "place, load here", { "text-anchor": "middle", "font-size": 10, fill: "#333" }),
            ),
            choice.action,
            context,
            `Place your empty ${choice.ship}-ship in ${harbourName(harbour)} and load the lot onto it`,
          ),
        );
      });
    };
    berth(0, mediciShip, top + 30);
    berth(1, strozziShip, top + 330);

    // Its monopoly tracks: the centre, then spaces toward each player; bonuses printed.
    const tracks = view.tracks.filter((track) => track.harbour === harbour);
    tracks.forEach((track, index) => {
      const spaces = track.spacesPerSide;
      const cells = 2 * spaces + 1;
      const cell = Math.min(24, (harbourWidth - 90) / cells);
      const trackX = x + 70;
      const y = top + 100 + index * 72;
      const colour = GOODS_COLOURS[track.goods] ?? "#777";
      picture.append(
        svg("rect", { x: x + 12, y: y - 2, width: 54, height: cell + 4, rx: 4, fill: colour }),
        label(x + 39, y + cell / 2 + 5, goodsName(track.goods), { "text-anchor": "middle", fill: "#fff", "font-size": 12, "font-weight": "bold" }),
      );
      for (let position = -spaces; position <= spaces; position++) {
        const cellX = trackX + (position + spaces) * cell;
        const distance = Math.abs(position);
        const bonus = distance > 0 ? track.bonusByDistance[distance - 1] : 0;
        const side = position < 0 ? seatColour(0) : position > 0 ? seatColour(1) : "#fff";
        picture.append(
          svg("rect", { x: cellX, y, width: cell - 1, height: cell, fill: side, "fill-opacity": position === 0 ? 1 : 0.12 + (distance / spaces) * 0.3, stroke: "#678" }),
        );
        if (bonus) picture.append(label(cellX + cell / 2, y + cell + 13, String(bonus), { "text-anchor": "middle", "font-size": 10, fill: "#333" }));
      }
      const markerX = trackX + (track.marker + spaces) * cell + cell / 2;
      picture.append(
        titled(
          svg("circle", { cx: markerX, cy: y + cell / 2, r: cell / 2 - 2, fill: "#222", stroke: colour, "stroke-width": 3, class: "marker" }),
          `${goodsName(track.goods)} marker at ${track.marker === 0 ? "the centre" : `${Math.abs(track.marker)} toward ${track.marker < 0 ? names[0] : names[1]}`}`,
        ),
      );
      picture.append(
        label(trackX - 2, y - 5, `◀ ${names[0]}`, { "font-size": 10, fill: seatColour(0) }),
        label(trackX + cells * cell, y - 5, `${names[1]} ▶`, { "font-size": 10, fill: seatColour(1), "text-anchor": "end" }),
      );
    });
  }

  // The lot and the round.
  const y = 540;
  const phaseText: Record<number, string> = {
    [Phase.DRAWING]: `${names[view.activeSeat]} draws tiles (up to ${view.drawLimit} more), then names a price`,
    [Phase.DECIDING]: `${names[1 - view.activeSeat]} buys or declines the lot`,
    [Phase.LOADING]: `${names[view.buyer ?? view.activeSeat]} loads the lot on a ship or discards it`,
    [Phase.FINISHED]: "The game is over",
  };
  picture.append(
    svg("rect", { x: 10, y, width: width - 20, height: 92, rx: 8, fill: "#fffaf0", stroke: "#a98" }),
    label(24, y + 22, `Round ${view.round} of 3 · ${phaseText[view.phase] ?? ""}`, { "font-size": 15, "font-weight": "bold" }),
    label(24, y + 56, "Lot:", { "font-size": 14 }),
    label(width - 24, y + 56, `Bag: ${view.bagCount} tiles`, { "text-anchor": "end", "font-size": 14 }),
  );
  view.lot.forEach((piece, index) => picture.append(tile(60 + index * TILE, y + 36, piece)));
  if (view.lot.length === 0) picture.append(label(60, y + 56, "no tiles drawn yet", { fill: "#777" }));
  if (view.price !== undefined) {
    picture.append(label(200, y + 56, `Price: ${view.price} florins${view.buyer !== undefined ? ` · bought by ${names[view.buyer]}` : ""}`, { "font-size": 15, "font-weight": "bold" }));
  }
  if (view.discarded.length > 0) {
    picture.append(label(540, y + 56, "Discarded:", { "font-size": 13 }));
    view.discarded.slice(0, 10).forEach((piece, index) => picture.append(tile(615 + index * TILE, y + 38, piece)));
  }
  return picture;
}
