//! The deployment's signing keys (issue #29): what the server signs a game's commitment with, so
//! that a third party can check offline, with nothing but the exported log and the published
//! public keys, that the server committed to a game's seed and setup when it created it.
//!
//! - **One key signs, several verify.** Every replica of a deployment loads the same signing key
//!   (`--signing-key-file`, or `TABULA_SIGNING_KEY`) and may accept older public keys
//!   (`--signing-public-keys`), so keys can be rotated: a new key signs from the rollout on, the
//!   previous one stays published for the games it signed. `GameService.GetSigningKeys` publishes
//!   them, like a JWKS endpoint.
//! - **A key has an id**, chosen by the operator (`[A-Za-z0-9._-]`, at most 64 bytes), carried
//!   beside each signature so a verifier picks the right public key.
//! - **Ed25519** (`ed25519-dalek`): deterministic signatures, 32-byte keys, fast to verify.
//! - **Domain separation**: what is signed is a fixed context string, a zero byte, then the
//!   payload ([`COMMITMENT_CONTEXT`]), so a signature over a game's commitment can never be
//!   passed off as a signature over anything else the server signs.
//!
//! Without a configured key (the embedded default, tests) a key is generated at start and the
//! log says so: its signatures verify only against that process's published keys.
//!
//! Key files hold one key per line, `<key id>:<64 hex digits>` (the private key's 32-byte seed
//! for the signing key, the public key for `--signing-public-keys`); blank lines and lines
//! starting with `#` are skipped. `tabula signing-key` makes a new pair.

use std::fmt;

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use sha2::{Digest, Sha256};
use thiserror::Error;

/// What precedes a game commitment's bytes in what is signed.
pub const COMMITMENT_CONTEXT: &[u8] = b"tabula-game-commitment-v1";

/// The algorithm every key of this build uses, as `GetSigningKeys` names it.
pub const ALGORITHM: &str = "Ed25519";

/// The longest key id.
pub const MAX_KEY_ID_LEN: usize = 64;

/// Why a key or a key file was refused.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum KeyError {
    /// A line is not `<key id>:<64 hex digits>`.
    #[error("line {line}: {why}")]
    BadLine {
        /// From 1.
        line: usize,
        /// What is wrong with it.
        why: String,
    },
    /// No key in what was read.
    #[error("no key in it: expected a line `<key id>:<64 hex digits>`")]
    Empty,
    /// Two keys with one id.
    #[error("key id {0} appears twice")]
    DuplicateId(String),
}

/// Why a signature did not verify.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SignatureError {
    /// The key id names no published key.
    #[error("signed with key {0:?}, which is not among the published keys")]
    UnknownKey(String),
    /// Not 64 bytes.
    #[error("the signature is {0} bytes long, not 64")]
    Malformed(usize),
    /// The signature does not match the payload under that key.
    #[error("the signature does not match what it claims to sign (key {0})")]
    Mismatch(String),
}

/// One published key.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// The operator's id for it.
    pub key_id: String,
    /// The Ed25519 public key.
    pub key: VerifyingKey,
}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.key_id, hex::encode(self.key.as_bytes()))
    }
}

/// A deployment's keys: the one it signs with, and every public key it publishes (the signing
/// key's first).
#[derive(Clone)]
pub struct SigningKeys {
    key_id: String,
    signing: SigningKey,
    published: Vec<PublicKey>,
    /// Whether the signing key was generated at start (no key configured).
    generated: bool,
}

impl fmt::Debug for SigningKeys {
    // Never the private key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKeys")
            .field("signing_key_id", &self.key_id)
            .field("published", &self.published)
            .field("generated", &self.generated)
            .finish()
    }
}

impl PartialEq for SigningKeys {
    fn eq(&self, other: &Self) -> bool {
        self.key_id == other.key_id && self.published == other.published
    }
}

impl SigningKeys {
    /// The keys read from a signing key (`<key id>:<hex seed>`) and public keys to accept
    /// besides it (lines of `<key id>:<hex public key>`).
    pub fn from_text(signing: &str, accepted: Option<&str>) -> Result<SigningKeys, KeyError> {
        let (key_id, seed) = only_key(signing)?;
        let signing = SigningKey::from_bytes(&seed);
        let mut published = vec![PublicKey {
            key_id: key_id.clone(),
            key: signing.verifying_key(),
        }];
        for key in parse_public_keys(accepted.unwrap_or_default())? {
            if key.key_id == published[0].key_id {
                return Err(KeyError::DuplicateId(key.key_id));
            }
            published.push(key);
        }
        Ok(SigningKeys {
            key_id,
            signing,
            published,
            generated: false,
        })
    }

    /// A key made now, for a deployment that configured none. Its id, `generated-` and the
    /// first 16 hex digits of the public key's SHA-256, differs from every other process's, so
    /// a replica never takes another's generated key for its own (it reports it unknown).
    pub fn generate() -> Result<SigningKeys, getrandom::Error> {
        let (line, _) = new_key_lines("generated")?;
        let mut keys = SigningKeys::from_text(&line, None)
            .unwrap_or_else(|_| unreachable!("a line this module wrote parses"));
        let fingerprint = Sha256::digest(keys.signing.verifying_key().as_bytes());
        keys.key_id = format!("generated-{}", hex::encode(&fingerprint[..8]));
        if let Some(published) = keys.published.first_mut() {
            published.key_id = keys.key_id.clone();
        }
        keys.generated = true;
        Ok(keys)
    }

    /// Whether the signing key was generated at start.
    pub fn generated(&self) -> bool {
        self.generated
    }

    /// The id of the key this deployment signs with.
    pub fn signing_key_id(&self) -> &str {
        &self.key_id
    }

    /// Every key published, the signing key first.
    pub fn published(&self) -> &[PublicKey] {
        &self.published
    }

    /// The signature of `payload` in `context` with the signing key: (key id, 64 bytes).
    pub fn sign(&self, context: &[u8], payload: &[u8]) -> (String, Vec<u8>) {
        let signature = self.signing.sign(&signed_bytes(context, payload));
        (self.key_id.clone(), signature.to_bytes().to_vec())
    }
}

/// Checks `signature` by key `key_id` over `payload` in `context` against `keys`.
pub fn verify(
    keys: &[PublicKey],
    key_id: &str,
    context: &[u8],
    payload: &[u8],
    signature: &[u8],
) -> Result<(), SignatureError> {
    let key = keys
        .iter()
        .find(|key| key.key_id == key_id)
        .ok_or_else(|| SignatureError::UnknownKey(bounded_id(key_id)))?;
    let bytes: [u8; 64] = signature
        .try_into()
        .map_err(|_| SignatureError::Malformed(signature.len()))?;
    key.key
        .verify(
            &signed_bytes(context, payload),
            &Signature::from_bytes(&bytes),
        )
        .map_err(|_| SignatureError::Mismatch(key.key_id.clone()))
}

/// Public keys read from lines of `<key id>:<hex public key>` (a `--signing-public-keys` file,
/// or what an offline verifier is given).
pub fn public_keys_from_text(text: &str) -> Result<Vec<PublicKey>, KeyError> {
    let keys = parse_public_keys(text)?;
    if keys.is_empty() {
        return Err(KeyError::Empty);
    }
    Ok(keys)
}

/// The public keys of `text`'s lines (none for an empty text), each id once.
fn parse_public_keys(text: &str) -> Result<Vec<PublicKey>, KeyError> {
    let mut keys: Vec<PublicKey> = Vec::new();
    for (key_id, bytes, line) in parse_lines(text)? {
        if keys.iter().any(|key| key.key_id == key_id) {
            return Err(KeyError::DuplicateId(key_id));
        }
        let key = VerifyingKey::from_bytes(&bytes).map_err(|_| KeyError::BadLine {
            line,
            why: "not an Ed25519 public key".into(),
        })?;
        keys.push(PublicKey { key_id, key });
    }
    Ok(keys)
}

/// A new key pair with id `key_id`: its signing key line and its public key line.
pub fn new_key_lines(key_id: &str) -> Result<(String, String), getrandom::Error> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed)?;
    let signing = SigningKey::from_bytes(&seed);
    Ok((
        format!("{key_id}:{}", hex::encode(seed)),
        format!(
            "{key_id}:{}",
            hex::encode(signing.verifying_key().as_bytes())
        ),
    ))
}

/// Whether `key_id` is a key id: `[A-Za-z0-9._-]`, 1 to [`MAX_KEY_ID_LEN`] bytes.
pub fn is_key_id(key_id: &str) -> bool {
    !key_id.is_empty()
        && key_id.len() <= MAX_KEY_ID_LEN
        && key_id
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-'))
}

fn signed_bytes(context: &[u8], payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(context.len() + 1 + payload.len());
    bytes.extend_from_slice(context);
    bytes.push(0);
    bytes.extend_from_slice(payload);
    bytes
}

/// A key id as an error may quote it: never unbounded.
fn bounded_id(key_id: &str) -> String {
    key_id.chars().take(MAX_KEY_ID_LEN).collect()
}

/// The one key of a signing key's text.
fn only_key(text: &str) -> Result<(String, [u8; 32]), KeyError> {
    let mut keys = parse_lines(text)?;
    match keys.len() {
        0 => Err(KeyError::Empty),
        1 => {
            let (key_id, seed, _) = keys.remove(0);
            Ok((key_id, seed))
        }
        _ => Err(KeyError::BadLine {
            line: keys[1].2,
            why: "a signing key holds one key; list the keys still accepted in \
                  --signing-public-keys"
                .into(),
        }),
    }
}

/// `(key id, 32 bytes, line number)` of each key line.
fn parse_lines(text: &str) -> Result<Vec<(String, [u8; 32], usize)>, KeyError> {
    let mut keys = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let bad = |why: &str| KeyError::BadLine {
            line,
            why: why.to_owned(),
        };
        let (key_id, hex_key) = trimmed
            .split_once(':')
            .ok_or_else(|| bad("expected `<key id>:<64 hex digits>`"))?;
        if !is_key_id(key_id) {
            return Err(bad(&format!(
                "a key id is 1 to {MAX_KEY_ID_LEN} of A-Z, a-z, 0-9, '.', '_', '-'"
            )));
        }
        let bytes: [u8; 32] = hex::decode(hex_key.trim())
            .ok()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| bad("the key is not 64 hex digits (32 bytes)"))?;
        keys.push((key_id.to_owned(), bytes, line));
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> (SigningKeys, String) {
        let (signing, public) = new_key_lines("k-2026").expect("randomness");
        (
            SigningKeys::from_text(&signing, None).expect("parses"),
            public,
        )
    }

    #[test]
    fn a_signature_verifies_under_its_key_and_context_only() {
        let (keys, public) = keys();
        let (key_id, signature) = keys.sign(COMMITMENT_CONTEXT, b"payload");
        assert_eq!(key_id, "k-2026");
        let published = public_keys_from_text(&public).expect("parses");
        assert_eq!(published, keys.published());
        assert_eq!(
            verify(
                &published,
                "k-2026",
                COMMITMENT_CONTEXT,
                b"payload",
                &signature
            ),
            Ok(())
        );
        assert_eq!(
            verify(
                &published,
                "k-2026",
                COMMITMENT_CONTEXT,
                b"payloae",
                &signature
            ),
            Err(SignatureError::Mismatch("k-2026".into()))
        );
        assert_eq!(
            verify(
                &published,
                "k-2026",
                b"another-context",
                b"payload",
                &signature
            ),
            Err(SignatureError::Mismatch("k-2026".into()))
        );
        assert_eq!(
            verify(
                &published,
                "other",
                COMMITMENT_CONTEXT,
                b"payload",
                &signature
            ),
            Err(SignatureError::UnknownKey("other".into()))
        );
        assert_eq!(
            verify(
                &published,
                "k-2026",
                COMMITMENT_CONTEXT,
                b"payload",
                &signature[1..]
            ),
            Err(SignatureError::Malformed(63))
        );
        // Another key of the same id does not verify it.
        let (_, other_public) = new_key_lines("k-2026").expect("randomness");
        let impostor = public_keys_from_text(&other_public).expect("parses");
        assert!(
            verify(
                &impostor,
                "k-2026",
                COMMITMENT_CONTEXT,
                b"payload",
                &signature
            )
            .is_err()
        );
    }

    #[test]
    fn rotated_keys_are_published_beside_the_signing_key() {
        let (old_signing, old_public) = new_key_lines("k-2025").expect("randomness");
        let (new_signing, _) = new_key_lines("k-2026").expect("randomness");
        let old = SigningKeys::from_text(&old_signing, None).expect("parses");
        let (_, signed_before) = old.sign(COMMITMENT_CONTEXT, b"game");
        let rotated = SigningKeys::from_text(
            &new_signing,
            Some(&format!("# kept for games signed before\n\n{old_public}\n")),
        )
        .expect("parses");
        assert_eq!(rotated.signing_key_id(), "k-2026");
        let ids: Vec<&str> = rotated
            .published()
            .iter()
            .map(|key| key.key_id.as_str())
            .collect();
        assert_eq!(ids, ["k-2026", "k-2025"]);
        assert_eq!(
            verify(
                rotated.published(),
                "k-2025",
                COMMITMENT_CONTEXT,
                b"game",
                &signed_before
            ),
            Ok(())
        );
    }

    #[test]
    fn bad_key_text_is_refused_with_its_line() {
        assert_eq!(SigningKeys::from_text("", None), Err(KeyError::Empty));
        assert!(matches!(
            SigningKeys::from_text("\nno-colon", None),
            Err(KeyError::BadLine { line: 2, .. })
        ));
        assert!(matches!(
            SigningKeys::from_text("bad id:00", None),
            Err(KeyError::BadLine { line: 1, .. })
        ));
        assert!(matches!(
            SigningKeys::from_text("k:abcd", None),
            Err(KeyError::BadLine { line: 1, .. })
        ));
        let (a, public_a) = new_key_lines("a").expect("randomness");
        let (b, _) = new_key_lines("b").expect("randomness");
        assert!(matches!(
            SigningKeys::from_text(&format!("{a}\n{b}"), None),
            Err(KeyError::BadLine { line: 2, .. })
        ));
        assert_eq!(
            SigningKeys::from_text(&a, Some(&public_a)),
            Err(KeyError::DuplicateId("a".into()))
        );
        // The debug form never shows the private key.
        let keys = SigningKeys::from_text(&a, None).expect("parses");
        let seed = a.split_once(':').expect("line").1;
        assert!(!format!("{keys:?}").contains(seed));
    }

    #[test]
    fn a_generated_key_says_so() {
        let keys = SigningKeys::generate().expect("randomness");
        assert!(keys.generated());
        assert_eq!(keys.published().len(), 1);
        assert!(keys.signing_key_id().starts_with("generated-"));
        assert_eq!(keys.published()[0].key_id, keys.signing_key_id());
        // Two processes' generated keys never share an id.
        let other = SigningKeys::generate().expect("randomness");
        assert_ne!(other.signing_key_id(), keys.signing_key_id());
    }
}
