//! Helpers every game's tests share: apply a move that must succeed, or check that a move is
//! refused citing the right rule and leaving the state byte-identical.

use crate::games::{ActionError, Engine, Seat};

/// The canonical encoding of a state: two states are the same iff their encodings are.
pub fn encode<E: Engine>(state: &E) -> Vec<u8> {
    postcard::to_stdvec(state).expect("a state always serializes")
}

/// Applies `action` by `seat`, which must be legal, and checks the spec's invariants after it.
#[track_caller]
pub fn apply_ok<E: Engine>(state: &mut E, seat: Seat, action: &E::Action) -> Vec<E::Event> {
    let events = state
        .apply(seat, action)
        .unwrap_or_else(|e| panic!("{action:?} by seat {seat} rejected: {e}"));
    if let Err(broken) = state.check_invariants() {
        panic!("invariant broken after {action:?} by seat {seat}: {broken}");
    }
    events
}

/// Asserts that `action` by `seat` is refused as illegal citing `rule` (a spec section such as
/// `"§4.2"`), and that the refusal changed nothing. Returns the refusal's message.
#[track_caller]
pub fn assert_illegal<E: Engine>(state: &E, seat: Seat, action: &E::Action, rule: &str) -> String {
    let mut probe = state.clone();
    let result = probe.apply(seat, action);
    assert_eq!(
        encode(&probe),
        encode(state),
        "the refused action {action:?} changed the state"
    );
    match result {
        Err(ActionError::Illegal {
            rule: cited,
            message,
        }) => {
            assert_eq!(cited, rule, "wrong rule cited for {action:?} ({message})");
            message
        }
        other => {
            panic!("expected {action:?} by seat {seat} to be illegal by {rule}, got {other:?}")
        }
    }
}

/// The default-action contract (see [`Engine::default_action`]) on seeded games of `config`:
/// - `all_default` games in which every seat always plays its default action end within
///   `max_actions` (no stall), every default listed among the legal actions;
/// - `one_defaulting` games in which one seat (a different one per seed) always plays its default
///   action, as the server plays it for a resigned seat, and the others play at random, with the
///   information-set check at every action: nobody learns anything hidden from the defaults or
///   from what they produce.
///
/// Returns the longest all-default game, in actions.
#[track_caller]
pub fn check_default_play<E: Engine>(
    config: &E::Config,
    all_default: u64,
    one_defaulting: u64,
    max_actions: usize,
) -> usize {
    use crate::games::Seed;
    use crate::games::common::random_play::{Checks, play_with_defaults};
    let every_check_but_hidden = Checks::INVARIANTS;
    let mut longest = 0;
    for seed in 0..all_default {
        let seats = E::setup(config, &Seed::from_u64(seed))
            .expect("the config sets up")
            .seat_count();
        let everyone: Vec<Seat> = (0..seats).collect();
        let game = play_with_defaults::<E>(
            config,
            Seed::from_u64(seed),
            max_actions,
            every_check_but_hidden,
            &everyone,
        )
        .unwrap_or_else(|e| panic!("{config:?}, seed {seed}, every seat defaulting: {e}"));
        longest = longest.max(game.actions.len());
    }
    for seed in 0..one_defaulting {
        let seed = 1_000_000 + seed;
        let seats = E::setup(config, &Seed::from_u64(seed))
            .expect("the config sets up")
            .seat_count();
        let resigned = (seed % u64::from(seats)) as Seat;
        play_with_defaults::<E>(
            config,
            Seed::from_u64(seed),
            max_actions,
            Checks {
                hidden_every: 1,
                ..Checks::STANDARD
            },
            &[resigned],
        )
        .unwrap_or_else(|e| panic!("{config:?}, seed {seed}, seat {resigned} defaulting: {e}"));
    }
    longest
}
