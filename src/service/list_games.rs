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
    let query_key = QueryKey::of(&filter, order);
    let after = if request.page_token.is_empty() {
        None
    } else {
        Some(decode_page_token(&request.page_token, &query_key)?)
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
        games: page.games.iter().map(summary).collect(),
        next_page_token: page
            .next
            .map(|next| encode_page_token(&query_key, next))
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

fn encode_page_token(query: &QueryKey, next: IndexPosition) -> String {
    let token = PageToken {
        version: PAGE_TOKEN_VERSION,
        query: query.clone(),
        created_at_ms: next.created_at_ms,
        game_id: next.game_id,
    };
    // A plain struct always encodes; an empty token (the listing's end) would be the fallback.
    postcard::to_allocvec(&token)
        .map(hex::encode)
        .unwrap_or_default()
}

fn decode_page_token(text: &str, query: &QueryKey) -> ServiceResult<IndexPosition> {
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
    let token: PageToken = postcard::from_bytes(&bytes).map_err(|_| invalid())?;
    if token.version != PAGE_TOKEN_VERSION {
        return Err(invalid());
    }
    if token.query != *query {
        return Err(ServiceError::InvalidArgument(
            "page_token belongs to a listing with other filters: send the same game, progress, \
             created_from, created_until and order as for the first page (page_size may change)"
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
        let token = encode_page_token(&query, position.clone());
        assert_eq!(decode_page_token(&token, &query).ok(), Some(position));

        let other = QueryKey::of(&GameFilter::default(), ListOrder::OldestFirst);
        let refused = decode_page_token(&token, &other).expect_err("other query");
        assert!(refused.to_string().contains("other filters"), "{refused}");
        for garbage in ["zz", "00", "", &"ab".repeat(600)] {
            let refused = decode_page_token(garbage, &query).expect_err("garbage");
            assert_eq!(refused.code(), tonic::Code::InvalidArgument);
        }
    }
}
