//! The operator token: one secret the operator starts every replica with (`--operator-token`, or
//! TABULA_OPERATOR_TOKEN from a secret), which grants the operator's API (`AdminService`) and, on a
//! server started with `--require-operator-for-create`, CreateGame.
//!
//! It is kept only as its SHA-256 hash, and a presented token is hashed and compared in constant
//! time, so neither the comparison's duration nor a memory dump gives it away. It is a different
//! kind of secret from a seat token: it grants no seat in any game, and a seat token grants none
//! of what it does.
//!
//! Codes: a call without the token, or with another, is UNAUTHENTICATED, with a message saying
//! which token the call needs.

use std::fmt;
use std::str::FromStr;

use tonic::metadata::MetadataMap;
use tonic::{Request, Status};

use super::auth::{constant_time_eq, hash_token};
use super::error::{ServiceError, ServiceResult};
use super::tenants::Caller;

/// The shortest operator token accepted: a guessable one would hand out the whole deployment.
pub const MIN_OPERATOR_TOKEN_LEN: usize = 16;
/// The longest operator token accepted (it travels in an HTTP header).
pub const MAX_OPERATOR_TOKEN_LEN: usize = 512;

/// Where a caller finds the operator token, for error messages.
const WHERE: &str =
    "the token the server was started with (--operator-token or TABULA_OPERATOR_TOKEN)";

/// The operator's secret, as its SHA-256 hash. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct OperatorToken {
    hash: [u8; 32],
}

/// An operator token that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OperatorTokenError {
    /// Too short or too long.
    #[error(
        "the operator token is {0} characters long; use {MIN_OPERATOR_TOKEN_LEN} to \
         {MAX_OPERATOR_TOKEN_LEN} (e.g. `openssl rand -hex 32`)"
    )]
    Length(usize),
    /// A character an HTTP header cannot carry unquoted, or a space.
    #[error(
        "the operator token may hold only visible ASCII characters (no spaces): it is sent as \
         `authorization: Bearer <token>`"
    )]
    Characters,
}

impl OperatorToken {
    /// Whether `presented` is the operator token (constant time in its content).
    pub fn matches(&self, presented: &str) -> bool {
        constant_time_eq(&self.hash, &hash_token(presented))
    }

    /// Checks that `metadata` carries the operator token; `purpose` names what the call needs it
    /// for, in the refusal.
    pub fn authorize(&self, metadata: &MetadataMap, purpose: &str) -> ServiceResult<()> {
        let presented = metadata
            .get("authorization")
            .and_then(|value| value.to_str().ok())
            .and_then(|value| {
                value
                    .strip_prefix("Bearer ")
                    .or_else(|| value.strip_prefix("bearer "))
            })
            .map(str::trim);
        match presented {
            None => Err(ServiceError::Unauthenticated(format!(
                "{purpose} needs the operator token: send `authorization: Bearer <operator token>` \
                 metadata with {WHERE}"
            ))),
            Some(token) if self.matches(token) => Ok(()),
            Some(_) => Err(ServiceError::Unauthenticated(format!(
                "{purpose} needs the operator token, and the bearer token sent is not it (a seat \
                 token grants nothing here); send {WHERE}"
            ))),
        }
    }
}

impl FromStr for OperatorToken {
    type Err = OperatorTokenError;

    fn from_str(token: &str) -> Result<Self, Self::Err> {
        if !token.bytes().all(|byte| byte.is_ascii_graphic()) {
            return Err(OperatorTokenError::Characters);
        }
        if !(MIN_OPERATOR_TOKEN_LEN..=MAX_OPERATOR_TOKEN_LEN).contains(&token.len()) {
            return Err(OperatorTokenError::Length(token.len()));
        }
        Ok(OperatorToken {
            hash: hash_token(token),
        })
    }
}

impl fmt::Debug for OperatorToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("OperatorToken(<redacted>)")
    }
}

/// What a replica's operator configured: the token, and whether CreateGame needs it.
#[derive(Clone, Debug)]
pub struct OperatorOptions {
    /// The operator's secret.
    pub token: OperatorToken,
    /// CreateGame needs the operator token (only the operator's backend creates games).
    pub required_for_create: bool,
}

/// Guards the operator's API: every call to `AdminService` passes here before its message is even
/// decoded. It lets through the operator token and live tenant API keys (see `tenants.rs`), and
/// hands the handler who called ([`Caller`], in the request's extensions): a tenant's calls are
/// scoped to its own games there.
#[derive(Clone)]
pub struct AdminGate {
    tabula: std::sync::Arc<super::Tabula>,
}

impl AdminGate {
    /// A gate in front of `tabula`'s operator API.
    pub fn new(tabula: std::sync::Arc<super::Tabula>) -> Self {
        AdminGate { tabula }
    }
}

impl tonic::service::Interceptor for AdminGate {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        let caller = self
            .tabula
            .caller(request.metadata())
            .map_err(Status::from)?;
        if caller == Caller::Anonymous {
            let refusal = match &self.tabula.options().operator {
                Some(operator) => operator
                    .token
                    .authorize(request.metadata(), "AdminService")
                    .err(),
                None => None,
            };
            return Err(Status::from(refusal.unwrap_or_else(|| {
                ServiceError::Unauthenticated(
                    "AdminService needs a tenant's API key or the operator token: send \
                     `authorization: Bearer <key>` metadata"
                        .into(),
                )
            })));
        }
        request.extensions_mut().insert(caller);
        Ok(request)
    }
}

/// The caller the [`AdminGate`] let through.
pub(super) fn caller_of<T>(request: &Request<T>) -> ServiceResult<Caller> {
    let caller = request
        .extensions()
        .get::<Caller>()
        .cloned()
        .ok_or_else(|| {
            ServiceError::Internal(
                "an AdminService call reached its handler without the gate".into(),
            )
        })?;
    // Spans and access-log lines name the tenant calling.
    if let Some(tenant) = caller.tenant() {
        tracing::Span::current().record("tenant", tenant);
    }
    Ok(caller)
}

/// Refuses `caller` unless it holds the operator token: managing tenants is the operator's.
pub(super) fn require_operator(caller: &Caller, purpose: &str) -> ServiceResult<()> {
    if *caller == Caller::Operator {
        Ok(())
    } else {
        Err(ServiceError::PermissionDenied(format!(
            "{purpose} needs the operator token; a tenant's API key manages only its own games"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "op_0123456789abcdef";

    fn metadata(authorization: Option<&str>) -> MetadataMap {
        let mut metadata = MetadataMap::new();
        if let Some(value) = authorization {
            metadata.insert("authorization", value.parse().expect("ascii"));
        }
        metadata
    }

    #[test]
    fn tokens_must_be_long_and_visible_ascii() {
        assert_eq!(
            "short".parse::<OperatorToken>(),
            Err(OperatorTokenError::Length(5))
        );
        assert_eq!(
            "with a space in it!".parse::<OperatorToken>(),
            Err(OperatorTokenError::Characters)
        );
        assert!(TOKEN.parse::<OperatorToken>().is_ok());
    }

    #[test]
    fn only_the_operator_token_is_let_through() {
        let token: OperatorToken = TOKEN.parse().expect("token");
        assert!(
            token
                .authorize(&metadata(Some(&format!("Bearer {TOKEN}"))), "X")
                .is_ok()
        );
        for refused in [
            None,
            Some("Bearer op_0123456789abcdeF"),
            Some("Bearer "),
            Some(TOKEN),
        ] {
            let error = token
                .authorize(&metadata(refused), "ListGames")
                .expect_err("refused");
            assert_eq!(error.code(), tonic::Code::Unauthenticated, "{refused:?}");
            assert!(
                error
                    .to_string()
                    .contains("ListGames needs the operator token")
            );
        }
    }

    #[test]
    fn debug_output_hides_the_token() {
        let token: OperatorToken = TOKEN.parse().expect("token");
        assert!(!format!("{token:?}").contains("0123"));
    }
}
