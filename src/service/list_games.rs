//! `ListGames` (operator API): the games the store holds, a page at a time, filtered by kind,
//! progress and creation time, newest or oldest first. The listing reads the store's game index
//! (see [`crate::store::Store::list_games`]); what it reports of each game comes from the game's
//! own meta, never from a cache.
//!
//! A page token is the place the next page starts (creation time and game id) together with the
//! query it belongs to, so a token sent with other filters is refused rather than silently
//! answering a different listing. It is opaque to clients (hex of a small binary encoding) but
//! not secret: the operator may read it.

use prost_types::Timestamp;
use serde::{Deserialize, Serialize};

use super::error::{ServiceError, ServiceResult};
use super::players;
use super::tabula::Tabula;
use crate::proto::v1 as pb;
use crate::store::{GameFilter, IndexPosition, ListOrder, ListQuery, ListedGame};

/// The page size when the request gives none.
pub const DEFAULT_PAGE_SIZE: u32 = 50;
/// The largest page: larger requests get this many.
pub const MAX_PAGE_SIZE: u32 = 500;
/// The longest page token accepted (the tokens the service makes are far shorter).
const MAX_PAGE_TOKEN_LEN: usize = 1024;
/// The encoding of page tokens; bumped if it changes, so old tokens are refused clearly.
const PAGE_TOKEN_VERSION: u8 = 1;

pub(super) async fn list_games(
    tabula: &Tabula,
    request: pb::ListGamesRequest,
) -> ServiceResult<pb::ListGamesResponse> {
    let filter = filter_of(&request)?;
    let order = match pb::ListGamesOrder::try_from(request.order) {
        Ok(pb::ListGamesOrder::Unspecified | pb::ListGamesOrder::NewestFirst) => {
            ListOrder::NewestFirst
        }
        Ok(pb::ListGamesOrder::OldestFirst) => ListOrder::OldestFirst,
        Err(_) => {
            return Err(ServiceError::InvalidArgument(format!(
                "order {} is not a ListGamesOrder",
                request.order
            )));
        }
    };
    let limit = match request.page_size {
        0 => DEFAULT_PAGE_SIZE,
        size => size.min(MAX_PAGE_SIZE),
    } as usize;
    if request.rules_version.len() > super::verify::MAX_RULES_VERSION_LEN {
        return Err(ServiceError::InvalidArgument(format!(
            "rules_version is {} bytes long; the limit is {} bytes",
            request.rules_version.len(),
            super::verify::MAX_RULES_VERSION_LEN
        )));
    }
    let query_key = QueryKey::of(&filter, order);
    let rules_version = request.rules_version.as_str();
    let after = if request.page_token.is_empty() {
        None
    } else {
        Some(decode_page_token(
            &request.page_token,
            &query_key,
            rules_version,
        )?)
    };
    let page = tabula
        .listing
        .list_games(&ListQuery {
            filter,
            order,
            after,
            limit,
        })
        .await?;
    Ok(pb::ListGamesResponse {
        // The index does not know rules versions: the filter applies to the page read, which may
        // so hold fewer games (the proto says so).
        games: page
            .games
            .iter()
            .filter(|game| rules_version.is_empty() || game.meta.rules_version == rules_version)
            .map(summary)
            .collect(),
        next_page_token: page
            .next
            .map(|next| encode_page_token(&query_key, rules_version, next))
            .unwrap_or_default(),
    })
}

/// The request's filters, checked.
fn filter_of(request: &pb::ListGamesRequest) -> ServiceResult<GameFilter> {
    let kind = match pb::GameKind::try_from(request.game) {
        Ok(pb::GameKind::Unspecified) => None,
        Ok(kind) => Some(kind),
        Err(_) => {
            return Err(ServiceError::InvalidArgument(format!(
                "game {} is not a GameKind this server hosts",
                request.game
            )));
        }
    };
    let finished = match pb::GameProgress::try_from(request.progress) {
        Ok(pb::GameProgress::Unspecified) => None,
        Ok(pb::GameProgress::Running) => Some(false),
        Ok(pb::GameProgress::Finished) => Some(true),
        Err(_) => {
            return Err(ServiceError::InvalidArgument(format!(
                "progress {} is not a GameProgress",
                request.progress
            )));
        }
    };
    let created_from_ms = request
        .created_from
        .as_ref()
        .map(|time| millis("created_from", time))
        .transpose()?;
    let created_until_ms = request
        .created_until
        .as_ref()
        .map(|time| millis("created_until", time))
        .transpose()?;
    if let (Some(from), Some(until)) = (created_from_ms, created_until_ms)
        && from >= until
    {
        return Err(ServiceError::InvalidArgument(
            "created_from must be before created_until (the range includes created_from and \
             excludes created_until)"
                .into(),
        ));
    }
    Ok(GameFilter {
        kind,
        finished,
        created_from_ms,
        created_until_ms,
    })
}

/// A timestamp bound in whole milliseconds since the Unix epoch, rounded up: creation times are
/// whole milliseconds, so a game created at `t` ms is at or after a bound in (t - 1, t] ms.
fn millis(field: &str, time: &Timestamp) -> ServiceResult<u64> {
    let valid = time.seconds >= 0 && (0..1_000_000_000).contains(&time.nanos);
    let seconds = u64::try_from(time.seconds).ok().filter(|_| valid);
    seconds
        .and_then(|seconds| seconds.checked_mul(1000))
        .and_then(|ms| ms.checked_add((time.nanos as u64).div_ceil(1_000_000)))
        .ok_or_else(|| {
            ServiceError::InvalidArgument(format!(
                "{field} must be a valid time at or after 1970-01-01T00:00:00Z"
            ))
        })
}

/// Milliseconds since the Unix epoch as a timestamp.
fn timestamp(ms: u64) -> Timestamp {
    Timestamp {
        seconds: (ms / 1000) as i64,
        nanos: ((ms % 1000) * 1_000_000) as i32,
    }
}

fn summary(game: &ListedGame) -> pb::GameSummary {
    let meta = &game.meta;
    pb::GameSummary {
        game_id: meta.game_id.clone(),
        game: meta.kind as i32,
        rules_version: meta.rules_version.clone(),
        create_time: Some(timestamp(meta.created_at_ms)),
        progress: if game.finished_at_ms.is_some() {
            pb::GameProgress::Finished
        } else {
            pb::GameProgress::Running
        } as i32,
        finish_time: game.finished_at_ms.map(timestamp),
        version: game.version,
        seat_count: meta.token_hashes.len() as u32,
        players: players::to_proto(&meta.players),
        created_by: meta.created_by.clone(),
    }
}

/// What a page token is bound to: the query's filters and order (not its page size, which may
/// change from page to page).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct QueryKey {
    kind: Option<i32>,
    finished: Option<bool>,
    created_from_ms: Option<u64>,
    created_until_ms: Option<u64>,
    oldest_first: bool,
}

impl QueryKey {
    fn of(filter: &GameFilter, order: ListOrder) -> Self {
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

fn encode_page_token(query: &QueryKey, rules_version: &str, next: IndexPosition) -> String {
    // A plain struct always encodes; an empty token (the listing's end) would be the fallback.
    let encoded = if rules_version.is_empty() {
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
            rules_version: rules_version.to_owned(),
        })
    };
    encoded.map(hex::encode).unwrap_or_default()
}

fn decode_page_token(
    text: &str,
    query: &QueryKey,
    rules_version: &str,
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
    let token: PageTokenWithRules = match bytes.first() {
        Some(&PAGE_TOKEN_VERSION) => {
            let token: PageToken = postcard::from_bytes(&bytes).map_err(|_| invalid())?;
            PageTokenWithRules {
                version: token.version,
                query: token.query,
                created_at_ms: token.created_at_ms,
                game_id: token.game_id,
                rules_version: String::new(),
            }
        }
        Some(&PAGE_TOKEN_WITH_RULES) => postcard::from_bytes(&bytes).map_err(|_| invalid())?,
        _ => return Err(invalid()),
    };
    if token.query != *query || token.rules_version != rules_version {
        return Err(ServiceError::InvalidArgument(
            "page_token belongs to a listing with other filters: send the same game, progress, \
             created_from, created_until, rules_version and order as for the first page \
             (page_size may change)"
                .into(),
        ));
    }
    Ok(IndexPosition {
        created_at_ms: token.created_at_ms,
        game_id: token.game_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_bounds_round_up_to_whole_milliseconds() {
        let at = |seconds, nanos| Timestamp { seconds, nanos };
        assert_eq!(millis("t", &at(10, 0)).ok(), Some(10_000));
        assert_eq!(millis("t", &at(10, 1)).ok(), Some(10_001));
        assert_eq!(millis("t", &at(10, 999_999_999)).ok(), Some(11_000));
        assert!(millis("t", &at(-1, 0)).is_err());
        assert!(millis("t", &at(1, -5)).is_err());
        assert!(millis("t", &at(i64::MAX, 0)).is_err());
        assert_eq!(timestamp(10_001), at(10, 1_000_000));
    }

    #[test]
    fn page_tokens_round_trip_and_stay_with_their_query() {
        let query = QueryKey::of(&GameFilter::default(), ListOrder::NewestFirst);
        let position = IndexPosition {
            created_at_ms: 1_700_000_000_123,
            game_id: "0123456789abcdef0123456789abcdef".into(),
        };
        let token = encode_page_token(&query, "", position.clone());
        assert_eq!(
            decode_page_token(&token, &query, "").ok(),
            Some(position.clone())
        );
        assert!(
            token.starts_with("01"),
            "unfiltered listings keep the 1.0 token"
        );

        let other = QueryKey::of(&GameFilter::default(), ListOrder::OldestFirst);
        let refused = decode_page_token(&token, &other, "").expect_err("other query");
        assert!(refused.to_string().contains("other filters"), "{refused}");
        let refused = decode_page_token(&token, &query, "nim-1").expect_err("other rules");
        assert!(refused.to_string().contains("other filters"), "{refused}");

        let filtered = encode_page_token(&query, "nim-1", position.clone());
        assert_eq!(
            decode_page_token(&filtered, &query, "nim-1").ok(),
            Some(position)
        );
        let refused = decode_page_token(&filtered, &query, "").expect_err("unfiltered");
        assert!(refused.to_string().contains("other filters"), "{refused}");
        for garbage in ["zz", "00", "", &"ab".repeat(600)] {
            let refused = decode_page_token(garbage, &query, "").expect_err("garbage");
            assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        }
    }
}
