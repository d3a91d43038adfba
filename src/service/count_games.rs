//! `CountGames` (operator API): how many games the store holds of each kind and rules version,
//! running and finished, so that an operator can tell when no stored game uses a rules version
//! any more and a later release may drop it (docs/compatibility.md, *Rules versions*).
//!
//! Counting reads the same game index as `ListGames`, oldest first, in pages of the largest
//! listing size, and stops after `scan_limit` games: an operator's call holds the replica for a
//! bounded time however many games the store has. A call that stops early returns a page token
//! (the listing's own, bound to the kind filter), and the caller adds up the counts of each call.

use std::collections::BTreeMap;

use super::error::ServiceResult;
use super::listing::{self, MAX_PAGE_SIZE, QueryKey};
use super::tabula::Tabula;
use super::tenants::Caller;
use crate::proto::v1 as pb;
use crate::store::{GameFilter, ListOrder, ListQuery};

/// The games read per call when the request gives no limit, and the most it may ask for.
pub const MAX_SCAN_LIMIT: u32 = 5000;

pub(super) async fn count_games(
    tabula: &Tabula,
    caller: &Caller,
    request: pb::CountGamesRequest,
) -> ServiceResult<pb::CountGamesResponse> {
    let kind = listing::kind_filter(request.game)?;
    let filter = GameFilter {
        kind,
        // A tenant counts its own games only, the operator those of the tenant it names; read
        // from the tenant's own index where the store keeps one.
        tenant: caller.listed_tenant(&request.tenant_id)?,
        ..GameFilter::default()
    };
    let order = ListOrder::OldestFirst;
    let query_key = QueryKey::of(&filter, order);
    let token_filters = listing::TokenFilters {
        tenant_id: &request.tenant_id,
        ..listing::TokenFilters::default()
    };
    let mut after = if request.page_token.is_empty() {
        None
    } else {
        Some(listing::decode_page_token(
            &request.page_token,
            &query_key,
            token_filters,
        )?)
    };
    let scan_limit = match request.scan_limit {
        0 => MAX_SCAN_LIMIT,
        limit => limit.min(MAX_SCAN_LIMIT),
    } as usize;

    // (kind, rules version) → (running, finished); a BTreeMap orders the answer as the proto says.
    let mut counts: BTreeMap<(i32, String), (u64, u64)> = BTreeMap::new();
    let mut counted = 0usize;
    let mut next = None;
    // Index entries still to read in this call: a page's limit counts entries read, matching or
    // not, so a call's work is bounded even when few games match the kind.
    let mut budget = scan_limit;
    while budget > 0 {
        let limit = budget.min(MAX_PAGE_SIZE as usize);
        budget -= limit;
        let page = tabula
            .listing
            .list_games(&ListQuery {
                filter: filter.clone(),
                order,
                after: after.clone(),
                limit,
            })
            .await?;
        // Checked again here, where the counts are made.
        let own = page
            .games
            .iter()
            .filter(|game| caller.may_operate(game.meta.tenant.as_deref()));
        for game in own {
            counted += 1;
            let count = counts
                .entry((game.meta.kind as i32, game.meta.rules_version.clone()))
                .or_default();
            if game.finished_at_ms.is_some() {
                count.1 += 1;
            } else {
                count.0 += 1;
            }
        }
        next = page.next;
        match &next {
            // A page may hold fewer games than asked and still be followed by more (index
            // entries that turned out not to match count against it): go on from its end.
            Some(position) => after = Some(position.clone()),
            None => break,
        }
    }
    Ok(pb::CountGamesResponse {
        counts: counts
            .into_iter()
            .map(
                |((game, rules_version), (running, finished))| pb::GameCount {
                    game,
                    rules_version,
                    running,
                    finished,
                },
            )
            .collect(),
        // At most MAX_SCAN_LIMIT.
        games_counted: counted as u32,
        next_page_token: next
            .map(|position| listing::encode_page_token(&query_key, token_filters, position))
            .unwrap_or_default(),
    })
}
