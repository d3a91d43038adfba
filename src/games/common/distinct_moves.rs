//! One button per distinct move (issue #31): no two entries of a legal-action listing do the
//! same thing.
//!
//! A client shows each listed entry as a control, so two entries with the same effect are two
//! buttons for one move, and a person must guess which to press. An engine may still *accept*
//! another spelling of a listed move (an older client's, or one that old logs hold), but it lists
//! each move once. The check is generic: at sampled steps of seeded random games, every exact
//! entry (and each amount entry at its range's ends) is applied to a copy of the state, and no two
//! may reach the same encoded state with the same events.

use std::collections::HashMap;

use prost::Message;

use crate::games::common::random_play::{Checks, encode, play_seeds};
use crate::games::{Engine, LegalAction, Seat};

/// Plays `games` seeded random games of `config` (seeds from `first_seed`) through the
/// random-play harness with only this check on, at every `every`-th step (see
/// [`Checks::distinct_every`]). A game longer than `max_actions` fails as a stall.
#[track_caller]
pub fn check_distinct_moves<E: Engine>(
    config: &E::Config,
    first_seed: u64,
    games: u64,
    every: usize,
    max_actions: usize,
) {
    let checks = Checks {
        distinct_every: every.max(1),
        ..Checks::NONE
    };
    play_seeds::<E>(config, first_seed, games, max_actions, checks);
}

/// Every concrete move of a listing that a button stands for: each exact entry, and each amount
/// entry at both ends of its range (two amounts of one entry always differ, but an end may do
/// what an exact entry does).
pub(crate) fn listed_moves<E: Engine>(legal: &[LegalAction<E::Action>]) -> Vec<E::Action> {
    legal
        .iter()
        .flat_map(|entry| match entry {
            LegalAction::Exact(action) => vec![action.clone()],
            LegalAction::Amount { action, min, max } => {
                let mut ends = vec![E::with_amount(action, *min)];
                if max != min {
                    ends.push(E::with_amount(action, *max));
                }
                ends
            }
        })
        .collect()
}

/// What a move did: the encoded state it reached and its encoded events, in order.
type Effect = (Vec<u8>, Vec<Vec<u8>>);

/// Applies each listed move of `seat` to its own copy of `state`: two moves that reach the same
/// state with the same events are one move listed twice (the error names them).
pub fn distinct_at<E: Engine>(
    state: &E,
    seat: Seat,
    legal: &[LegalAction<E::Action>],
) -> Result<(), String> {
    let mut effects: HashMap<Effect, E::Action> = HashMap::new();
    for action in listed_moves::<E>(legal) {
        let mut probe = state.clone();
        let events = probe
            .apply(seat, &action)
            .map_err(|e| format!("the listed {action:?} was rejected: {e}"))?;
        let effect = (
            encode(&probe),
            events.iter().map(Message::encode_to_vec).collect(),
        );
        // The same move listed twice is two buttons as well.
        if let Some(first) = effects.insert(effect, action.clone()) {
            return Err(format!(
                "seat {seat}'s listed moves {first:?} and {action:?} do the same thing: one \
                 move, two buttons"
            ));
        }
    }
    Ok(())
}
