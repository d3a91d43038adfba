// La Strada: the hex map (pointy-top, axial coordinates, r southward) with its terrain, the
// settlements with their merchants, the roads (each tile from the edge it enters by to the edge
// it leaves by, in its owner's colour) and the workshops. Spatial choices are made on the map:
// during setup the hexes where the viewer may put a workshop are outlined and clickable; on its
// turn, the settlements a road can reach are, and clicking one builds the shortest listed road
// there (every road is also in the action list beside the board). A road can also be laid hex by
// hex (spec §5: a road runs from a hub, your workshop or a settlement you are connected to, tile by
// tile to a settlement new for you): click a hub, then each next hex (only hexes that continue some
// listed road are offered), and confirm once the path is a whole listed road; clicking the path's
// last hex takes it back.

import {
  SettlementKind,
  Terrain,
  type Action as LaStradaAction,
  type Hex,
  type View,
} from "../../gen/tabula/la_strada/v1/la_strada_pb";
import type { Action } from "../../gen/tabula/v1/tabula_pb";
import { board, fittedLabel, label, seatColour, spot, svg, titled } from "../svg";
import type { BoardContext } from "./index";

const SIZE = 22;
const ROOT3 = Math.sqrt(3);
/** Neighbour offsets by direction 0..5: E, NE, NW, W, SW, SE. */
const DIRECTIONS: [number, number][] = [
  [1, 0],
  [1, -1],
  [0, -1],
  [-1, 0],
  [-1, 1],
  [0, 1],
];

const TERRAIN_COLOURS: Record<number, string> = {
  [Terrain.PLAINS]: "#dcebb4",
  [Terrain.FOREST]: "#5f9442",
  [Terrain.HILL]: "#b9925c",
  [Terrain.SITE]: "#f3e3b5",
};

const KIND_WORDS: Record<number, string> = {
  [SettlementKind.HAMLET]: "hamlet",
  [SettlementKind.VILLAGE]: "village",
  [SettlementKind.TOWN]: "town",
  [SettlementKind.CITY]: "city",
};

function key(hex: Hex | undefined): string {
  return `${hex?.q ?? 0},${hex?.r ?? 0}`;
}

/** A road the viewer may build: its hexes from the hub through the tiles to the target. */
interface ListedRoad {
  hexes: string[];
  action: Action;
}

/** The road being laid hex by hex, for the roads listed when it was started (`signature`). */
let path: { signature: string; hexes: string[] } = { signature: "", hexes: [] };

function laStradaAction(action: Action | undefined): LaStradaAction | undefined {
  return action?.game.case === "laStrada" ? action.game.value : undefined;
}

export function drawLaStrada(view: View, context: BoardContext): SVGSVGElement {
  const names = context.seats;
  const width = 1000;
  // The side panel holds the seats (96 units each), then the key, the hints or the road's
  // buttons, and the winner (about 215 units below the seats): with four seats it is taller than
  // the map, and the board grows with it.
  const keyY = 70 + view.players.length * 96 + 10;
  const height = Math.max(640, keyY + 225);
  const picture = board(width, height, "La Strada board");
  picture.append(svg("rect", { x: 0, y: 0, width, height, fill: "#cfe3ef" }));
  const centreX = 330;
  const centreY = 320;
  const pixel = (q: number, r: number): [number, number] => [centreX + SIZE * ROOT3 * (q + r / 2), centreY + SIZE * 1.5 * r];
  const corners = (x: number, y: number, size = SIZE) =>
    Array.from({ length: 6 }, (_, corner) => {
      const angle = (Math.PI / 180) * (60 * corner - 30);
      return `${(x + size * Math.cos(angle)).toFixed(1)},${(y + size * Math.sin(angle)).toFixed(1)}`;
    }).join(" ");

  // What the viewer may click: workshop hexes, and the targets of its listed roads.
  const workshopAt = new Map<string, Action>();
  const roadsTo = new Map<string, { action: Action; tiles: number }>();
  const roads: ListedRoad[] = [];
  for (const entry of context.legal) {
    const act = laStradaAction(entry.action);
    if (!entry.action || !act) continue;
    if (act.kind.case === "placeWorkshop") workshopAt.set(key(act.kind.value.hex), entry.action);
    if (act.kind.case === "buildRoad") {
      const road = act.kind.value;
      const target = key(road.target);
      const known = roadsTo.get(target);
      if (!known || road.tiles.length < known.tiles) roadsTo.set(target, { action: entry.action, tiles: road.tiles.length });
      roads.push({ hexes: [key(road.hub), ...road.tiles.map(key), target], action: entry.action });
    }
  }

  // The road being laid hex by hex: kept across redraws while the same roads are listed.
  const signature = roads.map((road) => road.hexes.join(">")).join("|");
  if (path.signature !== signature) path = { signature, hexes: [] };
  const laid = path.hexes;
  const continuing = roads.filter((road) => road.hexes.length > laid.length && laid.every((hex, index) => road.hexes[index] === hex));
  // Hexes that start (no path yet) or continue (a path) some listed road.
  const nextHexes = new Set(continuing.map((road) => road.hexes[laid.length]));
  const complete = laid.length > 0 ? roads.find((road) => road.hexes.length === laid.length && road.hexes.every((hex, index) => laid[index] === hex)) : undefined;
  const redraw = () => picture.replaceWith(drawLaStrada(view, context));
  const step = (hex: string) => {
    path = { signature, hexes: [...laid, hex] };
    redraw();
  };
  const back = () => {
    path = { signature, hexes: laid.slice(0, -1) };
    redraw();
  };
  /** Makes `element` (on hex `hex`) a step of the road being laid, when it is one. */
  const pathClick = (element: SVGElement, hex: string): boolean => {
    if (nextHexes.has(hex)) {
      element.classList.add("clickable", laid.length === 0 ? "road-start" : "road-step");
      element.setAttribute("data-hex", hex);
      element.addEventListener("click", () => step(hex));
      element.append(svg("title", {}, laid.length === 0 ? "Start a road here (then click hex by hex)" : "Lay the road on to this hex"));
      return true;
    }
    if (laid.length > 0 && hex === laid[laid.length - 1]) {
      element.classList.add("clickable", "road-back");
      element.setAttribute("data-hex", hex);
      element.addEventListener("click", back);
      element.append(svg("title", {}, "Take this hex back"));
      return true;
    }
    return false;
  };

  const settled = new Set(view.settlements.map((settlement) => key(settlement.hex)));

  // Terrain.
  for (const cell of view.board) {
    const [x, y] = pixel(cell.hex?.q ?? 0, cell.hex?.r ?? 0);
    const polygon = svg("polygon", { points: corners(x, y), fill: TERRAIN_COLOURS[cell.terrain] ?? "#eee", stroke: "#8a8a70", "stroke-width": 0.8, "data-hex": key(cell.hex) });
    const workshop = workshopAt.get(key(cell.hex));
    // A settlement's hex takes its clicks on the settlement drawn over it.
    if (!settled.has(key(cell.hex)) && pathClick(polygon, key(cell.hex))) {
      polygon.setAttribute("stroke", laid.length === 0 ? seatColour(context.mySeat) : "#111");
      polygon.setAttribute("stroke-width", "2.5");
    } else if (workshop) {
      polygon.classList.add("clickable");
      polygon.setAttribute("stroke", "#111");
      polygon.setAttribute("stroke-width", "2.5");
      polygon.addEventListener("click", () => context.pick(workshop));
      polygon.append(svg("title", {}, `Put your workshop on (${cell.hex?.q ?? 0}, ${cell.hex?.r ?? 0})`));
    } else {
      polygon.append(svg("title", {}, `(${cell.hex?.q ?? 0}, ${cell.hex?.r ?? 0}) ${(Terrain[cell.terrain] ?? "").toLowerCase()} · piece ${cell.piece}`));
    }
    picture.append(polygon);
  }

  // Roads: from the middle of the edge a tile enters by, through its centre, to the edge it
  // leaves by.
  for (const cell of view.board) {
    const road = cell.road;
    if (!road) continue;
    const [x, y] = pixel(cell.hex?.q ?? 0, cell.hex?.r ?? 0);
    const edge = (direction: number): [number, number] => {
      const [dq, dr] = DIRECTIONS[direction % 6];
      const [nx, ny] = pixel((cell.hex?.q ?? 0) + dq, (cell.hex?.r ?? 0) + dr);
      return [(x + nx) / 2, (y + ny) / 2];
    };
    const [ax, ay] = edge(road.edgeIn);
    const [bx, by] = edge(road.edgeOut);
    picture.append(
      titled(
        svg("path", { d: `M ${ax.toFixed(1)} ${ay.toFixed(1)} Q ${x.toFixed(1)} ${y.toFixed(1)} ${bx.toFixed(1)} ${by.toFixed(1)}`, stroke: seatColour(road.owner), "stroke-width": 6, fill: "none", "stroke-linecap": "round", class: "road" }),
        `${names[road.owner]}'s road`,
      ),
    );
  }

  // The road being laid: through the centres of its hexes, dashed, in the viewer's colour.
  if (laid.length > 0) {
    const points = laid.map((hex) => {
      const [q, r] = hex.split(",").map(Number);
      return pixel(q, r);
    });
    picture.append(
      svg("polyline", { points: points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" "), stroke: seatColour(context.mySeat), "stroke-width": 5, "stroke-dasharray": "8 5", fill: "none", "stroke-linecap": "round", class: "road-laid", "pointer-events": "none" }),
      ...points.map(([x, y]) => svg("circle", { cx: x, cy: y, r: 4, fill: seatColour(context.mySeat), "pointer-events": "none" })),
    );
  }

  // Workshops (a hub being clicked takes the click through them).
  for (const cell of view.board) {
    if (cell.workshop === undefined) continue;
    const [x, y] = pixel(cell.hex?.q ?? 0, cell.hex?.r ?? 0);
    const through = nextHexes.has(key(cell.hex)) || laid[laid.length - 1] === key(cell.hex);
    picture.append(titled(svg("rect", { x: x - 8, y: y - 8, width: 16, height: 16, fill: seatColour(cell.workshop), stroke: "#111", "stroke-width": 1.5, class: "workshop", "pointer-events": through ? "none" : undefined }), `${names[cell.workshop]}'s workshop`));
  }

  // Settlements, their size, merchants and (2 players) visitors.
  for (const settlement of view.settlements) {
    const [x, y] = pixel(settlement.hex?.q ?? 0, settlement.hex?.r ?? 0);
    const radius = 6 + settlement.kind * 2.5;
    // The quick target click while no road is being laid; a step of the road being laid else.
    const road = laid.length === 0 ? roadsTo.get(key(settlement.hex)) : undefined;
    const marker = svg("circle", { cx: x, cy: y, r: radius, fill: "#fff8e1", stroke: road ? "#111" : "#7a5c2e", "stroke-width": road ? 3 : 1.5, class: "settlement" });
    const kindWord = KIND_WORDS[settlement.kind] ?? "settlement";
    // A settlement to click takes its clicks on its whole hex: a hamlet's circle is 17 units
    // across, 20 px on a phone, too small to hit (issue #31: tap targets of 40 px or more).
    const target = spot(svg("polygon", { points: corners(x, y) }), marker);
    let drawn: SVGElement = marker;
    if (!road && pathClick(target, key(settlement.hex))) {
      marker.setAttribute("stroke", "#111");
      marker.setAttribute("stroke-width", "3");
      drawn = target;
    } else if (road) {
      target.classList.add("clickable");
      target.addEventListener("click", () => context.pick(road.action));
      target.append(svg("title", {}, `Build a road to this ${kindWord} (${road.tiles} tiles)`));
      drawn = target;
    } else {
      marker.append(svg("title", {}, `${kindWord}: merchants ${settlement.merchants.map((seat) => names[seat]).join(", ") || "none"}`));
    }
    picture.append(drawn, label(x, y + 4, kindWord[0].toUpperCase(), { "text-anchor": "middle", "font-size": 10, "font-weight": "bold", "pointer-events": "none" }));
    settlement.merchants.forEach((seat, index) => {
      const angle = (index / Math.max(settlement.merchants.length, 1)) * 2 * Math.PI - Math.PI / 2;
      picture.append(svg("circle", { cx: x + (radius + 3) * Math.cos(angle), cy: y + (radius + 3) * Math.sin(angle), r: 4.5, fill: seatColour(seat), stroke: "#111", class: "merchant", "pointer-events": "none" }));
    });
    settlement.visitors.forEach((seat, index) => {
      picture.append(svg("circle", { cx: x - radius + index * 7, cy: y + radius + 5, r: 3, fill: "none", stroke: seatColour(seat), "stroke-width": 2, "pointer-events": "none" }));
    });
  }

  // The side: round, players and the key.
  const sideX = 690;
  const phaseWords = view.round === 0 ? "placing workshops" : `round ${view.round}`;
  picture.append(
    svg("rect", { x: sideX, y: 10, width: 300, height: height - 20, rx: 8, fill: "#fff", stroke: "#9ab" }),
    label(sideX + 12, 34, `La Strada · ${phaseWords}`, { "font-size": 17, "font-weight": "bold" }),
    // The map data's name is for developers (the stand-in's says it is not the printed map):
    // players are told only that the board is provisional.
    label(sideX + 12, 54, view.mapProvisional ? "Provisional board" : view.mapName, { "font-size": 11, fill: "#666" }),
  );
  view.players.forEach((player, index) => {
    const y = 70 + index * 96;
    const colour = seatColour(player.seat);
    picture.append(
      svg("rect", { x: sideX + 10, y, width: 280, height: 88, rx: 6, fill: "#fafafa", stroke: colour, "stroke-width": context.toAct === player.seat ? 4 : 1.5 }),
      label(sideX + 20, y + 20, `${names[player.seat]} (${player.side})${context.toAct === player.seat ? " — to act" : ""}`, { "font-size": 14, "font-weight": "bold", fill: colour }),
      label(sideX + 20, y + 40, `Resources ${player.resources}/10 · gold ${player.gold} · merchants left ${player.merchantsLeft}`, { "font-size": 12 }),
      label(sideX + 20, y + 58, `Road tiles: plains ${player.supply?.plains ?? 0}, forest ${player.supply?.forest ?? 0}, hill ${player.supply?.hill ?? 0}`, { "font-size": 12 }),
      label(sideX + 20, y + 76, `Workshops ${player.workshops.length} · hubs ${player.hubs.length}`, { "font-size": 12 }),
    );
  });
  const legend: [string, string][] = [
    ["plains", TERRAIN_COLOURS[Terrain.PLAINS]],
    ["forest", TERRAIN_COLOURS[Terrain.FOREST]],
    ["hill", TERRAIN_COLOURS[Terrain.HILL]],
    ["settlement site", TERRAIN_COLOURS[Terrain.SITE]],
  ];
  legend.forEach(([name, colour], index) => {
    picture.append(svg("polygon", { points: corners(sideX + 24, keyY + 14 + index * 26, 10), fill: colour, stroke: "#777" }), label(sideX + 40, keyY + 19 + index * 26, name, { "font-size": 12 }));
  });
  picture.append(
    label(sideX + 12, keyY + 124, "H hamlet · V village · T town · C city", { "font-size": 11 }),
    label(sideX + 12, keyY + 142, "■ workshop · ● merchant · ○ visitor", { "font-size": 11 }),
  );
  // Hints fit the panel (276 units inside its margins): a line each, narrowed if need be.
  const hint = (line: number, text: string) => fittedLabel(sideX + 12, keyY + 166 + line * 16, text, 276, { "font-size": 12, "font-weight": "bold" });
  if (workshopAt.size > 0) picture.append(hint(0, "Click an outlined hex"), hint(1, "to place your workshop."));
  if (roadsTo.size > 0 && laid.length === 0) {
    picture.append(hint(0, "Click an outlined settlement to build"), hint(1, "a road there, or a hub in your colour"), hint(2, "to lay one hex by hex."));
  }
  if (laid.length > 0) {
    const tiles = Math.max(laid.length - 2, 0);
    picture.append(fittedLabel(sideX + 12, keyY + 166, complete ? `Road of ${tiles} tile${tiles === 1 ? "" : "s"}: build it?` : `Road so far: ${laid.length - 1} hex${laid.length === 2 ? "" : "es"} · click the next one`, 276, { "font-size": 12, "font-weight": "bold", id: "road-status" }));
    const button = (x: number, text: string, className: string, onClick: () => void, fill: string) => {
      const group = svg("g", { class: `clickable ${className}` }, svg("rect", { x, y: keyY + 174, width: 130, height: 28, rx: 6, fill, stroke: "#333" }), label(x + 65, keyY + 193, text, { "text-anchor": "middle", "font-size": 13, "font-weight": "bold", fill: "#fff", "pointer-events": "none" }));
      group.addEventListener("click", onClick);
      picture.append(group);
    };
    if (complete) {
      const chosen = complete.action;
      button(sideX + 12, "✓ Build this road", "road-confirm", () => {
        path = { signature: "", hexes: [] };
        context.pick(chosen);
      }, "#2e7d32");
    }
    button(sideX + 152, "✗ Clear", "road-clear", () => {
      path = { signature, hexes: [] };
      redraw();
    }, "#8d6e63");
  }
  if (view.winners.length > 0) picture.append(label(sideX + 12, keyY + 190, `Winner: ${view.winners.map((seat) => names[seat]).join(", ")}`, { "font-size": 14, "font-weight": "bold" }));
  return picture;
}
