//! The seeded RNG every game keeps inside its state.
//!
//! Replays depend on the exact stream, so the generator is pinned (ChaCha20 from `rand_chacha`,
//! whose output is fixed by the ChaCha specification) and the derived operations (bounded integers,
//! shuffles, dice) are implemented here rather than borrowed from `rand`, whose algorithms may
//! change between versions. The state serializes as its seed and stream position.

use rand_chacha::ChaCha20Rng;
use rand_core::{Rng, SeedableRng};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::games::Seed;

/// The one source of randomness of a game: ChaCha20 from the game's seed, held in the state so
/// that a replay from the same seed draws exactly the same numbers (its stream is pinned by tests).
#[derive(Clone, Debug)]
pub struct GameRng(ChaCha20Rng);

impl GameRng {
    /// The generator for `seed`, at the start of its stream.
    pub fn from_seed(seed: &Seed) -> Self {
        GameRng(ChaCha20Rng::from_seed(seed.0))
    }

    /// A uniformly distributed integer in `0..bound` (`bound` > 0), without modulo bias:
    /// draws falling in the incomplete last block of `u64` values are rejected and redrawn.
    pub fn below(&mut self, bound: u64) -> u64 {
        assert!(bound > 0, "GameRng::below needs a positive bound");
        let zone = u64::MAX - (u64::MAX - bound + 1) % bound;
        loop {
            let draw = self.0.next_u64();
            if draw <= zone {
                return draw % bound;
            }
        }
    }

    /// A uniformly chosen index into a collection of `len` items (`len` > 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// One roll of a die with `sides` faces: 1..=sides.
    pub fn roll(&mut self, sides: u32) -> u32 {
        self.below(u64::from(sides)) as u32 + 1
    }

    /// Fisher–Yates shuffle in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.index(i + 1);
            items.swap(i, j);
        }
    }

    /// A fresh 32-byte seed drawn from this stream (e.g. for a sub-generator).
    pub fn next_seed(&mut self) -> Seed {
        let mut bytes = [0u8; 32];
        self.0.fill_bytes(&mut bytes);
        Seed(bytes)
    }
}

impl PartialEq for GameRng {
    fn eq(&self, other: &Self) -> bool {
        self.0.get_seed() == other.0.get_seed() && self.0.get_word_pos() == other.0.get_word_pos()
    }
}

impl Eq for GameRng {}

/// The serialized form: where the stream started and how far it has run.
#[derive(Serialize, Deserialize)]
struct RngPosition {
    seed: [u8; 32],
    word_pos: u128,
}

impl Serialize for GameRng {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        RngPosition {
            seed: self.0.get_seed(),
            word_pos: self.0.get_word_pos(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for GameRng {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let position = RngPosition::deserialize(deserializer)?;
        let mut rng = ChaCha20Rng::from_seed(position.seed);
        rng.set_word_pos(position.word_pos);
        Ok(GameRng(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_is_pinned() {
        // If this changes, every stored log replays differently: never update it casually.
        let mut rng = GameRng::from_seed(&Seed([7; 32]));
        let draws: Vec<u64> = (0..4).map(|_| rng.below(1000)).collect();
        assert_eq!(draws, vec![308, 932, 28, 18]);
        let mut deck: Vec<u32> = (0..10).collect();
        rng.shuffle(&mut deck);
        assert_eq!(deck, vec![7, 0, 5, 8, 2, 1, 6, 3, 4, 9]);
    }

    #[test]
    fn serialization_resumes_the_stream() {
        let mut rng = GameRng::from_seed(&Seed([1; 32]));
        rng.below(6);
        rng.below(6);
        let bytes = postcard::to_stdvec(&rng).expect("serializes");
        let mut restored: GameRng = postcard::from_bytes(&bytes).expect("deserializes");
        assert_eq!(restored, rng);
        assert_eq!(restored.below(1 << 40), rng.below(1 << 40));
    }

    #[test]
    fn below_is_roughly_uniform() {
        let mut rng = GameRng::from_seed(&Seed([3; 32]));
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[rng.roll(6) as usize - 1] += 1;
        }
        for count in counts {
            assert!((9_000..11_000).contains(&count), "die counts {counts:?}");
        }
    }
}
