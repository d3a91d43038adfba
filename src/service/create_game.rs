//! `CreateGame`: set up a game from its config and a seed, and hand out one token per seat.
//! The answer also carries who must act first and the public view, so that a client can make the
//! first move without a GetView, and the player metadata stored with the game.
//!
//! On a server started with `--require-operator-for-create` only the operator may create games
//! (see [`super::operator`]): its backend then hands each seat token to its player.
//!
//! With a request id (a tenant's key or the operator token) it is safe to retry: the game's id
//! and its one-time secrets derive from it, and a repeated request answers with the game the first
//! one created (`creation.rs`).

use prost::Message;
use tonic::metadata::MetadataMap;

use super::cache::decode_config;
use super::creation::{CreationRecord, Creator, Secrets, game_id_for, request_hash};
use super::error::{ServiceError, ServiceResult, quote};
use super::players;
use super::seating::{NewSeating, SeatingRecord, new_seating};
use super::tabula::Tabula;
use super::tenants::Caller;
use super::verify::seed_commitment;
use super::webhooks::{GameWebhooks, MAX_GAME_WEBHOOKS, WebhookRecord, new_webhook};
use crate::games::{Seed, Viewer};
use crate::hosting;
use crate::proto::v1 as pb;
use crate::store::{GameMeta, unix_millis};

pub(super) async fn create_game(
    tabula: &Tabula,
    metadata: &MetadataMap,
    mut request: pb::CreateGameRequest,
) -> ServiceResult<pb::CreateGameResponse> {
    let caller = tabula.caller(metadata)?;
    let tenant = match &caller {
        Caller::Tenant(tenant) => {
            tracing::Span::current().record("tenant", tenant.as_str());
            Some(tenant.clone())
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
                    "CreateGame on this server needs a tenant's API key (or the operator token): \
                     send `authorization: Bearer <key>`; this server was started with \
                     --anonymous-create=false"
                        .into(),
                ));
            }
            None
        }
    };
    // A request id makes the call a retry of the first with it, if there was one.
    let retry = retry_of(&caller, &request)?;
    if let Some(retry) = &retry {
        tracing::Span::current().record("game_id", retry.game_id.as_str());
        match tabula.cache.current(&retry.game_id).await {
            Ok(game) => return answer_retry(game, retry),
            Err(ServiceError::NotFound(_)) => {}
            Err(error) => return Err(error),
        }
    }
    let config = request.config.take().ok_or_else(|| {
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
    super::new_game::check_releases(tabula, &config)?;
    let open_seats = state.status().open_seats;
    let players = players::checked(request.players, state.seat_count())?;
    if let Some(player) = players
        .iter()
        .find(|player| open_seats.contains(&player.seat))
    {
        return Err(ServiceError::InvalidArgument(format!(
            "CreateGameRequest.players describes seat {}, which table.open_seats leaves open: \
             an open seat's player describes themselves when they join (JoinGame)",
            player.seat
        )));
    }
    let webhooks = game_webhooks(tabula, tenant.is_some(), request.webhooks)?;

    let (game_id, creation) = match &retry {
        Some(retry) => (
            retry.game_id.clone(),
            Some(CreationRecord::new(&retry.request_hash)?),
        ),
        None => (new_game_id()?, None),
    };
    let secrets = creation.as_ref().map_or(Secrets::Random, Secrets::Derived);
    tracing::Span::current().record("game_id", game_id.as_str());
    let seating = open_seating(
        &game_id,
        &open_seats,
        request.any_seat_invitations,
        request.invitation_ttl_seconds,
        secrets,
    )?;
    let mut seats = Vec::new();
    let mut token_hashes = Vec::new();
    for seat in 0..state.seat_count() {
        let (token, hash) = secrets.seat_token(seat)?;
        // A bot seat gets no token: the hash stored is of a token nobody ever sees, so nothing
        // can act for the seat but the server's bot. Nor does an open seat: its token comes
        // with its join.
        if !state.is_bot_seat(seat) && !open_seats.contains(&seat) {
            seats.push(pb::SeatToken { seat, token });
        }
        token_hashes.push(hash);
    }
    let meta = GameMeta {
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
        seating: seating
            .as_ref()
            .map(|seating| seating.record.clone())
            .unwrap_or_default(),
        signed_commitment: Vec::new(),
        creation: match &creation {
            Some(record) => record.encode()?,
            None => Vec::new(),
        },
    };
    let game = match (
        super::new_game::store_new_game(tabula, meta, state).await,
        &retry,
    ) {
        (Ok(game), _) => game,
        // A call with the same request id created it first, on this replica or another.
        (Err(ServiceError::Store(crate::store::StoreError::AlreadyExists(_))), Some(retry)) => {
            return answer_retry(tabula.cache.current(&retry.game_id).await?, retry);
        }
        (Err(error), _) => return Err(error),
    };
    let (invitations, host_token) = seating
        .map(|seating| (seating.invitations, seating.host_token))
        .unwrap_or_default();
    respond(
        game,
        Created {
            kind,
            rules_version,
            seats,
            seed: &seed,
            webhooks: &webhooks,
            invitations,
            host_token,
            replayed: false,
        },
    )
}

/// What a CreateGame with a request id is the retry of: the game that request creates, and the
/// request's hash.
struct Retry {
    request_id: String,
    /// The tenant whose key asked (`None`: the operator).
    tenant: Option<String>,
    game_id: String,
    request_hash: [u8; 32],
}

/// The retry a CreateGame with a request id makes; `None` without one. Only a tenant's key or the
/// operator token may name one (see `creation.rs`).
fn retry_of(caller: &Caller, request: &pb::CreateGameRequest) -> ServiceResult<Option<Retry>> {
    if request.request_id.is_empty() {
        return Ok(None);
    }
    super::commit::check_request_id(&request.request_id)?;
    let creator = match caller {
        Caller::Tenant(tenant) => Creator::Tenant(tenant),
        Caller::Operator => Creator::Operator,
        Caller::Anonymous => {
            return Err(ServiceError::InvalidArgument(
                "request_id needs a tenant's API key or the operator token (`authorization: \
                 Bearer <key>`): whoever repeated an anonymous request id would receive the \
                 game's seat tokens; create with a key, or leave request_id empty"
                    .into(),
            ));
        }
    };
    Ok(Some(Retry {
        request_id: request.request_id.clone(),
        tenant: match creator {
            Creator::Tenant(tenant) => Some(tenant.to_owned()),
            Creator::Operator => None,
        },
        game_id: game_id_for(creator, &request.request_id),
        request_hash: request_hash(request),
    }))
}

/// The answer to a retry: `game` is the one the first CreateGame with the request id created
/// (its id derives from the caller and the request id, so it is the caller's). The seat tokens,
/// invitations and host token derive from its creation record again; which seats got a token
/// (neither a bot's nor an open one) is read from the game as setup made it, since seats may have
/// been handed to bots or joined since.
fn answer_retry(game: super::cache::Game, retry: &Retry) -> ServiceResult<pb::CreateGameResponse> {
    let meta = game.meta.clone();
    if meta.tenant != retry.tenant {
        // Only if two creators' derived ids collided (128 bits): never another's game.
        return Err(ServiceError::Internal(format!(
            "request_id {} names a game of another creator",
            quote(&retry.request_id)
        )));
    }
    let Some(record) = CreationRecord::of(&meta)? else {
        // Read back from the archive, which keeps no creation record.
        return Err(ServiceError::FailedPrecondition(format!(
            "request_id {} created game {}, which has since ended and left the store \
             (retention archived it): its seat tokens are not handed out again",
            quote(&retry.request_id),
            meta.game_id
        )));
    };
    if !record.repeats(&retry.request_hash) {
        return Err(ServiceError::InvalidArgument(format!(
            "request_id {} already created game {} with a different request: a retry must \
             repeat the request exactly; use a new request id for a new game",
            quote(&retry.request_id),
            meta.game_id
        )));
    }
    let secrets = Secrets::Derived(&record);
    let at_setup = hosting::setup_under(&decode_config(&meta)?, &meta.seed, &meta.rules_version)?;
    let open_seats = at_setup.status().open_seats;
    let mut seats = Vec::new();
    for seat in 0..at_setup.seat_count() {
        if !at_setup.is_bot_seat(seat) && !open_seats.contains(&seat) {
            seats.push(pb::SeatToken {
                seat,
                token: secrets.seat_token(seat)?.0,
            });
        }
    }
    let (invitations, host_token) = match SeatingRecord::of(&meta)? {
        Some(seating) => seating.created_again(&meta.game_id, secrets)?,
        None => (Vec::new(), String::new()),
    };
    let webhooks = GameWebhooks::decode(&meta);
    respond(
        game,
        Created {
            kind: meta.kind,
            rules_version: &meta.rules_version,
            seats,
            seed: &meta.seed,
            webhooks: &webhooks,
            invitations,
            host_token,
            replayed: true,
        },
    )
}

/// The invitations and host token of a game with `open_seats` (none without), their secrets
/// from `secrets`.
fn open_seating(
    game_id: &str,
    open_seats: &[u32],
    any_seat: u32,
    ttl_seconds: u64,
    secrets: Secrets<'_>,
) -> ServiceResult<Option<NewSeating>> {
    if open_seats.is_empty() {
        if any_seat > 0 || ttl_seconds > 0 {
            return Err(ServiceError::InvalidArgument(
                "any_seat_invitations and invitation_ttl_seconds are for a game with open seats: \
                 leave seats open with config.table.open_seats, or leave these unset"
                    .into(),
            ));
        }
        return Ok(None);
    }
    new_seating(
        game_id,
        open_seats,
        any_seat,
        ttl_seconds,
        unix_millis(),
        secrets,
    )
    .map(Some)
}

/// What a CreateGame made, for its answer.
struct Created<'a> {
    kind: pb::GameKind,
    rules_version: &'a str,
    seats: Vec<pb::SeatToken>,
    seed: &'a Seed,
    webhooks: &'a [WebhookRecord],
    invitations: Vec<pb::Invitation>,
    host_token: String,
    /// Whether this answers a retry (`CreateGameResponse.replayed`).
    replayed: bool,
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

/// The answer to a CreateGame whose game `game` was stored.
fn respond(
    game: super::cache::Game,
    created: Created<'_>,
) -> ServiceResult<pb::CreateGameResponse> {
    let Created {
        kind,
        rules_version,
        seats,
        seed,
        webhooks,
        invitations,
        host_token,
        replayed,
    } = created;
    let game_id = game.meta.game_id.clone();

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
        players: players::of_game(&game.meta, &*game.state),
        signed_commitment: super::commitment::signed(&game.meta),
        webhooks: webhooks
            .iter()
            .map(|hook| pb::CreatedGameWebhook {
                webhook_id: hook.id.clone(),
                url: hook.url.clone(),
                secret: hook.secret.clone(),
            })
            .collect(),
        invitations,
        host_token,
        replayed,
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
