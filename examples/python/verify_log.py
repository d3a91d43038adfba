"""Checks an exported Tabula log offline: its signatures and its hash chain (not the rules).

    python verify_log.py LOG KEYS

LOG is an exported `tabula.v1.GameLog` (binary, or JSON as `ExportLog` prints it); KEYS holds the
deployment's public keys, one `<key id>:<64 hex digits>` per line, as `GetSigningKeys` publishes
them. It needs nothing else: no server, no Tabula code. Exit status 0 when everything holds, 1 with
the first problem (and the entry at fault) otherwise.

What it checks (README, *Signed commitments*):
1. the signed commitment: the Ed25519 signature over "tabula-game-commitment-v1", a zero byte and
   the commitment's bytes, then that the commitment names this log's game and seed commitment
   (and, once the game has ended, that the published seed hashes to it);
2. the chain: head(0) = SHA-256("tabula-genesis-v1" 0 commitment), and for each entry
   head(v) = SHA-256("tabula-entry-v1" 0 head(v-1) v seat time commit(v)) (numbers big-endian);
   once the seed is published, commit(v) = HMAC-SHA256(seed, "tabula-action-v1" 0 v action);
3. a finished game's signed final head: its signature, version and head.

Re-executing the rules is `tabula verify` (or the VerifyLog RPC); this file shows that the
cryptography alone needs a few dozen lines in any language.
"""

import hashlib
import hmac
import struct
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from google.protobuf import json_format

from tabula.v1 import tabula_pb2


class Forged(Exception):
    """The log is not what the server signed: the entry at fault (None: the log) and why."""

    def __init__(self, version, why):
        super().__init__(why)
        self.version = version
        self.why = why


def read_keys(path):
    keys = {}
    with open(path, encoding="utf-8") as file:
        for line in file:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key_id, _, hex_key = line.partition(":")
            keys[key_id] = Ed25519PublicKey.from_public_bytes(bytes.fromhex(hex_key))
    return keys


def read_log(path):
    with open(path, "rb") as file:
        data = file.read()
    log = tabula_pb2.GameLog()
    if data.lstrip().startswith(b"{"):
        json_format.Parse(data.decode("utf-8"), log, ignore_unknown_fields=True)
    else:
        log.ParseFromString(data)
    return log


def check_signature(keys, key_id, context, payload, signature, what):
    key = keys.get(key_id)
    if key is None:
        raise Forged(0, f"{what} is signed with key {key_id!r}, which is not among the keys given")
    try:
        key.verify(signature, context + b"\0" + payload)
    except InvalidSignature:
        raise Forged(0, f"{what}'s signature does not match it (key {key_id})") from None


def be64(number):
    return struct.pack(">Q", number)


def verify(log, keys):
    """The last version the chain was checked to, and whether the end is signed."""
    if not log.HasField("signed_commitment"):
        raise Forged(0, "the log carries no signed commitment (a game from before signed logs?)")
    signed = log.signed_commitment
    check_signature(
        keys, signed.key_id, b"tabula-game-commitment-v1", signed.commitment, signed.signature,
        "the commitment",
    )
    commitment = tabula_pb2.GameCommitment()
    commitment.ParseFromString(signed.commitment)
    if log.game_id and log.game_id != commitment.game_id:
        raise Forged(0, f"the signed commitment is for game {commitment.game_id}, not {log.game_id}")
    if log.seed_commitment != commitment.seed_commitment:
        raise Forged(0, "the log's seed commitment is not the one the server signed")
    seed = log.seed if len(log.seed) == 32 else None
    if seed is not None and hashlib.sha256(seed).digest() != commitment.seed_commitment:
        raise Forged(0, "the log's seed is not the one the server committed to")

    head = hashlib.sha256(b"tabula-genesis-v1\0" + signed.commitment).digest()
    for place, entry in enumerate(log.entries, start=1):
        if entry.version != place:
            raise Forged(place, f"the entry in place {place} says version {entry.version}")
        if seed is not None:
            action = entry.action.SerializeToString(deterministic=True)
            expected = hmac.new(
                seed, b"tabula-action-v1\0" + be64(place) + action, hashlib.sha256
            ).digest()
            if expected != entry.action_commitment:
                raise Forged(place, "its action is not the one the chain committed to")
        link = (
            b"tabula-entry-v1\0" + head + be64(place) + struct.pack(">I", entry.seat)
            + be64(entry.server_time_ms) + entry.action_commitment
        )
        if hashlib.sha256(link).digest() != entry.head:
            raise Forged(place, "its head does not follow from the entry before it")
        head = entry.head

    last = len(log.entries)
    if not log.HasField("signed_final_head"):
        if log.complete:
            raise Forged(None, "the game ended but its final head is not signed: cut short?")
        return last, False
    final = log.signed_final_head
    check_signature(
        keys, final.key_id, b"tabula-final-head-v1", final.final_head, final.signature,
        "the final head",
    )
    end = tabula_pb2.FinalHead()
    end.ParseFromString(final.final_head)
    if end.game_id != commitment.game_id:
        raise Forged(None, f"the signed final head is of game {end.game_id}")
    if end.version != last:
        raise Forged(
            min(last, end.version) + 1,
            f"the log ends at version {last} but the server signed its end at version {end.version}",
        )
    if end.head != head:
        raise Forged(last, "the chain's last head is not the one the server signed")
    return last, True


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    log = read_log(sys.argv[1])
    keys = read_keys(sys.argv[2])
    try:
        last, ended = verify(log, keys)
    except Forged as forged:
        where = "the log" if forged.version is None else f"entry {forged.version}"
        print(f"FORGED at {where}: {forged.why}")
        return 1
    end = "its end signed" if ended else "not finished (no signed end yet)"
    print(f"OK: game {log.game_id} signed by {log.signed_commitment.key_id}, "
          f"chain verified to version {last}, {end}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
