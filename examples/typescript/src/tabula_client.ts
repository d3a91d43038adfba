// What the example clients share: calls with a deadline and retries, a seat's credentials, and
// turning a listed legal action into a concrete move (a random amount where it takes one).

import { create, ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import {
  ActionSchema,
  GameService,
  type Action,
  type LegalAction,
} from "../gen/tabula/v1/tabula_pb.js";

/** How long one call may take before it counts as failed. */
export const CALL_TIMEOUT_MS = 10_000;
/** Retries of one call refused for a rate limit or an unreachable server. */
const MAX_RETRIES = 50;

export type GameClient = Client<typeof GameService>;

/** The call options that make a call act as the seat holding `token`. */
export function bearer(token: string) {
  return { headers: { authorization: `Bearer ${token}` }, timeoutMs: CALL_TIMEOUT_MS };
}

/**
 * `attempt()`, retried with backoff while the server asks the caller to slow down
 * (ResourceExhausted) or cannot be reached (Unavailable). Retrying Act is safe because the
 * request carries the same `request_id` and `expected_version`.
 */
export async function withRetries<T>(attempt: () => Promise<T>): Promise<T> {
  let delayMs = 50;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      const code = ConnectError.from(error).code;
      if ((code !== Code.ResourceExhausted && code !== Code.Unavailable) || tries >= MAX_RETRIES) {
        throw error;
      }
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      delayMs = Math.min(delayMs * 2, 1000);
    }
  }
}

/** The field of `message` with the proto name `name` (not the JSON or TypeScript name). */
function fieldByName(message: DescMessage, name: string, path: string): DescField {
  const field = message.fields.find((candidate) => candidate.name === name);
  if (!field) throw new Error(`amount_field ${path}: ${message.typeName} has no field ${name}`);
  return field;
}

/**
 * Writes `amount` into the field of `action` that `path` names: proto field names separated by
 * dots, from `tabula.v1.Action` (e.g. "manila.bid.price"). Oneof members are ordinary fields to
 * reflection: setting one selects its case.
 */
function setAmount(action: Action, path: string, amount: bigint): void {
  const names = path.split(".");
  const leafName = names.pop() ?? "";
  let message: ReflectMessage = reflect(ActionSchema, action);
  for (const name of names) {
    const field = fieldByName(message.desc, name, path);
    if (field.fieldKind !== "message") throw new Error(`amount_field ${path}: ${name} is not a message`);
    const child = message.get(field);
    if (!message.isSet(field)) message.set(field, child);
    message = child;
  }
  const leaf = fieldByName(message.desc, leafName, path);
  if (leaf.fieldKind === "scalar" && leaf.scalar === ScalarType.UINT32) {
    message.set(leaf, Number(amount));
  } else if (leaf.fieldKind === "scalar" && leaf.scalar === ScalarType.UINT64) {
    message.set(leaf, amount);
  } else {
    throw new Error(`amount_field ${path} is not an unsigned integer field`);
  }
}

/** A uniformly random integer in `low..=high`. */
function randomBetween(low: bigint, high: bigint): bigint {
  const span = high - low + 1n;
  // Math.random has 53 bits: enough for the amounts games take (prices, bids).
  return low + (BigInt(Math.floor(Math.random() * Number.MAX_SAFE_INTEGER)) % span);
}

/**
 * One move from a legal-action entry: its action, with a random amount in its range when it has
 * one (the listed action already carries the minimum, so it is legal as it is).
 */
export function concreteAction(entry: LegalAction): Action {
  const action = create(ActionSchema, entry.action);
  const range = entry.amountRange;
  if (range) {
    // Mostly small amounts so the game looks like play, sometimes anywhere in the range.
    const small = range.min + 30n < range.max ? range.min + 30n : range.max;
    const top = Math.random() < 0.25 ? range.max : small;
    setAmount(action, entry.amountField, randomBetween(range.min, top));
  }
  return action;
}
