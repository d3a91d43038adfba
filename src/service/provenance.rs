//! What an exported log's signatures and hash chain prove (issue #29): the check `VerifyLog` and
//! `tabula verify` run beside the rules' re-execution, offline, with nothing but the log and a set
//! of public keys.
//!
//! In order, stopping at the first problem, which names the entry at fault:
//! 1. the signed commitment: its signature under the key it names (a key not among those given is
//!    reported, not judged: the checker may not hold the signer's keys), then what it commits to
//!    against what the log says (game, rules version, config, players, seed commitment, and the
//!    seed of a finished game);
//! 2. the chain, entry by entry (`crate::chain`): versions in order, each head following from the
//!    one before; once the seed is public, each action against its keyed commitment;
//! 3. the signed final head of a finished game: its signature, and that the chain ends where it
//!    says (a truncated or extended log does not).
//!
//! A log without a signed commitment (a game created before signing) has nothing to check here:
//! it is reported unsigned.

use prost::Message;
use sha2::{Digest, Sha256};

use super::error::bounded;
use crate::chain::{self, FINAL_HEAD_CONTEXT, Hash};
use crate::proto::v1 as pb;
use crate::signing::{COMMITMENT_CONTEXT, PublicKey, SignatureError, verify};

/// Why a log's provenance does not hold: the entry at fault (`None`: the log as a whole; 0: its
/// start) and why, with what was established before it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProvenanceError {
    /// The entry at fault.
    pub version: Option<u64>,
    /// Why, for a person.
    pub why: String,
    /// What was checked before.
    pub provenance: pb::Provenance,
}

/// Checks `log`'s signed commitment, hash chain and signed final head against `keys`.
pub fn check_provenance(
    log: &pb::GameLog,
    keys: &[PublicKey],
) -> Result<pb::Provenance, ProvenanceError> {
    let mut provenance = pb::Provenance::default();
    let fail = |provenance: &pb::Provenance, version: Option<u64>, why: String| ProvenanceError {
        version,
        why,
        provenance: provenance.clone(),
    };
    let Some(signed) = &log.signed_commitment else {
        let chained = log.signed_final_head.is_some()
            || log
                .entries
                .iter()
                .any(|entry| !entry.head.is_empty() || !entry.action_commitment.is_empty());
        if chained {
            return Err(fail(
                &provenance,
                Some(0),
                "the log has a hash chain but no signed commitment: the chain's start was removed"
                    .into(),
            ));
        }
        return Ok(provenance);
    };
    provenance.signed = true;
    provenance.key_id = bounded(&signed.key_id).to_owned();
    match signature(
        keys,
        &signed.key_id,
        COMMITMENT_CONTEXT,
        &signed.commitment,
        &signed.signature,
    ) {
        Ok(known) => provenance.key_known = known,
        Err(why) => {
            return Err(fail(
                &provenance,
                Some(0),
                format!("the signed commitment: {why}"),
            ));
        }
    }
    let commitment = pb::GameCommitment::decode(signed.commitment.as_slice()).map_err(|error| {
        fail(
            &provenance,
            Some(0),
            format!("the signed commitment does not decode: {error}"),
        )
    })?;
    if let Some(why) = commitment_differs(log, &commitment) {
        return Err(fail(&provenance, Some(0), why));
    }

    // The chain, from the signed commitment on.
    let seed: Option<[u8; 32]> = log.seed.as_slice().try_into().ok();
    let mut head: Hash = chain::genesis(&signed.commitment);
    for (index, entry) in log.entries.iter().enumerate() {
        let version = index as u64 + 1;
        let at = |why: String| fail(&provenance, Some(version), why);
        if entry.version != version {
            return Err(at(format!(
                "the entry in place {version} says version {}: an entry is missing, repeated or \
                 out of order",
                entry.version
            )));
        }
        let action_commitment: Hash =
            entry.action_commitment.as_slice().try_into().map_err(|_| {
                at("it has no 32-byte action commitment: the chain is cut there".into())
            })?;
        let logged_head: Hash = entry
            .head
            .as_slice()
            .try_into()
            .map_err(|_| at("it has no 32-byte head: the chain is cut there".into()))?;
        if let Some(seed) = &seed {
            let action = entry
                .action
                .as_ref()
                .map(Message::encode_to_vec)
                .unwrap_or_default();
            if chain::action_commitment(seed, version, &action) != action_commitment {
                return Err(at(
                    "its action is not the one the chain committed to when it was logged (the \
                     action, its version or the seed was changed)"
                        .into(),
                ));
            }
        }
        let expected = chain::next_head(
            &head,
            version,
            entry.seat,
            entry.server_time_ms,
            &action_commitment,
        );
        if expected != logged_head {
            return Err(at(
                "its head does not follow from the entry before it: this entry (its seat, time or \
                 action) or one before it was altered, inserted, removed or reordered"
                    .into(),
            ));
        }
        head = logged_head;
        provenance.chain_version = version;
    }

    // Where the chain ends, as the server signed it.
    let last = log.entries.len() as u64;
    match &log.signed_final_head {
        None if log.complete => {
            return Err(fail(
                &provenance,
                None,
                "the log says the game ended but has no signed final head: it may have been cut \
                 short"
                    .into(),
            ));
        }
        None => {}
        Some(final_head) => {
            let known = signature(
                keys,
                &final_head.key_id,
                FINAL_HEAD_CONTEXT,
                &final_head.final_head,
                &final_head.signature,
            )
            .map_err(|why| fail(&provenance, None, format!("the signed final head: {why}")))?;
            let signed_end =
                pb::FinalHead::decode(final_head.final_head.as_slice()).map_err(|error| {
                    fail(
                        &provenance,
                        None,
                        format!("the signed final head does not decode: {error}"),
                    )
                })?;
            if signed_end.game_id != commitment.game_id {
                return Err(fail(
                    &provenance,
                    None,
                    format!(
                        "the signed final head is of game {}, not of this game ({})",
                        bounded(&signed_end.game_id),
                        bounded(&commitment.game_id)
                    ),
                ));
            }
            if signed_end.version != last {
                return Err(fail(
                    &provenance,
                    Some(last.min(signed_end.version) + 1),
                    format!(
                        "the log ends at version {last} but the server signed its end at version \
                         {}: entries were {} after it",
                        signed_end.version,
                        if last < signed_end.version {
                            "cut off"
                        } else {
                            "added"
                        }
                    ),
                ));
            }
            if signed_end.head.as_slice() != head.as_slice() {
                return Err(fail(
                    &provenance,
                    Some(last),
                    "the chain's last head is not the one the server signed at the end".into(),
                ));
            }
            provenance.final_head_verified = known && provenance.key_known;
        }
    }
    Ok(provenance)
}

/// Whether `signature` verifies: `Ok(true)` it does, `Ok(false)` its key is not among `keys`
/// (not judged), `Err` it does not.
fn signature(
    keys: &[PublicKey],
    key_id: &str,
    context: &[u8],
    payload: &[u8],
    signature: &[u8],
) -> Result<bool, SignatureError> {
    match verify(keys, key_id, context, payload, signature) {
        Ok(()) => Ok(true),
        Err(SignatureError::UnknownKey(_)) => Ok(false),
        Err(error) => Err(error),
    }
}

/// How the log differs from what the server signed it would be, if it does.
fn commitment_differs(log: &pb::GameLog, commitment: &pb::GameCommitment) -> Option<String> {
    if commitment.format != 1 {
        return Some(format!(
            "the signed commitment is in format {}, which this build does not know",
            commitment.format
        ));
    }
    if !log.game_id.is_empty() && log.game_id != commitment.game_id {
        return Some(format!(
            "the signed commitment is for game {}, not for this log's game {}",
            bounded(&commitment.game_id),
            bounded(&log.game_id)
        ));
    }
    if log.game != 0 && log.game != commitment.game {
        return Some("the log's game is not the one the server signed".into());
    }
    if log.rules_version != commitment.rules_version {
        return Some(format!(
            "the log's rules version {} is not the signed one, {}",
            bounded(&log.rules_version),
            bounded(&commitment.rules_version)
        ));
    }
    let signed_config = pb::GameConfig::decode(commitment.config.as_slice()).ok();
    if signed_config.as_ref() != log.config.as_ref() {
        return Some("the log's config is not the one the server signed".into());
    }
    if log.players != commitment.players {
        return Some("the log's players are not the ones the server signed".into());
    }
    if log.seed_commitment != commitment.seed_commitment {
        return Some(
            "the log's seed commitment is not the one the server signed at creation".into(),
        );
    }
    if !log.seed.is_empty() && Sha256::digest(&log.seed).as_slice() != commitment.seed_commitment {
        return Some(
            "the log's seed is not the one the server committed to at creation (another seed)"
                .into(),
        );
    }
    None
}
