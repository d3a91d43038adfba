//! Open seats' secrets (issue #30, item 1): the invitation codes and the creator's host token of a
//! game created with `TableConfig.open_seats`, as its meta keeps them, and who a token names in
//! such a game. The race for a seat is the log's (`hosting/seating.rs`); what a code may take, and
//! until when, is checked here against the meta, because codes are secret and never enter the log.
//!
//! - A code is `inv_`, the game's id (32 hex digits) and 256 random bits (64 hex digits): the id
//!   finds the game without an index, the random part is what grants the seat. The meta keeps
//!   only each code's SHA-256, so a store dump grants nothing.
//! - The token a join hands out is random, or, when the join names a request id, derived from the
//!   game's join secret (kept in the meta, never shown), the invitation and the request id, so that
//!   a retry gets the same token as the join it repeats. Neither the code nor the request id (which
//!   the log shows) is enough to compute it.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::auth::{constant_time_eq, hash_token, random_bytes};
use super::cache::{Game, GameCache};
use super::creation::Secrets;
use super::error::{ServiceError, ServiceResult};
use crate::games::Seat;
use crate::proto::v1 as pb;
use crate::store::GameMeta;

/// The start of every invitation code.
const CODE_PREFIX: &str = "inv_";
/// A code's length: the prefix, a game id and 32 random bytes, in hex.
const CODE_LEN: usize = CODE_PREFIX.len() + 32 + 64;
/// The most invitations to "any open seat" one game makes.
pub const MAX_ANY_SEAT_INVITATIONS: u32 = 16;
/// How long invitations stay valid unless the creator says otherwise: a day.
pub const DEFAULT_INVITATION_TTL_SECONDS: u64 = 24 * 3600;
/// The longest validity a creator may give invitations: 30 days.
pub const MAX_INVITATION_TTL_SECONDS: u64 = 30 * 24 * 3600;
/// The longest request id a join may carry (the log's entry adds the invitation to it).
pub const MAX_JOIN_REQUEST_ID_LEN: usize = 100;
/// What a rematch's ids are derived with.
const REMATCH_ID_CONTEXT: &[u8] = b"tabula/rematch/v1";
/// What derived join tokens are bound to.
const JOIN_TOKEN_CONTEXT: &[u8] = b"tabula/join-token/v1";

/// One invitation as the meta keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvitationRecord {
    /// SHA-256 of the code, hex.
    pub code_hash: String,
    /// The seat it takes; `None`: any seat still open.
    pub seat: Option<Seat>,
    /// When it expires (server clock, ms since the Unix epoch).
    pub expires_at_ms: u64,
}

/// A game's open-seat secrets (`GameMeta::seating`, JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatingRecord {
    /// The record's format: 1.
    pub format: u32,
    /// SHA-256 of the creator's host token (FillOpenSeats), hex.
    pub host_token_hash: String,
    /// The key of derived join tokens (32 random bytes), hex.
    pub join_secret: String,
    /// The invitations, in the order CreateGame returned them: an entry's index is the
    /// `TableAction.join.invitation` that uses it. A rematch's have no code (an empty hash, which
    /// no code matches): the first game's seat tokens redeem them (`rematch.rs`).
    pub invitations: Vec<InvitationRecord>,
    /// The game this one is the rematch of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rematch_of: Option<String>,
}

/// What CreateGame makes for a game with open seats.
pub struct NewSeating {
    /// The meta's record, encoded.
    pub record: Vec<u8>,
    /// The invitations with their codes, for the creator alone.
    pub invitations: Vec<pb::Invitation>,
    /// The creator's host token.
    pub host_token: String,
}

/// The secrets of a game with `open_seats` (in seat order), `any_seat` invitations to any of
/// them, valid for `ttl_seconds` (0: the default) from `now_ms`; the codes and the host token
/// from `secrets` (derived for a CreateGame with a request id, `creation.rs`).
pub fn new_seating(
    game_id: &str,
    open_seats: &[Seat],
    any_seat: u32,
    ttl_seconds: u64,
    now_ms: u64,
    secrets: Secrets<'_>,
) -> ServiceResult<NewSeating> {
    if any_seat > MAX_ANY_SEAT_INVITATIONS {
        return Err(ServiceError::InvalidArgument(format!(
            "any_seat_invitations is {any_seat}; a game makes at most \
             {MAX_ANY_SEAT_INVITATIONS}"
        )));
    }
    if ttl_seconds > MAX_INVITATION_TTL_SECONDS {
        return Err(ServiceError::InvalidArgument(format!(
            "invitation_ttl_seconds is {ttl_seconds}; invitations last at most \
             {MAX_INVITATION_TTL_SECONDS} seconds (30 days)"
        )));
    }
    let ttl_seconds = if ttl_seconds == 0 {
        DEFAULT_INVITATION_TTL_SECONDS
    } else {
        ttl_seconds
    };
    let expires_at_ms = now_ms.saturating_add(ttl_seconds.saturating_mul(1000));
    let mut seats: Vec<Option<Seat>> = open_seats.iter().copied().map(Some).collect();
    seats.sort_unstable();
    seats.extend(std::iter::repeat_n(None, any_seat as usize));
    let mut records = Vec::with_capacity(seats.len());
    let mut invitations = Vec::with_capacity(seats.len());
    for (index, seat) in seats.into_iter().enumerate() {
        let code = invitation_code(game_id, &secrets.invitation(index as u32)?);
        records.push(InvitationRecord {
            code_hash: hex::encode(hash_token(&code)),
            seat,
            expires_at_ms,
        });
        invitations.push(pb::Invitation {
            code,
            seat,
            expires_at_ms,
        });
    }
    let (host_token, host_hash) = secrets.host_token()?;
    let record = SeatingRecord {
        format: 1,
        host_token_hash: hex::encode(host_hash),
        join_secret: hex::encode(random_bytes()?),
        invitations: records,
        rematch_of: None,
    };
    Ok(NewSeating {
        record: serde_json::to_vec(&record)
            .map_err(|e| ServiceError::Internal(format!("the seating record: {e}")))?,
        invitations,
        host_token,
    })
}

/// The invitation code of game `game_id` whose secret part is `secret`.
fn invitation_code(game_id: &str, secret: &[u8; 32]) -> String {
    format!("{CODE_PREFIX}{game_id}{}", hex::encode(secret))
}

/// The game an invitation code names. INVALID_ARGUMENT for what is no code (quoting none of it).
pub fn game_of_code(code: &str) -> ServiceResult<&str> {
    let well_formed = code.len() == CODE_LEN
        && code.starts_with(CODE_PREFIX)
        && code[CODE_PREFIX.len()..]
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte));
    if !well_formed {
        return Err(ServiceError::InvalidArgument(format!(
            "code is not an invitation code (`{CODE_PREFIX}` and 96 lower-case hex digits, as \
             CreateGameResponse.invitations gave it); it is {} bytes long",
            code.len()
        )));
    }
    Ok(&code[CODE_PREFIX.len()..CODE_PREFIX.len() + 32])
}

impl SeatingRecord {
    /// The record of `meta`'s game: `None` for a game created without open seats.
    /// FAILED_PRECONDITION for a record this build cannot read (a later format).
    pub fn of(meta: &GameMeta) -> ServiceResult<Option<SeatingRecord>> {
        super::cache::decode_meta_record(meta, &meta.seating, "open seats")
    }

    /// The invitation `code` is, with its index: compared by hash, in constant time.
    pub fn invitation(&self, code: &str) -> Option<(u32, &InvitationRecord)> {
        let hash = hash_token(code);
        let mut found = None;
        for (index, invitation) in self.invitations.iter().enumerate() {
            let stored: Option<[u8; 32]> = hex::decode(&invitation.code_hash)
                .ok()
                .and_then(|bytes| bytes.try_into().ok());
            if stored.is_some_and(|stored| constant_time_eq(&stored, &hash)) {
                found = Some((index as u32, invitation));
            }
        }
        found
    }

    /// The invitations and the host token CreateGame answered with, again, for a retry of
    /// game `game_id`'s creation: their codes and the token derive from `secrets`, the seats and
    /// expiry are the record's.
    pub fn created_again(
        &self,
        game_id: &str,
        secrets: Secrets<'_>,
    ) -> ServiceResult<(Vec<pb::Invitation>, String)> {
        let invitations = self
            .invitations
            .iter()
            .enumerate()
            .map(|(index, invitation)| {
                Ok(pb::Invitation {
                    code: invitation_code(game_id, &secrets.invitation(index as u32)?),
                    seat: invitation.seat,
                    expires_at_ms: invitation.expires_at_ms,
                })
            })
            .collect::<ServiceResult<Vec<_>>>()?;
        Ok((invitations, secrets.host_token()?.0))
    }

    /// Whether `token` is the game's host token.
    pub fn is_host(&self, token: &str) -> bool {
        let stored: Option<[u8; 32]> = hex::decode(&self.host_token_hash)
            .ok()
            .and_then(|bytes| bytes.try_into().ok());
        stored.is_some_and(|stored| constant_time_eq(&stored, &hash_token(token)))
    }

    /// The token a join with `invitation` and `request_id` hands out: derived from the join
    /// secret when the request id is set (a retry gets the same one), random otherwise.
    pub fn join_token(&self, invitation: u32, request_id: &str) -> ServiceResult<String> {
        if request_id.is_empty() {
            return Ok(super::auth::new_token()?.0);
        }
        let derived = super::auth::derive_secret(
            &self.join_secret,
            "open seats' join secret",
            &[
                JOIN_TOKEN_CONTEXT,
                &invitation.to_be_bytes(),
                request_id.as_bytes(),
            ],
        )?;
        Ok(super::auth::token_of(&derived))
    }
}

/// The id of game `game_id`'s rematch: 32 hex digits, as every game id.
pub fn rematch_id(game_id: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(REMATCH_ID_CONTEXT);
    hash.update(game_id.as_bytes());
    hex::encode(&hash.finalize()[..16])
}

/// The links of `game`: the game it is the rematch of, and its own rematch once a seat asked for
/// one (looked up only once the game has ended).
///
/// The rematch is looked up in the store, and in the archive only once `game` itself has left the
/// store: retention takes finished games oldest first, so a rematch, which finished after its
/// first game, never leaves the store before it. So a finished game still in the store (the
/// common case: its players look at the result) costs no archive read per view, and its views
/// do not fail while the archive is unreachable.
pub async fn links(cache: &GameCache, game: &Game) -> ServiceResult<Option<pb::GameLinks>> {
    let rematch_of = SeatingRecord::of(&game.meta)?
        .and_then(|record| record.rematch_of)
        .unwrap_or_default();
    let rematch = if game.is_finished() {
        let id = rematch_id(&game.meta.game_id);
        let found = if cache.get_from_store(&id).await?.is_some() {
            true
        } else if cache.has_archive() && !cache.in_store(game).await? {
            match cache.get(&id).await {
                Ok(_) => true,
                Err(ServiceError::NotFound(_)) => false,
                Err(error) => return Err(error),
            }
        } else {
            false
        };
        if found { id } else { String::new() }
    } else {
        String::new()
    };
    Ok(
        (!rematch_of.is_empty() || !rematch.is_empty()).then_some(pb::GameLinks {
            rematch_of,
            rematch,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_name_their_game_and_match_only_themselves() {
        let game_id = "0123456789abcdef0123456789abcdef";
        let made = new_seating(game_id, &[2, 1], 1, 0, 1_000, Secrets::Random).expect("made");
        let seats: Vec<Option<u32>> = made.invitations.iter().map(|i| i.seat).collect();
        assert_eq!(seats, [Some(1), Some(2), None]);
        let meta = GameMeta {
            seating: made.record,
            ..GameMeta::for_tests(game_id)
        };
        let record = SeatingRecord::of(&meta)
            .expect("decodes")
            .expect("a record");
        for (index, invitation) in made.invitations.iter().enumerate() {
            assert_eq!(game_of_code(&invitation.code).expect("a code"), game_id);
            assert_eq!(invitation.expires_at_ms, 1_000 + 24 * 3600 * 1000);
            let (found, _) = record.invitation(&invitation.code).expect("known");
            assert_eq!(found as usize, index);
        }
        let mut forged = made.invitations[0].code.clone();
        let last = forged.pop().expect("a code");
        forged.push(if last == '0' { '1' } else { '0' });
        assert!(record.invitation(&forged).is_none());
        assert!(record.is_host(&made.host_token));
        assert!(!record.is_host(&made.invitations[0].code));
        assert!(game_of_code("inv_short").is_err());
        assert!(game_of_code(&made.invitations[0].code.to_uppercase()).is_err());
    }

    #[test]
    fn a_join_token_is_the_same_for_a_retry_and_another_for_anything_else() {
        let made = new_seating(
            "0123456789abcdef0123456789abcdef",
            &[1],
            0,
            60,
            0,
            Secrets::Random,
        )
        .unwrap();
        let record: SeatingRecord = serde_json::from_slice(&made.record).unwrap();
        let token = record.join_token(0, "r1").unwrap();
        assert_eq!(token, record.join_token(0, "r1").unwrap());
        assert_ne!(token, record.join_token(1, "r1").unwrap());
        assert_ne!(token, record.join_token(0, "r2").unwrap());
        assert_ne!(
            record.join_token(0, "").unwrap(),
            record.join_token(0, "").unwrap()
        );
        assert!(token.starts_with("tbl_"));
    }

    #[test]
    fn limits_are_refused_with_their_bounds() {
        let id = "0123456789abcdef0123456789abcdef";
        assert!(
            new_seating(
                id,
                &[0],
                MAX_ANY_SEAT_INVITATIONS + 1,
                0,
                0,
                Secrets::Random
            )
            .is_err()
        );
        assert!(
            new_seating(
                id,
                &[0],
                0,
                MAX_INVITATION_TTL_SECONDS + 1,
                0,
                Secrets::Random
            )
            .is_err()
        );
    }
}
