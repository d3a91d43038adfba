//! Webhooks (README, *Webhooks*): what a tenant's backend is told, how it is signed, and which
//! addresses the server may call ([`WebhookSender`]). The delivery worker is
//! `webhook_delivery.rs`; the tenants' management of their webhooks is `webhook_admin.rs`.
//!
//! A notification is a pure function of one log entry and the states around it
//! ([`notifications_at`]): the log is the outbox, so a notification lost in transit is derived
//! again from the log, with the same event id, by whichever replica delivers it next. Everything a
//! notification says is public information at the table (who must act, the deadline, the outcome),
//! so no redaction applies.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use tokio::sync::Semaphore;

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use super::error::{ServiceError, ServiceResult};
use crate::hosting::GameState;
use crate::proto::v1 as pb;
use crate::store::{GameMeta, unix_millis};

/// The most webhooks a tenant holds.
pub const MAX_WEBHOOKS: usize = 4;
/// The longest webhook URL, in bytes.
pub const MAX_URL_LEN: usize = 2048;

/// What a webhook may be told of (`tabula.v1.WebhookEventKind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A seat must act now.
    TurnStarted,
    /// A seat ran out of time.
    SeatTimedOut,
    /// A seat was handed to a server bot.
    SeatHandedToBot,
    /// The game ended by its rules or by resignations.
    GameFinished,
    /// The operator ended the game.
    GameAborted,
    /// The seat to act has little of its decision's time left.
    ClockRunningLow,
    /// A kind a later build added: kept in the record, never sent by this build.
    #[serde(other)]
    Unknown,
}

impl EventKind {
    /// From the API's enum; `None` for UNSPECIFIED or an unknown number.
    pub fn from_pb(kind: i32) -> Option<EventKind> {
        match pb::WebhookEventKind::try_from(kind).ok()? {
            pb::WebhookEventKind::Unspecified => None,
            pb::WebhookEventKind::TurnStarted => Some(EventKind::TurnStarted),
            pb::WebhookEventKind::SeatTimedOut => Some(EventKind::SeatTimedOut),
            pb::WebhookEventKind::SeatHandedToBot => Some(EventKind::SeatHandedToBot),
            pb::WebhookEventKind::GameFinished => Some(EventKind::GameFinished),
            pb::WebhookEventKind::GameAborted => Some(EventKind::GameAborted),
            pb::WebhookEventKind::ClockRunningLow => Some(EventKind::ClockRunningLow),
        }
    }

    /// The API's enum.
    pub fn to_pb(self) -> pb::WebhookEventKind {
        match self {
            EventKind::TurnStarted => pb::WebhookEventKind::TurnStarted,
            EventKind::SeatTimedOut => pb::WebhookEventKind::SeatTimedOut,
            EventKind::SeatHandedToBot => pb::WebhookEventKind::SeatHandedToBot,
            EventKind::GameFinished => pb::WebhookEventKind::GameFinished,
            EventKind::GameAborted => pb::WebhookEventKind::GameAborted,
            EventKind::ClockRunningLow => pb::WebhookEventKind::ClockRunningLow,
            EventKind::Unknown => pb::WebhookEventKind::Unspecified,
        }
    }

    /// Its name in event ids and bodies.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::TurnStarted => "turn_started",
            EventKind::SeatTimedOut => "seat_timed_out",
            EventKind::SeatHandedToBot => "seat_handed_to_bot",
            EventKind::GameFinished => "game_finished",
            EventKind::GameAborted => "game_aborted",
            EventKind::ClockRunningLow => "clock_running_low",
            EventKind::Unknown => "unknown",
        }
    }
}

/// One webhook of a tenant, as its record keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookRecord {
    /// 16 hex digits.
    pub id: String,
    /// Where notifications are POSTed.
    pub url: String,
    /// The HMAC key (`whsec_…`): the server must sign with it, so it is kept as it is (README,
    /// *Tenants*, the secrets table).
    pub secret: String,
    /// What it is told of.
    pub kinds: Vec<EventKind>,
    /// When it was added (ms since the Unix epoch).
    pub created_at_ms: u64,
}

impl WebhookRecord {
    /// The API's description: no secret.
    pub fn to_pb(&self) -> pb::Webhook {
        pb::Webhook {
            webhook_id: self.id.clone(),
            url: self.url.clone(),
            kinds: self
                .kinds
                .iter()
                .filter(|kind| **kind != EventKind::Unknown)
                .map(|kind| kind.to_pb() as i32)
                .collect(),
            create_time: Some(super::listing::timestamp(self.created_at_ms)),
        }
    }

    /// Whether it wants `kind`.
    pub fn wants(&self, kind: EventKind) -> bool {
        self.kinds.contains(&kind)
    }
}

/// The most webhooks a game has of its own (`CreateGameRequest.webhooks`).
pub const MAX_GAME_WEBHOOKS: usize = 2;

/// A game's own webhooks as its meta keeps them (`GameMeta::webhooks`, JSON).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameWebhooks {
    /// The record's format ([`NOTIFICATION_FORMAT`]'s sibling: 1 so far).
    #[serde(default = "first_format")]
    pub format: u32,
    /// The webhooks, as a tenant's are kept.
    pub webhooks: Vec<WebhookRecord>,
}

impl GameWebhooks {
    /// The meta's encoding: empty for none, so a game without any stores nothing.
    pub fn encode(webhooks: Vec<WebhookRecord>) -> Vec<u8> {
        if webhooks.is_empty() {
            return Vec::new();
        }
        serde_json::to_vec(&GameWebhooks {
            format: 1,
            webhooks,
        })
        .unwrap_or_default()
    }

    /// The webhooks of a game's meta. A record that does not decode (a later format this build
    /// cannot read) counts as none: logged, never fatal to the game.
    pub fn decode(meta: &GameMeta) -> Vec<WebhookRecord> {
        if meta.webhooks.is_empty() {
            return Vec::new();
        }
        match serde_json::from_slice::<GameWebhooks>(&meta.webhooks) {
            Ok(record) => record.webhooks,
            Err(error) => {
                tracing::warn!(game_id = %meta.game_id, %error, "the game's own webhooks do not decode; skipped");
                Vec::new()
            }
        }
    }
}

/// A dead letter as the store keeps it (JSON).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DeadRecord {
    /// The record's format ([`NOTIFICATION_FORMAT`]); absent: 1.
    #[serde(default = "first_format")]
    pub format: u32,
    /// The webhook it was for.
    pub webhook_id: String,
    /// The notification's event id.
    pub event_id: String,
    /// How many times it was sent.
    pub attempts: u32,
    /// Why the last attempt failed.
    pub last_error: String,
    /// The JSON body, as sent.
    pub body: String,
}

/// A new webhook's id and secret.
pub fn new_webhook_credentials() -> ServiceResult<(String, String)> {
    let mut bytes = [0u8; 40];
    getrandom::fill(&mut bytes)
        .map_err(|error| ServiceError::Internal(format!("no randomness: {error}")))?;
    Ok((
        hex::encode(&bytes[..8]),
        format!("whsec_{}", hex::encode(&bytes[8..])),
    ))
}

/// A new webhook (its id and secret drawn now) calling `url` with `kinds`, once both are checked;
/// `field` prefixes the request fields named in errors (`webhooks[0].` at creation).
pub fn new_webhook(
    sender: &WebhookSender,
    field: &str,
    url: String,
    kinds: &[i32],
) -> ServiceResult<WebhookRecord> {
    if let Some(why) = sender.refuse(&url) {
        return Err(ServiceError::InvalidArgument(format!(
            "{field}url {}: {why}",
            super::error::bounded(&url)
        )));
    }
    let mut parsed_kinds = Vec::new();
    for kind in kinds {
        let parsed = EventKind::from_pb(*kind).ok_or_else(|| {
            ServiceError::InvalidArgument(format!(
                "{field}kinds: {kind} is not a WebhookEventKind the server sends"
            ))
        })?;
        if !parsed_kinds.contains(&parsed) {
            parsed_kinds.push(parsed);
        }
    }
    if parsed_kinds.is_empty() {
        return Err(ServiceError::InvalidArgument(format!(
            "{field}kinds is empty: name the WebhookEventKinds the webhook wants"
        )));
    }
    let (id, secret) = new_webhook_credentials()?;
    Ok(WebhookRecord {
        id,
        url,
        secret,
        kinds: parsed_kinds,
        created_at_ms: unix_millis(),
    })
}

/// A seat a notification concerns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeatRef {
    /// The seat.
    pub seat: u32,
    /// Its `Player.external_id` (empty when the creator gave none).
    pub external_id: String,
}

/// The format of notification bodies and dead letter records this build writes.
pub const NOTIFICATION_FORMAT: u32 = 1;

fn first_format() -> u32 {
    1
}

/// One notification: the JSON body a webhook receives.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    /// The body's format ([`NOTIFICATION_FORMAT`]): fields are only added within a format.
    #[serde(default = "first_format")]
    pub format: u32,
    /// `<game id>:<version>:<kind>`: the same on every attempt and from every replica, so a
    /// receiver drops duplicates by it.
    pub event_id: String,
    /// What happened.
    pub kind: EventKind,
    /// The tenant owning the game.
    pub tenant_id: String,
    /// The game.
    pub game_id: String,
    /// The game's name (`ListGameTypes`).
    pub game: String,
    /// The version it happened at.
    pub version: u64,
    /// When the entry of that version was logged (the server's clock, ms since the Unix epoch;
    /// for version 0, when the game was created): a receiver on a synchronised clock sees how
    /// long the notification took.
    pub logged_at_ms: u64,
    /// The seats it concerns (the seat to act, timed out or handed over; every seat at the end).
    pub seats: Vec<SeatRef>,
    /// When the seat to act runs out of time (ms since the Unix epoch), on a clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline_ms: Option<u64>,
    /// Final scores per seat, when the rules ended the game.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<i64>,
    /// The winners, at the end.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub winners: Vec<u32>,
    /// The operator's reason, for an abort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
}

/// `seat` and the external id of its player now: a joiner's too (JoinGame).
fn seat_ref(meta: &GameMeta, state: &dyn GameState, seat: u32) -> SeatRef {
    SeatRef {
        seat,
        external_id: super::players::external_id_of(meta, state, seat),
    }
}

/// What happened at `version` of the game `meta` describes: `after` is the state at `version`,
/// `before` the state at `version - 1` (`None` at creation, version 0) and `action` the entry that
/// led from one to the other.
pub fn notifications_at(
    meta: &GameMeta,
    before: Option<&dyn GameState>,
    after: &dyn GameState,
    action: Option<&pb::Action>,
    version: u64,
    logged_at_ms: u64,
) -> Vec<Notification> {
    let make = |kind: EventKind, seats: Vec<SeatRef>| Notification {
        logged_at_ms,
        seats,
        ..notification_base(meta, kind, version)
    };
    let mut notifications = Vec::new();
    let table = match action.and_then(|action| action.game.as_ref()) {
        Some(pb::action::Game::Table(table)) => table.kind.as_ref(),
        _ => None,
    };
    match table {
        Some(pb::table_action::Kind::Timeout(timeout)) => notifications.push(make(
            EventKind::SeatTimedOut,
            vec![seat_ref(meta, after, timeout.seat)],
        )),
        Some(pb::table_action::Kind::HandToBot(hand)) => {
            if let Some(bot) = &hand.bot {
                notifications.push(make(
                    EventKind::SeatHandedToBot,
                    vec![seat_ref(meta, after, bot.seat)],
                ));
            }
        }
        _ => {}
    }
    let status = after.status();
    if status.finished {
        let every_seat = (0..after.seat_count())
            .map(|seat| seat_ref(meta, after, seat))
            .collect();
        if status.ending == pb::GameEnding::Aborted as i32 {
            let mut aborted = make(EventKind::GameAborted, every_seat);
            aborted.abort_reason = Some(status.abort_reason.clone());
            notifications.push(aborted);
        } else {
            let mut finished = make(EventKind::GameFinished, every_seat);
            finished.scores = status.scores.clone();
            finished.winners = status.winners.clone();
            notifications.push(finished);
        }
    } else if let Some(seat) = status.to_act {
        // A turn starts when the seat to act changes: a seat that goes on acting (drawing, then
        // offering) is not told again of the turn it is playing.
        let was_to_act = before.and_then(|before| before.status().to_act);
        if was_to_act != Some(seat) && !after.is_bot_seat(seat) {
            let mut turn = make(EventKind::TurnStarted, vec![seat_ref(meta, after, seat)]);
            turn.deadline_ms = after
                .deadline()
                .filter(|(to_act, _)| *to_act == seat)
                .map(|(_, deadline)| deadline);
            notifications.push(turn);
        }
    }
    notifications
}

/// A decision's clock running low: when, and what to say then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockLow {
    /// When the seat has `percent` of its decision's time left.
    pub at_ms: u64,
    /// When it runs out: after that the sweeper's timeout, not this, is the news.
    pub deadline_ms: u64,
    /// The notification (`clock_running_low`) to send from `at_ms` until `deadline_ms`.
    pub notification: Notification,
}

/// The `clock_running_low` notification of the decision the seat to act is in, if the game is on
/// a clock and a person (not a bot) must act: due once `percent` of the decision's time is left.
/// `decision_version` is the version at which the decision started: the event id carries it, so
/// every replica and every retry name the same decision alike, and the next decision (even the
/// same seat's) is another event.
pub fn clock_running_low(
    meta: &GameMeta,
    state: &dyn GameState,
    decision_version: u64,
    percent: u64,
) -> Option<ClockLow> {
    let (seat, deadline_ms) = state.deadline()?;
    let started_ms = state.decision_started_ms()?;
    if state.is_bot_seat(seat) || state.status().finished {
        return None;
    }
    let allowance = deadline_ms.saturating_sub(started_ms);
    let at_ms = deadline_ms.saturating_sub(allowance.saturating_mul(percent.min(100)) / 100);
    let mut notification = notification_base(meta, EventKind::ClockRunningLow, decision_version);
    notification.logged_at_ms = at_ms;
    notification.seats = vec![seat_ref(meta, state, seat)];
    notification.deadline_ms = Some(deadline_ms);
    Some(ClockLow {
        at_ms,
        deadline_ms,
        notification,
    })
}

/// A notification of `kind` at `version` of the game `meta` describes, with nothing said yet.
fn notification_base(meta: &GameMeta, kind: EventKind, version: u64) -> Notification {
    Notification {
        format: NOTIFICATION_FORMAT,
        event_id: format!("{}:{version}:{}", meta.game_id, kind.name()),
        kind,
        tenant_id: meta.tenant.clone().unwrap_or_default(),
        game_id: meta.game_id.clone(),
        game: crate::hosting::registered(meta.kind)
            .map(|registered| registered.game_type.name.to_owned())
            .unwrap_or_default(),
        version,
        logged_at_ms: 0,
        seats: Vec::new(),
        deadline_ms: None,
        scores: Vec::new(),
        winners: Vec::new(),
        abort_reason: None,
    }
}

/// The `Tabula-Signature` header of `body` sent at `timestamp` (Unix seconds): `t=<timestamp>,
/// v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`, as Stripe signs. A receiver recomputes it with
/// the secret, compares in constant time, and refuses a timestamp too far from its clock (a
/// replayed request carries an old one, and changing it breaks the signature).
pub fn signature(secret: &str, timestamp: u64, body: &[u8]) -> String {
    // HMAC takes a key of any length.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!(
        "t={timestamp},v1={}",
        hex::encode(mac.finalize().into_bytes())
    )
}

/// Why the server may not call `url`; `None` when it may. Checked when a webhook is added (the
/// URL's form and a literal address) and again before each call (every address its host resolves
/// to), so a name that later resolves somewhere private is refused too.
pub fn refuse_url(url: &str, allow_private: bool) -> Option<String> {
    if url.len() > MAX_URL_LEN {
        return Some(format!(
            "the URL is {} bytes long; the limit is {MAX_URL_LEN}",
            url.len()
        ));
    }
    let parsed = match reqwest::Url::parse(url) {
        Ok(parsed) => parsed,
        Err(error) => return Some(format!("not a URL: {error}")),
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return Some(format!(
            "scheme {} is not http or https",
            super::error::bounded(parsed.scheme())
        ));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Some(
            "a URL with credentials in it is refused: sign requests with the secret".into(),
        );
    }
    match parsed.host() {
        None => Some("the URL has no host".into()),
        Some(url::Host::Ipv4(ip)) => refuse_address(IpAddr::V4(ip), allow_private),
        Some(url::Host::Ipv6(ip)) => refuse_address(IpAddr::V6(ip), allow_private),
        Some(url::Host::Domain(domain)) => (!allow_private
            && (domain == "localhost" || domain.ends_with(".localhost")))
        .then(|| "localhost is refused (a loopback address)".to_owned()),
    }
}

/// Why the server may not call address `ip`; `None` when it may.
pub fn refuse_address(ip: IpAddr, allow_private: bool) -> Option<String> {
    if allow_private {
        return None;
    }
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    let private = match ip {
        IpAddr::V4(v4) => {
            v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                // 100.64.0.0/10, carrier-grade NAT: inside a provider's network.
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xC0) == 64)
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // fc00::/7 unique local, fe80::/10 link-local.
                || (v6.segments()[0] & 0xFE00) == 0xFC00
                || (v6.segments()[0] & 0xFFC0) == 0xFE80
        }
    };
    private.then(|| format!("address {ip} is private, loopback or link-local"))
}

/// The most of a receiver's answer a replica reads: the status is what counts.
pub const MAX_RESPONSE_BYTES: usize = 4096;

/// How a replica calls webhooks (the delivery worker, and redeliveries of dead letters): one HTTP
/// client that follows no redirect, gives every call a deadline, reads at most
/// [`MAX_RESPONSE_BYTES`] of an answer, resolves names through [`PublicAddresses`], and keeps at
/// most `per_endpoint` calls in flight to one webhook.
pub struct WebhookSender {
    /// `Err` when no client could be built (no TLS backend): every call then fails, saying so.
    client: Result<reqwest::Client, String>,
    allow_private: bool,
    per_endpoint: usize,
    /// Each webhook's calls in flight from this replica.
    endpoints: Mutex<HashMap<String, Arc<Semaphore>>>,
}

/// A DNS resolver that drops the addresses the server may not call, so a name cannot be pointed
/// inside the network after the URL was checked.
struct PublicAddresses {
    allow_private: bool,
}

impl reqwest::dns::Resolve for PublicAddresses {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let resolved: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = resolved
                .into_iter()
                .filter(|address| refuse_address(address.ip(), allow_private).is_none())
                .collect();
            if allowed.is_empty() {
                return Err(format!(
                    "{} resolves to no address the server may call (private, loopback or \
                     link-local addresses are refused)",
                    super::error::bounded(&host)
                )
                .into());
            }
            let addresses: reqwest::dns::Addrs = Box::new(allowed.into_iter());
            Ok(addresses)
        })
    }
}

impl WebhookSender {
    /// A sender that calls private addresses only if `allow_private`, gives each call
    /// `timeout`, and keeps at most `per_endpoint` calls to one webhook in flight.
    pub fn new(allow_private: bool, timeout: std::time::Duration, per_endpoint: usize) -> Self {
        // The TLS provider the archive's client uses too (rustls with ring).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .connect_timeout(timeout)
            .user_agent(format!("tabula/{}", crate::RELEASE))
            .dns_resolver(Arc::new(PublicAddresses { allow_private }))
            .build()
            .map_err(|error| format!("no HTTP client for webhooks: {error}"));
        WebhookSender {
            client,
            allow_private,
            per_endpoint: per_endpoint.max(1),
            endpoints: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the server may call `url` (see [`refuse_url`]).
    pub fn refuse(&self, url: &str) -> Option<String> {
        refuse_url(url, self.allow_private)
    }

    /// POSTs `body` to `hook`, signed now: `Ok` for a 2xx answer, else why not (bounded).
    pub async fn post(
        &self,
        hook: &WebhookRecord,
        event_id: &str,
        body: &str,
    ) -> Result<(), String> {
        if let Some(why) = self.refuse(&hook.url) {
            return Err(why);
        }
        let client = self.client.as_ref().map_err(Clone::clone)?;
        let endpoint = {
            let mut endpoints = self.endpoints.lock();
            endpoints
                .entry(hook.id.clone())
                .or_insert_with(|| Arc::new(Semaphore::new(self.per_endpoint)))
                .clone()
        };
        let _permit = endpoint
            .acquire_owned()
            .await
            .map_err(|_| "the replica is stopping".to_owned())?;
        let timestamp = unix_millis() / 1000;
        let mut response = client
            .post(&hook.url)
            .header("content-type", "application/json")
            .header("tabula-event-id", event_id)
            .header(
                "tabula-signature",
                signature(&hook.secret, timestamp, body.as_bytes()),
            )
            .body(body.to_owned())
            .send()
            .await
            .map_err(|error| transport_error(&error))?;
        let status = response.status();
        // Read a little of the answer (so the connection can be reused), never more.
        let mut read = 0;
        while read < MAX_RESPONSE_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                _ => break,
            }
        }
        if status.is_success() {
            Ok(())
        } else {
            Err(format!("status {}", status.as_u16()))
        }
    }
}

/// A transport error with its causes, bounded.
fn transport_error(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.chars().take(256).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_follow_the_documented_recipe() {
        // Recomputed by hand: HMAC-SHA256("whsec_k", "1700000000.{}").
        let signed = signature("whsec_k", 1_700_000_000, b"{}");
        let mut mac = Hmac::<Sha256>::new_from_slice(b"whsec_k").unwrap();
        mac.update(b"1700000000.{}");
        let expected = hex::encode(mac.finalize().into_bytes());
        assert_eq!(signed, format!("t=1700000000,v1={expected}"));
        assert_ne!(signature("whsec_k", 1_700_000_001, b"{}"), signed);
        assert_ne!(signature("whsec_x", 1_700_000_000, b"{}"), signed);
    }

    #[test]
    fn only_public_http_addresses_are_called_unless_allowed() {
        for refused in [
            "ftp://example.com/x",
            "http://127.0.0.1/x",
            "http://10.1.2.3/",
            "http://192.168.0.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://[::1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[fe80::1]/",
            "http://localhost:8080/",
            "http://100.64.0.1/",
            "https://user:pw@example.com/",
            "not a url",
        ] {
            assert!(refuse_url(refused, false).is_some(), "{refused}");
        }
        for allowed in ["https://example.com/hook", "http://93.184.216.34:8080/x"] {
            assert_eq!(refuse_url(allowed, false), None, "{allowed}");
        }
        assert_eq!(refuse_url("http://127.0.0.1:9/x", true), None);
        assert!(refuse_url(&format!("https://e.com/{}", "a".repeat(MAX_URL_LEN)), true).is_some());
    }

    fn meta() -> GameMeta {
        GameMeta {
            game_id: "g1".into(),
            kind: pb::GameKind::MediciVsStrozzi,
            config: Vec::new(),
            rules_version: String::new(),
            seed: crate::games::Seed([1; 32]),
            token_hashes: Vec::new(),
            created_at_ms: 0,
            players: vec![crate::store::PlayerMeta {
                seat: 1,
                display_name: String::new(),
                external_id: "u-1".into(),
            }],
            created_by: String::new(),
            tenant: Some("alpha".into()),
            webhooks: Vec::new(),
            seating: Vec::new(),
            signed_commitment: Vec::new(),
            creation: Vec::new(),
        }
    }

    fn table(kind: pb::table_action::Kind) -> pb::Action {
        pb::Action {
            game: Some(pb::action::Game::Table(pb::TableAction {
                kind: Some(kind),
            })),
        }
    }

    #[test]
    fn a_turn_is_told_when_the_seat_to_act_changes_and_the_end_once() {
        let config = pb::GameConfig {
            table: None,
            game: Some(pb::game_config::Game::MediciVsStrozzi(Default::default())),
        };
        let meta = meta();
        let start = crate::hosting::setup(&config, &crate::games::Seed([3; 32])).unwrap();
        let opening = notifications_at(&meta, None, &*start, None, 0, 0);
        assert_eq!(opening.len(), 1);
        assert_eq!(opening[0].event_id, "g1:0:turn_started");
        let first = start.status().to_act.unwrap();
        assert_eq!(opening[0].seats[0].seat, first);
        // The seat to act goes on acting: no new turn.
        let mut state = start.clone_box();
        let legal = state.legal_actions(crate::games::Viewer::Seat(first));
        let draw = legal[0].action.clone().unwrap();
        state.apply(first, &draw).unwrap();
        if state.status().to_act == Some(first) {
            assert!(notifications_at(&meta, Some(&*start), &*state, Some(&draw), 1, 0).is_empty());
        }
        // A hand-over, then an abort: each told, the abort to every seat with its reason.
        let before = state.clone_box();
        let other = 1 - first;
        let hand = table(pb::table_action::Kind::HandToBot(
            pb::table_action::HandToBot {
                bot: Some(pb::BotSeat {
                    seat: other,
                    kind: pb::BotKind::Random as i32,
                    ..Default::default()
                }),
            },
        ));
        state.apply(crate::hosting::SYSTEM_SEAT, &hand).unwrap();
        let told = notifications_at(&meta, Some(&*before), &*state, Some(&hand), 2, 0);
        assert_eq!(told[0].kind, EventKind::SeatHandedToBot);
        assert_eq!(told[0].seats[0].seat, other);
        let before = state.clone_box();
        let abort = table(pb::table_action::Kind::Abort(pb::table_action::Abort {
            reason: "cheating".into(),
        }));
        state.apply(crate::hosting::SYSTEM_SEAT, &abort).unwrap();
        let told = notifications_at(&meta, Some(&*before), &*state, Some(&abort), 3, 0);
        assert_eq!(told.len(), 1);
        assert_eq!(told[0].event_id, "g1:3:game_aborted");
        assert_eq!(told[0].abort_reason.as_deref(), Some("cheating"));
        assert_eq!(told[0].seats.len(), 2);
        assert_eq!(told[0].seats[1].external_id, "u-1");
        assert_eq!(told[0].tenant_id, "alpha");
    }

    #[test]
    fn kinds_of_a_later_build_are_kept_but_never_sent() {
        let kinds: Vec<EventKind> =
            serde_json::from_str(r#"["turn_started", "clock_low"]"#).unwrap();
        assert_eq!(kinds, [EventKind::TurnStarted, EventKind::Unknown]);
    }
}
