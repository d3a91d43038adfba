//! Random legal play: the harness every engine's tests and the random-play benchmark run on.
//!
//! A game is played by choosing uniformly among the listed legal actions (and uniformly within an
//! amount range) until it ends. Along the way the harness checks the [`Engine`] contract itself:
//! the listing is non-empty for the seat to act and empty for everyone else, every listed action is
//! accepted, rejected actions leave the state untouched, the spec's invariants hold after every
//! action, views do not depend on hidden information, and a replay of the recorded actions from the
//! same seed reaches the same state, and (on a sample of steps) no two listed moves have the same
//! effect ([`crate::games::common::distinct_moves`]).
//!
//! Seats can also be made to play their default action ([`Engine::default_action`]) instead, as
//! the server plays it for a seat that resigned or ran out of time ([`play_with_defaults`]). At
//! every action the harness checks the default action of the seat to act, whoever plays: it is
//! listed (an amount at its range's minimum), and, where the information-set check runs, every
//! viewer sees it the same in every state it cannot tell apart from this one. A game of default
//! actions only must end ([`play_with_defaults`] with every seat).

use prost::Message;

use crate::games::common::GameRng;
use crate::games::common::distinct_moves::distinct_at;
use crate::games::common::takeback::takeback_sound_at;
use crate::games::{Engine, LegalAction, Outcome, Seat, Seed, Viewer};

/// The actions [`play_with_defaults`] makes room for at the start of a game.
const RECORD_CAPACITY: usize = 128;

/// What one random game did.
#[derive(Debug)]
pub struct RandomGame<E: Engine> {
    /// The state after the last action.
    pub final_state: E,
    /// Scores and winners.
    pub outcome: Outcome,
    /// Every action in order, with the seat that took it.
    pub actions: Vec<(Seat, E::Action)>,
    /// How many listed moves the take-back check found takeable alone (0 without that check).
    pub takeable: usize,
}

/// How thoroughly to check the contract (the full checks cost far more than play itself).
#[derive(Clone, Copy, Debug)]
pub struct Checks {
    /// Check the spec's invariants after every action.
    pub invariants: bool,
    /// Every this many actions: serde round trip, view independence from hidden information,
    /// rejection of another seat's move. 0 = never.
    pub deep_every: usize,
    /// Every this many actions (1 = the whole game): the information-set check for every viewer
    /// (see [`information_set_check`]). 0 = never.
    pub hidden_every: usize,
    /// Replay the recorded actions from the seed at the end and compare states.
    pub replay: bool,
    /// Every this many actions (offset by the seed, so that the games of a run sample every step
    /// between them): no two listed moves of the seat to act have the same effect (see
    /// [`crate::games::common::distinct_moves`]). 0 = never.
    pub distinct_every: usize,
    /// Every this many actions (offset by the seed as above): no move the seat to act may take
    /// back alone shows any viewer anything (see [`crate::games::common::takeback`]). 0 = never.
    pub takeback_every: usize,
}

impl Checks {
    /// Every check at every action: for small numbers of games.
    pub const FULL: Checks = Checks {
        invariants: true,
        deep_every: 1,
        hidden_every: 1,
        replay: true,
        distinct_every: 1,
        takeback_every: 1,
    };
    /// Invariants at every action, the costlier checks on a sample: the default for test runs.
    pub const STANDARD: Checks = Checks {
        invariants: true,
        deep_every: 16,
        hidden_every: 4,
        replay: true,
        distinct_every: 0,
        takeback_every: 0,
    };
    /// Only the information-set check, at every action of the game: for the thousands of games
    /// that prove no viewer learns what the table hides from it.
    pub const HIDDEN: Checks = Checks {
        invariants: false,
        deep_every: 0,
        hidden_every: 1,
        replay: false,
        distinct_every: 0,
        takeback_every: 0,
    };
    /// The spec's invariants after every action, nothing costlier: for the thousands of games
    /// that prove every game ends in a legal state.
    pub const INVARIANTS: Checks = Checks {
        invariants: true,
        deep_every: 0,
        hidden_every: 0,
        replay: false,
        distinct_every: 0,
        takeback_every: 0,
    };
    /// Play only: for benchmarks.
    pub const NONE: Checks = Checks {
        invariants: false,
        deep_every: 0,
        hidden_every: 0,
        replay: false,
        distinct_every: 0,
        takeback_every: 0,
    };
}

/// Draws one concrete action from a legal-action listing.
pub fn choose_action<E: Engine>(legal: &[LegalAction<E::Action>], rng: &mut GameRng) -> E::Action {
    choose::<E>(legal, rng).0
}

/// Draws one concrete action, and the amount it was given when its entry is a range.
fn choose<E: Engine>(
    legal: &[LegalAction<E::Action>],
    rng: &mut GameRng,
) -> (E::Action, Option<u64>) {
    match &legal[rng.index(legal.len())] {
        LegalAction::Exact(action) => (action.clone(), None),
        LegalAction::Amount { action, min, max } => {
            let amount = min + rng.below(max - min + 1);
            (E::with_amount(action, amount), Some(amount))
        }
    }
}

/// Where `action` stands in a listing: `None` when it is not listed, `Some(None)` for an exact
/// entry, `Some(Some(min))` for an amount entry's action at that entry's minimum amount (the only
/// amount a default action takes).
fn listed_amount<E: Engine>(
    legal: &[LegalAction<E::Action>],
    action: &E::Action,
) -> Option<Option<u64>> {
    legal.iter().find_map(|entry| match entry {
        LegalAction::Exact(listed) => (listed == action).then_some(None),
        LegalAction::Amount {
            action: listed,
            min,
            ..
        } => (&E::with_amount(listed, *min) == action).then_some(Some(*min)),
    })
}

/// Plays one game with random legal actions, checking the engine contract as it goes.
/// `max_actions` bounds a game that would never end (a stall is an error, not a hang).
pub fn play<E: Engine>(
    config: &E::Config,
    seed: Seed,
    max_actions: usize,
    checks: Checks,
) -> Result<RandomGame<E>, String> {
    play_with_defaults(config, seed, max_actions, checks, &[])
}

/// [`play`] for the `games` seeds from `first_seed`, under one set of `checks`: a sampled check run
/// over many games. Panics naming the config and the seed of the first game that fails; returns
/// how many listed moves the take-back check found takeable alone over all of them.
#[track_caller]
pub fn play_seeds<E: Engine>(
    config: &E::Config,
    first_seed: u64,
    games: u64,
    max_actions: usize,
    checks: Checks,
) -> usize {
    let mut takeable = 0;
    for seed in first_seed..first_seed + games {
        match play::<E>(config, Seed::from_u64(seed), max_actions, checks) {
            Ok(game) => takeable += game.takeable,
            Err(error) => panic!("{config:?}, seed {seed}: {error}"),
        }
    }
    takeable
}

/// [`play`], with the seats in `defaulting` always playing their default action (as the server
/// plays it for a resigned seat) and the others random legal actions. With every seat defaulting,
/// this proves that a game of default actions ends.
pub fn play_with_defaults<E: Engine>(
    config: &E::Config,
    seed: Seed,
    max_actions: usize,
    checks: Checks,
    defaulting: &[Seat],
) -> Result<RandomGame<E>, String> {
    let mut state = E::setup(config, &seed).map_err(|e| e.to_string())?;
    let mut chooser = GameRng::from_seed(&Seed::from_u64(
        u64::from_le_bytes(seed.0[..8].try_into().unwrap_or_default()) ^ 0x5EED,
    ));
    // Room for a typical game's actions from the start, so that recording them does not
    // reallocate and copy the record several times per game (benchmarks play thousands).
    let mut actions = Vec::with_capacity(RECORD_CAPACITY.min(max_actions));
    let mut takeable = 0;
    // Where the sampled distinct-moves and take-back checks start (see `Checks::distinct_every`).
    let sample_offset = usize::from(seed.0[0]);
    if checks.invariants {
        state
            .check_invariants()
            .map_err(|e| format!("after setup: {e}"))?;
    }
    if checks.hidden_every > 0 {
        opening_check(&state, &mut chooser).map_err(|e| format!("at setup: {e}"))?;
    }
    while let Some(seat) = state.to_act() {
        if actions.len() >= max_actions {
            return Err(format!("no end after {max_actions} actions (stall?)"));
        }
        let step = actions.len();
        // Play without checks (benchmarks) draws through the engine's own sampler, as bot
        // rollouts do; every checked game lists the actions and proves both draws agree.
        let listing_checked = checks.invariants
            || checks.deep_every > 0
            || checks.hidden_every > 0
            || checks.distinct_every > 0
            || checks.takeback_every > 0
            || !defaulting.is_empty();
        let (action, amount) = if listing_checked {
            let choice = checked_choice(
                &state,
                seat,
                step,
                checks,
                sample_offset,
                defaulting,
                &mut chooser,
            )?;
            takeable += choice.takeable;
            (choice.action, choice.amount)
        } else {
            let action = state.random_action(seat, &mut chooser).ok_or_else(|| {
                format!("step {step}: seat {seat} must act but has no legal action")
            })?;
            (action, None)
        };
        if checks.hidden_every > 0 && step % checks.hidden_every == 0 {
            information_set_check(&state, seat, &action, amount, &mut chooser)
                .map_err(|e| format!("step {step}: {e}"))?;
        }
        state.apply(seat, &action).map_err(|e| {
            format!("step {step}: listed action {action:?} by seat {seat} rejected: {e}")
        })?;
        actions.push((seat, action));
        if checks.invariants {
            state
                .check_invariants()
                .map_err(|e| format!("after step {step}: {e}"))?;
        }
    }
    if let Some(default) = state.default_action() {
        return Err(format!(
            "the game is over but still has a default action {default:?}"
        ));
    }
    let outcome = state.outcome().ok_or("no seat to act but no outcome")?;
    if outcome.scores.len() != state.seat_count() as usize || outcome.winners.is_empty() {
        return Err(format!("malformed outcome {outcome:?}"));
    }
    if checks.replay {
        let mut replayed = E::setup(config, &seed).map_err(|e| e.to_string())?;
        for (seat, action) in &actions {
            replayed
                .apply(*seat, action)
                .map_err(|e| format!("replay rejected {action:?}: {e}"))?;
        }
        if encode(&replayed) != encode(&state) {
            return Err("replaying the recorded actions reached a different state".into());
        }
    }
    Ok(RandomGame {
        final_state: state,
        outcome,
        actions,
        takeable,
    })
}

/// One checked draw ([`checked_choice`]).
struct Choice<A> {
    action: A,
    amount: Option<u64>,
    /// How many listed moves the take-back check, if it ran, found takeable alone.
    takeable: usize,
}

/// The checked draw of one action for `seat`: the listing is non-empty, the deep checks pass on
/// it, the default action is listed, and the engine's [`Engine::random_action`] draws exactly the
/// listing's draw from the same generator state (same action, generator left in the same state).
/// At the steps sampled (from `sample_offset`), no two listed moves may have the same effect, and
/// no move takeable alone may show anything. Returns the action played (the default for a
/// defaulting seat) and the amount it was given.
fn checked_choice<E: Engine>(
    state: &E,
    seat: Seat,
    step: usize,
    checks: Checks,
    sample_offset: usize,
    defaulting: &[Seat],
    chooser: &mut GameRng,
) -> Result<Choice<E::Action>, String> {
    let sampled = |every: usize| every > 0 && (step + sample_offset).is_multiple_of(every);
    let legal = state.legal_actions(seat);
    if legal.is_empty() {
        return Err(format!(
            "step {step}: seat {seat} must act but has no legal action"
        ));
    }
    if checks.deep_every > 0 && step.is_multiple_of(checks.deep_every) {
        deep_checks(state, seat, &legal, chooser).map_err(|e| format!("step {step}: {e}"))?;
    }
    if sampled(checks.distinct_every) {
        distinct_at(state, seat, &legal).map_err(|e| format!("step {step}: {e}"))?;
    }
    let takeable = if sampled(checks.takeback_every) {
        takeback_sound_at(state, seat, &legal).map_err(|e| format!("step {step}: {e}"))?
    } else {
        0
    };
    // The default action of the seat to act is always one of its legal actions.
    let default = state
        .default_action()
        .ok_or_else(|| format!("step {step}: seat {seat} must act but has no default action"))?;
    let default_amount = listed_amount::<E>(&legal, &default).ok_or_else(|| {
        format!("step {step}: seat {seat}'s default action {default:?} is not listed")
    })?;
    if defaulting.contains(&seat) {
        return Ok(Choice {
            action: default,
            amount: default_amount,
            takeable,
        });
    }
    let mut sampler = chooser.clone();
    let drawn = choose::<E>(&legal, chooser);
    let sampled = state.random_action(seat, &mut sampler);
    if sampled.as_ref() != Some(&drawn.0) || sampler != *chooser {
        return Err(format!(
            "step {step}: the engine's random_action drew {sampled:?}, the listing {:?}",
            drawn.0
        ));
    }
    Ok(Choice {
        action: drawn.0,
        amount: drawn.1,
        takeable,
    })
}

/// A state's serialized form, for comparing states.
pub(crate) fn encode<E: Engine>(state: &E) -> Vec<u8> {
    postcard::to_stdvec(state).unwrap_or_default()
}

fn deep_checks<E: Engine>(
    state: &E,
    seat: Seat,
    legal: &[LegalAction<E::Action>],
    chooser: &mut GameRng,
) -> Result<(), String> {
    // Nobody else may act now, and another seat's attempt is refused without changing anything.
    let before = encode(state);
    for other in (0..state.seat_count()).filter(|s| *s != seat) {
        if !state.legal_actions(other).is_empty() {
            return Err(format!(
                "seat {other} has legal actions while seat {seat} must act"
            ));
        }
        let mut probe = state.clone();
        let action = choose_action::<E>(legal, chooser);
        if probe.apply(other, &action).is_ok() {
            return Err(format!(
                "seat {other} was allowed to play {action:?} out of turn"
            ));
        }
        if encode(&probe) != before {
            return Err("a rejected action changed the state".into());
        }
    }
    // A malformed (empty) action is refused without changing anything.
    let mut probe = state.clone();
    if probe.apply(seat, &E::Action::default()).is_ok() || encode(&probe) != before {
        return Err("an empty action was accepted or changed the state".into());
    }
    // A seat that does not exist (a tampered log can name any) is refused, never a panic.
    let mut probe = state.clone();
    if probe
        .apply(state.seat_count(), &choose_action::<E>(legal, chooser))
        .is_ok()
    {
        return Err("a seat outside the table was allowed to act".into());
    }
    // Arbitrary input must never panic: listed actions with corrupted bytes, and random bytes,
    // decoded as actions and applied (any result is fine; a panic fails the test).
    for _ in 0..4 {
        let mut bytes = choose_action::<E>(legal, chooser).encode_to_vec();
        for _ in 0..=chooser.index(3) {
            if !bytes.is_empty() {
                let at = chooser.index(bytes.len());
                bytes[at] = chooser.below(256) as u8;
            }
        }
        let random: Vec<u8> = (0..chooser.index(24))
            .map(|_| chooser.below(256) as u8)
            .collect();
        for candidate in [bytes, random] {
            if let Ok(action) = E::Action::decode(candidate.as_slice()) {
                let mut probe = state.clone();
                if probe.apply(seat, &action).is_err() && encode(&probe) != before {
                    return Err(format!(
                        "rejected fuzzed action {action:?} changed the state"
                    ));
                }
            }
        }
    }
    // The state survives serialization exactly (snapshots rely on it).
    let restored: E = postcard::from_bytes(&before).map_err(|e| format!("deserialize: {e}"))?;
    if encode(&restored) != before {
        return Err("serde round trip changed the state".into());
    }
    // No view depends on what its viewer cannot see.
    for viewer in viewers(state) {
        let resampled = state.resample_hidden(viewer, &chooser.next_seed());
        if resampled.view(viewer) != state.view(viewer) {
            return Err(format!("{viewer:?}'s view depends on hidden information"));
        }
        if resampled.to_act() != state.to_act() {
            return Err("resampling hidden information changed whose turn it is".into());
        }
    }
    Ok(())
}

/// Every viewer: the table's seats, a spectator, and all the seats together (the operator's
/// unredacted export, which must still not show what no seat knows).
fn viewers<E: Engine>(state: &E) -> impl Iterator<Item = Viewer> {
    (0..state.seat_count())
        .map(Viewer::Seat)
        .chain([Viewer::Spectator, Viewer::AllSeats])
}

fn redacted_events<E: Engine>(events: &[E::Event], viewer: Viewer) -> Vec<E::Event> {
    events
        .iter()
        .filter_map(|event| E::redact_event(event, viewer).seen(event))
        .collect()
}

/// The opening events each viewer receives do not depend on what is hidden from it.
fn opening_check<E: Engine>(state: &E, chooser: &mut GameRng) -> Result<(), String> {
    for viewer in viewers(state) {
        let resampled = state.resample_hidden(viewer, &chooser.next_seed());
        if redacted_events::<E>(&resampled.opening_events(), viewer)
            != redacted_events::<E>(&state.opening_events(), viewer)
        {
            return Err(format!(
                "{viewer:?}'s opening events depend on information hidden from it"
            ));
        }
    }
    Ok(())
}

/// The generic proof that no viewer learns what the table hides from it (OpenSpiel's
/// information-state consistency, after its resample-from-infostate).
///
/// For every viewer, the state is resampled: everything hidden from that viewer is redrawn, so
/// the two states are ones the viewer cannot tell apart. Then everything the viewer receives must
/// be identical in both: its view, whose turn it is, its own legal actions, the default action of
/// the seat to act as the viewer sees it (the server may play it in the open, for a resigned or
/// timed-out seat), the action the seat to act takes as the viewer sees it, and the events that
/// action produces as the viewer sees them.
///
/// In the resampled world the actor takes a *counterpart* of `action`: a move legal there that the
/// viewer sees exactly as it sees `action` (the actor's own secrets may differ, so the very same
/// move may not exist). If there is none, the redacted action told the viewer something hidden.
/// Events are compared when the viewer's views after the move agree: a move that draws from the
/// (resampled) deck or dice legitimately shows a different card, and that difference shows in the
/// view too; a move whose outcome the viewer sees the same in both worlds must produce the same
/// redacted events.
pub fn information_set_check<E: Engine>(
    state: &E,
    actor: Seat,
    action: &E::Action,
    amount: Option<u64>,
    chooser: &mut GameRng,
) -> Result<(), String> {
    let mut after = state.clone();
    let events = after
        .apply(actor, action)
        .map_err(|e| format!("listed action {action:?} rejected: {e}"))?;
    for viewer in viewers(state) {
        let resampled = state.resample_hidden(viewer, &chooser.next_seed());
        if resampled.view(viewer) != state.view(viewer) {
            return Err(format!(
                "{viewer:?}'s view depends on information hidden from it"
            ));
        }
        if resampled.to_act() != state.to_act() {
            return Err(format!(
                "resampling what {viewer:?} cannot see changed whose turn it is"
            ));
        }
        if let Viewer::Seat(seat) = viewer
            && resampled.legal_actions(seat) != state.legal_actions(seat)
        {
            return Err(format!(
                "{viewer:?}'s legal actions depend on information hidden from it"
            ));
        }
        let redacted_default = |state: &E| {
            state
                .default_action()
                .map(|default| E::redact_action(&default, actor, viewer))
        };
        if redacted_default(&resampled) != redacted_default(state) {
            return Err(format!(
                "{viewer:?} would see seat {actor}'s default action differently in a state it \
                 cannot tell apart: the default depends on information hidden from it"
            ));
        }
        let seen = E::redact_action(action, actor, viewer);
        let counterpart = if viewer.is(actor) {
            Some(action.clone())
        } else {
            resampled
                .legal_actions(actor)
                .iter()
                .flat_map(|legal| match legal {
                    LegalAction::Exact(candidate) => vec![candidate.clone()],
                    LegalAction::Amount {
                        action: candidate,
                        min,
                        max,
                    } => amount
                        .filter(|amount| (*min..=*max).contains(amount))
                        .map(|amount| vec![E::with_amount(candidate, amount)])
                        .unwrap_or_default(),
                })
                .find(|candidate| E::redact_action(candidate, actor, viewer) == seen)
        };
        let Some(counterpart) = counterpart else {
            return Err(format!(
                "{viewer:?} sees seat {actor}'s action as {seen:?}, which no state it cannot tell \
                 apart from this one allows: the redacted action reveals hidden information"
            ));
        };
        let mut resampled_after = resampled;
        let resampled_events = resampled_after.apply(actor, &counterpart).map_err(|e| {
            format!(
                "the counterpart {counterpart:?} of {action:?} was refused after resampling: {e}"
            )
        })?;
        if resampled_after.view(viewer) == after.view(viewer)
            && redacted_events::<E>(&resampled_events, viewer)
                != redacted_events::<E>(&events, viewer)
        {
            return Err(format!(
                "{viewer:?} receives different events for seat {actor}'s {seen:?} in two states it \
                 cannot tell apart: {:?} vs {:?}",
                redacted_events::<E>(&events, viewer),
                redacted_events::<E>(&resampled_events, viewer)
            ));
        }
    }
    Ok(())
}
