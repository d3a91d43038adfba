//! The table layer's tests: resign, timeouts, aborts, hand-overs, default actions.

use super::*;
use crate::games::common::GameRng;
use crate::games::{Seed, Viewer};
use crate::hosting::{GameState, restore, setup};
use crate::proto::{la_strada, manila, strozzi};

fn config(game: pb::game_config::Game, policy: pb::TimeoutPolicy) -> pb::GameConfig {
    pb::GameConfig {
        game: Some(game),
        table: Some(pb::TableConfig {
            timeout_policy: policy as i32,
            ..Default::default()
        }),
    }
}

fn strozzi(players: u32) -> pb::game_config::Game {
    pb::game_config::Game::Strozzi(strozzi::v1::Config {
        players,
        hidden_money: true,
        ..Default::default()
    })
}

fn manila(players: u32) -> pb::game_config::Game {
    pb::game_config::Game::Manila(manila::v1::Config {
        players,
        ..Default::default()
    })
}

fn la_strada(players: u32) -> pb::game_config::Game {
    pb::game_config::Game::LaStrada(la_strada::v1::Config {
        players,
        ..Default::default()
    })
}

fn medici() -> pb::game_config::Game {
    pb::game_config::Game::MediciVsStrozzi(Default::default())
}

fn table(kind: TableKind) -> pb::Action {
    pb::Action {
        game: Some(pb::action::Game::Table(pb::TableAction {
            kind: Some(kind),
        })),
    }
}

fn resign() -> pb::Action {
    table(TableKind::Resign(pb::table_action::Resign {}))
}

fn timeout(seat: Seat) -> pb::Action {
    table(TableKind::Timeout(pb::table_action::Timeout { seat }))
}

fn abort(reason: &str) -> pb::Action {
    table(TableKind::Abort(pb::table_action::Abort {
        reason: reason.into(),
    }))
}

fn table_events(events: &[pb::Event]) -> Vec<TableEventKind> {
    events
        .iter()
        .filter_map(|event| match &event.game {
            Some(pb::event::Game::Table(table)) => table.kind.clone(),
            _ => None,
        })
        .collect()
}

/// One random legal move by the seat to act.
fn random_move(state: &mut Box<dyn GameState>, rng: &mut GameRng) -> Vec<pb::Event> {
    let (seat, action) = crate::hosting::random_legal_move(&**state, rng);
    state
        .apply(seat, &action)
        .expect("a listed move is accepted")
}

#[test]
fn a_resignation_in_a_two_player_game_ends_it() {
    for game in [medici(), la_strada(2)] {
        let mut state = setup(
            &config(game, pb::TimeoutPolicy::Unspecified),
            &Seed::from_u64(1),
        )
        .expect("setup");
        let waiting = state.status().to_act.expect("someone acts");
        let events = state.apply(waiting, &resign()).expect("resigns");
        let status = state.status();
        assert!(status.finished && state.is_finished());
        assert_eq!(status.ending, pb::GameEnding::Resignation as i32);
        assert_eq!(status.winners, vec![1 - waiting]);
        assert_eq!(status.resigned, vec![waiting]);
        assert!(status.scores.is_empty());
        assert!(matches!(
            table_events(&events)[..],
            [
                TableEventKind::SeatResigned(_),
                TableEventKind::GameEnded(_)
            ]
        ));
        assert!(state.legal_actions(Viewer::Seat(1 - waiting)).is_empty());
        assert_eq!(
            state.apply(1 - waiting, &resign()),
            Err(ActionError::GameOver)
        );
    }
}

fn hand_to_bot(seat: Seat, kind: pb::BotKind, iterations: u32) -> pb::Action {
    table(TableKind::HandToBot(pb::table_action::HandToBot {
        bot: Some(pb::BotSeat {
            seat,
            kind: kind as i32,
            iterations,
        }),
    }))
}

#[test]
fn bot_seats_come_from_the_config_and_are_checked() {
    let bots = |bots: Vec<pb::BotSeat>| pb::GameConfig {
        game: Some(manila(3)),
        table: Some(pb::TableConfig {
            bots,
            ..Default::default()
        }),
    };
    let bot = |seat, kind: pb::BotKind, iterations| pb::BotSeat {
        seat,
        kind: kind as i32,
        iterations,
    };
    let state = setup(
        &bots(vec![
            bot(2, pb::BotKind::Random, 0),
            bot(0, pb::BotKind::Search, 0),
        ]),
        &Seed::from_u64(1),
    )
    .expect("setup");
    assert_eq!(
        state.status().bots,
        vec![
            bot(0, pb::BotKind::Search, crate::bots::DEFAULT_ITERATIONS),
            bot(2, pb::BotKind::Random, 0)
        ],
        "in seat order, the default budget made explicit"
    );
    assert!(state.is_bot_seat(0) && !state.is_bot_seat(1) && state.is_bot_seat(2));
    for refused in [
        vec![bot(3, pb::BotKind::Random, 0)],
        vec![bot(1, pb::BotKind::Unspecified, 0)],
        vec![bot(1, pb::BotKind::Search, MAX_BOT_ITERATIONS + 1)],
        vec![
            bot(1, pb::BotKind::Random, 0),
            bot(1, pb::BotKind::Search, 0),
        ],
    ] {
        assert!(
            setup(&bots(refused.clone()), &Seed::from_u64(1)).is_err(),
            "{refused:?}"
        );
    }
}

#[test]
fn a_resigned_seat_handed_to_a_bot_decides_again_and_still_never_wins() {
    for seed in 0..10 {
        let mut state = setup(
            &config(strozzi(4), pb::TimeoutPolicy::Unspecified),
            &Seed::from_u64(seed),
        )
        .expect("setup");
        let mut rng = GameRng::from_seed(&Seed::from_u64(seed + 50));
        let resigned = rng.below(4) as Seat;
        state.apply(resigned, &resign()).expect("resigns");
        assert!(
            state
                .apply(resigned, &hand_to_bot(resigned, pb::BotKind::Random, 0))
                .is_err(),
            "only the server hands seats over"
        );
        let events = state
            .apply(SYSTEM_SEAT, &hand_to_bot(resigned, pb::BotKind::Random, 0))
            .expect("the server hands the resigned seat to a bot");
        assert!(matches!(
            table_events(&events)[..],
            [TableEventKind::SeatHandedToBot(_)]
        ));
        assert!(
            state
                .apply(SYSTEM_SEAT, &hand_to_bot(resigned, pb::BotKind::Random, 0))
                .is_err(),
            "a seat is handed over once"
        );
        let mut bot_turns = 0;
        while let Some(seat) = state.status().to_act {
            if let Some((bot_seat, bot)) = state.bot_to_act(None) {
                assert_eq!(bot_seat, seat);
                assert_eq!(seat, resigned, "only the handed-over seat is a bot");
                bot_turns += 1;
                let action = state
                    .bot_action(seat, &bot, &Seed::from_u64(bot_turns))
                    .expect("the bot decides");
                let events = state.apply(seat, &action).expect("the bot's move is legal");
                assert!(
                    !table_events(&events).iter().any(|kind| matches!(kind, TableEventKind::DefaultActionPlayed(played) if played.seat == resigned)),
                    "no default action for a seat a bot plays"
                );
            } else {
                random_move(&mut state, &mut rng);
            }
        }
        let status = state.status();
        assert!(bot_turns > 0, "the bot played the resigned seat");
        assert_eq!(status.resigned, vec![resigned]);
        assert!(!status.winners.contains(&resigned), "{status:?}");
        let restored = restore(state.kind(), &state.encode()).expect("restores");
        assert_eq!(restored.status(), status);
    }
}

#[test]
fn resigned_seats_play_their_defaults_and_never_win() {
    for (game, seats) in [(strozzi(4), 4u32), (manila(4), 4), (la_strada(3), 3)] {
        for seed in 0..20 {
            let mut state = setup(
                &config(game, pb::TimeoutPolicy::Unspecified),
                &Seed::from_u64(seed),
            )
            .expect("setup");
            let mut rng = GameRng::from_seed(&Seed::from_u64(seed + 100));
            for _ in 0..rng.below(30) {
                random_move(&mut state, &mut rng);
            }
            let resigned = rng.below(u64::from(seats)) as Seat;
            state.apply(resigned, &resign()).expect("resigns");
            // The resigned seat moves no more, by itself or otherwise.
            assert!(matches!(
                state.apply(resigned, &resign()),
                Err(ActionError::Illegal { .. })
            ));
            let mut defaults = 0;
            while let Some(seat) = state.status().to_act {
                assert_ne!(seat, resigned, "the game never waits for a resigned seat");
                assert!(state.legal_actions(Viewer::Seat(resigned)).is_empty());
                let events = random_move(&mut state, &mut rng);
                defaults += table_events(&events)
                    .iter()
                    .filter(|kind| matches!(kind, TableEventKind::DefaultActionPlayed(played) if played.seat == resigned && !played.timed_out))
                    .count();
            }
            let status = state.status();
            assert_eq!(status.ending, pb::GameEnding::Rules as i32);
            assert_eq!(status.resigned, vec![resigned]);
            assert_eq!(status.scores.len(), seats as usize);
            assert!(!status.winners.is_empty());
            assert!(!status.winners.contains(&resigned), "{status:?}");
            assert!(
                defaults > 0 || seats == 3,
                "the resigned seat had to decide"
            );
            // The encoded state survives a round trip, table included.
            let restored = restore(state.kind(), &state.encode()).expect("restores");
            assert_eq!(restored.encode(), state.encode());
            assert_eq!(restored.status(), status);
        }
    }
}

#[test]
fn the_last_seat_standing_wins() {
    let mut state = setup(
        &config(strozzi(4), pb::TimeoutPolicy::Unspecified),
        &Seed::from_u64(5),
    )
    .expect("setup");
    for seat in [3, 0, 2] {
        state.apply(seat, &resign()).expect("resigns");
    }
    let status = state.status();
    assert_eq!(status.ending, pb::GameEnding::Resignation as i32);
    assert_eq!(status.winners, vec![1]);
    assert_eq!(status.resigned, vec![3, 0, 2]);
}

#[test]
fn a_timeout_plays_the_default_or_forfeits() {
    let seed = Seed::from_u64(9);
    let mut played =
        setup(&config(manila(3), pb::TimeoutPolicy::DefaultAction), &seed).expect("setup");
    let mut reference =
        setup(&config(manila(3), pb::TimeoutPolicy::DefaultAction), &seed).expect("setup");
    let waiting = played.status().to_act.expect("someone acts");
    let default = played.default_action().expect("a default");
    let events = played
        .apply(SYSTEM_SEAT, &timeout(waiting))
        .expect("times out");
    let kinds = table_events(&events);
    assert!(matches!(&kinds[0], TableEventKind::SeatTimedOut(t) if t.seat == waiting));
    assert!(
        matches!(&kinds[1], TableEventKind::DefaultActionPlayed(p) if p.seat == waiting && p.timed_out && p.action.as_ref() == Some(&default))
    );
    // The same as the seat playing its default itself, apart from the announcements.
    let own = reference.apply(waiting, &default).expect("plays");
    assert_eq!(&events[events.len() - own.len()..], &own[..]);
    assert_eq!(played.encode(), reference.encode());
    assert!(played.status().resigned.is_empty());

    let mut forfeited =
        setup(&config(manila(3), pb::TimeoutPolicy::Forfeit), &seed).expect("setup");
    let events = forfeited
        .apply(SYSTEM_SEAT, &timeout(waiting))
        .expect("times out");
    assert!(table_events(&events).iter().any(
        |kind| matches!(kind, TableEventKind::SeatResigned(r) if r.seat == waiting && r.forfeit)
    ));
    assert_eq!(forfeited.status().resigned, vec![waiting]);
    assert_ne!(forfeited.status().to_act, Some(waiting));
}

#[test]
fn refusals_change_nothing() {
    let mut state = setup(
        &config(strozzi(3), pb::TimeoutPolicy::Unspecified),
        &Seed::from_u64(2),
    )
    .expect("setup");
    let before = state.encode();
    let waiting = state.status().to_act.expect("someone acts");
    let other = (waiting + 1) % 3;
    let refused = [
        (SYSTEM_SEAT, timeout(other)), // not the seat to act
        (waiting, timeout(waiting)),   // only the server times out
        (waiting, abort("no")),        // only the server aborts
        (SYSTEM_SEAT, resign()),       // the server does not resign
        (7, resign()),                 // no such seat
        (SYSTEM_SEAT, abort(&"x".repeat(MAX_ABORT_REASON_LEN + 1))),
        (
            waiting,
            pb::Action {
                game: Some(pb::action::Game::Table(pb::TableAction { kind: None })),
            },
        ),
    ];
    for (author, action) in refused {
        assert!(state.apply(author, &action).is_err(), "{author} {action:?}");
        assert_eq!(state.encode(), before);
    }
    let legal = state.legal_actions(Viewer::Seat(waiting));
    let mv = legal[0].action.clone().expect("action");
    assert!(
        state.apply(SYSTEM_SEAT, &mv).is_err(),
        "the server makes no moves"
    );
    assert_eq!(state.encode(), before);
}

#[test]
fn an_unknown_timeout_policy_is_a_config_error() {
    let unknown = pb::GameConfig {
        game: Some(medici()),
        table: Some(pb::TableConfig {
            timeout_policy: 99,
            ..Default::default()
        }),
    };
    let refused = setup(&unknown, &Seed::from_u64(1)).expect_err("refused");
    assert!(
        refused.to_string().contains("timeout_policy 99"),
        "{refused}"
    );
}

#[test]
fn an_abort_ends_the_game_with_no_winners() {
    let mut state = setup(
        &config(la_strada(4), pb::TimeoutPolicy::Unspecified),
        &Seed::from_u64(4),
    )
    .expect("setup");
    state
        .apply(SYSTEM_SEAT, &abort("server maintenance"))
        .expect("aborts");
    let status = state.status();
    assert!(status.finished && status.to_act.is_none());
    assert_eq!(status.ending, pb::GameEnding::Aborted as i32);
    assert_eq!(status.abort_reason, "server maintenance");
    assert!(status.winners.is_empty() && status.scores.is_empty());
    assert_eq!(state.default_action(), None);
    assert_eq!(
        state.apply(SYSTEM_SEAT, &abort("again")),
        Err(ActionError::GameOver)
    );
}

#[test]
fn an_older_state_format_is_refused_not_misread() {
    let manila_config = manila::v1::Config {
        players: 3,
        ..Default::default()
    };
    let engine = <crate::games::manila::Manila as crate::games::Engine>::setup(
        &manila_config,
        &Seed::from_u64(1),
    )
    .expect("setup");
    // What a snapshot held before table entries existed: the engine state alone.
    let legacy = postcard::to_stdvec(&engine).expect("encodes");
    assert!(restore(pb::GameKind::Manila, &legacy).is_err());
    let current = setup(
        &config(manila(3), pb::TimeoutPolicy::Unspecified),
        &Seed::from_u64(1),
    )
    .expect("setup");
    let mut trailing = current.encode();
    trailing.push(0);
    assert!(restore(pb::GameKind::Manila, &trailing).is_err());
    assert!(restore(pb::GameKind::Manila, &current.encode()).is_ok());
}

#[test]
fn a_default_played_for_a_seat_is_redacted_like_its_action() {
    // Manila's mortgages are the only actions with a secret, and never defaults; the
    // announcement still goes through the game's action redaction.
    let state = setup(
        &config(manila(3), pb::TimeoutPolicy::Unspecified),
        &Seed::from_u64(3),
    )
    .expect("setup");
    let mortgage = pb::Action {
        game: Some(pb::action::Game::Manila(manila::v1::Action {
            kind: Some(manila::v1::action::Kind::MortgageShare(
                manila::v1::MortgageShare {
                    ware: manila::v1::Ware::Jade as i32,
                },
            )),
        })),
    };
    let announced = table_event(TableEventKind::DefaultActionPlayed(
        pb::table_event::DefaultActionPlayed {
            seat: 1,
            action: Some(mortgage.clone()),
            timed_out: true,
        },
    ));
    let seen = |viewer| state.redact(std::slice::from_ref(&announced), viewer);
    assert_eq!(seen(Viewer::Seat(1)), vec![announced.clone()]);
    let for_others = seen(Viewer::Seat(0));
    assert_ne!(for_others, vec![announced.clone()], "the ware is blanked");
    assert_eq!(
        for_others,
        vec![table_event(TableEventKind::DefaultActionPlayed(
            pb::table_event::DefaultActionPlayed {
                seat: 1,
                action: Some(state.redact_action(&mortgage, 1, Viewer::Seat(0))),
                timed_out: true,
            },
        ))]
    );
}
