//! A game's signed commitment (issue #29, item 2): at creation the server signs what it commits
//! to (the game's id, kind, rules version, config, seat count, players, seed commitment and
//! creation time) with the deployment's key (`crate::signing`). The creator gets it in
//! CreateGame's answer, every seat and spectator with GetView, and it travels in the exported
//! log, so a third party holding only the log and the published keys can check that the seed the
//! finished log reveals is the one the server committed to before the first move.
//!
//! What is signed is the encoded `tabula.v1.GameCommitment` itself, shipped beside the signature:
//! a verifier checks the signature over those bytes, then decodes them and compares them with the
//! log, never re-encodes anything (protobuf encodings are not canonical across libraries).

use prost::Message;
use sha2::{Digest, Sha256};

use crate::games::Seed;
use crate::proto::v1 as pb;
use crate::signing::{COMMITMENT_CONTEXT, SigningKeys};
use crate::store::GameMeta;

/// The format of `GameCommitment` this build signs.
pub const COMMITMENT_FORMAT: u32 = 1;

/// SHA-256 of the seed: published at creation (CreateGame), checked here against the seed an
/// ended game's log reveals.
pub fn seed_commitment(seed: &Seed) -> [u8; 32] {
    Sha256::digest(seed.0).into()
}

/// What the server commits to for the game `meta` describes, with `seat_count` seats.
pub fn commitment(meta: &GameMeta, seat_count: u32) -> pb::GameCommitment {
    pb::GameCommitment {
        format: COMMITMENT_FORMAT,
        game_id: meta.game_id.clone(),
        game: meta.kind as i32,
        rules_version: meta.rules_version.clone(),
        config: meta.config.clone(),
        seat_count,
        players: super::players::to_proto(&meta.players),
        seed_commitment: seed_commitment(&meta.seed).to_vec(),
        created_at_ms: meta.created_at_ms,
    }
}

/// The commitment to the game `meta` describes, signed with `keys`, encoded as the meta keeps it.
pub fn sign(keys: &SigningKeys, meta: &GameMeta, seat_count: u32) -> Vec<u8> {
    let payload = commitment(meta, seat_count).encode_to_vec();
    let (key_id, signature) = keys.sign(COMMITMENT_CONTEXT, &payload);
    pb::SignedCommitment {
        commitment: payload,
        key_id,
        signature,
    }
    .encode_to_vec()
}

/// The format of `FinalHead` this build signs.
pub const FINAL_HEAD_FORMAT: u32 = 1;

/// A finished game's final head, signed with `keys`.
pub fn sign_final_head(
    keys: &SigningKeys,
    game_id: &str,
    version: u64,
    head: &crate::chain::Hash,
) -> pb::SignedFinalHead {
    let payload = pb::FinalHead {
        format: FINAL_HEAD_FORMAT,
        game_id: game_id.to_owned(),
        version,
        head: head.to_vec(),
    }
    .encode_to_vec();
    let (key_id, signature) = keys.sign(crate::chain::FINAL_HEAD_CONTEXT, &payload);
    pb::SignedFinalHead {
        final_head: payload,
        key_id,
        signature,
    }
}

/// The signed commitment the meta keeps, for the API; `None` for a game without one (created
/// before signing existed, or read back from an archive).
pub fn signed(meta: &GameMeta) -> Option<pb::SignedCommitment> {
    if meta.signed_commitment.is_empty() {
        return None;
    }
    match pb::SignedCommitment::decode(meta.signed_commitment.as_slice()) {
        Ok(signed) => Some(signed),
        Err(error) => {
            tracing::warn!(game_id = %meta.game_id, %error, "the game's signed commitment does not decode");
            None
        }
    }
}
