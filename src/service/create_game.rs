//! `CreateGame`: set up a game from its config and a seed, and hand out one token per seat.
//! The answer also carries who must act first and the public view, so that a client can make the
//! first move without a GetView, and the player metadata stored with the game.
//!
//! On a server started with `--require-operator-for-create` only the operator may create games
//! (see [`super::operator`]): its backend then hands each seat token to its player.

use prost::Message;
use tonic::metadata::MetadataMap;

use super::commit::{Commit, Proposer};
use super::error::{ServiceError, ServiceResult};
use super::tabula::Tabula;
use super::tenants::Caller;
use super::verify::seed_commitment;
use super::webhooks::{GameWebhooks, MAX_GAME_WEBHOOKS, WebhookRecord, new_webhook};
use super::{auth, players};
use crate::games::{Seed, Viewer};
use crate::hosting;
use crate::proto::v1 as pb;
use crate::store::{GameMeta, unix_millis};

pub(super) async fn create_game(
    tabula: &Tabula,
    metadata: &MetadataMap,
    request: pb::CreateGameRequest,
) -> ServiceResult<pb::CreateGameResponse> {
    let tenant = match tabula.caller(metadata)? {
        Caller::Tenant(tenant) => {
            tracing::Span::current().record("tenant", tenant.as_str());
            Some(tenant)
        }
        Caller::Operator => None,
        Caller::Anonymous => {
            if let Some(operator) = &tabula.options.operator
                && operator.required_for_create
            {
                operator.token.authorize(
                    metadata,
                    "CreateGame on this server (started with --require-operator-for-create)",
                )?;
            }
            if !tabula.options.anonymous_create {
                return Err(ServiceError::Unauthenticated(
                    "CreateGame on this server needs a tenant's API key (or the operator token):                      send `authorization: Bearer <key>`; this server was started with                      --anonymous-create=false"
                        .into(),
                ));
            }
            None
        }
    };
    let config = request.config.ok_or_else(|| {
        ServiceError::InvalidArgument("CreateGameRequest.config is required: choose a game".into())
    })?;
    let kind = hosting::kind_of(&config).ok_or_else(|| {
        ServiceError::InvalidArgument(
            "the config names no game: set one of the GameConfig cases".into(),
        )
    })?;
    let rules_version = choose_rules_version(tabula, kind, &request.rules_version)?;
    let seed = choose_seed(tabula, request.seed)?;
    // Setting up validates the config before anything is stored.
    let state = hosting::setup_under(&config, &seed, rules_version)?;
    let players = players::checked(request.players, state.seat_count())?;
    let webhooks = game_webhooks(tabula, tenant.is_some(), request.webhooks)?;

    let game_id = new_game_id()?;
    tracing::Span::current().record("game_id", game_id.as_str());
    let mut seats = Vec::new();
    let mut token_hashes = Vec::new();
    for seat in 0..state.seat_count() {
        let (token, hash) = auth::new_token()?;
        // A bot seat gets no token: the hash stored is of a token nobody ever sees, so nothing
        // can act for the seat but the server's bot.
        if !state.is_bot_seat(seat) {
            seats.push(pb::SeatToken { seat, token });
        }
        token_hashes.push(hash);
    }
    let mut meta = GameMeta {
        game_id: game_id.clone(),
        kind,
        config: config.encode_to_vec(),
        rules_version: rules_version.to_owned(),
        seed,
        token_hashes,
        created_at_ms: unix_millis(),
        players,
        created_by: crate::RELEASE.to_owned(),
        tenant,
        webhooks: GameWebhooks::encode(webhooks.clone()),
        signed_commitment: Vec::new(),
    };
    meta.signed_commitment = super::commitment::sign(&tabula.signing, &meta, state.seat_count());
    let mut state = state;
    state.start_clock(meta.created_at_ms);
    // Indexed before the game exists, so a game never runs unindexed (see the stores).
    if let Some((_, deadline_ms)) = state.deadline() {
        tabula
            .deadlines
            .set_deadline(&meta.game_id, 0, Some(deadline_ms))
            .await?;
    }
    // A tenant's quotas (see `quotas.rs`): its creations per minute, then its running games,
    // which this game joins now and leaves when it finishes (or if it is never stored).
    if let Some(tenant) = meta.tenant.clone() {
        let limits = tabula.tenants.limits(&tenant);
        if let Some(limit) = limits.games_per_minute {
            tabula.quotas.admit_creation(&tenant, limit).await?;
        }
        tabula
            .quotas
            .admit_active_game(
                &tenant,
                &game_id,
                limits.active_games.unwrap_or(u64::MAX),
                |id| async move { tabula.is_running(&id).await },
            )
            .await?;
        let bots: Vec<u32> = (0..state.seat_count())
            .filter(|seat| state.is_bot_seat(*seat))
            .collect();
        let mut admitted = Ok(());
        for seat in &bots {
            admitted = tabula
                .quotas
                .admit_bot_seat(
                    &tenant,
                    &game_id,
                    *seat,
                    limits.bot_seats.unwrap_or(u64::MAX),
                    |id| async move { tabula.is_running(&id).await },
                )
                .await;
            if admitted.is_err() {
                break;
            }
        }
        let created = match admitted {
            Ok(()) => match tabula
                .mark_for_notifications(Some(&tenant), &game_id, 0)
                .await
            {
                Ok(()) => tabula.cache.create(meta, state).await,
                Err(error) => Err(error),
            },
            Err(refused) => Err(refused),
        };
        if created.is_err()
            && let Err(error) = tabula.quotas.game_over(&tenant, &game_id, bots).await
        {
            tracing::warn!(%error, "a game never stored stays counted until the next repair");
        }
        let game = created?;
        crate::metrics::tenant_game_created(&tenant);
        return respond(tabula, game, kind, rules_version, seats, &seed, &webhooks);
    }
    let game = tabula.cache.create(meta, state).await?;
    respond(tabula, game, kind, rules_version, seats, &seed, &webhooks)
}

/// The game's own webhooks (`CreateGameRequest.webhooks`), checked as AddWebhook checks a
/// tenant's: only a tenant's games have notifications.
fn game_webhooks(
    tabula: &Tabula,
    tenant: bool,
    requested: Vec<pb::GameWebhook>,
) -> ServiceResult<Vec<WebhookRecord>> {
    if requested.is_empty() {
        return Ok(Vec::new());
    }
    if !tenant {
        return Err(ServiceError::InvalidArgument(
            "webhooks: only a game created with a tenant's API key has notifications; create it \
             with the key, or leave webhooks empty"
                .into(),
        ));
    }
    if requested.len() > MAX_GAME_WEBHOOKS {
        return Err(ServiceError::InvalidArgument(format!(
            "webhooks: {} asked for; a game has at most {MAX_GAME_WEBHOOKS} of its own",
            requested.len()
        )));
    }
    requested
        .into_iter()
        .enumerate()
        .map(|(n, hook)| {
            new_webhook(
                &tabula.webhook_sender,
                &format!("webhooks[{n}]."),
                hook.url,
                &hook.kinds,
            )
        })
        .collect()
}

/// The answer to a CreateGame whose game `game` was stored; tells the workers of it first.
fn respond(
    tabula: &Tabula,
    game: super::cache::Game,
    kind: pb::GameKind,
    rules_version: &str,
    seats: Vec<pb::SeatToken>,
    seed: &Seed,
    webhooks: &[WebhookRecord],
) -> ServiceResult<pb::CreateGameResponse> {
    let game_id = game.meta.game_id.clone();
    tabula.entry_committed(&Commit {
        game: &game,
        proposer: Proposer::Server,
    });

    Ok(pb::CreateGameResponse {
        game_id,
        game: kind as i32,
        rules_version: rules_version.to_owned(),
        seats,
        seed_commitment: seed_commitment(seed).to_vec(),
        version: game.version,
        status: Some(game.state.status()),
        // The creator holds every token but is no seat: it gets what a spectator may see.
        view: Some(game.state.view(Viewer::Spectator)),
        players: players::to_proto(&game.meta.players),
        signed_commitment: super::commitment::signed(&game.meta),
        webhooks: webhooks
            .iter()
            .map(|hook| pb::CreatedGameWebhook {
                webhook_id: hook.id.clone(),
                url: hook.url.clone(),
                secret: hook.secret.clone(),
            })
            .collect(),
    })
}

/// The rules version a new game of `kind` is played under: the one the creator asked for, if this
/// build plays it; else the operator's pin for new games (`--new-game-rules`), else the newest
/// (docs/compatibility.md, *Rules versions*).
fn choose_rules_version(
    tabula: &Tabula,
    kind: pb::GameKind,
    requested: &str,
) -> ServiceResult<&'static str> {
    let game = hosting::registered(kind)
        .ok_or_else(|| ServiceError::Internal(format!("{kind:?} is not in the registry")))?;
    if requested.is_empty() {
        return Ok(tabula
            .options
            .new_game_rules
            .get(&kind)
            .copied()
            .unwrap_or(game.rules_version));
    }
    game.rules_versions()
        .into_iter()
        .find(|version| *version == requested)
        .ok_or_else(|| {
            ServiceError::InvalidArgument(format!(
                "rules_version {} is not one this server plays for {}: choose one of {} \
                 (ListGameTypes), or none for the default",
                super::error::quote(requested),
                game.game_type.name,
                game.rules_versions().join(", ")
            ))
        })
}

fn choose_seed(tabula: &Tabula, requested: Option<Vec<u8>>) -> ServiceResult<Seed> {
    match requested {
        Some(bytes) => {
            if !tabula.options.allow_client_seed {
                return Err(ServiceError::PermissionDenied(
                    "this server does not accept client-chosen seeds (start it with --allow-client-seed)"
                        .into(),
                ));
            }
            let seed: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
                ServiceError::InvalidArgument(format!(
                    "a seed must be 32 bytes, not {}",
                    bytes.len()
                ))
            })?;
            Ok(Seed(seed))
        }
        None => {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed)
                .map_err(|e| ServiceError::Internal(format!("no OS randomness: {e}")))?;
            Ok(Seed(seed))
        }
    }
}

fn new_game_id() -> ServiceResult<String> {
    let mut id = [0u8; 16];
    getrandom::fill(&mut id)
        .map_err(|e| ServiceError::Internal(format!("no OS randomness: {e}")))?;
    Ok(hex::encode(id))
}
