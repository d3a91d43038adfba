//! `GetSigningKeys`: the deployment's public keys, like a JWKS endpoint (see `crate::signing`).
//! Needs no token: public keys are public, and a verifier of an exported log needs them.

use super::tabula::Tabula;
use crate::proto::v1 as pb;
use crate::signing::ALGORITHM;

pub(super) fn get_signing_keys(tabula: &Tabula) -> pb::GetSigningKeysResponse {
    let signing = tabula.signing.signing_key_id();
    pb::GetSigningKeysResponse {
        keys: tabula
            .signing
            .published()
            .iter()
            .map(|key| pb::SigningKey {
                key_id: key.key_id.clone(),
                algorithm: ALGORITHM.to_owned(),
                public_key: key.key.as_bytes().to_vec(),
                active: key.key_id == signing,
            })
            .collect(),
    }
}
