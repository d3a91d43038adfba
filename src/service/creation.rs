//! Retrying CreateGame (`CreateGameRequest.request_id`): a CreateGame that repeats a request id
//! answers with the game the first one created, instead of creating another. A client whose
//! answer was lost (a timeout, a dropped connection) retries it and gets the seat tokens it never
//! saw, and the game it did not see created does not sit in its tenant's quotas until retention.
//!
//! - **The game's id is derived** from who asks (a tenant, or the operator) and the request id
//!   ([`game_id_for`]), so every replica finds the same game without an index, and concurrent
//!   first calls race for one id in the store: one creates it, the others find it (as a rematch's
//!   id is derived from its first game's, `rematch.rs`).
//! - **What CreateGame shows only once derives from a secret** kept in the game's meta
//!   ([`CreationRecord`], never shown): the seat tokens, the invitation codes and the host token
//!   ([`Secrets::Derived`]), so that a retry can show them again. The meta keeps only their
//!   hashes, as for every game; the webhooks' secrets are in the meta anyway. Neither the game id
//!   nor the request id (both known to whoever holds the game's log) is enough to compute them.
//! - **The record keeps the request's hash**, so that the same request id with another request
//!   is refused rather than answered with a game the caller did not ask for.
//! - **Only a tenant's key or the operator token** may name a request id: whoever repeated an
//!   anonymous caller's request id would receive the seat tokens.

use prost::Message;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::{ServiceError, ServiceResult};
use crate::games::Seat;
use crate::proto::v1 as pb;
use crate::store::GameMeta;

/// What a creation's game id is derived with.
const GAME_ID_CONTEXT: &[u8] = b"tabula/create-game/id/v1";
/// What a creation's seat tokens are derived with.
const SEAT_TOKEN_CONTEXT: &[u8] = b"tabula/create-game/seat-token/v1";
/// What a creation's host token is derived with.
const HOST_TOKEN_CONTEXT: &[u8] = b"tabula/create-game/host-token/v1";
/// What the secret parts of a creation's invitation codes are derived with.
const INVITATION_CONTEXT: &[u8] = b"tabula/create-game/invitation/v1";

/// Whose request id it is: request ids of different creators never name the same game.
#[derive(Clone, Copy, Debug)]
pub enum Creator<'a> {
    /// A tenant, by its id (any of its keys).
    Tenant(&'a str),
    /// The operator (its token).
    Operator,
}

/// The id of the game that `creator`'s CreateGame with `request_id` creates: 32 hex digits, as
/// every game id.
pub fn game_id_for(creator: Creator<'_>, request_id: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(GAME_ID_CONTEXT);
    // The creator's length first, so that no creator and request id can trade bytes.
    match creator {
        Creator::Tenant(tenant) => {
            hash.update(b"tenant");
            hash.update((tenant.len() as u64).to_be_bytes());
            hash.update(tenant.as_bytes());
        }
        Creator::Operator => hash.update(b"operator"),
    }
    hash.update(request_id.as_bytes());
    hex::encode(&hash.finalize()[..16])
}

/// The hash a retry is compared by: of everything in `request` but its request id.
pub fn request_hash(request: &pb::CreateGameRequest) -> [u8; 32] {
    let compared = pb::CreateGameRequest {
        request_id: String::new(),
        ..request.clone()
    };
    Sha256::digest(compared.encode_to_vec()).into()
}

/// A game's creation record (`GameMeta::creation`, JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreationRecord {
    /// The record's format: 1.
    pub format: u32,
    /// The key every secret of the creation's answer derives from (32 random bytes), hex.
    pub secret: String,
    /// [`request_hash`] of the request that created the game, hex.
    pub request_hash: String,
}

impl CreationRecord {
    /// A new record, with a new secret, for the request of hash `request_hash`.
    pub fn new(request_hash: &[u8; 32]) -> ServiceResult<CreationRecord> {
        Ok(CreationRecord {
            format: 1,
            secret: hex::encode(super::auth::random_bytes()?),
            request_hash: hex::encode(request_hash),
        })
    }

    /// The meta's encoding.
    pub fn encode(&self) -> ServiceResult<Vec<u8>> {
        serde_json::to_vec(self)
            .map_err(|e| ServiceError::Internal(format!("the creation record: {e}")))
    }

    /// The record of `meta`'s game: `None` for a game created without a request id (or read back
    /// from the archive, which keeps none). FAILED_PRECONDITION for a later format.
    pub fn of(meta: &GameMeta) -> ServiceResult<Option<CreationRecord>> {
        super::cache::decode_meta_record(meta, &meta.creation, "creation")
    }

    /// Whether the request of hash `request_hash` is the one that created the game.
    pub fn repeats(&self, request_hash: &[u8; 32]) -> bool {
        self.request_hash == hex::encode(request_hash)
    }

    /// 32 bytes derived from the secret for `context` and `index`.
    fn derive(&self, context: &[u8], index: u32) -> ServiceResult<[u8; 32]> {
        super::auth::derive_secret(
            &self.secret,
            "creation secret",
            &[context, &index.to_be_bytes()],
        )
    }
}

/// Where the secrets CreateGame shows only once come from.
#[derive(Clone, Copy)]
pub enum Secrets<'a> {
    /// Fresh randomness: a CreateGame without a request id.
    Random,
    /// Derived from a creation's record: the same for every retry.
    Derived(&'a CreationRecord),
}

impl Secrets<'_> {
    /// Seat `seat`'s token, with its hash.
    pub fn seat_token(self, seat: Seat) -> ServiceResult<(String, [u8; 32])> {
        self.token(SEAT_TOKEN_CONTEXT, seat)
    }

    /// The host token of a game with open seats, with its hash.
    pub fn host_token(self) -> ServiceResult<(String, [u8; 32])> {
        self.token(HOST_TOKEN_CONTEXT, 0)
    }

    /// A bearer token and its hash: random, or derived for `context` and `index`.
    fn token(self, context: &[u8], index: u32) -> ServiceResult<(String, [u8; 32])> {
        match self {
            Secrets::Random => super::auth::new_token(),
            Secrets::Derived(record) => {
                let token = super::auth::token_of(&record.derive(context, index)?);
                let hash = super::auth::hash_token(&token);
                Ok((token, hash))
            }
        }
    }

    /// The secret part of invitation `index` (in the order CreateGame answers them).
    pub fn invitation(self, index: u32) -> ServiceResult<[u8; 32]> {
        match self {
            Secrets::Random => super::auth::random_bytes(),
            Secrets::Derived(record) => record.derive(INVITATION_CONTEXT, index),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(seed: u8) -> pb::CreateGameRequest {
        pb::CreateGameRequest {
            seed: Some(vec![seed; 32]),
            request_id: "r1".into(),
            ..Default::default()
        }
    }

    #[test]
    fn a_game_id_belongs_to_its_creator_and_request_id() {
        let id = game_id_for(Creator::Tenant("alpha"), "r1");
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(id, game_id_for(Creator::Tenant("alpha"), "r1"));
        assert_ne!(id, game_id_for(Creator::Tenant("alpha"), "r2"));
        assert_ne!(id, game_id_for(Creator::Tenant("beta"), "r1"));
        assert_ne!(id, game_id_for(Creator::Operator, "r1"));
        // The tenant id's length keeps it and the request id from trading bytes.
        assert_ne!(
            game_id_for(Creator::Tenant("ab"), "c"),
            game_id_for(Creator::Tenant("a"), "bc")
        );
    }

    #[test]
    fn the_request_hash_ignores_the_request_id_alone() {
        let first = request(1);
        let retry = pb::CreateGameRequest {
            request_id: "another".into(),
            ..first.clone()
        };
        assert_eq!(request_hash(&first), request_hash(&retry));
        assert_ne!(request_hash(&first), request_hash(&request(2)));
        let record = CreationRecord::new(&request_hash(&first)).expect("randomness");
        assert!(record.repeats(&request_hash(&retry)));
        assert!(!record.repeats(&request_hash(&request(2))));
    }

    #[test]
    fn derived_secrets_are_the_same_for_a_record_and_differ_otherwise() {
        let hash = request_hash(&request(1));
        let record = CreationRecord::new(&hash).expect("randomness");
        let decoded: CreationRecord =
            serde_json::from_slice(&record.encode().expect("encodes")).expect("decodes");
        let (one, one_hash) = Secrets::Derived(&record).seat_token(0).expect("derived");
        let (again, _) = Secrets::Derived(&decoded).seat_token(0).expect("derived");
        assert_eq!(one, again);
        assert_eq!(one_hash, super::super::auth::hash_token(&one));
        assert_ne!(
            one,
            Secrets::Derived(&record).seat_token(1).expect("derived").0
        );
        assert_ne!(
            one,
            Secrets::Derived(&record).host_token().expect("derived").0
        );
        let other = CreationRecord::new(&hash).expect("randomness");
        assert_ne!(
            one,
            Secrets::Derived(&other).seat_token(0).expect("derived").0
        );
        assert_eq!(
            Secrets::Derived(&record).invitation(3).expect("derived"),
            Secrets::Derived(&decoded).invitation(3).expect("derived")
        );
        assert_ne!(
            Secrets::Random.seat_token(0).expect("random").0,
            Secrets::Random.seat_token(0).expect("random").0
        );
    }

    #[test]
    fn a_later_format_is_refused_by_name() {
        let mut record = CreationRecord::new(&[0; 32]).expect("randomness");
        record.format = 2;
        let meta = GameMeta {
            creation: record.encode().expect("encodes"),
            ..GameMeta::for_tests("0123456789abcdef0123456789abcdef")
        };
        let refused = CreationRecord::of(&meta).expect_err("format 2");
        assert!(matches!(refused, ServiceError::FailedPrecondition(_)));
        assert!(
            CreationRecord::of(&GameMeta {
                creation: Vec::new(),
                ..meta
            })
            .expect("none")
            .is_none()
        );
    }
}
