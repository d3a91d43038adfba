#!/usr/bin/env python3
"""Plays one game of every kind a Tabula server hosts, to the end, with no per-game code.

Usage: python play_every_game.py HOST:PORT

The games are found by iterating the cases of `tabula.v1.GameConfig.game`; a config with a
`players` field gets the smallest player count from 2 up that the server accepts. Each game is
then played through GetView/Act only: `status.to_act` says which seat must act, that seat's
`legal_actions` list its moves, and an entry with an `amount_range` gets a random amount written
into the field its `amount_field` path names. Every Act carries `expected_version` and a
`request_id`, so a retry after a lost answer or a rate limit is safe.

The Python modules are generated from the repository's proto/ directory, not committed:

    python -m grpc_tools.protoc -I ../../proto --python_out=gen --grpc_python_out=gen \
        $(find ../../proto -name '*.proto')

This program looks for them in ./gen beside it, or wherever PYTHONPATH points.
"""

import os
import random
import sys
import time

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402
from google.protobuf.descriptor import FieldDescriptor  # noqa: E402

from tabula.v1 import tabula_pb2, tabula_pb2_grpc  # noqa: E402

# Player counts tried, in order, for games whose config has a `players` field.
PLAYER_COUNTS = range(2, 9)
# More moves than any game takes: a game still running after this many is a bug.
MAX_MOVES = 20_000
# How long one call may take before it counts as failed.
CALL_TIMEOUT_S = 10
# Retries of one call refused for a rate limit or an unreachable server.
MAX_RETRIES = 50


def bearer(token):
    """The call metadata that makes a call act as the seat holding `token`."""
    return (("authorization", "Bearer " + token),)


def call(method, request, metadata=()):
    """`method(request)`, retried with backoff while the server asks the caller to slow down
    (RESOURCE_EXHAUSTED) or cannot be reached (UNAVAILABLE). Retrying Act is safe because the
    request carries the same `request_id` and `expected_version`."""
    delay = 0.05
    for attempt in range(MAX_RETRIES):
        try:
            return method(request, metadata=metadata, timeout=CALL_TIMEOUT_S)
        except grpc.RpcError as error:
            retryable = error.code() in (
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                grpc.StatusCode.UNAVAILABLE,
            )
            if not retryable or attempt + 1 == MAX_RETRIES:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)
    raise AssertionError("unreachable")


def game_configs():
    """One `GameConfig` factory per case of the `GameConfig.game` oneof: (case name, whether the
    game's config has a `players` field, a function from a player count to a GameConfig)."""
    oneof = tabula_pb2.GameConfig.DESCRIPTOR.oneofs_by_name["game"]
    for case in oneof.fields:
        has_players = "players" in case.message_type.fields_by_name

        def make(players, case_name=case.name, has_players=has_players):
            config = tabula_pb2.GameConfig()
            game_config = getattr(config, case_name)
            game_config.SetInParent()  # choose the case even when every field is a default
            if has_players:
                game_config.players = players
            return config

        yield case.name, has_players, make


def create_game(stub, case_name, has_players, make):
    """Creates a game of one kind; the accepted player count (None for a fixed count) and the
    CreateGame answer."""
    counts = PLAYER_COUNTS if has_players else [None]
    for players in counts:
        request = tabula_pb2.CreateGameRequest(config=make(players))
        try:
            return players, call(stub.CreateGame, request)
        except grpc.RpcError as error:
            # A player count outside the game's range is a config error: try the next one.
            if has_players and error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                continue
            raise
    raise SystemExit(f"{case_name}: the server accepts no player count in {list(PLAYER_COUNTS)}")


def set_amount(action, path, amount):
    """Writes `amount` into the field of `action` that `path` names: proto field names separated
    by dots, from `tabula.v1.Action` (e.g. "manila.bid.price")."""
    *parents, leaf = path.split(".")
    message = action
    for name in parents:
        field = message.DESCRIPTOR.fields_by_name[name]
        if field.type != FieldDescriptor.TYPE_MESSAGE:
            raise ValueError(f"amount_field {path!r}: {name!r} is not a message field")
        message = getattr(message, name)
    field = message.DESCRIPTOR.fields_by_name[leaf]
    if field.type not in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_UINT64):
        raise ValueError(f"amount_field {path!r} is not an unsigned integer field")
    setattr(message, leaf, amount)


def concrete_action(entry, rng):
    """One move from a legal-action entry: its action, with a random amount in its range when
    it has one (the listed action already carries the minimum, so it is legal as it is)."""
    action = tabula_pb2.Action()
    action.CopyFrom(entry.action)
    if entry.HasField("amount_range"):
        low, high = entry.amount_range.min, entry.amount_range.max
        # Mostly small amounts so the game looks like play, sometimes anywhere in the range.
        top = high if rng.random() < 0.25 else min(high, low + 30)
        set_amount(action, entry.amount_field, rng.randint(low, top))
    return action


def play(stub, game, rng):
    """Plays `game` (a CreateGame answer) to the end; the final status and the moves made."""
    tokens = {seat.seat: seat.token for seat in game.seats}
    status, version, moves = game.status, game.version, 0
    while status.HasField("to_act"):
        if moves >= MAX_MOVES:
            raise SystemExit(f"game {game.game_id} did not end within {MAX_MOVES} moves")
        seat = status.to_act
        metadata = bearer(tokens[seat])
        view = call(stub.GetView, tabula_pb2.GetViewRequest(game_id=game.game_id), metadata)
        if not view.legal_actions:
            raise SystemExit(f"game {game.game_id}: seat {seat} must act but lists no move")
        entry = rng.choice(view.legal_actions)
        request = tabula_pb2.ActRequest(
            game_id=game.game_id,
            action=concrete_action(entry, rng),
            expected_version=view.version,
            request_id=f"seat{seat}-v{view.version}",
        )
        answer = call(stub.Act, request, metadata)
        status, version, moves = answer.status, answer.version, moves + 1
    return status, moves


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: play_every_game.py HOST:PORT")
    rng = random.Random(int(os.environ.get("SEED", "0")) or None)
    with grpc.insecure_channel(sys.argv[1]) as channel:
        stub = tabula_pb2_grpc.GameServiceStub(channel)
        for case_name, has_players, make in game_configs():
            players, game = create_game(stub, case_name, has_players, make)
            status, moves = play(stub, game, rng)
            if not status.finished:
                raise SystemExit(f"{case_name}: game {game.game_id} stopped unfinished")
            kind = tabula_pb2.GameKind.Name(game.game)
            scores = " ".join(str(score) for score in status.scores)
            winners = " ".join(str(seat) for seat in status.winners)
            print(
                f"finished {kind} game {game.game_id}: {len(game.seats)} players, "
                f"{moves} moves, scores {scores}, winners {winners}",
                flush=True,
            )


if __name__ == "__main__":
    main()
