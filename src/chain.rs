//! The hash chain of a game's log (issue #29, item 3): pure functions over bytes, shared by the
//! replicas that extend it and by anyone who checks an exported log offline (`tabula verify`).
//!
//! ```text
//! head(0) = SHA-256("tabula-genesis-v1" 0x00 commitment)          the signed GameCommitment bytes
//! commit(v) = HMAC-SHA256(seed, "tabula-action-v1" 0x00 v action)  v: 8 bytes big-endian
//! head(v) = SHA-256("tabula-entry-v1" 0x00 head(v-1) v seat time commit(v))
//!                                     seat: 4 bytes, time: 8 bytes (ms), both big-endian
//! ```
//!
//! - **Why the chain starts at the signed commitment**: the first link binds every entry to the
//!   game the server signed for (its id, setup and seed commitment), so entries of one game cannot
//!   be passed off as another's.
//! - **Why actions enter as a keyed commitment** (`commit(v)`): while a game runs, a viewer's
//!   export hides some actions (a mortgaged ware, a dealt share). Each entry of an export carries
//!   its `commit(v)` and `head(v)`, so a viewer checks every link of the chain without seeing the
//!   hidden action. A plain hash of the action would not hide it: a secret action has few possible
//!   values, and hashing each candidate would find it. Keyed with the game's seed, the commitment
//!   says nothing until the game ends; then the seed is published, the complete log shows every
//!   action, and anyone recomputes each `commit(v)` from the action and the seed, which checks that
//!   the action the viewer was not shown is the one the chain (and every receipt) committed to.
//! - **Receipts**: `ActResponse.head` is `head(v)` of the entry the seat just appended: a seat that
//!   keeps it can later show that the log it was shown then is a prefix of the final one.
//! - At the end the server signs the final head (`FinalHead`, context [`FINAL_HEAD_CONTEXT`]).

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

/// A link of the chain.
pub type Hash = [u8; 32];

/// What precedes a signed final head's bytes in what is signed (see `crate::signing`).
pub const FINAL_HEAD_CONTEXT: &[u8] = b"tabula-final-head-v1";

/// The head before the first entry: the signed commitment's bytes, hashed.
pub fn genesis(commitment: &[u8]) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(b"tabula-genesis-v1\0");
    hasher.update(commitment);
    hasher.finalize().into()
}

/// The keyed commitment to the action of entry `version`: says nothing of the action without the
/// seed.
pub fn action_commitment(seed: &[u8; 32], version: u64, action: &[u8]) -> Hash {
    // HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(seed)
        .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
    mac.update(b"tabula-action-v1\0");
    mac.update(&version.to_be_bytes());
    mac.update(action);
    mac.finalize().into_bytes().into()
}

/// The head after entry `version`, from the head before it.
pub fn next_head(
    previous: &Hash,
    version: u64,
    seat: u32,
    server_time_ms: u64,
    action_commitment: &Hash,
) -> Hash {
    let mut hasher = Sha256::new();
    hasher.update(b"tabula-entry-v1\0");
    hasher.update(previous);
    hasher.update(version.to_be_bytes());
    hasher.update(seat.to_be_bytes());
    hasher.update(server_time_ms.to_be_bytes());
    hasher.update(action_commitment);
    hasher.finalize().into()
}

/// One entry's link in the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The keyed commitment to its action.
    pub action_commitment: Hash,
    /// The head after it.
    pub head: Hash,
}

/// The link of an entry after `previous`, when the seed is known (the server; anyone once the
/// game has ended).
pub fn link_after(
    previous: &Hash,
    seed: &[u8; 32],
    version: u64,
    seat: u32,
    server_time_ms: u64,
    action: &[u8],
) -> Link {
    let action_commitment = action_commitment(seed, version, action);
    Link {
        head: next_head(previous, version, seat, server_time_ms, &action_commitment),
        action_commitment,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_input_of_a_link_changes_it() {
        let seed = [7u8; 32];
        let start = genesis(b"commitment");
        assert_ne!(start, genesis(b"commitmenu"));
        let Link {
            head,
            action_commitment: commitment,
        } = link_after(&start, &seed, 1, 0, 1_000, b"action");
        assert_eq!(head, next_head(&start, 1, 0, 1_000, &commitment));
        for (changed, what) in [
            (
                link_after(&genesis(b"other"), &seed, 1, 0, 1_000, b"action").head,
                "previous",
            ),
            (
                link_after(&start, &[8u8; 32], 1, 0, 1_000, b"action").head,
                "seed",
            ),
            (
                link_after(&start, &seed, 2, 0, 1_000, b"action").head,
                "version",
            ),
            (
                link_after(&start, &seed, 1, 1, 1_000, b"action").head,
                "seat",
            ),
            (
                link_after(&start, &seed, 1, 0, 1_001, b"action").head,
                "time",
            ),
            (
                link_after(&start, &seed, 1, 0, 1_000, b"actioN").head,
                "action",
            ),
        ] {
            assert_ne!(changed, head, "{what}");
        }
        // The commitment of an action is another for another seed: it hides the action.
        assert_ne!(
            action_commitment(&seed, 1, b"action"),
            action_commitment(&[8u8; 32], 1, b"action")
        );
    }

    #[test]
    fn links_are_fixed_by_this_format() {
        // A change to the format changes these: logs exported before would no longer verify.
        let seed = [1u8; 32];
        let Link {
            head,
            action_commitment: commitment,
        } = link_after(&genesis(b""), &seed, 1, 2, 3, b"\x0a\x00");
        assert_eq!(
            hex::encode(genesis(b"")),
            hex::encode(Sha256::digest(b"tabula-genesis-v1\0"))
        );
        let expected_commitment = {
            let mut mac = Hmac::<Sha256>::new_from_slice(&seed).expect("key");
            mac.update(b"tabula-action-v1\0\0\0\0\0\0\0\0\x01\x0a\x00");
            <[u8; 32]>::from(mac.finalize().into_bytes())
        };
        assert_eq!(commitment, expected_commitment);
        let mut bytes = b"tabula-entry-v1\0".to_vec();
        bytes.extend_from_slice(&genesis(b""));
        bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3]);
        bytes.extend_from_slice(&commitment);
        assert_eq!(head, <[u8; 32]>::from(Sha256::digest(&bytes)));
    }
}
