//! Turning a legal-action listing into the concrete moves a search weighs.
//!
//! An [`LegalAction::Amount`] entry stands for every amount in `min..=max` (a Manila bid up to a
//! player's means, a Medici vs Strozzi price up to 999): far too many children for a tree, and
//! mostly equivalent. The search considers a *ladder* of amounts instead: every amount up to
//! `min + 3`, then offsets from `min` growing by half each step, then `max` — 0, 1, 2, 3, 4, 6,
//! 9, 13, 19, 28, 42, 63, 94, … — fine where bids and prices usually fall, coarse beyond
//! (the "action abstraction" MCTS programs use for bet sizes). Rollouts draw from the same
//! ladder, so a random playout prices lots sensibly more often than a uniform draw up to 999.

use crate::games::common::GameRng;
use crate::games::{Engine, LegalAction};

/// Offsets up to this are all on the ladder.
const DENSE_OFFSETS: u64 = 3;

/// The amounts the search considers in `min..=max`, ascending.
pub(crate) fn ladder(min: u64, max: u64) -> impl Iterator<Item = u64> {
    let span = max.saturating_sub(min);
    let mut next = Some(0u64);
    std::iter::from_fn(move || {
        let offset = next?;
        next = if offset >= span {
            None
        } else {
            let step = if offset < DENSE_OFFSETS {
                offset + 1
            } else {
                offset + offset / 2
            };
            Some(step.min(span))
        };
        Some(min + offset)
    })
}

/// Appends every concrete move of `legal` the search considers to `out`: exact entries as they
/// are, amount entries once per rung of their [`ladder`].
pub(crate) fn concrete_moves<E: Engine>(
    legal: Vec<LegalAction<E::Action>>,
    out: &mut Vec<E::Action>,
) {
    for entry in legal {
        match entry {
            LegalAction::Exact(action) => out.push(action),
            LegalAction::Amount { action, min, max } => {
                out.extend(ladder(min, max).map(|amount| E::with_amount(&action, amount)));
            }
        }
    }
}

/// The rollout policy: a uniformly chosen entry of `legal`, and for an amount entry a uniformly
/// chosen rung of its ladder. Entries are weighed equally (not rungs), so a listing of "draw" and
/// "offer at any price" offers half the time, as the random bot does.
pub(crate) fn random_move<E: Engine>(
    legal: &[LegalAction<E::Action>],
    rng: &mut GameRng,
) -> E::Action {
    match &legal[rng.index(legal.len())] {
        LegalAction::Exact(action) => action.clone(),
        LegalAction::Amount { action, min, max } => {
            let rungs = ladder(*min, *max).count();
            let amount = ladder(*min, *max).nth(rng.index(rungs)).unwrap_or(*min);
            E::with_amount(action, amount)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ladder;

    #[test]
    fn the_ladder_is_dense_near_the_minimum_and_ends_at_the_maximum() {
        let rungs: Vec<u64> = ladder(0, 999).collect();
        assert_eq!(&rungs[..9], &[0, 1, 2, 3, 4, 6, 9, 13, 19]);
        assert_eq!(rungs.last(), Some(&999));
        assert!(rungs.windows(2).all(|w| w[0] < w[1]), "{rungs:?}");
        assert!(rungs.len() < 25, "{} rungs", rungs.len());
        assert_eq!(ladder(5, 5).collect::<Vec<_>>(), vec![5]);
        assert_eq!(ladder(7, 9).collect::<Vec<_>>(), vec![7, 8, 9]);
        assert_eq!(
            ladder(10, 15).collect::<Vec<_>>(),
            vec![10, 11, 12, 13, 14, 15]
        );
    }
}
