//! Turn clocks end to end (issue #14, item 1): real gRPC clients against two replicas sharing one
//! store, each running its sweeper, on the memory store, a real `redis-server` and a real Redis
//! Cluster. A seat that stops playing moves on by its default action or forfeits at its deadline
//! through exactly one logged timeout; a move racing the deadline either wins (no timeout for that
//! decision) or is refused (the timeout is logged), never both; a Fischer clock's banks follow
//! from the logged server times; a log with timeouts re-executes.

use crate::common;

use std::time::Duration;

use common::*;
use futures::StreamExt;
use tabula::hosting::SYSTEM_SEAT;
use tabula::proto::v1 as pb;
use tabula::server::StoreChoice;
use tabula::service::lag::{LAG_ALLOWANCE_MS, TIMEOUT_DELAY_MS};
use tabula::service::{ServiceOptions, SweeperOptions};
use tabula::store::redis::RedisOptions;
use tabula::store::{DeadlineChange, NewEntry};
use tonic::Code;

on_every_store!(
    a_silent_seat_forfeits_at_its_deadline_through_one_timeout,
    a_silent_seat_moves_on_by_its_default_once_per_decision,
    a_move_racing_the_deadline_wins_or_is_refused_never_both,
    fischer_banks_follow_the_logged_times,
    clock_limits_out_of_bounds_are_refused,
    the_deadline_index_never_goes_back_a_version,
);

/// How long any wait in these tests may take before it fails.
const WAIT: Duration = Duration::from_secs(20);

/// Replicas sweeping often, so deadlines of a few hundred ms are enforced promptly.
fn sweeping() -> ServiceOptions {
    ServiceOptions {
        sweeper: SweeperOptions {
            interval: Duration::from_millis(40),
            jitter: 0.5,
            call_timeout: Duration::from_secs(5),
            ..SweeperOptions::default()
        },
        ..test_options()
    }
}

/// Two replicas on the backend's store, both sweeping.
async fn two_replicas(backend: &Backend) -> (Replica, Replica) {
    (
        Replica::start_with(backend, sweeping()).await,
        Replica::start_with(backend, sweeping()).await,
    )
}

fn clocked(clock: pb::turn_clock::Kind, policy: pb::TimeoutPolicy) -> pb::GameConfig {
    pb::GameConfig {
        table: Some(pb::TableConfig {
            timeout_policy: policy as i32,
            clock: Some(pb::TurnClock { kind: Some(clock) }),
            ..Default::default()
        }),
        ..medici_config()
    }
}

fn per_decision(limit_ms: u64) -> pb::turn_clock::Kind {
    pb::turn_clock::Kind::PerDecision(pb::turn_clock::PerDecision { limit_ms })
}

/// The timeout's seat, if `entry` is a timeout.
fn timed_out_seat(entry: &pb::LogEntry) -> Option<u32> {
    match entry.action.as_ref()?.game.as_ref()? {
        pb::action::Game::Table(pb::TableAction {
            kind: Some(pb::table_action::Kind::Timeout(timeout)),
        }) => Some(timeout.seat),
        _ => None,
    }
}

/// Waits (with a deadline) until the game's Observe stream reaches `version`; the messages seen.
async fn observe_until(
    client: &mut Client,
    game_id: &str,
    done: impl Fn(&pb::ObserveResponse) -> bool,
) -> Vec<pb::ObserveResponse> {
    let mut stream = observe(client, game_id, Some(0)).await;
    let mut seen = Vec::new();
    tokio::time::timeout(WAIT, async {
        while let Some(message) = stream.next().await {
            let message = message.expect("stream message");
            let finished = done(&message);
            seen.push(message);
            if finished {
                return;
            }
        }
        panic!("the stream ended early");
    })
    .await
    .unwrap_or_else(|_| panic!("game {game_id} did not get there within {WAIT:?}: {seen:?}"));
    seen
}

/// A two-player game with the forfeit policy: the seat to act never plays, so at its deadline
/// (and not before) one timeout is logged, the seat forfeits and its opponent wins. The deadline
/// index no longer holds the game, two replicas sweeping never log a second timeout, and the log
/// re-executes with VerifyLog.
async fn a_silent_seat_forfeits_at_its_deadline_through_one_timeout(backend: &Backend) {
    let (first, second) = two_replicas(backend).await;
    let mut client = first.client().await;
    let mut other = second.client().await;
    let game = create(
        &mut client,
        clocked(per_decision(300), pb::TimeoutPolicy::Forfeit),
        41,
    )
    .await;
    let opening = spectator_view(&mut other, &game.game_id).await;
    let clock = opening.clock.expect("a clocked game shows its clock");
    let waiting = opening
        .status
        .expect("status")
        .to_act
        .expect("someone acts");
    assert_eq!(clock.seat, Some(waiting));
    let deadline = clock.deadline_ms.expect("a deadline");
    assert_eq!(clock.remaining_ms.len(), 2);
    assert!(clock.remaining_ms[waiting as usize] <= 300);
    assert_eq!(clock.remaining_ms[1 - waiting as usize], 300);

    let seen = observe_until(&mut other, &game.game_id, |message| {
        message
            .status
            .as_ref()
            .is_some_and(|status| status.finished)
    })
    .await;
    let last = seen.last().expect("a message");
    assert_eq!(last.version, 1, "one entry ends the game");
    let status = last.status.clone().expect("status");
    assert_eq!(status.ending, pb::GameEnding::Resignation as i32);
    assert_eq!(status.winners, vec![1 - waiting]);
    assert_eq!(status.resigned, vec![waiting]);
    let logged = last.action.clone().expect("the entry");
    assert!(logged.system && logged.seat == SYSTEM_SEAT);
    assert!(
        logged.server_time_ms >= deadline,
        "the timeout at {} came before the deadline {deadline}",
        logged.server_time_ms
    );
    assert!(last.clock.as_ref().expect("clock").deadline_ms.is_none());

    // Several more sweeps of both replicas: still one entry, and the index let the game go.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let log = export(&mut client, &game.game_id).await;
    assert_eq!(log.entries.len(), 1);
    assert_eq!(timed_out_seat(&log.entries[0]), Some(waiting));
    let store = backend.store().await;
    let indexed = store
        .expired_deadlines(u64::MAX, 10_000)
        .await
        .expect("index");
    assert!(
        indexed.iter().all(|due| due.game_id != game.game_id),
        "a finished game leaves the deadline index: {indexed:?}"
    );

    // The complete log re-executes, with the timeout, without any clock.
    assert!(log.complete);
    let verified = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(log.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verified.valid, "{}", verified.error);
    assert_eq!(verified.status, Some(status));
    // The server's times are informational to the rules: zeroing them changes neither the
    // replay's validity nor its hash. The hash chain covers them, so the signed log no longer
    // verifies: a log stripped of its chain does, and reports itself unsigned.
    let mut untimed = log;
    for entry in &mut untimed.entries {
        entry.server_time_ms = 0;
    }
    let retimed = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(untimed.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(!retimed.valid, "altered times break the chain");
    assert_eq!(retimed.invalid_version, Some(1), "{}", retimed.error);
    untimed.signed_commitment = None;
    untimed.signed_final_head = None;
    for entry in &mut untimed.entries {
        entry.action_commitment.clear();
        entry.head.clear();
    }
    let untimed = client
        .verify_log(pb::VerifyLogRequest { log: Some(untimed) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(untimed.valid && untimed.state_hash == verified.state_hash);
    assert!(!untimed.provenance.expect("provenance").signed);
}

/// The default policy: the silent game moves on by default actions, one timeout per decision.
/// Two replicas sweep it; every timeout was logged at or after its own decision's deadline (a
/// second timeout of the same decision by the other replica would land at the next version,
/// before that version's deadline, and fail this).
async fn a_silent_seat_moves_on_by_its_default_once_per_decision(backend: &Backend) {
    const LIMIT: u64 = 250;
    let (first, second) = two_replicas(backend).await;
    let mut client = first.client().await;
    let game = create(
        &mut client,
        clocked(per_decision(LIMIT), pb::TimeoutPolicy::DefaultAction),
        42,
    )
    .await;
    let opening = spectator_view(&mut second.client().await, &game.game_id).await;
    let created_deadline = opening.clock.expect("clock").deadline_ms.expect("deadline");
    observe_until(&mut client, &game.game_id, |message| message.version >= 3).await;
    let log = export(&mut client, &game.game_id).await;
    assert!(log.entries.len() >= 3);
    let mut decision_started = created_deadline - LIMIT;
    for entry in &log.entries {
        assert!(entry.system, "nobody played but the server: {entry:?}");
        assert!(timed_out_seat(entry).is_some(), "{entry:?}");
        assert!(
            entry.server_time_ms >= decision_started + LIMIT,
            "version {} timed out at {} before its deadline {}",
            entry.version,
            entry.server_time_ms,
            decision_started + LIMIT
        );
        // The default action was played for the seat in the same entry.
        assert!(entry.events.iter().any(|event| matches!(
            &event.game,
            Some(pb::event::Game::Table(pb::TableEvent {
                kind: Some(pb::table_event::Kind::DefaultActionPlayed(played)),
            })) if played.timed_out
        )));
        decision_started = entry.server_time_ms;
    }
}

/// Moves sent around the last moment a move counts as in time (the deadline plus the lag
/// allowance), some just before, some just after. Each decision ends in exactly one way: the move
/// was accepted and the entry is the seat's move (no timeout for that decision), or it was refused
/// (FAILED_PRECONDITION, or ABORTED for its expected version) and the entry is the server's
/// timeout, logged no earlier than the timeout delay after the deadline.
async fn a_move_racing_the_deadline_wins_or_is_refused_never_both(backend: &Backend) {
    const LIMIT: u64 = 300;
    let (first, second) = two_replicas(backend).await;
    let offsets: [i64; 6] = [-60, -20, -5, 0, 10, 60];
    let mut races = Vec::new();
    for (index, offset) in offsets.into_iter().enumerate() {
        let address = if index % 2 == 0 {
            first.address
        } else {
            second.address
        };
        races.push(tokio::spawn(async move {
            let mut client = connect(&format!("http://{address}")).await;
            let game = create(
                &mut client,
                clocked(per_decision(LIMIT), pb::TimeoutPolicy::Forfeit),
                50 + index as u64,
            )
            .await;
            let view = spectator_view(&mut client, &game.game_id).await;
            let seat = view.status.expect("status").to_act.expect("to act");
            let deadline = view.clock.expect("clock").deadline_ms.expect("deadline");
            let mine = seat_view(&mut client, &game.game_id, &token(&game, seat)).await;
            let action = mine.legal_actions[0].action.clone().expect("an action");
            let send_at = (deadline + LAG_ALLOWANCE_MS) as i64 + offset;
            let wait = send_at - tabula::store::unix_millis() as i64;
            if wait > 0 {
                tokio::time::sleep(Duration::from_millis(wait as u64)).await;
            }
            let answer = client
                .act(authorized(
                    pb::ActRequest {
                        narrate: false,
                        game_id: game.game_id.clone(),
                        action: Some(action),
                        expected_version: Some(0),
                        request_id: "racing".into(),
                        omit_view: false,
                    },
                    &token(&game, seat),
                ))
                .await;
            // Either way the game's first entry settles it; with the forfeit policy the game ends
            // at the latest at the next deadline.
            observe_until(&mut client, &game.game_id, |message| {
                message
                    .status
                    .as_ref()
                    .is_some_and(|status| status.finished)
            })
            .await;
            let log = export(&mut client, &game.game_id).await;
            let first_entry = log.entries.first().cloned().expect("an entry");
            let accepted = answer.is_ok();
            match answer {
                Ok(accepted) => {
                    assert_eq!(accepted.into_inner().version, 1);
                    assert!(!first_entry.system, "the move won: {first_entry:?}");
                    assert_eq!(first_entry.seat, seat);
                    assert!(first_entry.server_time_ms <= deadline + TIMEOUT_DELAY_MS);
                    // Whatever timed out next did so in a later decision, a full limit after
                    // the move.
                    if let Some(next) = log.entries.get(1) {
                        assert!(timed_out_seat(next).is_some());
                        assert!(next.server_time_ms >= first_entry.server_time_ms + LIMIT);
                    }
                }
                Err(refused) => {
                    assert!(
                        matches!(refused.code(), Code::FailedPrecondition | Code::Aborted),
                        "{refused:?}"
                    );
                    assert_eq!(timed_out_seat(&first_entry), Some(seat));
                    assert!(first_entry.server_time_ms >= deadline + TIMEOUT_DELAY_MS);
                    // The timeout ended the game (forfeit): the late move is nowhere.
                    assert_eq!(log.entries.len(), 1);
                }
            }
            (offset, accepted)
        }));
    }
    let mut outcomes = Vec::new();
    for race in races {
        outcomes.push(race.await.expect("the race ran"));
    }
    // Well within the allowance the move wins; well past it the timeout does.
    assert!(outcomes.contains(&(-60, true)), "{outcomes:?}");
    assert!(outcomes.contains(&(60, false)), "{outcomes:?}");
}

/// A Fischer clock: each seat's bank is spent while it is to act and grows by the increment after
/// each of its moves; a timeout leaves the increment. What the views show is checked against the
/// banks computed here from the logged server times.
async fn fischer_banks_follow_the_logged_times(backend: &Backend) {
    const BANK: u64 = 700;
    const INCREMENT: u64 = 100;
    let (first, second) = two_replicas(backend).await;
    let mut client = first.client().await;
    let game = create(
        &mut client,
        clocked(
            pb::turn_clock::Kind::Fischer(pb::turn_clock::Fischer {
                initial_ms: BANK,
                increment_ms: INCREMENT,
            }),
            pb::TimeoutPolicy::DefaultAction,
        ),
        43,
    )
    .await;
    let opening = spectator_view(&mut client, &game.game_id).await;
    let created_at = opening.clock.expect("clock").deadline_ms.expect("deadline") - BANK;

    // Four moves with pauses of different lengths, all well within the banks.
    let mut version = 0;
    for pause in [30u64, 150, 60, 200] {
        tokio::time::sleep(Duration::from_millis(pause)).await;
        let view = spectator_view(&mut client, &game.game_id).await;
        let seat = view.status.expect("status").to_act.expect("to act");
        let mine = seat_view(&mut client, &game.game_id, &token(&game, seat)).await;
        let action = mine.legal_actions[0].action.clone().expect("action");
        let accepted = client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    action: Some(action),
                    expected_version: Some(mine.version),
                    request_id: format!("fischer-{version}"),
                    omit_view: false,
                },
                &token(&game, seat),
            ))
            .await
            .expect("a move in time is accepted")
            .into_inner();
        version = accepted.version;
    }
    // Then nobody plays: the seat to act runs out, through the other replica perhaps.
    let mut watcher = second.client().await;
    observe_until(&mut watcher, &game.game_id, |message| {
        message.version > version
    })
    .await;

    let view = spectator_view(&mut client, &game.game_id).await;
    let log = export(&mut client, &game.game_id).await;
    // The banks, from the log alone (up to the view's version: the game runs on meanwhile).
    let mut banks = [BANK, BANK];
    let mut started = created_at;
    let mut to_act = opening.status.expect("status").to_act.expect("to act");
    let mut timeouts = 0;
    for entry in log.entries.iter().take(view.version as usize) {
        let spent = entry.server_time_ms - started;
        match timed_out_seat(entry) {
            Some(seat) => {
                assert_eq!(seat, to_act);
                assert!(
                    spent >= banks[seat as usize],
                    "timed out with {} ms left",
                    banks[seat as usize] - spent
                );
                banks[seat as usize] = INCREMENT;
                timeouts += 1;
            }
            None => {
                assert_eq!(entry.seat, to_act);
                assert!(spent <= banks[to_act as usize], "a late move was accepted");
                banks[to_act as usize] = banks[to_act as usize] - spent + INCREMENT;
            }
        }
        started = entry.server_time_ms;
        // Who acts next: from the entry's replay on a spectator's past view.
        let past = client
            .get_view(pb::GetViewRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                version: Some(entry.version),
                min_version: None,
                omit_view: false,
            })
            .await
            .expect("GetView at a version")
            .into_inner();
        to_act = past.status.expect("status").to_act.expect("still running");
    }
    assert!(timeouts >= 1);
    let clock = view.clock.expect("clock");
    assert_eq!(clock.seat, Some(to_act));
    assert_eq!(
        clock.deadline_ms,
        Some(started + banks[to_act as usize]),
        "the deadline follows from the logged times"
    );
    let other = 1 - to_act as usize;
    assert_eq!(clock.remaining_ms[other], banks[other]);
    assert!(clock.remaining_ms[to_act as usize] <= banks[to_act as usize]);
    let now = tabula::store::unix_millis();
    assert!(clock.server_time_ms <= now && now - clock.server_time_ms < 5_000);
}

/// Limits outside the documented bounds are INVALID_ARGUMENT, naming the field.
async fn clock_limits_out_of_bounds_are_refused(backend: &Backend) {
    let replica = Replica::start_with(backend, sweeping()).await;
    let mut client = replica.client().await;
    let refused = [
        (per_decision(5), "per_decision.limit_ms"),
        (
            pb::turn_clock::Kind::Fischer(pb::turn_clock::Fischer {
                initial_ms: 0,
                increment_ms: 0,
            }),
            "fischer.initial_ms",
        ),
        (
            pb::turn_clock::Kind::Correspondence(pb::turn_clock::Correspondence {
                days_per_move: 365,
            }),
            "days_per_move",
        ),
    ];
    for (clock, field) in refused {
        let status = client
            .create_game(pb::CreateGameRequest {
                config: Some(clocked(clock, pb::TimeoutPolicy::DefaultAction)),
                ..Default::default()
            })
            .await
            .expect_err("refused");
        assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(field), "{}", status.message());
    }
    // Correspondence play: days per move.
    let game = create(
        &mut client,
        clocked(
            pb::turn_clock::Kind::Correspondence(pb::turn_clock::Correspondence {
                days_per_move: 3,
            }),
            pb::TimeoutPolicy::DefaultAction,
        ),
        44,
    )
    .await;
    let clock = spectator_view(&mut client, &game.game_id)
        .await
        .clock
        .expect("clock");
    let three_days = 3 * 24 * 3600 * 1000;
    assert_eq!(clock.remaining_ms.iter().max(), Some(&three_days));
    // An unclocked game shows none.
    let plain = create(&mut client, medici_config(), 45).await;
    assert!(
        spectator_view(&mut client, &plain.game_id)
            .await
            .clock
            .is_none()
    );
}

/// The store's deadline index: due entries are listed earliest first, an update computed at an
/// older version never replaces a newer one, and appends keep the index no later than the log.
async fn the_deadline_index_never_goes_back_a_version(backend: &Backend) {
    let store = backend.store().await;
    let replica = Replica::start_with(
        backend,
        ServiceOptions {
            sweeper: SweeperOptions {
                enabled: false,
                ..SweeperOptions::default()
            },
            ..test_options()
        },
    )
    .await;
    let mut client = replica.client().await;
    // Real games, so the ids exist (the index holds ids only).
    let a = create(&mut client, medici_config(), 60).await.game_id;
    let b = create(&mut client, medici_config(), 61).await.game_id;
    let far = 4_000_000_000_000u64;
    store
        .set_deadline(&a, 3, Some(far + 20))
        .await
        .expect("set");
    store
        .set_deadline(&b, 1, Some(far + 10))
        .await
        .expect("set");
    // An older version's deadline is ignored.
    store.set_deadline(&a, 2, Some(far + 5)).await.expect("set");
    let due = |now| {
        let store = store.clone();
        async move {
            store
                .expired_deadlines(now, 100)
                .await
                .expect("index")
                .into_iter()
                .filter(|due| due.deadline_ms >= far)
                .map(|due| (due.game_id, due.deadline_ms))
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(due(far + 15).await, vec![(b.clone(), far + 10)]);
    assert_eq!(
        due(far + 30).await,
        vec![(b.clone(), far + 10), (a.clone(), far + 20)]
    );
    // An append whose deadline comes earlier lowers it; the new version's deadline stands.
    let appended = store
        .append(
            &a,
            0,
            &NewEntry {
                retry: tabula::store::RetryScope::AnyVersion,
                seat: 0,
                action: Vec::new(),
                request_id: String::new(),
                finishes: false,
                server_time_ms: far,
                head: None,
                deadline: Some(DeadlineChange {
                    before_ms: Some(far + 20),
                    after_ms: Some(far + 1),
                }),
            },
        )
        .await
        .expect("append");
    assert!(matches!(
        appended,
        tabula::store::Append::Appended { version: 1 }
    ));
    // Version 1 < 3, so the set is refused, but the lowering before the append keeps the index
    // no later than the log.
    assert_eq!(due(far + 1).await, vec![(a.clone(), far + 1)]);
    // Removed once the game has no deadline (at a version as new as the index's).
    store.set_deadline(&a, 3, None).await.expect("remove");
    store.set_deadline(&b, 1, None).await.expect("remove");
    assert!(due(u64::MAX).await.is_empty());
}

/// A TCP proxy to a Redis that holds every chunk a replica sends for `delay` before passing it
/// on: a slow store round trip, as on a loaded replica or a distant Redis.
struct SlowProxy {
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl SlowProxy {
    async fn start(target_port: u16, delay: Duration) -> SlowProxy {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", target_port)).await
                else {
                    continue;
                };
                let _ = client.set_nodelay(true);
                let _ = server.set_nodelay(true);
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                tokio::spawn(async move {
                    let mut buffer = vec![0u8; 16 * 1024];
                    while let Ok(read) = client_read.read(&mut buffer).await {
                        if read == 0 {
                            break;
                        }
                        tokio::time::sleep(delay).await;
                        if server_write.write_all(&buffer[..read]).await.is_err() {
                            break;
                        }
                    }
                });
                tokio::spawn(async move {
                    let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
                });
            }
        });
        SlowProxy { port, task }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for SlowProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Issue #24, item 7: a move that reaches its replica before the deadline wins, however long the
/// replica then takes to append it. The replica here is behind a store 200 ms away; the other
/// replica sweeps every 40 ms straight on the store. Before the policy, the move sent 30 ms
/// before the deadline lost to the timeout the sweeper appended while the move's append was on
/// its way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_received_in_time_wins_over_a_slow_append() {
    // Long enough for the set-up below (each of its reads on the slow replica crosses the
    // 200 ms proxy, some more than once) to finish before the deadline on a loaded machine.
    const LIMIT: u64 = 4_000;
    let redis = RedisServer::start();
    let proxy = SlowProxy::start(redis.port, Duration::from_millis(200)).await;
    let sweeper = Replica::serving(
        tabula::server::open_store(&redis.choice())
            .await
            .expect("store"),
        sweeping(),
    )
    .await;
    let slow = Replica::serving(
        tabula::server::open_store(&StoreChoice::Redis(RedisOptions::single(proxy.url())))
            .await
            .expect("store behind the proxy"),
        ServiceOptions {
            sweeper: SweeperOptions {
                enabled: false,
                ..SweeperOptions::default()
            },
            ..test_options()
        },
    )
    .await;
    let mut on_sweeper = sweeper.client().await;
    let mut on_slow = slow.client().await;
    let game = create(
        &mut on_sweeper,
        clocked(per_decision(LIMIT), pb::TimeoutPolicy::Forfeit),
        77,
    )
    .await;
    // The slow replica reads the game now, so the move below waits only for its append.
    let view = spectator_view(&mut on_slow, &game.game_id).await;
    let seat = view.status.expect("status").to_act.expect("to act");
    let deadline = view.clock.expect("clock").deadline_ms.expect("deadline");
    let mine = seat_view(&mut on_slow, &game.game_id, &token(&game, seat)).await;
    let action = mine.legal_actions[0].action.clone().expect("an action");
    let send_at = deadline - 30;
    let now = tabula::store::unix_millis();
    assert!(
        now < send_at,
        "the set-up took longer than the clock's limit"
    );
    tokio::time::sleep(Duration::from_millis(send_at - now)).await;
    let answer = on_slow
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(action),
                expected_version: Some(0),
                request_id: "just in time".into(),
                omit_view: false,
            },
            &token(&game, seat),
        ))
        .await
        .expect("a move received before the deadline is in time")
        .into_inner();
    assert_eq!(answer.version, 1);
    assert!(
        tabula::store::unix_millis() > deadline,
        "the append finished after the deadline (else this tests nothing)"
    );
    let log = export(&mut on_sweeper, &game.game_id).await;
    let first = log.entries.first().expect("the move");
    assert!(!first.system, "the move, not a timeout: {first:?}");
    assert_eq!(first.seat, seat);
}
