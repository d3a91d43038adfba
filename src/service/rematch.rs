//! `Rematch`: play a finished game again (issue #30, item 2).
//!
//! The rematch of game G has an id derived from G's (`rematch_id`), so every replica and every
//! seat that asks finds the same one: the first ask creates it (a creation that loses the race
//! to another finds the winner's), later asks take their seats in it. It has G's game, options
//! and rules version, a new seed (so a new signed commitment), and every player one seat further
//! round the table: bots stay bots, and the first game's players follow their seats.
//!
//! - **With consent** (the default) the rematch is created with every human seat open (`seating`,
//!   open seats), and a seat's ask is its join: a logged table entry, so the rematch starts once
//!   every seat asked. Its invitations have no codes: only the first game's seat tokens redeem
//!   them, each its own seat.
//! - **At once** (`TableConfig.rematch_at_once` of the first game) the rematch starts at its
//!   creation, with every human seat's token already in its meta.
//!
//! In both, a seat's new token is derived from the rematch's secret and the seat (as a join's is
//! from its request id, `seating.rs`), so asking again answers the same seat and token: each old
//! token redeems its new seat once.

use prost::Message;
use tonic::metadata::MetadataMap;

use super::auth::random_bytes;
use super::cache::{Game, decode_config};
use super::error::{ServiceError, ServiceResult};
use super::seating::{InvitationRecord, SeatingRecord, rematch_id};
use super::table_entry::TableEntryResult;
use super::tabula::{Tabula, check_game_id};
use super::{auth, players};
use crate::games::{Seat, Seed};
use crate::proto::v1 as pb;
use crate::store::{GameMeta, PlayerMeta, StoreError, unix_millis};

/// What a seat's ask is logged under (with the seat: `rematch:<seat>`, the same for every ask of
/// one seat, so a repeated ask is a retry), and what its token is derived with.
const ASK_REQUEST_ID: &str = "rematch";
/// How long a rematch waits for the seats that have not asked, as an invitation would.
const OFFER_TTL_MS: u64 = super::seating::DEFAULT_INVITATION_TTL_SECONDS * 1000;

/// The seat a player of seat `seat` takes in the rematch of a game of `seats` seats.
fn moved(seat: Seat, seats: u32) -> Seat {
    (seat + 1) % seats
}

pub(super) async fn rematch(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::RematchRequest,
) -> ServiceResult<pb::RematchResponse> {
    check_game_id(&request.game_id)?;
    let first = tabula.cache.current(&request.game_id).await?;
    let seat = match tabula
        .tenants
        .required_seat(&first.meta, &*first.state, metadata)
    {
        Err(ServiceError::Unauthenticated(_)) => {
            return Err(ServiceError::Unauthenticated(
                "a rematch is asked by a seat: send `authorization: Bearer <seat token>` of the \
                 finished game"
                    .into(),
            ));
        }
        other => other?,
    };
    if !first.is_finished() {
        return Err(ServiceError::FailedPrecondition(format!(
            "game {} has not ended: a rematch follows a finished game",
            request.game_id
        )));
    }
    let id = rematch_id(&request.game_id);
    tracing::Span::current().record("seat", seat);
    let rematch = match tabula.cache.get(&id).await {
        Ok((game, _)) => game,
        Err(ServiceError::NotFound(_)) => create(tabula, &first, &id).await?,
        Err(error) => return Err(error),
    };
    let record = SeatingRecord::of(&rematch.meta)?.ok_or_else(|| {
        ServiceError::Internal(format!("rematch {id} keeps no record of its seats"))
    })?;
    let seats = rematch.state.seat_count();
    let new_seat = moved(seat, seats);
    let token = record.join_token(new_seat, ASK_REQUEST_ID)?;
    if !rematch.state.has_open_seating() {
        // At once: the seat's token is in the rematch's meta already.
        let current = tabula.cache.current(&id).await?;
        return Ok(pb::RematchResponse {
            game_id: id,
            seat: new_seat,
            token,
            version: current.version,
            status: Some(current.state.status()),
        });
    }
    let player = players::of_game(&first.meta, &*first.state)
        .into_iter()
        .find(|player| player.seat == seat)
        .map(|player| pb::Player {
            seat: new_seat,
            ..player
        });
    let join = pb::TableAction {
        kind: Some(pb::table_action::Kind::Join(pb::table_action::Join {
            seat: Some(new_seat),
            invitation: new_seat,
            token_hash: auth::hash_token(&token).to_vec(),
            player,
        })),
    };
    let version = match tabula
        .append_table_entry(&id, None, join, format!("{ASK_REQUEST_ID}:{new_seat}"))
        .await
    {
        Ok(TableEntryResult::Appended { version, .. }) => version,
        Ok(TableEntryResult::LostRace { current }) => {
            return Err(ServiceError::Internal(format!(
                "rematch {id}: an ask that follows the log lost a race at version {current}"
            )));
        }
        Err(ServiceError::Action(crate::games::ActionError::GameOver)) => {
            return Err(ServiceError::FailedPrecondition(format!(
                "the rematch {id} has ended (it was aborted before every seat asked)"
            )));
        }
        Err(error) => return Err(error),
    };
    let current = tabula.cache.at_least(&id, version).await?;
    Ok(pb::RematchResponse {
        game_id: id,
        seat: new_seat,
        token,
        version: current.version,
        status: Some(current.state.status()),
    })
}

/// Creates the rematch of `first` under `id`, or finds the one another ask created meanwhile.
async fn create(tabula: &Tabula, first: &Game, id: &str) -> ServiceResult<Game> {
    let seats = first.state.seat_count();
    let mut config = decode_config(&first.meta)?;
    let mut table = config.table.take().unwrap_or_default();
    let at_once = table.rematch_at_once;
    // The bots' seats as they were at the end (handed over since creation included).
    table.bots = first
        .state
        .status()
        .bots
        .into_iter()
        .map(|bot| pb::BotSeat {
            seat: moved(bot.seat, seats),
            ..bot
        })
        .collect();
    table.bots.sort_by_key(|bot| bot.seat);
    let human: Vec<Seat> = (0..seats)
        .filter(|seat| !table.bots.iter().any(|bot| bot.seat == *seat))
        .collect();
    table.open_seats = if at_once { Vec::new() } else { human.clone() };
    config.table = Some(table);
    super::new_game::check_releases(tabula, &config)?;
    let seed = Seed(random_bytes()?);
    let state = crate::hosting::setup_under(&config, &seed, &first.meta.rules_version)?;
    let now = unix_millis();
    let record = SeatingRecord {
        format: 1,
        host_token_hash: String::new(),
        join_secret: hex::encode(random_bytes()?),
        // One per seat, in seat order: a seat's ask uses its own.
        invitations: (0..seats)
            .map(|seat| InvitationRecord {
                code_hash: String::new(),
                seat: Some(seat),
                expires_at_ms: now.saturating_add(OFFER_TTL_MS),
            })
            .collect(),
        rematch_of: Some(first.meta.game_id.clone()),
    };
    let mut token_hashes = Vec::with_capacity(seats as usize);
    for seat in 0..seats {
        token_hashes.push(if at_once && human.contains(&seat) {
            auth::hash_token(&record.join_token(seat, ASK_REQUEST_ID)?)
        } else {
            // A bot's, or an open seat's until its player asks: a token nobody sees.
            auth::new_token()?.1
        });
    }
    // With consent the players come with their asks; at once (and for bots) they follow their
    // seats now.
    let players: Vec<PlayerMeta> = players::of_game(&first.meta, &*first.state)
        .into_iter()
        .map(|player| PlayerMeta {
            seat: moved(player.seat, seats),
            display_name: player.display_name,
            external_id: player.external_id,
        })
        .filter(|player| at_once || !human.contains(&player.seat))
        .collect::<Vec<_>>();
    let mut players = players;
    players.sort_by_key(|player| player.seat);
    let meta = GameMeta {
        game_id: id.to_owned(),
        kind: first.meta.kind,
        config: config.encode_to_vec(),
        rules_version: first.meta.rules_version.clone(),
        seed,
        token_hashes,
        created_at_ms: now,
        players,
        created_by: crate::RELEASE.to_owned(),
        tenant: first.meta.tenant.clone(),
        webhooks: Vec::new(),
        seating: serde_json::to_vec(&record)
            .map_err(|e| ServiceError::Internal(format!("the rematch's record: {e}")))?,
        signed_commitment: Vec::new(),
        creation: Vec::new(),
    };
    match super::new_game::store_new_game(tabula, meta, state).await {
        Ok(game) => Ok(game),
        // Another ask created it first: that one is the rematch.
        Err(ServiceError::Store(StoreError::AlreadyExists(_))) => {
            Ok(tabula.cache.current(id).await?)
        }
        Err(error) => Err(error),
    }
}
