//! The random bot: a uniformly chosen legal move, the baseline the search bot is measured against.

use crate::bots::{BotError, check_turn};
use crate::games::common::GameRng;
use crate::games::common::random_play::choose_action;
use crate::games::{Engine, Seat, Seed};

/// A uniformly chosen entry of `seat`'s listing, uniformly within an amount range (the random-play
/// harness's choice). It reads nothing but the seat's legal actions, which are the same in every
/// state the seat cannot tell apart.
pub(crate) fn decide<E: Engine>(state: &E, seat: Seat, seed: &Seed) -> Result<E::Action, BotError> {
    check_turn(state, seat)?;
    let legal = state.legal_actions(seat);
    if legal.is_empty() {
        return Err(BotError::NoLegalAction(seat));
    }
    Ok(choose_action::<E>(&legal, &mut GameRng::from_seed(seed)))
}
