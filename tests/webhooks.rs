//! Webhooks, with a real HTTP receiver on loopback and real replicas: every notification arrives
//! at least once, exactly once after de-duplication by event id, in version order per game, even
//! when the replica delivering it is killed mid-stream; signatures verify with the webhook's
//! secret (and a forged body or an old timestamp does not); a receiver answering 500 gets
//! retried with backoff, then the notification becomes a dead letter the tenant lists and
//! redelivers; a receiver down for a while gets everything once it is back; private addresses
//! are refused unless the server allows them.

use crate::common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::servers::TabulaServe;
use common::*;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tabula::service::{OperatorOptions, ServiceOptions, WebhookOptions};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tonic::Code;

/// One request the receiver got.
#[derive(Clone, Debug)]
struct Received {
    signature: String,
    event_id: String,
    body: String,
}

/// How the receiver answers.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mode {
    Ok,
    Fail,
    /// 500 to the first request for this event id, then as `Ok`.
    FailOnce(String),
}

/// A tiny HTTP/1.1 receiver on a loopback port: records every POST and answers as its mode says,
/// after `delay`. Stopping it closes the port (connections are refused until it starts again).
struct Receiver {
    port: u16,
    received: Arc<Mutex<Vec<Received>>>,
    mode: Arc<Mutex<Mode>>,
    delay: Duration,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Receiver {
    async fn start(delay: Duration) -> Receiver {
        let mut receiver = Receiver {
            port: free_port(),
            received: Arc::default(),
            mode: Arc::new(Mutex::new(Mode::Ok)),
            delay,
            task: None,
        };
        receiver.listen().await;
        receiver
    }

    async fn listen(&mut self) {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .expect("bind the receiver");
        let received = self.received.clone();
        let mode = self.mode.clone();
        let delay = self.delay;
        self.task = Some(tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let received = received.clone();
                let mode = mode.clone();
                connections.spawn(serve_connection(stream, received, mode, delay));
            }
        }));
    }

    /// Closes the port and every open connection.
    fn stop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hooks/tabula", self.port)
    }

    fn set_mode(&self, mode: Mode) {
        *self.mode.lock().expect("mode") = mode;
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().expect("received").clone()
    }

    /// Waits (at most `within`) until an event with id `event_id` arrived.
    async fn wait_for(&self, event_id: &str, within: Duration) {
        let deadline = Instant::now() + within;
        while !self.received().iter().any(|r| r.event_id == event_id) {
            assert!(
                Instant::now() < deadline,
                "{event_id} did not arrive within {within:?}; got {:?}",
                self.received()
                    .iter()
                    .map(|r| r.event_id.clone())
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn serve_connection(
    mut stream: tokio::net::TcpStream,
    received: Arc<Mutex<Vec<Received>>>,
    mode: Arc<Mutex<Mode>>,
    delay: Duration,
) {
    let mut buffer = Vec::new();
    loop {
        // The head.
        let head_end = loop {
            if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buffer[..head_end]).to_string();
        let header = |name: &str| {
            head.lines()
                .find_map(|line| {
                    let (key, value) = line.split_once(':')?;
                    key.trim()
                        .eq_ignore_ascii_case(name)
                        .then(|| value.trim().to_owned())
                })
                .unwrap_or_default()
        };
        let length: usize = header("content-length").parse().unwrap_or(0);
        while buffer.len() < head_end + length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let body = String::from_utf8_lossy(&buffer[head_end..head_end + length]).to_string();
        buffer.drain(..head_end + length);
        tokio::time::sleep(delay).await;
        let event_id = header("tabula-event-id");
        let fail = {
            let mut mode = mode.lock().expect("mode");
            match &*mode {
                Mode::Ok => false,
                Mode::Fail => true,
                Mode::FailOnce(once) if *once == event_id => {
                    *mode = Mode::Ok;
                    true
                }
                Mode::FailOnce(_) => false,
            }
        };
        received.lock().expect("received").push(Received {
            signature: header("tabula-signature"),
            event_id,
            body,
        });
        let status = if fail {
            "500 Internal Server Error"
        } else {
            "200 OK"
        };
        let response = format!("HTTP/1.1 {status}\r\ncontent-length: 2\r\n\r\nok");
        if stream.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// What the example receivers do: recompute the signature over `<t>.<body>` with the secret,
/// compare in constant time, and refuse a timestamp more than five minutes from now.
fn verify_signature(secret: &str, header: &str, body: &str, now_s: u64) -> bool {
    let mut timestamp = None;
    let mut signature = None;
    for part in header.split(',') {
        match part.split_once('=') {
            Some(("t", value)) => timestamp = value.parse::<u64>().ok(),
            Some(("v1", value)) => signature = hex::decode(value).ok(),
            _ => {}
        }
    }
    let (Some(timestamp), Some(signature)) = (timestamp, signature) else {
        return false;
    };
    if timestamp.abs_diff(now_s) > 300 {
        return false;
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key");
    mac.update(format!("{timestamp}.{body}").as_bytes());
    mac.verify_slice(&signature).is_ok()
}

fn now_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A tenant named after its id, and its key.
async fn tenant_key(admin: &mut Admin, id: &str) -> String {
    tenant_with_key(admin, id, id).await
}

fn every_kind() -> Vec<i32> {
    (1..=6).collect()
}

/// Adds a webhook to `url` with the tenant's own key; its id and secret.
async fn add_webhook(admin: &mut Admin, key: &str, url: &str) -> (String, String) {
    let added = admin
        .add_webhook(authorized(
            pb::AddWebhookRequest {
                tenant_id: String::new(),
                url: url.into(),
                kinds: every_kind(),
            },
            key,
        ))
        .await
        .expect("AddWebhook")
        .into_inner();
    assert!(added.secret.starts_with("whsec_"));
    (added.webhook.expect("webhook").webhook_id, added.secret)
}

async fn create_owned(client: &mut Client, key: &str, seed: u64) -> pb::CreateGameResponse {
    client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(medici_config()),
                seed: Some(Seed::from_u64(seed).0.to_vec()),
                players: vec![
                    pb::Player {
                        seat: 0,
                        display_name: "Ada".into(),
                        external_id: "player-ada".into(),
                    },
                    pb::Player {
                        seat: 1,
                        display_name: "Bo".into(),
                        external_id: "player-bo".into(),
                    },
                ],
                ..Default::default()
            },
            key,
        ))
        .await
        .expect("CreateGame")
        .into_inner()
}

/// The event ids a finished game's webhook must receive, worked out from the game itself (the
/// seat to act at every version, read back with GetView), not from the server's notifications:
/// a turn starts at each version whose seat to act differs from the version before; the end is
/// the last version.
async fn expected_events(client: &mut Client, game_id: &str, last: u64) -> Vec<(u64, String)> {
    let mut expected = Vec::new();
    let mut before = None;
    for version in 0..=last {
        let view = client
            .get_view(tonic::Request::new(pb::GetViewRequest {
                narrate: false,
                game_id: game_id.into(),
                version: Some(version),
                min_version: None,
                omit_view: false,
            }))
            .await
            .expect("GetView at a version")
            .into_inner();
        let status = view.status.expect("status");
        if status.finished {
            expected.push((version, format!("{game_id}:{version}:game_finished")));
        } else if status.to_act.is_some() && status.to_act != before {
            expected.push((version, format!("{game_id}:{version}:turn_started")));
        }
        before = status.to_act;
    }
    expected
}

/// Checks what `receiver` got for `game_id` against `expected`: each at least once, nothing else,
/// first arrivals in version order, every signature valid.
fn check_received(receiver: &Receiver, secret: &str, game_id: &str, expected: &[(u64, String)]) {
    let received: Vec<Received> = receiver
        .received()
        .into_iter()
        .filter(|r| r.event_id.starts_with(game_id))
        .collect();
    let mut first_seen = Vec::new();
    let mut seen = HashSet::new();
    for request in &received {
        assert!(
            verify_signature(secret, &request.signature, &request.body, now_s()),
            "a valid signature on {}",
            request.event_id
        );
        let body: serde_json::Value = serde_json::from_str(&request.body).expect("JSON body");
        assert_eq!(body["event_id"], request.event_id.as_str());
        assert_eq!(body["game_id"], game_id);
        if seen.insert(request.event_id.clone()) {
            first_seen.push(body["version"].as_u64().expect("version"));
        }
    }
    let expected_ids: HashSet<&String> = expected.iter().map(|(_, id)| id).collect();
    let seen_ids: HashSet<&String> = seen.iter().collect();
    assert_eq!(
        seen_ids, expected_ids,
        "exactly the expected events, once deduplicated"
    );
    assert!(
        first_seen.windows(2).all(|pair| pair[0] <= pair[1]),
        "in version order: {first_seen:?}"
    );
}

/// Plays `game` to its end through `clients` (in turn); its final version.
async fn play_to_end(clients: &mut [Client], game: &pb::CreateGameResponse, seed: u64) -> u64 {
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
    play_random(clients, game, &mut rng, 5_000).await
}

/// Plays up to `moves` random legal moves of `game` through `client` (or to its end), each with
/// its expected version and a request id, pausing `pause` after each; the version reached.
async fn play_moves(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    rng: &mut GameRng,
    moves: usize,
    pause: Duration,
) -> u64 {
    let mut version = 0;
    for _ in 0..moves {
        let public = spectator_view(client, &game.game_id).await;
        let Some(seat) = public.status.and_then(|s| s.to_act) else {
            break;
        };
        let mine = seat_view(client, &game.game_id, &token(game, seat)).await;
        client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    action: Some(choose(&mine.legal_actions, rng)),
                    expected_version: Some(mine.version),
                    request_id: format!("move-{}", mine.version),
                    omit_view: false,
                },
                &token(game, seat),
            ))
            .await
            .expect("Act");
        version = mine.version + 1;
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
    }
    version
}

/// The receiver is slow, the replica that commits (and so delivers first) is killed mid-game, and
/// the other replica takes its claims over once their lease ran out: everything arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_notification_arrives_in_order_when_the_delivering_replica_dies() {
    let redis = RedisServer::start();
    // Slower than the moves, so the first replica still has notifications to send when it dies.
    let receiver = Receiver::start(Duration::from_millis(100)).await;
    let args = [
        "--redis-url",
        &redis.url(),
        "--operator-token",
        OPERATOR,
        "--webhook-allow-private",
        "--allow-client-seed",
    ];
    let mut first = TabulaServe::start(&args);
    let second = TabulaServe::start(&args);
    let mut admin = admin_at(&first.url()).await;
    let key = tenant_key(&mut admin, "alpha").await;
    let (_, secret) = add_webhook(&mut admin, &key, &receiver.url()).await;
    // Each replica reads the directory every 2 s: wait until the second knows the webhook too.
    tokio::time::sleep(Duration::from_millis(2_500)).await;

    let mut client = first.client().await;
    let game = create_owned(&mut client, &key, 5).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(5));
    // Half a game through the first replica, then it dies with deliveries in flight.
    let version = play_moves(&mut client, &game, &mut rng, 40, Duration::ZERO).await;
    first.kill();
    let delivered_before_the_kill: HashSet<String> = receiver
        .received()
        .into_iter()
        .map(|r| r.event_id)
        .collect();
    let mut survivor = second.client().await;
    let last =
        version.max(play_random(std::slice::from_mut(&mut survivor), &game, &mut rng, 5_000).await);
    let expected = expected_events(&mut survivor, &game.game_id, last).await;
    let (_, final_event) = expected.last().expect("events").clone();
    assert!(final_event.ends_with("game_finished"));
    let due_before_the_kill = expected.iter().filter(|(v, _)| *v <= version).count();
    assert!(
        delivered_before_the_kill.len() < due_before_the_kill,
        "the replica died mid-stream ({} of {due_before_the_kill} delivered)",
        delivered_before_the_kill.len()
    );
    // The first replica's claims lapse after their 30 s lease; then the survivor delivers.
    receiver
        .wait_for(&final_event, Duration::from_secs(60))
        .await;
    // Everything before the end arrived before it (order per game).
    check_received(&receiver, &secret, &game.game_id, &expected);
    let body: serde_json::Value = serde_json::from_str(
        &receiver
            .received()
            .iter()
            .find(|r| r.event_id == final_event)
            .expect("final")
            .body,
    )
    .expect("json");
    assert_eq!(body["kind"], "game_finished");
    assert_eq!(body["tenant_id"], "alpha");
    assert_eq!(body["seats"][1]["external_id"], "player-bo");
    assert!(!body["winners"].as_array().expect("winners").is_empty());
}

/// Moves come faster than a slow receiver takes their notifications, so each delivery pass covers
/// several entries: the replica that committed them tells them from the states its cache kept
/// (`tabula_webhook_entries_told_total{source="cache"}` above the passes that told them), not by
/// reading the game's log and replaying it, and everything still arrives, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn passes_behind_their_game_tell_its_entries_from_the_cache() {
    let redis = RedisServer::start();
    let receiver = Receiver::start(Duration::from_millis(20)).await;
    let metrics_port = free_port();
    let replica = TabulaServe::start(&[
        "--redis-url",
        &redis.url(),
        "--operator-token",
        OPERATOR,
        "--webhook-allow-private",
        "--allow-client-seed",
        "--metrics-listen",
        &format!("127.0.0.1:{metrics_port}"),
    ]);
    let mut admin = admin_at(&replica.url()).await;
    let key = tenant_key(&mut admin, "alpha").await;
    let (_, secret) = add_webhook(&mut admin, &key, &receiver.url()).await;
    let mut client = replica.client().await;
    let game = create_owned(&mut client, &key, 12).await;
    // A move every 10 ms or so: while one notification takes its 20 ms, about two entries are
    // committed, so the next pass covers them both, well within the steps a cache keeps.
    let mut rng = GameRng::from_seed(&Seed::from_u64(12));
    let last = play_moves(
        &mut client,
        &game,
        &mut rng,
        usize::MAX,
        Duration::from_millis(10),
    )
    .await;
    let expected = expected_events(&mut client, &game.game_id, last).await;
    let (_, final_event) = expected.last().expect("events").clone();
    receiver
        .wait_for(&final_event, Duration::from_secs(60))
        .await;
    check_received(&receiver, &secret, &game.game_id, &expected);
    let scraped = scrape_metrics(metrics_port);
    let sample = |metric: &str, source: &str| {
        metric_sample(&scraped, metric, &[&format!("source=\"{source}\"")])
    };
    let passes = sample("tabula_webhook_passes_total", "cache");
    let told = sample("tabula_webhook_entries_told_total", "cache");
    assert!(passes >= 1.0, "{scraped}");
    assert!(
        told > passes,
        "some pass told several entries from the cache ({told} entries in {passes} passes)"
    );
    assert!(
        told >= last as f64 / 2.0,
        "most entries told from the cache: {told} of {last}"
    );
}

fn options(allow_private: bool) -> ServiceOptions {
    ServiceOptions {
        operator: Some(OperatorOptions {
            token: OPERATOR.parse().expect("an operator token"),
            required_for_create: false,
        }),
        webhooks: WebhookOptions {
            allow_private,
            max_attempts: 4,
            first_backoff: Duration::from_millis(50),
            timeout: Duration::from_secs(2),
            poll: Duration::from_millis(50),
            ..WebhookOptions::default()
        },
        ..test_options()
    }
}

/// A receiver answering 500: retried with backoff, then a dead letter the tenant lists and
/// redelivers once the receiver is fixed. Another tenant's key sees none of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_calls_back_off_then_become_dead_letters_the_tenant_redelivers() {
    let backend = Backend::memory();
    let replica = Replica::start_with(&backend, options(true)).await;
    let mut admin = admin(&replica).await;
    let mut client = replica.client().await;
    let key = tenant_key(&mut admin, "alpha").await;
    let other = tenant_key(&mut admin, "beta").await;
    let receiver = Receiver::start(Duration::ZERO).await;
    receiver.set_mode(Mode::Fail);
    let (webhook_id, secret) = add_webhook(&mut admin, &key, &receiver.url()).await;
    let game = create_owned(&mut client, &key, 8).await;
    let first_turn = format!("{}:0:turn_started", game.game_id);

    // Four attempts, 50 ms then about 100 and 200 ms apart, then a dead letter.
    let deadline = Instant::now() + Duration::from_secs(10);
    let letters = loop {
        let letters = admin
            .list_dead_letters(authorized(pb::ListDeadLettersRequest::default(), &key))
            .await
            .expect("ListDeadLetters")
            .into_inner()
            .dead_letters;
        if !letters.is_empty() {
            break letters;
        }
        assert!(Instant::now() < deadline, "no dead letter");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let attempts = receiver
        .received()
        .iter()
        .filter(|r| r.event_id == first_turn)
        .count();
    assert_eq!(attempts, 4, "every attempt, then given up");
    assert_eq!(letters.len(), 1);
    let letter = &letters[0];
    assert_eq!(letter.event_id, first_turn);
    assert_eq!(letter.webhook_id, webhook_id);
    assert_eq!(letter.attempts, 4);
    assert_eq!(letter.last_error, "status 500");
    // The dead letters are the tenant's own.
    let theirs = admin
        .list_dead_letters(authorized(
            pb::ListDeadLettersRequest {
                tenant_id: "alpha".into(),
                page_size: 0,
            },
            &other,
        ))
        .await
        .expect_err("another tenant's dead letters");
    assert_eq!(theirs.code(), Code::NotFound);

    receiver.set_mode(Mode::Ok);
    let redelivered = admin
        .redeliver_dead_letters(authorized(
            pb::RedeliverDeadLettersRequest {
                tenant_id: String::new(),
                dead_letter_ids: vec![letter.dead_letter_id.clone(), "nope".into()],
            },
            &key,
        ))
        .await
        .expect("RedeliverDeadLetters")
        .into_inner();
    assert_eq!(
        redelivered.delivered,
        std::slice::from_ref(&letter.dead_letter_id)
    );
    assert_eq!(redelivered.failed.len(), 1);
    let last = receiver.received().last().cloned().expect("redelivered");
    assert_eq!(last.event_id, first_turn);
    assert!(verify_signature(
        &secret,
        &last.signature,
        &last.body,
        now_s()
    ));
    // A forged body, another secret or an old timestamp do not verify.
    assert!(!verify_signature(
        &secret,
        &last.signature,
        &last.body.replace("alpha", "alphb"),
        now_s()
    ));
    assert!(!verify_signature(
        "whsec_other",
        &last.signature,
        &last.body,
        now_s()
    ));
    assert!(!verify_signature(
        &secret,
        &last.signature,
        &last.body,
        now_s() + 3_600
    ));
    let left = admin
        .list_dead_letters(authorized(pb::ListDeadLettersRequest::default(), &key))
        .await
        .expect("ListDeadLetters")
        .into_inner()
        .dead_letters;
    assert!(left.is_empty(), "a redelivered letter is no longer dead");

    // The game goes on and its webhook hears of it again.
    let last_version = play_to_end(std::slice::from_mut(&mut client), &game, 8).await;
    receiver
        .wait_for(
            &format!("{}:{last_version}:game_finished", game.game_id),
            Duration::from_secs(10),
        )
        .await;
}

/// An entry with two notifications (a seat timing out, and the game its forfeit ends), the
/// second refused once: it is sent again, although the first was delivered. (A cursor moved to
/// the entry after its first notification would skip the second for good.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_notification_is_retried_after_another_of_its_entry_was_delivered() {
    let backend = Backend::memory();
    let replica = Replica::start_with(&backend, options(true)).await;
    let mut admin = admin(&replica).await;
    let mut client = replica.client().await;
    let key = tenant_key(&mut admin, "alpha").await;
    let receiver = Receiver::start(Duration::ZERO).await;
    add_webhook(&mut admin, &key, &receiver.url()).await;
    let game = client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(pb::GameConfig {
                    table: Some(pb::TableConfig {
                        timeout_policy: pb::TimeoutPolicy::Forfeit as i32,
                        clock: Some(pb::TurnClock {
                            kind: Some(pb::turn_clock::Kind::PerDecision(
                                pb::turn_clock::PerDecision { limit_ms: 1_500 },
                            )),
                        }),
                        ..Default::default()
                    }),
                    ..medici_config()
                }),
                seed: Some(Seed::from_u64(41).0.to_vec()),
                ..Default::default()
            },
            &key,
        ))
        .await
        .expect("CreateGame")
        .into_inner();
    let finished = format!("{}:1:game_finished", game.game_id);
    receiver.set_mode(Mode::FailOnce(finished.clone()));

    // Refused once, then sent again.
    let deadline = Instant::now() + WAIT;
    let ids = loop {
        let ids: Vec<String> = receiver
            .received()
            .into_iter()
            .map(|received| received.event_id)
            .filter(|id| id.starts_with(&game.game_id))
            .collect();
        if ids.iter().filter(|id| **id == finished).count() >= 2 {
            break ids;
        }
        assert!(
            Instant::now() < deadline,
            "{finished} was not sent again after it was refused: {ids:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let timed_out = format!("{}:1:seat_timed_out", game.game_id);
    assert!(ids.contains(&timed_out), "{ids:?}");
    assert!(
        ids.iter().position(|id| *id == timed_out) < ids.iter().position(|id| *id == finished),
        "in order: {ids:?}"
    );
}

/// How long the tests wait for a notification.
const WAIT: Duration = Duration::from_secs(20);

/// The clock limit of the game in `clocks_run_low_once_per_decision_…`: long enough that a
/// loaded machine still delivers the warning (at 80 %) and the test answers it in time.
const DECISION_LIMIT_MS: u64 = 8_000;

/// The event ids `receiver` got for `game_id`, once each, in the order first received.
fn event_ids(receiver: &Receiver, game_id: &str) -> Vec<String> {
    let mut seen = Vec::new();
    for received in receiver.received() {
        if received.event_id.starts_with(game_id) && !seen.contains(&received.event_id) {
            seen.push(received.event_id);
        }
    }
    seen
}

/// A clock running low is told once per decision, named by the version at which the decision
/// started, when a fifth of its time is left and not for a decision the seat ended in time. A
/// game's own webhooks (asked for at creation) hear of their game alone, signed with their own
/// secret; one that fails leaves a dead letter the tenant redelivers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clocks_run_low_once_per_decision_and_a_games_own_webhooks_hear_of_it_alone() {
    let backend = Backend::memory();
    let replica = Replica::start_with(&backend, options(true)).await;
    let mut admin = admin(&replica).await;
    let mut client = replica.client().await;
    let key = tenant_key(&mut admin, "alpha").await;
    let tenant_receiver = Receiver::start(Duration::ZERO).await;
    let (_, tenant_secret) = add_webhook(&mut admin, &key, &tenant_receiver.url()).await;
    let own_receiver = Receiver::start(Duration::ZERO).await;
    let failing = Receiver::start(Duration::ZERO).await;
    failing.set_mode(Mode::Fail);

    let clocked = pb::GameConfig {
        table: Some(pb::TableConfig {
            clock: Some(pb::TurnClock {
                kind: Some(pb::turn_clock::Kind::PerDecision(
                    pb::turn_clock::PerDecision {
                        limit_ms: DECISION_LIMIT_MS,
                    },
                )),
            }),
            ..Default::default()
        }),
        ..medici_config()
    };
    let game = client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(clocked.clone()),
                seed: Some(Seed::from_u64(31).0.to_vec()),
                webhooks: vec![
                    pb::GameWebhook {
                        url: own_receiver.url(),
                        kinds: vec![pb::WebhookEventKind::ClockRunningLow as i32],
                    },
                    pb::GameWebhook {
                        url: failing.url(),
                        kinds: vec![pb::WebhookEventKind::TurnStarted as i32],
                    },
                ],
                ..Default::default()
            },
            &key,
        ))
        .await
        .expect("CreateGame with webhooks of its own")
        .into_inner();
    assert_eq!(game.webhooks.len(), 2);
    assert_eq!(game.webhooks[0].url, own_receiver.url());
    assert!(
        game.webhooks
            .iter()
            .all(|hook| hook.secret.starts_with("whsec_"))
    );
    let own_secret = game.webhooks[0].secret.clone();
    // Another game of the tenant: its webhooks hear of it, the first game's own do not.
    let other = create_owned(&mut client, &key, 32).await;
    tenant_receiver
        .wait_for(&format!("{}:0:turn_started", other.game_id), WAIT)
        .await;

    // Decision 0 runs low: told at 80 % of its time, with its deadline.
    let low_0 = format!("{}:0:clock_running_low", game.game_id);
    tenant_receiver.wait_for(&low_0, WAIT).await;
    let warned = tenant_receiver
        .received()
        .into_iter()
        .find(|r| r.event_id == low_0)
        .expect("the warning");
    assert!(verify_signature(
        &tenant_secret,
        &warned.signature,
        &warned.body,
        now_s()
    ));
    let body: serde_json::Value = serde_json::from_str(&warned.body).expect("JSON");
    let deadline_ms = body["deadline_ms"].as_u64().expect("a deadline");
    assert_eq!(
        body["logged_at_ms"].as_u64(),
        Some(deadline_ms - DECISION_LIMIT_MS / 5),
        "running low with a fifth of the time left: {body}"
    );
    assert_eq!(body["version"], 0);
    let first_seat = spectator_view(&mut client, &game.game_id)
        .await
        .status
        .and_then(|status| status.to_act)
        .expect("a seat to act");
    assert_eq!(body["seats"][0]["seat"], first_seat);

    // Two moves at once: decision 1 ends in time (no warning), decision 2 runs low.
    let mut rng = GameRng::from_seed(&Seed::from_u64(31));
    let version = play_steps(&mut client, &game, &mut rng, 2).await;
    assert_eq!(version, 2, "both moves in time");
    let low_2 = format!("{}:2:clock_running_low", game.game_id);
    tenant_receiver.wait_for(&low_2, WAIT).await;
    own_receiver.wait_for(&low_2, WAIT).await;
    let lows: Vec<String> = event_ids(&tenant_receiver, &game.game_id)
        .into_iter()
        .filter(|id| id.ends_with(":clock_running_low"))
        .collect();
    assert_eq!(
        lows,
        [low_0.clone(), low_2.clone()],
        "once per decision that ran low"
    );

    // The game's own webhook: its game alone, its kinds alone, its own secret.
    assert_eq!(event_ids(&own_receiver, &game.game_id), [low_0, low_2]);
    for received in own_receiver.received() {
        assert!(received.event_id.starts_with(&game.game_id));
        assert!(verify_signature(
            &own_secret,
            &received.signature,
            &received.body,
            now_s()
        ));
        assert!(!verify_signature(
            &tenant_secret,
            &received.signature,
            &received.body,
            now_s()
        ));
    }

    // The failing one gave up on the first turn: a dead letter of the tenant's, redelivered.
    let first_turn = format!("{}:0:turn_started", game.game_id);
    let letters = admin
        .list_dead_letters(authorized(pb::ListDeadLettersRequest::default(), &key))
        .await
        .expect("ListDeadLetters")
        .into_inner()
        .dead_letters;
    let letter = letters
        .iter()
        .find(|letter| letter.event_id == first_turn)
        .unwrap_or_else(|| panic!("a dead letter for {first_turn}: {letters:?}"));
    assert_eq!(letter.webhook_id, game.webhooks[1].webhook_id);
    failing.set_mode(Mode::Ok);
    let redelivered = admin
        .redeliver_dead_letters(authorized(
            pb::RedeliverDeadLettersRequest {
                tenant_id: String::new(),
                dead_letter_ids: vec![letter.dead_letter_id.clone()],
            },
            &key,
        ))
        .await
        .expect("RedeliverDeadLetters")
        .into_inner();
    assert_eq!(
        redelivered.delivered,
        std::slice::from_ref(&letter.dead_letter_id)
    );
    let last = failing.received().last().cloned().expect("redelivered");
    assert_eq!(last.event_id, first_turn);
    assert!(verify_signature(
        &game.webhooks[1].secret,
        &last.signature,
        &last.body,
        now_s()
    ));

    // Webhooks of a game are refused without a tenant, beyond two, and with a bad URL.
    let with_hooks = |count: usize, url: &str| pb::CreateGameRequest {
        config: Some(clocked.clone()),
        webhooks: (0..count)
            .map(|_| pb::GameWebhook {
                url: url.into(),
                kinds: vec![pb::WebhookEventKind::TurnStarted as i32],
            })
            .collect(),
        ..Default::default()
    };
    for (request, credential, expected) in [
        (with_hooks(1, &own_receiver.url()), None, "tenant"),
        (with_hooks(1, &own_receiver.url()), Some(OPERATOR), "tenant"),
        (
            with_hooks(3, &own_receiver.url()),
            Some(key.as_str()),
            "at most 2",
        ),
        (
            with_hooks(1, "ftp://example.com/"),
            Some(key.as_str()),
            "webhooks[0].url",
        ),
    ] {
        let request = match credential {
            Some(credential) => authorized(request, credential),
            None => tonic::Request::new(request),
        };
        let status = client.create_game(request).await.expect_err("refused");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(expected), "{status:?}");
    }
}

/// A receiver down for 30 seconds gets everything once it is back, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_down_for_30_seconds_gets_everything_when_it_returns() {
    let backend = Backend::memory();
    let mut options = options(true);
    options.webhooks.max_attempts = 10;
    options.webhooks.first_backoff = Duration::from_millis(500);
    let replica = Replica::start_with(&backend, options).await;
    let mut admin = admin(&replica).await;
    let mut client = replica.client().await;
    let key = tenant_key(&mut admin, "alpha").await;
    let mut receiver = Receiver::start(Duration::ZERO).await;
    let (_, secret) = add_webhook(&mut admin, &key, &receiver.url()).await;
    receiver.stop();
    let game = create_owned(&mut client, &key, 9).await;
    let last = play_to_end(std::slice::from_mut(&mut client), &game, 9).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(receiver.received().is_empty());
    receiver.listen().await;
    let expected = expected_events(&mut client, &game.game_id, last).await;
    let (_, final_event) = expected.last().expect("events").clone();
    // Backoff after 30 s of failures is at most about 32 s.
    receiver
        .wait_for(&final_event, Duration::from_secs(45))
        .await;
    check_received(&receiver, &secret, &game.game_id, &expected);
}

/// Private, loopback and link-local URLs are refused unless the server allows them; a tenant
/// manages only its own webhooks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_are_checked_and_scoped_to_their_tenant() {
    let backend = Backend::memory();
    let replica = Replica::start_with(&backend, options(false)).await;
    let mut admin = admin(&replica).await;
    let key = tenant_key(&mut admin, "alpha").await;
    let other = tenant_key(&mut admin, "beta").await;
    for url in [
        "http://127.0.0.1:8080/hook",
        "http://169.254.169.254/latest",
        "http://10.0.0.1/",
        "http://localhost/",
        "ftp://example.com/",
    ] {
        let refused = admin
            .add_webhook(authorized(
                pb::AddWebhookRequest {
                    tenant_id: String::new(),
                    url: url.into(),
                    kinds: every_kind(),
                },
                &key,
            ))
            .await
            .expect_err(url);
        assert_eq!(refused.code(), Code::InvalidArgument, "{url}: {refused:?}");
    }
    let no_kinds = admin
        .add_webhook(authorized(
            pb::AddWebhookRequest {
                tenant_id: String::new(),
                url: "https://example.com/hook".into(),
                kinds: Vec::new(),
            },
            &key,
        ))
        .await
        .expect_err("no kinds");
    assert_eq!(no_kinds.code(), Code::InvalidArgument);
    let (webhook_id, _) = add_webhook(&mut admin, &key, "https://example.com/hook").await;
    // Beta neither sees nor removes alpha's webhook; the operator sees it.
    let theirs = admin
        .list_webhooks(authorized(
            pb::ListWebhooksRequest {
                tenant_id: "alpha".into(),
            },
            &other,
        ))
        .await
        .expect_err("another tenant's webhooks");
    assert_eq!(theirs.code(), Code::NotFound);
    assert!(!theirs.message().contains("example.com"));
    let removal = admin
        .remove_webhook(authorized(
            pb::RemoveWebhookRequest {
                tenant_id: "alpha".into(),
                webhook_id: webhook_id.clone(),
            },
            &other,
        ))
        .await
        .expect_err("another tenant's webhook");
    assert_eq!(removal.code(), Code::NotFound);
    let listed = admin
        .list_webhooks(authorized(
            pb::ListWebhooksRequest {
                tenant_id: "alpha".into(),
            },
            OPERATOR,
        ))
        .await
        .expect("the operator lists")
        .into_inner()
        .webhooks;
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].url, "https://example.com/hook");
    let mine = admin
        .list_webhooks(authorized(pb::ListWebhooksRequest::default(), &key))
        .await
        .expect("alpha lists")
        .into_inner()
        .webhooks;
    assert_eq!(mine, listed);
    admin
        .remove_webhook(authorized(
            pb::RemoveWebhookRequest {
                tenant_id: String::new(),
                webhook_id,
            },
            &key,
        ))
        .await
        .expect("alpha removes its webhook");
}

/// ListTurns of `player` with `key`, every page of `page_size`: (game id, seat, version).
async fn turns_of(
    admin: &mut Admin,
    key: &str,
    player: &str,
    page_size: u32,
) -> Vec<(String, u32, u64)> {
    let mut turns = Vec::new();
    let mut token = String::new();
    loop {
        let page = admin
            .list_turns(authorized(
                pb::ListTurnsRequest {
                    tenant_id: String::new(),
                    external_id: player.into(),
                    page_size,
                    page_token: token.clone(),
                },
                key,
            ))
            .await
            .expect("ListTurns")
            .into_inner();
        assert!(page.turns.len() <= page_size as usize);
        turns.extend(
            page.turns
                .into_iter()
                .map(|turn| (turn.game_id, turn.seat, turn.version)),
        );
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    turns.sort();
    turns
}

/// Polls ListTurns until it answers `expected` (sorted), within 10 s.
async fn wait_turns(admin: &mut Admin, key: &str, player: &str, expected: &[(String, u32, u64)]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let turns = turns_of(admin, key, player, 2).await;
        if turns == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{player}: {turns:?}, not {expected:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Plays random legal moves, each with the token of the seat to act, until `seat` must act; the
/// version it acts at.
async fn play_until_to_act(
    client: &mut Client,
    game: &pb::CreateGameResponse,
    seat: u32,
    rng: &mut GameRng,
) -> u64 {
    loop {
        let public = spectator_view(client, &game.game_id).await;
        let to_act = public.status.and_then(|s| s.to_act).expect("running");
        if to_act == seat {
            return public.version;
        }
        let mine = seat_view(client, &game.game_id, &token(game, to_act)).await;
        client
            .act(authorized(
                pb::ActRequest {
                    game_id: game.game_id.clone(),
                    action: Some(choose(&mine.legal_actions, rng)),
                    expected_version: Some(mine.version),
                    ..Default::default()
                },
                &token(game, to_act),
            ))
            .await
            .expect("Act");
    }
}

async fn the_turn_inbox_follows_the_games(backend: &Backend) {
    let replica = Replica::start_with(backend, options(true)).await;
    let mut admin = admin(&replica).await;
    let mut client = replica.client().await;
    let key = tenant_key(&mut admin, "alpha").await;
    let other = tenant_key(&mut admin, "beta").await;
    let mut games = Vec::new();
    for seed in 21..24 {
        games.push(create_owned(&mut client, &key, seed).await);
    }
    let first = spectator_view(&mut client, &games[0].game_id)
        .await
        .status
        .and_then(|s| s.to_act)
        .expect("a seat to act");
    let player = |seat: u32| if seat == 0 { "player-ada" } else { "player-bo" };
    let mut waiting: Vec<(String, u32, u64)> = games
        .iter()
        .map(|game| (game.game_id.clone(), first, 0))
        .collect();
    waiting.sort();
    wait_turns(&mut admin, &key, player(first), &waiting).await;
    wait_turns(&mut admin, &key, player(1 - first), &[]).await;

    // Moves in the first game until the other seat must act: it leaves one inbox for the other.
    let game = &games[0];
    let mut rng = GameRng::from_seed(&Seed::from_u64(21));
    let seat = 1 - first;
    let version = play_until_to_act(&mut client, game, seat, &mut rng).await;
    waiting.retain(|(id, _, _)| *id != game.game_id);
    wait_turns(&mut admin, &key, player(first), &waiting).await;
    wait_turns(
        &mut admin,
        &key,
        player(seat),
        &[(game.game_id.clone(), seat, version)],
    )
    .await;

    // An ended game waits for nobody.
    admin
        .end_game(authorized(
            pb::EndGameRequest {
                game_id: games[1].game_id.clone(),
                reason: "test".into(),
                request_id: String::new(),
            },
            &key,
        ))
        .await
        .expect("EndGame");
    waiting.retain(|(id, _, _)| *id != games[1].game_id);
    wait_turns(&mut admin, &key, player(first), &waiting).await;

    // Another tenant: its own inbox (empty), and alpha's is a missing tenant.
    assert!(
        turns_of(&mut admin, &other, player(first), 10)
            .await
            .is_empty()
    );
    let refused = admin
        .list_turns(authorized(
            pb::ListTurnsRequest {
                tenant_id: "alpha".into(),
                external_id: player(first).into(),
                page_size: 0,
                page_token: String::new(),
            },
            &other,
        ))
        .await
        .expect_err("another tenant's inbox");
    assert_eq!(refused.code(), Code::NotFound);
}

/// A player who takes an open seat (JoinGame) with an external id is that seat's player for the
/// turn inbox and in notifications, as the creator's players are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_joiner_is_told_of_their_turn_and_listed_in_their_inbox() {
    let replica = Replica::start_with(&Backend::memory(), options(true)).await;
    let mut admin = admin(&replica).await;
    let mut client = replica.client().await;
    let key = tenant_key(&mut admin, "alpha").await;
    let receiver = Receiver::start(Duration::ZERO).await;
    add_webhook(&mut admin, &key, &receiver.url()).await;
    let created = client
        .create_game(authorized(
            pb::CreateGameRequest {
                config: Some(pb::GameConfig {
                    table: Some(pb::TableConfig {
                        open_seats: vec![1],
                        ..Default::default()
                    }),
                    ..medici_config()
                }),
                seed: Some(Seed::from_u64(25).0.to_vec()),
                players: vec![pb::Player {
                    seat: 0,
                    display_name: "Ada".into(),
                    external_id: "player-ada".into(),
                }],
                ..Default::default()
            },
            &key,
        ))
        .await
        .expect("CreateGame with an open seat")
        .into_inner();
    let game_id = created.game_id.clone();
    let invitation = created
        .invitations
        .iter()
        .find(|invitation| invitation.seat == Some(1))
        .expect("an invitation to seat 1")
        .code
        .clone();
    let joined = client
        .join_game(authorized(
            pb::JoinGameRequest {
                code: invitation,
                player: Some(pb::Player {
                    seat: 0,
                    display_name: "Cy".into(),
                    external_id: "player-cy".into(),
                }),
                request_id: "join-cy".into(),
            },
            &key,
        ))
        .await
        .expect("JoinGame")
        .into_inner();
    assert_eq!(joined.seat, 1);

    // Seat 0 moves until the joiner must act.
    let mut rng = GameRng::from_seed(&Seed::from_u64(25));
    let version = play_until_to_act(&mut client, &created, 1, &mut rng).await;
    wait_turns(
        &mut admin,
        &key,
        "player-cy",
        &[(game_id.clone(), 1, version)],
    )
    .await;
    wait_turns(&mut admin, &key, "player-ada", &[]).await;
    let turn = format!("{game_id}:{version}:turn_started");
    receiver.wait_for(&turn, WAIT).await;
    let told = receiver
        .received()
        .into_iter()
        .find(|received| received.event_id == turn)
        .expect("the joiner's turn");
    let body: serde_json::Value = serde_json::from_str(&told.body).expect("JSON");
    assert_eq!(body["seats"][0]["seat"], 1, "{body}");
    assert_eq!(body["seats"][0]["external_id"], "player-cy", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_inbox_follows_the_games_on_memory() {
    the_turn_inbox_follows_the_games(&Backend::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_inbox_follows_the_games_on_redis() {
    the_turn_inbox_follows_the_games(&Backend::redis()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_turn_inbox_follows_the_games_on_a_cluster() {
    the_turn_inbox_follows_the_games(&Backend::redis_cluster()).await;
}

/// Reads `stream` until an event with id ending in `until` arrived (within 10 s): (cursor, event
/// id, version) of each.
async fn read_events(
    stream: &mut tonic::Streaming<pb::WatchEventsResponse>,
    until: impl Fn(&str) -> bool,
) -> Vec<(String, String, u64)> {
    let mut events = Vec::new();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), stream.message())
            .await
            .expect("an event within 10 s")
            .expect("the stream")
            .expect("not ended");
        let body: serde_json::Value = serde_json::from_str(&message.event_json).expect("JSON");
        let id = body["event_id"].as_str().expect("event id").to_owned();
        events.push((
            message.cursor,
            id.clone(),
            body["version"].as_u64().expect("version"),
        ));
        if until(&id) {
            return events;
        }
    }
}

async fn a_tenants_event_stream_resumes_from_its_cursor(backend: &Backend) {
    let replica = Replica::start_with(backend, options(true)).await;
    let mut admin = admin(&replica).await;
    let mut client = replica.client().await;
    let key = tenant_key(&mut admin, "alpha").await;
    let other = tenant_key(&mut admin, "beta").await;
    let watcher = admin.clone();
    let watch = |after: String, credential: String| {
        let mut admin = watcher.clone();
        async move {
            admin
                .watch_events(authorized(
                    pb::WatchEventsRequest {
                        tenant_id: String::new(),
                        after,
                    },
                    &credential,
                ))
                .await
        }
    };
    let game = create_owned(&mut client, &key, 31).await;
    let mut stream = watch(String::new(), key.clone())
        .await
        .expect("WatchEvents")
        .into_inner();
    let first_turn = format!("{}:0:turn_started", game.game_id);
    let mut events = read_events(&mut stream, |id| id == first_turn).await;
    drop(stream);
    // The game goes on while nobody watches; the stream resumes after the last cursor read.
    let last = play_to_end(std::slice::from_mut(&mut client), &game, 31).await;
    let final_event = format!("{}:{last}:game_finished", game.game_id);
    let resumed_from = events.last().expect("an event").0.clone();
    let mut stream = watch(resumed_from, key.clone())
        .await
        .expect("WatchEvents resumed")
        .into_inner();
    events.extend(read_events(&mut stream, |id| id == final_event).await);
    let ids: Vec<&String> = events.iter().map(|(_, id, _)| id).collect();
    let unique: HashSet<&String> = ids.iter().copied().collect();
    assert_eq!(
        unique.len(),
        ids.len(),
        "no repeat across the resumption: {ids:?}"
    );
    let expected = expected_events(&mut client, &game.game_id, last).await;
    let expected_ids: HashSet<&String> = expected.iter().map(|(_, id)| id).collect();
    assert_eq!(unique, expected_ids);
    assert!(
        events.windows(2).all(|pair| pair[0].2 <= pair[1].2),
        "in version order"
    );

    // Another tenant: not alpha's stream; a cursor that is none is refused.
    let theirs = admin
        .watch_events(authorized(
            pb::WatchEventsRequest {
                tenant_id: "alpha".into(),
                after: String::new(),
            },
            &other,
        ))
        .await
        .expect_err("another tenant's stream");
    assert_eq!(theirs.code(), Code::NotFound);
    let bad = watch("not-a-cursor".into(), key.clone())
        .await
        .expect_err("a bad cursor");
    assert_eq!(bad.code(), Code::InvalidArgument, "{bad:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_event_stream_resumes_from_its_cursor_on_memory() {
    a_tenants_event_stream_resumes_from_its_cursor(&Backend::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_event_stream_resumes_from_its_cursor_on_redis() {
    a_tenants_event_stream_resumes_from_its_cursor(&Backend::redis()).await;
}
