//! The bots' tests: the random bot plays only legal moves; the search bot takes a win it is
//! offered; a bot decides from its seat's information set only (every game, with a control that
//! a peeking bot is caught); the same seed gives the same decision.

use crate::bots::amounts::concrete_moves;
use crate::bots::search::{rollout, search_with, tree_actors};
use crate::bots::{Bot, BotError, Departures, SearchOutcome, SearchSettings, decide, search};
use crate::games::common::GameRng;
use crate::games::common::random_play::choose_action;
use crate::games::common::testing::encode;
use crate::games::la_strada::LaStrada;
use crate::games::manila::Manila;
use crate::games::medici_vs_strozzi::MediciVsStrozzi;
use crate::games::strozzi::Strozzi;
use crate::games::{Engine, Seat, Seed, Viewer};
use crate::proto::{
    la_strada::v1 as la_strada, manila::v1 as manila, medici_vs_strozzi::v1 as medici,
    strozzi::v1 as strozzi,
};

/// A small budget: the properties tested here do not depend on strength.
fn budget(iterations: u32) -> SearchSettings {
    SearchSettings {
        iterations,
        ..SearchSettings::default()
    }
}

fn strozzi_config(players: u32, hidden_money: bool) -> strozzi::Config {
    strozzi::Config {
        players,
        hidden_money,
        ..Default::default()
    }
}

fn manila_config(players: u32) -> manila::Config {
    manila::Config {
        players,
        ..Default::default()
    }
}

fn la_strada_config(players: u32) -> la_strada::Config {
    la_strada::Config {
        players,
        ..Default::default()
    }
}

/// Calls `visit` on the state before every move of `games` seeded games played with random moves.
fn visit_random_games<E: Engine>(
    config: &E::Config,
    games: u64,
    mut visit: impl FnMut(u64, usize, &E, Seat),
) {
    for game in 0..games {
        let mut state = E::setup(config, &Seed::from_u64(game)).expect("setup");
        let mut chooser = GameRng::from_seed(&Seed::from_u64(!game));
        let mut step = 0;
        while let Some(seat) = state.to_act() {
            visit(game, step, &state, seat);
            let action = choose_action::<E>(&state.legal_actions(seat), &mut chooser);
            state.apply(seat, &action).expect("a listed move applies");
            step += 1;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The random bot plays only legal moves.

/// Plays `games` whole games with random bots in every seat: every move they choose is accepted.
fn random_bots_play_legally<E: Engine>(config: &E::Config, games: u64) {
    for game in 0..games {
        let mut state = E::setup(config, &Seed::from_u64(game)).expect("setup");
        let mut step = 0u64;
        while let Some(seat) = state.to_act() {
            let action = decide(
                &state,
                seat,
                &Bot::Random,
                &Seed::from_u64(game << 20 | step),
            )
            .unwrap_or_else(|e| panic!("{} game {game} step {step}: {e}", E::NAME));
            if let Err(e) = state.apply(seat, &action) {
                panic!(
                    "{} game {game} step {step}: the random bot's {action:?} was refused: {e}",
                    E::NAME
                );
            }
            step += 1;
        }
    }
}

#[test]
fn the_random_bot_plays_only_legal_moves_in_every_game() {
    random_bots_play_legally::<MediciVsStrozzi>(&medici::Config::default(), 10);
    for players in 3..=6 {
        random_bots_play_legally::<Strozzi>(&strozzi_config(players, players % 2 == 0), 5);
    }
    for players in 3..=5 {
        random_bots_play_legally::<Manila>(&manila_config(players), 5);
    }
    for players in 2..=4 {
        random_bots_play_legally::<LaStrada>(&la_strada_config(players), 3);
    }
}

#[test]
fn a_bot_asked_out_of_turn_or_after_the_end_refuses() {
    let state = MediciVsStrozzi::setup(&medici::Config::default(), &Seed::from_u64(1)).unwrap();
    let to_act = state.to_act().expect("someone acts at the start");
    let other = 1 - to_act;
    for bot in [Bot::Random, Bot::Search(budget(10))] {
        assert_eq!(
            decide(&state, other, &bot, &Seed::from_u64(2)),
            Err(BotError::NotToAct {
                seat: other,
                to_act
            })
        );
    }
    let mut finished = state;
    let mut chooser = GameRng::from_seed(&Seed::from_u64(3));
    while let Some(seat) = finished.to_act() {
        let action = choose_action::<MediciVsStrozzi>(&finished.legal_actions(seat), &mut chooser);
        finished.apply(seat, &action).unwrap();
    }
    assert_eq!(
        decide(&finished, 0, &Bot::default(), &Seed::from_u64(2)),
        Err(BotError::GameOver)
    );
}

// ---------------------------------------------------------------------------------------------
// The search bot takes a win it is offered.

/// What applying `action` does in every one of `samples` states `seat` cannot tell apart from
/// `state`: `Some(true)` if the game always ends at once with `seat` its sole winner,
/// `Some(false)` if it always ends at once without `seat` among the winners, `None` otherwise.
fn immediate_result<E: Engine>(
    state: &E,
    seat: Seat,
    action: &E::Action,
    samples: u64,
) -> Option<bool> {
    let mut results = (0..samples).map(|sample| {
        let mut world = state.resample_hidden(Viewer::Seat(seat), &Seed::from_u64(sample ^ 0xABCD));
        world.apply(seat, action).ok()?;
        let outcome = world.outcome()?;
        Some(outcome.winners == [seat]).filter(|won| *won || !outcome.winners.contains(&seat))
    });
    let first = results.next()??;
    results.all(|result| result == Some(first)).then_some(first)
}

/// Searches every position of `games` random games where the seat to act has a move that ends
/// the game at once with it the sole winner, whatever is hidden from it, and a move that does
/// not: the search bot must take a winning move, or one that won every one of its simulations
/// (a move that wins later for sure is as good to it, and the tree cannot tell them apart).
/// Returns how many such positions there were and in how many the bot took an immediate win.
fn takes_an_offered_win<E: Engine>(config: &E::Config, games: u64) -> (usize, usize) {
    let mut positions = 0;
    let mut immediate = 0;
    visit_random_games::<E>(config, games, |game, step, state, seat| {
        let mut moves = Vec::new();
        concrete_moves::<E>(state.legal_actions(seat), &mut moves);
        if moves.len() < 2 {
            return;
        }
        let wins: Vec<bool> = moves
            .iter()
            .map(|action| immediate_result(state, seat, action, 4) == Some(true))
            .collect();
        if !wins.contains(&true) || !wins.contains(&false) {
            return;
        }
        positions += 1;
        let chosen = search(
            state,
            seat,
            &budget(200),
            &Seed::from_u64(game ^ step as u64),
        )
        .expect("the search decides");
        let index = moves.iter().position(|action| *action == chosen.action);
        let took_the_win = index.is_some_and(|index| wins[index]);
        assert!(
            took_the_win || chosen.value == 1.0,
            "{} game {game} step {step}: seat {seat} chose {:?} (value {:.2}), which does not win \
             at once, over a move that does ({} of {} moves win)",
            E::NAME,
            chosen.action,
            chosen.value,
            wins.iter().filter(|win| **win).count(),
            moves.len()
        );
        immediate += usize::from(took_the_win);
    });
    (positions, immediate)
}

#[test]
fn the_search_bot_takes_a_win_it_is_offered() {
    let found = [
        (
            "medici_vs_strozzi",
            takes_an_offered_win::<MediciVsStrozzi>(&medici::Config::default(), 30),
        ),
        (
            "strozzi 4p",
            takes_an_offered_win::<Strozzi>(&strozzi_config(4, false), 30),
        ),
        (
            "manila 4p",
            takes_an_offered_win::<Manila>(&manila_config(4), 30),
        ),
        (
            "la_strada 2p",
            takes_an_offered_win::<LaStrada>(&la_strada_config(2), 10),
        ),
    ];
    eprintln!("positions offering an immediate win (positions, immediate wins taken): {found:?}");
    let positions: usize = found.iter().map(|(_, (positions, _))| positions).sum();
    let taken: usize = found.iter().map(|(_, (_, taken))| taken).sum();
    assert!(
        positions >= 10,
        "only {positions} positions offered a win: too few to test"
    );
    // Where it did not, another move was as sure a win (the game ends anyway in the seat's
    // favour, e.g. passing on the last card of the game): both are right.
    assert!(
        taken * 2 >= positions,
        "the bot took the immediate win in only {taken} of {positions} positions"
    );
}

// ---------------------------------------------------------------------------------------------
// A bot knows only its seat's information set.

/// Over `games` seeded random games, at every `every`-th move, for the seat to act:
///
/// 1. its determinization is a function of what it may see: resampling `state` for the seat with
///    a seed gives exactly the same state as resampling any state the seat cannot tell apart from
///    `state` with that seed (so no true order or secret shines through);
/// 2. the search bot's whole outcome (move, visits, value, tree size) is the same in `state` and
///    in a state resampled for the seat (everything it cannot see redrawn), for the same bot seed.
///
/// Returns the number of states checked and in how many of them a bot that *peeks* (searches
/// the true state, RNG included, instead of determinizations) decided differently: the control
/// that shows the check can see a leak.
fn decides_from_its_information_set<E: Engine>(
    config: &E::Config,
    games: u64,
    every: usize,
    iterations: u32,
) -> (usize, usize) {
    let settings = budget(iterations);
    let peek = |state: &E, _: &Seed| state.clone();
    let mut checked = 0;
    let mut peeking_differs = 0;
    visit_random_games::<E>(config, games, |game, step, state, seat| {
        if step % every != 0 {
            return;
        }
        let viewer = Viewer::Seat(seat);
        let other = state.resample_hidden(viewer, &Seed::from_u64(game << 32 | step as u64));
        let sample = Seed::from_u64(step as u64);
        assert_eq!(
            encode(&state.resample_hidden(viewer, &sample)),
            encode(&other.resample_hidden(viewer, &sample)),
            "{} game {game} step {step}: seat {seat}'s determinization depends on what it cannot see",
            E::NAME
        );
        let bot_seed = Seed::from_u64(game ^ (step as u64) << 16);
        let decided: SearchOutcome<E::Action> =
            search(state, seat, &settings, &bot_seed).expect("the search decides");
        let decided_elsewhere = search(&other, seat, &settings, &bot_seed).expect("decides");
        assert_eq!(
            decided,
            decided_elsewhere,
            "{} game {game} step {step}: seat {seat}'s decision depends on what it cannot see",
            E::NAME
        );
        let peeking = |on: &E| {
            search_with(on, seat, &settings, &bot_seed, &Departures::default(), peek)
                .expect("decides")
        };
        if peeking(state) != peeking(&other) {
            peeking_differs += 1;
        }
        checked += 1;
    });
    (checked, peeking_differs)
}

/// Runs [`decides_from_its_information_set`] and, where something is hidden, requires the
/// peeking control to have been caught at least once.
fn assert_fair<E: Engine>(name: &str, config: &E::Config, games: u64, every: usize, hidden: bool) {
    let (checked, peeking_differs) =
        decides_from_its_information_set::<E>(config, games, every, 48);
    eprintln!("{name}: {checked} states checked, a peeking bot differed in {peeking_differs}");
    assert!(checked >= 50, "{name}: only {checked} states checked");
    if hidden {
        assert!(
            peeking_differs > 0,
            "{name}: a bot that peeks was never caught: the check has no power here"
        );
    }
}

#[test]
fn medici_vs_strozzi_bots_decide_from_their_information_set() {
    assert_fair::<MediciVsStrozzi>("medici_vs_strozzi", &medici::Config::default(), 4, 8, true);
}

#[test]
fn strozzi_bots_decide_from_their_information_set() {
    for players in 3..=6 {
        for hidden_money in [false, true] {
            assert_fair::<Strozzi>(
                &format!("strozzi {players}p hidden_money={hidden_money}"),
                &strozzi_config(players, hidden_money),
                3,
                4,
                true,
            );
        }
    }
}

#[test]
fn manila_bots_decide_from_their_information_set() {
    for players in 3..=5 {
        assert_fair::<Manila>(
            &format!("manila {players}p"),
            &manila_config(players),
            3,
            8,
            true,
        );
    }
}

#[test]
fn la_strada_bots_decide_from_their_information_set() {
    // Nothing is hidden after setup but the spent RNG: the check holds trivially, and a peeking
    // bot has nothing to peek at, so there is no control.
    for players in 2..=4 {
        assert_fair::<LaStrada>(
            &format!("la_strada {players}p"),
            &la_strada_config(players),
            2,
            2,
            false,
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Determinism.

#[test]
fn the_same_seed_gives_the_same_decision() {
    let mut compared = 0;
    visit_random_games::<Manila>(&manila_config(4), 2, |game, step, state, seat| {
        if step % 16 != 0 {
            return;
        }
        let seed = Seed::from_u64(game * 1000 + step as u64);
        let first = search(state, seat, &budget(64), &seed).unwrap();
        let again = search(state, seat, &budget(64), &seed).unwrap();
        assert_eq!(first, again, "game {game} step {step}");
        assert_eq!(
            decide(state, seat, &Bot::Random, &seed),
            decide(state, seat, &Bot::Random, &seed)
        );
        compared += 1;
    });
    assert!(compared > 10);
}

#[test]
fn the_hosting_layer_gets_a_move_it_can_apply() {
    let config = crate::proto::v1::GameConfig {
        game: Some(crate::proto::v1::game_config::Game::Manila(manila_config(
            3,
        ))),
        ..Default::default()
    };
    let mut game = crate::hosting::setup(&config, &Seed::from_u64(5)).expect("setup");
    let bot = Bot::Search(budget(32));
    for step in 0..40u64 {
        let Some(seat) = game.status().to_act else {
            break;
        };
        let seed = Seed::from_u64(step);
        let action = game.bot_action(seat, &bot, &seed).expect("the bot decides");
        assert_eq!(game.bot_action(seat, &bot, &seed).as_ref(), Ok(&action));
        game.apply(seat, &action).expect("the bot's move applies");
    }
}

// ---------------------------------------------------------------------------------------------
// Seats that left the table.

/// At a table that `resigned` left, `seat`'s search grows no node for a move of a seat whose
/// defaults the table plays (it is forced, not chosen), and every rollout credits the seats that
/// left with nothing; a resigned seat handed to a bot is scored by the rank it would have had.
fn models_departures<E: Engine>(config: &E::Config, games: u64, every: usize) {
    let settings = budget(60);
    let mut searched = 0;
    let mut departed_acted = 0;
    let mut handed_over_scored = 0;
    visit_random_games::<E>(config, games, |game, step, state, seat| {
        if step % every != 0 {
            return;
        }
        let seats = state.seat_count();
        let resigned = (seat + 1 + (game as Seat) % (seats - 1)) % seats;
        let departures = Departures {
            resigned: vec![resigned],
            playing_defaults: vec![resigned],
        };
        let seed = Seed::from_u64(game << 20 | step as u64);
        let actors = tree_actors(state, seat, &settings, &seed, &Departures::default())
            .expect("the search decides");
        departed_acted += usize::from(actors.contains(&resigned));
        let actors = tree_actors(state, seat, &settings, &seed, &departures)
            .expect("the search decides at the table");
        assert!(
            !actors.contains(&resigned),
            "{} game {game} step {step}: a node for seat {resigned}, whose defaults the table plays",
            E::NAME
        );
        searched += 1;

        let mut rng = GameRng::from_seed(&seed);
        for _ in 0..4 {
            let mut rollout_state = state.resample_hidden(Viewer::Seat(seat), &rng.next_seed());
            let shares = rollout(&mut rollout_state, &mut rng, &settings, seat, &departures)
                .expect("the rollout ends");
            assert_eq!(
                shares[resigned as usize],
                0.0,
                "{} game {game} step {step}: a resigned seat won a share",
                E::NAME
            );
            assert!(
                (shares.iter().sum::<f64>() - 1.0).abs() < 1e-9,
                "{shares:?}"
            );

            // The same seat handed to a bot, deciding for itself: it plays for its would-be rank,
            // while the others' shares still leave it out.
            let handed_over = Departures {
                resigned: vec![resigned],
                playing_defaults: Vec::new(),
            };
            let mut rollout_state = state.resample_hidden(Viewer::Seat(seat), &rng.next_seed());
            let shares = rollout(
                &mut rollout_state,
                &mut rng,
                &settings,
                resigned,
                &handed_over,
            )
            .expect("the rollout ends");
            let others: f64 = (0..seats)
                .filter(|other| *other != resigned)
                .map(|other| shares[other as usize])
                .sum();
            assert!((others - 1.0).abs() < 1e-9, "{shares:?}");
            handed_over_scored += usize::from(shares[resigned as usize] > 0.0);
        }
    });
    assert!(searched > 10, "{}: only {searched} searches", E::NAME);
    assert!(
        departed_acted > 0,
        "{}: the control never grew a node for the seat, so the check above proves nothing",
        E::NAME
    );
    assert!(
        handed_over_scored > 0,
        "{}: a handed-over resigned seat never scored in a rollout",
        E::NAME
    );
}

#[test]
fn the_search_plays_the_defaults_of_seats_that_left_and_does_not_count_on_them_winning() {
    models_departures::<Strozzi>(&strozzi_config(4, false), 3, 9);
    models_departures::<Manila>(&manila_config(4), 2, 15);
    models_departures::<LaStrada>(&la_strada_config(3), 2, 7);
}
