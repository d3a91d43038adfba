//! What the operator's listings (`ListGames`, `CountGames`) share: the kind filter, the largest
//! page the store is asked for, and page tokens.
//!
//! A page token is the place the next page starts (creation time and game id) together with the
//! query it belongs to, so a token sent with other filters is refused rather than silently
//! answering a different listing. It is opaque to clients (hex of a small binary encoding) but
//! not secret: the operator may read it.

use serde::{Deserialize, Serialize};

use super::error::{ServiceError, ServiceResult};
use crate::proto::v1 as pb;
use crate::store::{GameFilter, IndexPosition, ListOrder};

/// The largest page: larger requests get this many.
pub const MAX_PAGE_SIZE: u32 = 500;
/// The longest page token accepted (the tokens the service makes are far shorter).
const MAX_PAGE_TOKEN_LEN: usize = 1024;
/// The encoding of page tokens; bumped if it changes, so old tokens are refused clearly.
const PAGE_TOKEN_VERSION: u8 = 1;

/// A request's `game` filter: unspecified is every kind.
pub(super) fn kind_filter(game: i32) -> ServiceResult<Option<pb::GameKind>> {
    match pb::GameKind::try_from(game) {
        Ok(pb::GameKind::Unspecified) => Ok(None),
        Ok(kind) => Ok(Some(kind)),
        Err(_) => Err(ServiceError::InvalidArgument(format!(
            "game {game} is not a GameKind this server hosts"
        ))),
    }
}

/// What a page token is bound to: the query's filters and order (not its page size, which may
/// change from page to page).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct QueryKey {
    kind: Option<i32>,
    finished: Option<bool>,
    created_from_ms: Option<u64>,
    created_until_ms: Option<u64>,
    oldest_first: bool,
}

impl QueryKey {
    pub(super) fn of(filter: &GameFilter, order: ListOrder) -> Self {
        QueryKey {
            kind: filter.kind.map(|kind| kind as i32),
            finished: filter.finished,
            created_from_ms: filter.created_from_ms,
            created_until_ms: filter.created_until_ms,
            oldest_first: order == ListOrder::OldestFirst,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct PageToken {
    version: u8,
    query: QueryKey,
    created_at_ms: u64,
    game_id: String,
}

/// A page token of a listing filtered by rules version ([`PAGE_TOKEN_WITH_RULES`]): the version
/// 1 token and the filter. Listings without the filter keep issuing version 1 tokens, which
/// replicas of the release before read too.
#[derive(Serialize, Deserialize)]
struct PageTokenWithRules {
    version: u8,
    query: QueryKey,
    created_at_ms: u64,
    game_id: String,
    rules_version: String,
}

/// The encoding of page tokens of listings filtered by rules version (since 1.0.0).
const PAGE_TOKEN_WITH_RULES: u8 = 2;

/// A page token of a listing whose request names a tenant ([`PAGE_TOKEN_WITH_TENANT`]): the
/// version 2 token and the tenant named. Listings that name none keep issuing version 1 or 2
/// tokens, which replicas of the release before read too.
#[derive(Serialize, Deserialize)]
struct PageTokenWithTenant {
    version: u8,
    query: QueryKey,
    created_at_ms: u64,
    game_id: String,
    rules_version: String,
    tenant_id: String,
}

/// The encoding of page tokens of listings that name a tenant (since 1.1.0).
const PAGE_TOKEN_WITH_TENANT: u8 = 3;

/// The filters a page token is bound to besides its [`QueryKey`], as the request gave them
/// (empty: none).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct TokenFilters<'a> {
    /// `rules_version`.
    pub rules_version: &'a str,
    /// `tenant_id`.
    pub tenant_id: &'a str,
}

pub(super) fn encode_page_token(
    query: &QueryKey,
    filters: TokenFilters<'_>,
    next: IndexPosition,
) -> String {
    // A plain struct always encodes; an empty token (the listing's end) would be the fallback.
    let encoded = if !filters.tenant_id.is_empty() {
        postcard::to_allocvec(&PageTokenWithTenant {
            version: PAGE_TOKEN_WITH_TENANT,
            query: query.clone(),
            created_at_ms: next.created_at_ms,
            game_id: next.game_id,
            rules_version: filters.rules_version.to_owned(),
            tenant_id: filters.tenant_id.to_owned(),
        })
    } else if filters.rules_version.is_empty() {
        postcard::to_allocvec(&PageToken {
            version: PAGE_TOKEN_VERSION,
            query: query.clone(),
            created_at_ms: next.created_at_ms,
            game_id: next.game_id,
        })
    } else {
        postcard::to_allocvec(&PageTokenWithRules {
            version: PAGE_TOKEN_WITH_RULES,
            query: query.clone(),
            created_at_ms: next.created_at_ms,
            game_id: next.game_id,
            rules_version: filters.rules_version.to_owned(),
        })
    };
    encoded.map(hex::encode).unwrap_or_default()
}

pub(super) fn decode_page_token(
    text: &str,
    query: &QueryKey,
    filters: TokenFilters<'_>,
) -> ServiceResult<IndexPosition> {
    let invalid = || {
        ServiceError::InvalidArgument(
            "page_token is not a token this service issued: send the next_page_token of the \
             previous page unchanged, or none for the first page"
                .into(),
        )
    };
    if text.len() > MAX_PAGE_TOKEN_LEN {
        return Err(invalid());
    }
    let bytes = hex::decode(text).map_err(|_| invalid())?;
    // A postcard u8 is its byte: the first byte says which token it is.
    let token: PageTokenWithTenant = match bytes.first() {
        Some(&PAGE_TOKEN_VERSION) => {
            let token: PageToken = postcard::from_bytes(&bytes).map_err(|_| invalid())?;
            PageTokenWithTenant {
                version: token.version,
                query: token.query,
                created_at_ms: token.created_at_ms,
                game_id: token.game_id,
                rules_version: String::new(),
                tenant_id: String::new(),
            }
        }
        Some(&PAGE_TOKEN_WITH_RULES) => {
            let token: PageTokenWithRules = postcard::from_bytes(&bytes).map_err(|_| invalid())?;
            PageTokenWithTenant {
                version: token.version,
                query: token.query,
                created_at_ms: token.created_at_ms,
                game_id: token.game_id,
                rules_version: token.rules_version,
                tenant_id: String::new(),
            }
        }
        Some(&PAGE_TOKEN_WITH_TENANT) => postcard::from_bytes(&bytes).map_err(|_| invalid())?,
        _ => return Err(invalid()),
    };
    if token.query != *query
        || token.rules_version != filters.rules_version
        || token.tenant_id != filters.tenant_id
    {
        return Err(ServiceError::InvalidArgument(
            "page_token belongs to a listing with other filters: send the same game, progress, \
             created_from, created_until, rules_version, tenant_id and order as for the first \
             page (page_size may change)"
                .into(),
        ));
    }
    Ok(IndexPosition {
        created_at_ms: token.created_at_ms,
        game_id: token.game_id,
    })
}

/// Milliseconds since the Unix epoch as a timestamp.
pub(super) fn timestamp(ms: u64) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: (ms / 1000) as i64,
        nanos: ((ms % 1000) * 1_000_000) as i32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_tokens_round_trip_and_stay_with_their_query() {
        let query = QueryKey::of(&GameFilter::default(), ListOrder::NewestFirst);
        let position = IndexPosition {
            created_at_ms: 1_700_000_000_123,
            game_id: "0123456789abcdef0123456789abcdef".into(),
        };
        let none = TokenFilters::default();
        let rules = |rules_version| TokenFilters {
            rules_version,
            tenant_id: "",
        };
        let token = encode_page_token(&query, none, position.clone());
        assert_eq!(
            decode_page_token(&token, &query, none).ok(),
            Some(position.clone())
        );
        assert!(
            token.starts_with("01"),
            "unfiltered listings keep the 1.0 token"
        );

        let other = QueryKey::of(&GameFilter::default(), ListOrder::OldestFirst);
        let refused = decode_page_token(&token, &other, none).expect_err("other query");
        assert!(refused.to_string().contains("other filters"), "{refused}");
        let refused = decode_page_token(&token, &query, rules("nim-1")).expect_err("other rules");
        assert!(refused.to_string().contains("other filters"), "{refused}");

        let filtered = encode_page_token(&query, rules("nim-1"), position.clone());
        assert_eq!(
            decode_page_token(&filtered, &query, rules("nim-1")).ok(),
            Some(position.clone())
        );
        let refused = decode_page_token(&filtered, &query, none).expect_err("unfiltered");
        assert!(refused.to_string().contains("other filters"), "{refused}");

        // A listing naming a tenant: its token holds the tenant (and the rules version).
        let acme = TokenFilters {
            rules_version: "nim-1",
            tenant_id: "acme",
        };
        let named = encode_page_token(&query, acme, position.clone());
        assert!(named.starts_with("03"), "a token of its own version");
        assert_eq!(decode_page_token(&named, &query, acme).ok(), Some(position));
        for other in [
            rules("nim-1"),
            TokenFilters {
                tenant_id: "acme",
                ..none
            },
            TokenFilters {
                tenant_id: "beta",
                ..acme
            },
        ] {
            let refused = decode_page_token(&named, &query, other).expect_err("other tenant");
            assert!(refused.to_string().contains("other filters"), "{refused}");
        }
        let refused = decode_page_token(&filtered, &query, acme).expect_err("no tenant");
        assert!(refused.to_string().contains("other filters"), "{refused}");
        for garbage in ["zz", "00", "", &"ab".repeat(600)] {
            let refused = decode_page_token(garbage, &query, none).expect_err("garbage");
            assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        }
    }
}
