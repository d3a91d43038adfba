#!/usr/bin/env python3
"""Plays a game through webhooks alone: no Observe stream, no polling.

Usage: TABULA_KEY=tbk_... python webhook_player.py HOST:PORT

A backend of a correspondence site works like this: it registers a webhook for its tenant
(AdminService.AddWebhook, with the tenant's API key), creates games, and waits. When Tabula POSTs a
`turn_started` notification, the receiver verifies the signature, drops a notification it has
already handled (by `event_id`: delivery is at least once), and plays the whole turn of the seat
it is told of (GetView, Act, again while that seat is still to act). `game_finished` ends it.

The receiver listens on 127.0.0.1, so the server must run with `--webhook-allow-private` (a real
receiver has a public https URL). Generated modules as for play_every_game.py.
"""

import hashlib
import hmac
import http.server
import json
import os
import queue
import random
import sys
import threading
import time

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen"))

import grpc  # noqa: E402

from play_every_game import bearer, call, concrete_action  # noqa: E402
from tabula.v1 import admin_pb2, admin_pb2_grpc, tabula_pb2, tabula_pb2_grpc  # noqa: E402

# A notification whose timestamp is further than this from our clock is refused: a replay.
TOLERANCE_S = 300
# How long the whole game may take.
GAME_TIMEOUT_S = 120


def verify(secret, header, body, now=None):
    """Whether `header` (`Tabula-Signature: t=<unix s>,v1=<hex>`) signs `body` (the raw bytes)
    with `secret`: HMAC-SHA256 over "<t>.<body>", compared in constant time, and `t` within
    TOLERANCE_S of now. A forged body fails the HMAC; a replayed request has an old `t`, and
    changing `t` breaks the HMAC too."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(fields["t"])
        given = bytes.fromhex(fields["v1"])
    except (KeyError, ValueError):
        return False
    if abs((now or time.time()) - timestamp) > TOLERANCE_S:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return hmac.compare_digest(expected.digest(), given)


def receiver(webhook, notifications):
    """An HTTP server on a free loopback port whose handler verifies each POST with
    `webhook["secret"]` (filled in once AddWebhook returned it) and hands the verified
    notifications to the main thread; it answers 401 to a bad signature (Tabula retries a non-2xx
    answer, then keeps it as a dead letter)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(min(length, 1 << 20))
            secret = webhook.get("secret", "")
            if not secret or not verify(secret, self.headers.get("tabula-signature", ""), body):
                self.send_response(401)
                self.end_headers()
                return
            notifications.put(json.loads(body))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def play_turn(stub, game_id, seat, token, rng):
    """Plays every move of `seat`'s turn: while it is the seat to act."""
    while True:
        view = call(stub.GetView, tabula_pb2.GetViewRequest(game_id=game_id), bearer(token))
        if view.status.finished or view.status.to_act != seat or not view.legal_actions:
            return
        entry = rng.choice(view.legal_actions)
        call(
            stub.Act,
            tabula_pb2.ActRequest(
                game_id=game_id,
                action=concrete_action(entry, rng),
                expected_version=view.version,
                request_id=f"seat{seat}-v{view.version}",
            ),
            bearer(token),
        )


def main():
    if len(sys.argv) != 2 or not os.environ.get("TABULA_KEY"):
        raise SystemExit("usage: TABULA_KEY=tbk_... webhook_player.py HOST:PORT")
    key = os.environ["TABULA_KEY"]
    rng = random.Random(int(os.environ.get("SEED", "0")) or None)
    notifications = queue.Queue()
    with grpc.insecure_channel(sys.argv[1]) as channel:
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        stub = tabula_pb2_grpc.GameServiceStub(channel)
        # The receiver must listen before its URL is registered; the secret comes with the answer.
        webhook = {}
        server = receiver(webhook, notifications)
        url = f"http://127.0.0.1:{server.server_address[1]}/tabula"
        added = call(
            admin.AddWebhook,
            admin_pb2.AddWebhookRequest(
                url=url,
                kinds=[
                    tabula_pb2.WEBHOOK_EVENT_KIND_TURN_STARTED,
                    tabula_pb2.WEBHOOK_EVENT_KIND_GAME_FINISHED,
                ],
            ),
            bearer(key),
        )
        webhook["secret"] = added.secret
        # Every replica reads the tenant's webhooks within 2 seconds.
        time.sleep(2.5)
        config = tabula_pb2.GameConfig()
        config.medici_vs_strozzi.SetInParent()
        game = call(
            stub.CreateGame,
            tabula_pb2.CreateGameRequest(
                config=config,
                players=[
                    tabula_pb2.Player(seat=0, display_name="Alice", external_id="alice"),
                    tabula_pb2.Player(seat=1, display_name="Bob", external_id="bob"),
                ],
            ),
            bearer(key),
        )
        tokens = {seat.seat: seat.token for seat in game.seats}
        seen = set()
        turns = 0
        deadline = time.time() + GAME_TIMEOUT_S
        try:
            while True:
                try:
                    note = notifications.get(timeout=max(0.1, deadline - time.time()))
                except queue.Empty:
                    raise SystemExit(f"game {game.game_id}: no notification for too long")
                if note["event_id"] in seen or note["game_id"] != game.game_id:
                    continue
                seen.add(note["event_id"])
                if note["kind"] == "turn_started":
                    seat = note["seats"][0]["seat"]
                    play_turn(stub, game.game_id, seat, tokens[seat], rng)
                    turns += 1
                elif note["kind"] == "game_finished":
                    kind = tabula_pb2.GameKind.Name(game.game)
                    winners = " ".join(str(seat) for seat in note["winners"])
                    print(
                        f"finished {kind} game {game.game_id}: {turns} turns told by webhook, "
                        f"winners {winners}",
                        flush=True,
                    )
                    return
        finally:
            call(
                admin.RemoveWebhook,
                admin_pb2.RemoveWebhookRequest(webhook_id=added.webhook.webhook_id),
                bearer(key),
            )
            server.shutdown()


if __name__ == "__main__":
    main()
