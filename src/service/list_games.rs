//! `ListGames` (operator API): the games the store holds, a page at a time, filtered by kind,
//! progress and creation time, newest or oldest first. The listing reads the store's game index
//! (see [`crate::store::GameListing::list_games`]); what it reports of each game comes from the
//! game's own meta, never from a cache. Pages continue with page tokens (`listing.rs`).

use prost_types::Timestamp;

use super::error::{ServiceError, ServiceResult};
use super::listing::{
    MAX_PAGE_SIZE, QueryKey, TokenFilters, decode_page_token, encode_page_token, kind_filter,
    timestamp,
};
use super::players;
use super::tabula::Tabula;
use super::tenants::Caller;
use crate::proto::v1 as pb;
use crate::store::{GameFilter, ListOrder, ListQuery, ListedGame};

/// The page size when the request gives none.
pub const DEFAULT_PAGE_SIZE: u32 = 50;

pub(super) async fn list_games(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::ListGamesRequest,
) -> ServiceResult<pb::ListGamesResponse> {
    let filter = GameFilter {
        // A tenant's key lists its own games only; the operator those of the tenant it names.
        // The store reads an index of the tenant's own games where it keeps one.
        tenant: caller.listed_tenant(&request.tenant_id)?,
        ..filter_of(&request)?
    };
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
    let token_filters = TokenFilters {
        rules_version,
        tenant_id: &request.tenant_id,
    };
    let after = if request.page_token.is_empty() {
        None
    } else {
        Some(decode_page_token(
            &request.page_token,
            &query_key,
            token_filters,
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
            // A tenant sees its own games only: the store's listing keeps them alone already;
            // checked again here, where the page is answered.
            .filter(|game| caller.may_operate(game.meta.tenant.as_deref()))
            .map(summary)
            .collect(),
        next_page_token: page
            .next
            .map(|next| encode_page_token(&query_key, token_filters, next))
            .unwrap_or_default(),
    })
}

/// The request's filters, checked.
fn filter_of(request: &pb::ListGamesRequest) -> ServiceResult<GameFilter> {
    let kind = kind_filter(request.game)?;
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
        tenant: None,
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
        tenant_id: meta.tenant.clone().unwrap_or_default(),
    }
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
}
