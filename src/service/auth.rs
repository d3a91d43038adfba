//! Seat tokens: one secret bearer token per seat, created with the game and stored only as a
//! SHA-256 hash. A call carrying `authorization: Bearer <token>` acts for the token's seat; a call
//! without one is a spectator.
//!
//! Codes: a missing or malformed `authorization` header where a seat is required is
//! UNAUTHENTICATED; a well-formed token that grants no seat in this game is PERMISSION_DENIED.

use sha2::{Digest, Sha256};
use tonic::metadata::MetadataMap;

use super::error::{ServiceError, ServiceResult};
use crate::games::{Seat, Viewer};
use crate::hosting::GameState;
use crate::store::GameMeta;

const TOKEN_PREFIX: &str = "tbl_";

/// A new random token (256 bits from the OS) and the hash to store.
pub fn new_token() -> ServiceResult<(String, [u8; 32])> {
    let token = token_of(&random_bytes()?);
    let hash = hash_token(&token);
    Ok((token, hash))
}

/// 32 bytes from the OS's randomness: a token's secret part, a game's secrets.
pub fn random_bytes() -> ServiceResult<[u8; 32]> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| ServiceError::Internal(format!("no OS randomness: {e}")))?;
    Ok(bytes)
}

/// 32 bytes derived from a game's stored secret (`secret_hex`; `name` says which, in errors):
/// HMAC-SHA256 over `parts`, the first of which names what is derived. What a retry hands out
/// again (a join's token, a creation's tokens and codes) is derived so.
pub fn derive_secret(secret_hex: &str, name: &str, parts: &[&[u8]]) -> ServiceResult<[u8; 32]> {
    let secret = hex::decode(secret_hex)
        .map_err(|_| ServiceError::Internal(format!("the {name} is not hex")))?;
    let mut mac = <hmac::Hmac<Sha256> as hmac::Mac>::new_from_slice(&secret)
        .map_err(|e| ServiceError::Internal(format!("the {name}: {e}")))?;
    for part in parts {
        hmac::Mac::update(&mut mac, part);
    }
    Ok(hmac::Mac::finalize(mac).into_bytes().into())
}

/// The token whose secret part is `secret`.
pub fn token_of(secret: &[u8; 32]) -> String {
    format!("{TOKEN_PREFIX}{}", hex::encode(secret))
}

pub fn hash_token(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// The bearer token in `metadata`, if any.
pub fn bearer_token(metadata: &MetadataMap) -> ServiceResult<Option<String>> {
    let Some(value) = metadata.get("authorization") else {
        return Ok(None);
    };
    let value = value.to_str().map_err(|_| {
        ServiceError::Unauthenticated("the authorization header is not valid ASCII".into())
    })?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| {
            ServiceError::Unauthenticated(
                "the authorization header must be `Bearer <seat token>`".into(),
            )
        })?;
    Ok(Some(token.to_owned()))
}

/// The seat `token` grants in the game `meta` and `state` describe: a token made at creation, or
/// one a join handed out since (for a game with open seats, whose `state` must then have seen the
/// join).
pub fn seat_for(meta: &GameMeta, state: &dyn GameState, token: &str) -> ServiceResult<Seat> {
    let hash = hash_token(token);
    let joined = if state.has_open_seating() {
        (0..state.seat_count()).find(|seat| {
            state
                .joined_token_hash(*seat)
                .is_some_and(|stored| constant_time_eq(&stored, &hash))
        })
    } else {
        None
    };
    joined
        .or_else(|| {
            meta.token_hashes
                .iter()
                .position(|stored| constant_time_eq(stored, &hash))
                .map(|seat| seat as Seat)
        })
        .ok_or_else(|| {
            ServiceError::PermissionDenied(format!(
                "this token grants no seat in game {}; use a token from its CreateGame response",
                meta.game_id
            ))
        })
}

/// The seat of the caller, who must hold a token (to act).
pub fn required_seat(
    meta: &GameMeta,
    state: &dyn GameState,
    metadata: &MetadataMap,
) -> ServiceResult<Seat> {
    let token = bearer_token(metadata)?.ok_or_else(|| {
        ServiceError::Unauthenticated(
            "acting needs a seat token: send `authorization: Bearer <token>` metadata".into(),
        )
    })?;
    seat_for(meta, state, &token)
}

/// The caller as a viewer: its seat when it sends a token, a spectator otherwise.
pub fn viewer(
    meta: &GameMeta,
    state: &dyn GameState,
    metadata: &MetadataMap,
) -> ServiceResult<Viewer> {
    match bearer_token(metadata)? {
        Some(token) => Ok(Viewer::Seat(seat_for(meta, state, &token)?)),
        None => Ok(Viewer::Spectator),
    }
}

/// Whether two hashes are equal, taking the same time wherever they differ.
pub fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
