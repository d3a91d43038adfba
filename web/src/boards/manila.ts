// Manila: the river (three lanes of spaces 0–13) with the punts, their crews and slot costs; the
// pirate ship at space 13; the harbour's wharves and the shipyard's berths, with the punts that have
// arrived in them (spec §2.2: berths fill A, B, C) or been wrecked there; the pilots and the
// insurance office; the share prices on the black market; the auction, the dice and the players.
// Where the seat to act may place an accomplice, the space is outlined and clickable.

import {
  Berth,
  Phase,
  PuntStatus,
  SpaceKind,
  Ware,
  type Action as ManilaAction,
  type View,
} from "../../gen/tabula/manila/v1/manila_pb";
import type { Action } from "../../gen/tabula/v1/tabula_pb";
import { board, fittedLabel, label, seatColour, spot, svg, TAP_UNITS, titled } from "../svg";
import type { BoardContext } from "./index";

export const WARE_COLOURS: Record<number, string> = {
  [Ware.GINSENG]: "#6d9e2e",
  [Ware.NUTMEG]: "#8d5b3e",
  [Ware.SILK]: "#2f7fd1",
  [Ware.JADE]: "#16a085",
};

function wareName(ware: Ware): string {
  return (Ware[ware] ?? "?").toLowerCase();
}

const BERTH_TERMS: Record<number, [string, number, number]> = {
  [Berth.A]: ["A", 4, 6],
  [Berth.B]: ["B", 3, 8],
  [Berth.C]: ["C", 2, 15],
};

const VALUES = [0, 5, 10, 20, 30];

/** The legal PlaceAccomplice for a space, if the viewer may place there now. */
function placement(context: BoardContext, kind: SpaceKind, ware?: Ware, berth?: Berth): Action | undefined {
  for (const entry of context.legal) {
    const act = entry.action?.game.case === "manila" ? (entry.action.game.value as ManilaAction) : undefined;
    if (act?.kind.case !== "placeAccomplice") continue;
    const place = act.kind.value;
    if (place.kind !== kind) continue;
    if (ware !== undefined && place.ware !== ware) continue;
    if (berth !== undefined && place.berth !== berth) continue;
    return entry.action;
  }
  return undefined;
}

/** Makes a space's disc (seatDisc) the place to click for `action`: outlined, with a tap target
 * of a finger's size around it (a disc is 20 units across, 24 px on a phone: too small to hit). */
function clickable(disc: SVGGElement, action: Action | undefined, context: BoardContext, what: string): SVGGElement {
  if (!action) return disc;
  const circle = disc.querySelector("circle");
  if (circle) {
    circle.setAttribute("stroke", "#111");
    circle.setAttribute("stroke-width", "3");
    disc.prepend(spot(svg("circle", { cx: circle.getAttribute("cx") ?? 0, cy: circle.getAttribute("cy") ?? 0, r: TAP_UNITS / 2 })));
  }
  disc.classList.add("clickable");
  disc.addEventListener("click", () => context.pick(action));
  // Its tooltip says what the click does, instead of the empty space's cost.
  disc.querySelector(":scope > title")?.remove();
  disc.append(svg("title", {}, `Place an accomplice: ${what}`));
  return disc;
}

/** A seat's accomplice on a space, or the empty space with its cost. */
function seatDisc(x: number, y: number, seat: number | undefined, text: string, names: string[]): SVGGElement {
  return titled(
    svg(
      "g",
      {},
      svg("circle", { cx: x, cy: y, r: 10, fill: seat === undefined ? "#fff" : seatColour(seat), stroke: "#333" }),
      seat === undefined ? label(x, y + 4, text, { "text-anchor": "middle", "font-size": 10, fill: "#555", "pointer-events": "none" }) : undefined,
    ),
    seat === undefined ? `empty (${text})` : names[seat],
  );
}

export function drawManila(view: View, context: BoardContext): SVGSVGElement {
  const width = 1000;
  const height = 660;
  const names = context.seats;
  const picture = board(width, height, "Manila board");
  picture.append(svg("rect", { x: 0, y: 0, width, height, fill: "#e9f1e4" }));
  const phaseWords: Record<number, string> = {
    [Phase.AUCTION]: "auction for the harbour master",
    [Phase.SHARE_PURCHASE]: "the harbour master may buy a share",
    [Phase.LOADING]: "the harbour master loads the punts",
    [Phase.PLACEMENT]: `placing accomplices (round ${view.placementRound} of ${view.placementRoundsTotal})`,
    [Phase.BOARDING]: "pirates may board",
    [Phase.SMALL_PILOT]: "small pilot moves a punt",
    [Phase.LARGE_PILOT]: "large pilot moves punts",
    [Phase.PLUNDER]: "the pirate captain directs the plunder",
    [Phase.FINISHED]: "game over",
  };
  const master = view.harbourMaster !== undefined ? ` · harbour master: ${names[view.harbourMaster]}` : "";
  picture.append(label(16, 24, `Voyage ${view.voyage} · ${phaseWords[view.phase] ?? ""}${master}`, { "font-size": 17, "font-weight": "bold" }));
  const auction = view.auction;
  if (view.phase === Phase.AUCTION && auction) {
    picture.append(
      label(16, 44, `Auction opened by ${names[auction.opener]} · high bid: ${auction.highBidder !== undefined ? `${auction.highBid} by ${names[auction.highBidder]}` : "none"}${auction.passed.length ? ` · passed: ${auction.passed.map((seat) => names[seat]).join(", ")}` : ""}`, { "font-size": 13 }),
    );
  }
  const dice = view.lastRoll.map((die) => `${wareName(die.ware)} ${die.pips}`).join(", ");
  picture.append(label(600, 44, `Rolls this voyage: ${view.rolls}/3${dice ? ` · last: ${dice}` : ""}`, { "font-size": 13 }));

  // The river: three lanes, spaces 0..13; the harbour beyond 13.
  const left = 60;
  const cell = 44;
  const laneTop = 70;
  const laneHeight = 96;
  picture.append(svg("rect", { x: left - 10, y: laneTop - 8, width: cell * 14 + 20, height: laneHeight * 3 + 8, rx: 10, fill: "#8ec5e8" }));
  for (let lane = 0; lane < 3; lane++) {
    const y = laneTop + lane * laneHeight;
    for (let space = 0; space <= 13; space++) {
      const x = left + space * cell;
      picture.append(svg("rect", { x, y, width: cell - 2, height: 18, fill: space === 13 ? "#f5b7b1" : "#d4ecfa", stroke: "#5b8fb3" }), label(x + cell / 2 - 1, y + 13, String(space), { "text-anchor": "middle", "font-size": 10, fill: "#345" }));
    }
  }
  picture.append(label(left + 13 * cell + cell / 2, laneTop - 12, "☠ 13", { "text-anchor": "middle", "font-size": 12, fill: "#a00" }));
  for (const punt of view.punts) {
    const y = laneTop + punt.lane * laneHeight + 22;
    const colour = WARE_COLOURS[punt.ware] ?? "#777";
    const atSea = punt.status === PuntStatus.AT_SEA || punt.status === PuntStatus.UNSPECIFIED;
    if (!atSea) {
      // Arrived or wrecked: the punt lies at its berth (drawn there below); its lane says where.
      const where = `${punt.status === PuntStatus.HARBOUR ? "in the harbour, wharf" : "in the shipyard, berth"} ${BERTH_TERMS[punt.berth]?.[0] ?? "?"}`;
      picture.append(label(left + 8, y + 26, `${wareName(punt.ware)} punt ${where} →`, { "font-size": 12, fill: colour, "font-weight": "bold", class: "punt-gone", "data-ware": wareName(punt.ware) }));
      continue;
    }
    const position = Math.min(punt.position, 13);
    const slots = punt.slotCosts.length;
    const puntWidth = Math.max(slots * 24 + 16, 90);
    // The punt's bow at its space.
    const x = Math.min(left + position * cell + cell / 2 - puntWidth / 2, left + 14 * cell - puntWidth);
    const group = svg("g", { class: "punt", "data-ware": wareName(punt.ware) });
    group.append(
      svg("path", { d: `M ${x} ${y} L ${x + puntWidth} ${y} L ${x + puntWidth - 12} ${y + 44} L ${x + 12} ${y + 44} Z`, fill: colour, stroke: "#222", "stroke-width": 1.5 }),
      label(x + puntWidth / 2, y + 56, `${wareName(punt.ware)} · space ${punt.position}${punt.plundered ? " · plundered" : ""}`, { "text-anchor": "middle", "font-size": 11, "font-weight": "bold" }),
    );
    const crewAction = placement(context, SpaceKind.CREW, punt.ware);
    for (let slot = 0; slot < slots; slot++) {
      const disc = seatDisc(x + 18 + slot * 24, y + 20, punt.crew[slot], String(punt.slotCosts[slot]), names);
      if (slot === punt.crew.length) clickable(disc, crewAction, context, `${wareName(punt.ware)} crew`);
      group.append(disc);
    }
    picture.append(titled(group, `${wareName(punt.ware)} punt, start ${punt.start}, position ${punt.position}, crew ${punt.crew.map((seat) => names[seat]).join(", ") || "none"}`));
  }

  // The pirate ship at 13.
  const pirateX = left + 14 * cell + 24;
  const pirateTop = 170;
  picture.append(svg("rect", { x: pirateX, y: pirateTop, width: 120, height: 62, rx: 8, fill: "#3a3a3a" }), label(pirateX + 60, pirateTop + 16, "☠ Pirate ship (5)", { "text-anchor": "middle", fill: "#fff", "font-size": 12 }));
  const pirateAction = placement(context, SpaceKind.PIRATE);
  const captain = seatDisc(pirateX + 36, pirateTop + 38, view.pirateCaptain, "5", names);
  const second = seatDisc(pirateX + 84, pirateTop + 38, view.pirateSecond, "5", names);
  clickable(view.pirateCaptain === undefined ? captain : second, pirateAction, context, "pirate ship");
  picture.append(captain, second, label(pirateX + 36, pirateTop + 58, "captain", { "text-anchor": "middle", fill: "#ddd", "font-size": 10 }), label(pirateX + 84, pirateTop + 58, "second", { "text-anchor": "middle", fill: "#ddd", "font-size": 10 }));

  // A punt at its berth: a small hull in its ware's colour, its crew as dots, its ware below.
  const berthedPunt = (x: number, y: number, punt: (typeof view.punts)[number], where: string) => {
    const colour = WARE_COLOURS[punt.ware] ?? "#777";
    const group = svg(
      "g",
      { class: "punt berthed", "data-ware": wareName(punt.ware) },
      svg("path", { d: `M ${x} ${y} L ${x + 56} ${y} L ${x + 48} ${y + 18} L ${x + 8} ${y + 18} Z`, fill: colour, stroke: "#222", "stroke-width": 1.2 }),
      label(x + 28, y + 30, `${wareName(punt.ware)}${punt.plundered ? " ☠" : ""}`, { "text-anchor": "middle", "font-size": 10, "font-weight": "bold", fill: "#222" }),
    );
    punt.crew.forEach((seat, index) => group.append(svg("circle", { cx: x + 12 + index * 11, cy: y + 9, r: 4.5, fill: seatColour(seat), stroke: "#fff", "stroke-width": 1 })));
    picture.append(titled(group, `${wareName(punt.ware)} punt ${where}${punt.plundered ? ", plundered" : ""}; crew ${punt.crew.map((seat) => names[seat]).join(", ") || "none"}`));
  };

  // Harbour wharves (top right) and shipyard berths (below the pirate ship), each punt at its berth.
  const berthRow = (title: string, y: number, berths: typeof view.wharves, kind: SpaceKind, status: PuntStatus, fill: string) => {
    picture.append(svg("rect", { x: pirateX - 6, y, width: 212, height: 116, rx: 8, fill, stroke: "#555" }), label(pirateX + 4, y + 15, title, { "font-weight": "bold", "font-size": 13 }));
    berths.forEach((entry, index) => {
      const [name, cost, pays] = BERTH_TERMS[entry.berth] ?? ["?", 0, 0];
      const x = pirateX + 4 + index * 68;
      const punt = view.punts.find((candidate) => candidate.status === status && candidate.berth === entry.berth);
      picture.append(svg("rect", { x, y: y + 20, width: 62, height: 92, rx: 6, fill: punt || entry.hasPunt ? "#c8e6c9" : "#fff", stroke: "#777" }), label(x + 31, y + 33, `${name}: ${cost}→${pays}`, { "text-anchor": "middle", "font-size": 10.5 }));
      const disc = seatDisc(x + 31, y + 49, entry.occupant, String(cost), names);
      if (entry.occupant === undefined) clickable(disc, placement(context, kind, undefined, entry.berth), context, `${title} ${name}`);
      picture.append(disc);
      if (punt) berthedPunt(x + 3, y + 64, punt, `${title} ${name}`);
      else picture.append(label(x + 31, y + 86, entry.hasPunt ? "punt ✓" : "no punt", { "text-anchor": "middle", "font-size": 10, fill: "#777" }));
    });
  };
  berthRow("Harbour (wharves)", 48, view.wharves, SpaceKind.HARBOUR, PuntStatus.HARBOUR, "#fdf2d0");
  berthRow("Shipyard", 238, view.shipyard, SpaceKind.SHIPYARD, PuntStatus.SHIPYARD, "#e0dcd6");

  // Pilots and insurance.
  const officesY = laneTop + laneHeight * 3 + 20;
  const office = (x: number, title: string, seat: number | undefined, cost: string, kind: SpaceKind) => {
    picture.append(svg("rect", { x, y: officesY, width: 150, height: 46, rx: 8, fill: "#fff", stroke: "#777" }), label(x + 10, officesY + 28, title, { "font-size": 12 }));
    const disc = seatDisc(x + 128, officesY + 23, seat, cost, names);
    if (seat === undefined) clickable(disc, placement(context, kind), context, title);
    picture.append(disc);
  };
  office(left, "Small pilot (2)", view.smallPilot, "2", SpaceKind.SMALL_PILOT);
  office(left + 160, "Large pilot (5)", view.largePilot, "5", SpaceKind.LARGE_PILOT);
  office(left + 320, "Insurance (+10)", view.insurer, "0", SpaceKind.INSURANCE);

  // Share prices: each ware's value on the 0-5-10-20-30 track, and shares left in supply.
  const pricesY = officesY + 62;
  picture.append(label(left, pricesY, "Share prices (black market)", { "font-weight": "bold", "font-size": 13 }));
  view.wares.forEach((status, index) => {
    const y = pricesY + 10 + index * 26;
    const colour = WARE_COLOURS[status.ware] ?? "#777";
    picture.append(svg("rect", { x: left, y, width: 70, height: 22, rx: 4, fill: colour }), label(left + 35, y + 15, wareName(status.ware), { "text-anchor": "middle", fill: "#fff", "font-size": 12, "font-weight": "bold" }));
    VALUES.forEach((value, step) => {
      const x = left + 80 + step * 44;
      const here = status.value === value;
      picture.append(svg("rect", { x, y, width: 40, height: 22, rx: 4, fill: here ? colour : "#fff", stroke: colour }), label(x + 20, y + 15, String(value), { "text-anchor": "middle", "font-size": 12, fill: here ? "#fff" : "#333", "font-weight": here ? "bold" : "normal" }));
    });
    picture.append(label(left + 310, y + 15, `${status.supply} shares in supply`, { "font-size": 11 }));
  });

  // The players.
  const playersX = 560;
  view.players.forEach((player, index) => {
    const y = officesY + index * 42;
    const you = player.seat === context.mySeat;
    picture.append(
      svg("rect", { x: playersX, y, width: 430, height: 38, rx: 6, fill: "#fff", stroke: seatColour(player.seat), "stroke-width": context.toAct === player.seat ? 4 : 1.5 }),
      fittedLabel(playersX + 8, y + 16, `${names[player.seat]}${you ? " (you)" : ""}: ${player.cash} pesos · accomplices ${player.accomplicesInHand}/${player.accomplicesTotal}${player.declined ? " · stopped placing" : ""}`, 414, { "font-size": 12, "font-weight": "bold", fill: seatColour(player.seat) }),
      fittedLabel(
        playersX + 8,
        y + 32,
        `${player.shareCount} shares (${player.mortgagedCount} mortgaged)` +
          (player.shares.length > 0 ? ` · yours: ${player.shares.map((entry) => `${wareName(entry.ware)} ×${entry.count}`).join(", ")}` : "") +
          (player.bought.length > 0 ? ` · bought openly: ${player.bought.map(wareName).join(", ")}` : ""),
        414,
        { "font-size": 11 },
      ),
    );
  });
  if (view.winners.length > 0) {
    picture.append(label(width / 2, height - 8, `Winner: ${view.winners.map((seat) => names[seat]).join(", ")} · scores ${view.scores.join(" / ")}`, { "text-anchor": "middle", "font-size": 15, "font-weight": "bold" }));
  }
  return picture;
}
