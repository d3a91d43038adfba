//! Mechanisms every game shares: the seeded RNG and shuffles, turn order around the table,
//! ranking with tie-breaks, and the random-play harness the engines' tests run on.

pub mod distinct_moves;
pub mod random_play;
pub mod ranking;
pub mod rng;
pub mod seats;
pub mod takeback;
#[cfg(test)]
pub mod testing;

pub use ranking::{rank_groups, top_group};
pub use rng::GameRng;
pub use seats::{clockwise_from, left_of, right_of};
