// The board of each game, drawn as SVG from the viewer's View, and each seat's private panel.

import type { Action, LegalAction, View } from "../../gen/tabula/v1/tabula_pb";
import type { SeatNames } from "../words";
import { drawLaStrada } from "./la_strada";
import { drawManila } from "./manila";
import { drawMediciVsStrozzi } from "./medici_vs_strozzi";
import { drawStrozzi } from "./strozzi";

/** What a board needs besides the view. */
export interface BoardContext {
  seats: SeatNames;
  /** The viewer's seat; undefined for a spectator. */
  mySeat?: number;
  /** The seat that must act now (GameStatus.to_act). */
  toAct?: number;
  /** The viewer's legal actions (empty unless it must act, and in replays). */
  legal: LegalAction[];
  /** Sends a legal action picked on the board (a spatial choice: a hex, a road). */
  pick(action: Action): void;
}

export type GameCase = NonNullable<View["game"]["case"]>;

/** The board of `view`, or undefined for a game this page has no picture for. */
export function drawBoard(view: View, context: BoardContext): SVGSVGElement | undefined {
  switch (view.game.case) {
    case "mediciVsStrozzi":
      return drawMediciVsStrozzi(view.game.value, context);
    case "strozzi":
      return drawStrozzi(view.game.value, context);
    case "manila":
      return drawManila(view.game.value, context);
    case "laStrada":
      return drawLaStrada(view.game.value, context);
    default:
      return undefined;
  }
}
