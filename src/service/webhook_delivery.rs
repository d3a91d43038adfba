//! Webhook delivery: every replica's worker that finds games with notifications to deliver
//! (the outbox, `crate::store::WebhookOutbox`), derives them from the log (`webhooks.rs`) and
//! POSTs them, signed, to the tenant's webhooks.
//!
//! - **At least once, from any replica.** A game is claimed with a lease; the worker delivers each
//!   webhook's notifications from its cursor in the game (the last version whose notifications
//!   it has all had) in version order, writes the cursors it moved (once per pass, see
//!   `CursorMoves`), then settles the game. A replica that dies mid-delivery leaves its claim to
//!   lapse: another takes the game over and starts from the cursors, so a notification may
//!   arrive twice (same event id), never not at all.
//! - **Backoff.** A failed call (no answer within the deadline, or a status other than 2xx) is
//!   retried after a delay that doubles from `first_backoff` up to `max_backoff`, with jitter; the
//!   game's later notifications for that webhook wait behind it (order per game). After
//!   `max_attempts` the notification becomes a dead letter the tenant can list and redeliver, and
//!   the cursor moves past it.
//! - **Egress safety.** Only http(s); private, loopback and link-local addresses are refused
//!   (unless `--webhook-allow-private`) when the webhook is added and at every call
//!   ([`super::webhooks::WebhookSender`]).

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{Notify, Semaphore};

use super::cache::Game;
use super::error::{ServiceError, ServiceResult};
use super::observer::{Commit, EntryObserver};
use super::options::WebhookOptions;
use super::stop::StopSignal;
use super::tabula::Tabula;
use super::webhook_forgetting::{STALE_MARK, SWEEP_EVERY, attempts_kept, forget_untouched};
use super::webhooks::{
    DeadRecord, EventKind, GameWebhooks, Notification, WebhookRecord, clock_running_low,
};
use crate::outage::{OUTAGE_REPORT_EVERY, Outage, OutageReport};
use crate::store::{DeadLetter, PendingNotifications, Settled, unix_millis};

/// The most dead letters a tenant keeps; older ones are dropped.
pub const MAX_DEAD_LETTERS: usize = 1000;
/// The events a tenant's stream keeps (about: the store trims in blocks).
pub(super) const EVENTS_KEPT: usize = 10_000;
/// Games a replica delivers at once.
const GAMES_IN_FLIGHT: usize = 64;
/// The cursor (in the game's cursors) holding the version at which the seat to act's current
/// decision started: `clock_running_low` names the decision by it.
const DECISION_CURSOR: &str = "~decision";

/// The events a pass appends to the tenant's event stream per store call, at most.
const EVENTS_PER_CALL: usize = 64;

/// The cursor moves a pass writes at once, at the latest.
const CURSOR_MOVES_PER_WRITE: usize = 32;

/// The cursors a delivery pass has moved and not yet written (cursor id → version, the highest
/// per cursor). They are written together, once per pass (and every [`CURSOR_MOVES_PER_WRITE`]
/// sends in a long one), rather than after each notification: a move and its notifications cost
/// one store write, not one per target and notification. What it risks is what delivery already
/// allows: a replica that dies mid-pass leaves the pass's moves unwritten, so the replica that
/// takes the game over sends those notifications again, with the same event ids.
#[derive(Debug, Default)]
struct CursorMoves {
    moves: Vec<(String, u64)>,
    recorded: usize,
}

impl CursorMoves {
    /// Cursor `id` has reached `version` (a cursor never moves back).
    fn record(&mut self, id: &str, version: u64) {
        self.recorded += 1;
        match self.moves.iter_mut().find(|(cursor, _)| cursor == id) {
            Some((_, at)) => *at = (*at).max(version),
            None => self.moves.push((id.to_owned(), version)),
        }
    }
}

/// One replica's webhook deliveries.
pub(super) struct WebhookWorker {
    tabula: Arc<Tabula>,
    options: WebhookOptions,
    /// Woken after each entry this replica commits in a game with webhooks.
    wake: Notify,
    /// Games being delivered by this replica.
    in_flight: Arc<Semaphore>,
    /// Failed attempts so far, by `<webhook id>/<event id>` (this replica's count: a takeover
    /// counts again), with when the last one failed (see [`forget_untouched`]).
    attempts: Mutex<HashMap<String, (u32, Instant)>>,
    /// When this replica first saw a game's mark ahead of its log.
    stale_since: Mutex<HashMap<String, Instant>>,
    /// Games this replica committed entries to since its last pass: claimed one by one at once,
    /// without scanning every shard.
    committed: Mutex<std::collections::HashSet<String>>,
}

/// The most games remembered for a claim of their own; past it, the next scan finds them.
const COMMITTED_REMEMBERED: usize = 10_000;

impl WebhookWorker {
    pub(super) fn new(tabula: &Arc<Tabula>) -> Arc<Self> {
        Arc::new(WebhookWorker {
            tabula: tabula.clone(),
            options: tabula.options().webhooks.clone(),
            wake: Notify::new(),
            in_flight: Arc::new(Semaphore::new(GAMES_IN_FLIGHT)),
            attempts: Mutex::new(HashMap::new()),
            stale_since: Mutex::new(HashMap::new()),
            committed: Mutex::new(std::collections::HashSet::new()),
        })
    }

    /// Claims due games and delivers them, until told to stop.
    pub(super) async fn run(self: Arc<Self>, mut stop: StopSignal) {
        // While the store is down every claim fails: log the failing streak's changes, not each
        // pass (see `crate::outage`).
        let mut outage = Outage::default();
        let mut last_scan = Instant::now();
        let mut last_sweep = Instant::now();
        while stop.pause_or(self.options.poll, &self.wake).await {
            // Before anything that may skip the pass: the last tenant removed, or every slot
            // busy, must not keep what was remembered for them.
            if last_sweep.elapsed() >= SWEEP_EVERY {
                last_sweep = Instant::now();
                self.forget_untouched(last_sweep);
            }
            let free = self.in_flight.available_permits();
            // Without tenants no game is marked: a deployment that has none pays no claims.
            if free == 0 || !self.tabula.tenants.any() {
                continue;
            }
            let now = unix_millis();
            let lease = self.options.lease.as_millis() as u64;
            // The games this replica just committed to, each claimed alone (one small script);
            // every shard is scanned only once per poll interval (for the other replicas' games,
            // retries and takeovers).
            // As many as there are free slots; the others stay remembered for the next turn of
            // the loop (a delivery that ends wakes it), rather than wait for a scan.
            let committed: Vec<String> = {
                let mut remembered = self.committed.lock();
                let mut taken: Vec<String> = remembered.drain().collect();
                let rest = taken.split_off(free.min(taken.len()));
                remembered.extend(rest);
                taken
            };
            let scan = last_scan.elapsed() >= self.options.poll;
            let claimed = async {
                let mut claimed = Vec::new();
                for game_id in &committed {
                    if let Some(pending) = self
                        .tabula
                        .outbox
                        .claim_game(game_id, now, now + lease)
                        .await?
                    {
                        claimed.push(pending);
                    }
                }
                if scan {
                    // Only games due for a poll interval already: a game just marked is its
                    // committing replica's to claim (above, within milliseconds, with the game's
                    // steps in its cache), where any other replica would read its whole log and
                    // replay it. A scan takes over what its replica left: a replica that died, or
                    // one too busy to claim, and the retries and timers that fall due.
                    let left = free.saturating_sub(claimed.len());
                    let due_by = now.saturating_sub(self.options.poll.as_millis() as u64);
                    claimed.extend(
                        self.tabula
                            .outbox
                            .claim_pending(due_by, now + lease, left)
                            .await?,
                    );
                }
                Ok::<_, crate::store::StoreError>(claimed)
            }
            .await;
            if scan {
                last_scan = Instant::now();
            }
            match claimed {
                Ok(claimed) => {
                    if let Some(OutageReport::BackUp { down_for, failures }) =
                        outage.success(Instant::now())
                    {
                        tracing::info!(
                            failures,
                            "webhook claims work again after {down_for:.1?}; {failures} failed \
                             meanwhile"
                        );
                    }
                    for pending in claimed {
                        let Ok(permit) = self.in_flight.clone().try_acquire_owned() else {
                            break;
                        };
                        let worker = self.clone();
                        tokio::spawn(async move {
                            worker.deliver_game(pending).await;
                            drop(permit);
                            // A slot is free: games left waiting for one are claimed now.
                            if !worker.committed.lock().is_empty() {
                                worker.wake.notify_one();
                            }
                        });
                    }
                }
                Err(error) => match outage.failure(Instant::now()) {
                    Some(OutageReport::Down) => tracing::warn!(
                        %error,
                        "webhook claim failed; retried every pass, logged again every {}s while \
                         claims fail",
                        OUTAGE_REPORT_EVERY.as_secs()
                    ),
                    Some(OutageReport::StillDown { down_for, failures }) => tracing::warn!(
                        %error,
                        failures,
                        "webhook claims still failing after {down_for:.1?}: {failures} failed \
                         so far"
                    ),
                    _ => tracing::debug!(%error, "webhook claim failed"),
                },
            }
        }
    }

    /// Delivers what is due in one claimed game, and settles it.
    async fn deliver_game(&self, pending: PendingNotifications) {
        let game_id = pending.game_id.clone();
        let settled = match self.deliver(&pending).await {
            Ok(Settle::Delivered {
                up_to,
                again_in,
                timer_at,
            }) => {
                // Told up to `up_to`: the next pass starts after it, so the cache's steps
                // before it are not needed any more (`cache::Cached`).
                self.tabula.cache.forget_steps_before(&game_id, up_to);
                let settled = self
                    .tabula
                    .outbox
                    .settle_pending(&game_id, Some(up_to), unix_millis() + again_in, timer_at)
                    .await;
                // Kept, due at once: an entry was marked while this pass ran. This replica
                // claims it again straight away rather than leave it to the next scan.
                if matches!(settled, Ok(Settled::DueAgain)) && again_in == 0 {
                    self.claim_soon(&game_id);
                }
                settled
            }
            Ok(Settle::RetryAt(at_ms)) => {
                // A target refuses: its retry comes after a backoff, likely behind more steps
                // than are kept, so a game stuck on a failing webhook keeps no steps meanwhile.
                self.tabula.cache.forget_steps_before(&game_id, u64::MAX);
                self.tabula
                    .outbox
                    .settle_pending(&game_id, None, at_ms, None)
                    .await
            }
            Err(error) => {
                // A store outage fails every game at once: the claim loop reports it once.
                tracing::debug!(%game_id, %error, "webhook delivery failed; retried");
                let again = unix_millis() + self.options.first_backoff.as_millis() as u64;
                self.tabula
                    .outbox
                    .settle_pending(&game_id, None, again, None)
                    .await
            }
        };
        if let Err(error) = settled {
            // The claim lapses and the game is claimed again: a duplicate at worst.
            tracing::debug!(%game_id, %error, "webhook settle failed");
        }
    }

    async fn deliver(&self, pending: &PendingNotifications) -> ServiceResult<Settle> {
        let started = Instant::now();
        let game_id = &pending.game_id;
        // The game up to the highest version marked when it was claimed, at least: this
        // replica's copy when it has got that far (usually: it committed the entry), without a
        // read of the log. An entry appended later was marked later (the mark comes first), so
        // the settle finds its mark and the game is due again at once.
        let current = match self
            .tabula
            .cache
            .at_least(game_id, pending.marked_version)
            .await
        {
            Ok(game) => game,
            // Gone (retention) or never created (a creation that failed after its mark).
            Err(ServiceError::NotFound(_)) => return Ok(Settle::everything()),
            Err(error) => return Err(error),
        };
        let Some(tenant) = current.meta.tenant.clone() else {
            return Ok(Settle::everything());
        };
        self.index_turn(&tenant, &current).await?;
        // The tenant's event stream, its webhooks, then the game's own: each a target with its
        // own cursor.
        let targets: Vec<Target> = std::iter::once(Target::EventStream)
            .chain(
                self.tabula
                    .tenants
                    .webhooks(&tenant)
                    .into_iter()
                    .chain(GameWebhooks::decode(&current.meta))
                    .map(Target::Webhook),
            )
            .collect();
        let log_version = current.version;
        let cursors = self.tabula.outbox.delivery_cursors(game_id).await?;
        let start_of = |target: &Target| {
            cursors
                .get(target.id())
                .map_or(pending.from_version, |cursor| cursor + 1)
        };
        let earliest = targets
            .iter()
            .map(start_of)
            .min()
            .unwrap_or(log_version + 1);
        let (notifications, decision_started) = if earliest <= log_version {
            super::entries_told::notifications(&self.tabula.cache, &current, earliest).await?
        } else {
            (Vec::new(), None)
        };

        let mut retry_at: Option<u64> = None;
        let mut moves = CursorMoves::default();
        // The targets told of everything up to the log's version.
        let mut caught_up = Vec::with_capacity(targets.len());
        for target in &targets {
            let start = start_of(target);
            // The version whose notification this target could not be sent in this pass.
            let mut stopped_at: Option<u64> = None;
            // The event stream takes all of the pass's events in one store call; webhooks, one
            // call per notification.
            let one_by_one: &[(u64, Notification)] = match target {
                Target::EventStream => {
                    let events: Vec<&Notification> = notifications
                        .iter()
                        .filter(|(version, notification)| {
                            *version >= start && target.wants(notification.kind)
                        })
                        .map(|(_, notification)| notification)
                        .collect();
                    if let Err((version, Failure::Retry(at_ms))) =
                        self.append_events(&tenant, &events).await
                    {
                        retry_at = Some(retry_at.map_or(at_ms, |at| at.min(at_ms)));
                        stopped_at = Some(version);
                    }
                    &[]
                }
                Target::Webhook(_) => &notifications,
            };
            for (version, notification) in one_by_one {
                if *version < start {
                    continue;
                }
                // A claim is kept well inside its lease, so no other replica takes it meanwhile.
                if started.elapsed() > self.options.lease / 2 {
                    retry_at = Some(retry_at.map_or(unix_millis(), |at| at.min(unix_millis())));
                    stopped_at = Some(*version);
                    break;
                }
                if !target.wants(notification.kind) {
                    continue;
                }
                match self.send(target, &tenant, notification).await {
                    // A dead letter now: the notifications after it go on.
                    Ok(()) | Err(Failure::GivenUp) => {}
                    Err(Failure::Retry(at_ms)) => {
                        retry_at = Some(retry_at.map_or(at_ms, |at| at.min(at_ms)));
                        stopped_at = Some(*version);
                        break;
                    }
                }
                // The versions before this one are told in full (an entry may have several
                // notifications, so this one's may not be yet).
                if *version > start {
                    moves.record(target.id(), version - 1);
                    self.write_if_many(game_id, &mut moves).await?;
                }
            }
            // Told of every version before the one it stopped at, or of all: versions with
            // nothing for this target are passed too. A cursor names a version told in full, so
            // a notification refused after another of its entry was sent is sent again, the
            // other with it (a duplicate, never a loss).
            let through = match stopped_at {
                None => Some(log_version),
                Some(version) => version.checked_sub(1),
            };
            if let Some(through) = through.filter(|through| *through >= start) {
                moves.record(target.id(), through);
            }
            caught_up.push(stopped_at.is_none());
        }

        // The clock running low comes after every entry's notifications (order per game), to
        // each target that has them all.
        let decision_version = match decision_started {
            Some(version) => {
                moves.record(DECISION_CURSOR, version);
                Some(version)
            }
            None => cursors.get(DECISION_CURSOR).copied(),
        };
        let low = decision_version.and_then(|version| {
            clock_running_low(
                &current.meta,
                &*current.state,
                version,
                self.options.clock_low_percent,
            )
        });
        let mut timer_at = None;
        if let Some(low) = low {
            let now = unix_millis();
            if now < low.at_ms {
                timer_at = Some(low.at_ms);
            } else if now < low.deadline_ms {
                // Past the deadline the timeout is the news, not the warning.
                let version = low.notification.version;
                let ready = targets
                    .iter()
                    .zip(&caught_up)
                    .filter_map(|(target, ready)| ready.then_some(target));
                for target in ready {
                    let cursor = format!("{}~low", target.id());
                    let sent = cursors.get(&cursor).is_some_and(|sent| *sent >= version);
                    if sent || !target.wants(EventKind::ClockRunningLow) {
                        continue;
                    }
                    match self.send(target, &tenant, &low.notification).await {
                        Ok(()) | Err(Failure::GivenUp) => moves.record(&cursor, version),
                        Err(Failure::Retry(at_ms)) => {
                            retry_at = Some(retry_at.map_or(at_ms, |at| at.min(at_ms)));
                        }
                    }
                }
            }
        }
        // Before the settle: the replica that claims the game next starts from these.
        self.write_cursors(game_id, &mut moves).await?;
        if let Some(at_ms) = retry_at {
            return Ok(Settle::RetryAt(at_ms));
        }
        Ok(self.settle_delivered(pending, log_version, current.is_finished(), timer_at))
    }

    /// Writes the pass's cursor moves once they are [`CURSOR_MOVES_PER_WRITE`]: a long pass
    /// (catching up after an outage) keeps what a successor would send again short.
    async fn write_if_many(&self, game_id: &str, moves: &mut CursorMoves) -> ServiceResult<()> {
        if moves.recorded >= CURSOR_MOVES_PER_WRITE {
            self.write_cursors(game_id, moves).await?;
        }
        Ok(())
    }

    /// Writes the pass's cursor moves so far, in one store call.
    async fn write_cursors(&self, game_id: &str, moves: &mut CursorMoves) -> ServiceResult<()> {
        if !moves.moves.is_empty() {
            self.tabula
                .outbox
                .advance_cursors(game_id, &moves.moves)
                .await?;
        }
        *moves = CursorMoves::default();
        Ok(())
    }

    /// Sends `notification` to `target`.
    async fn send(
        &self,
        target: &Target,
        tenant: &str,
        notification: &Notification,
    ) -> Result<(), Failure> {
        match target {
            Target::Webhook(hook) => self.attempt(hook, notification).await,
            Target::EventStream => self
                .append_events(tenant, &[notification])
                .await
                .map_err(|(_, failure)| failure),
        }
    }

    /// Appends `events` to the tenant's event stream (`WatchEvents`), in one store call per
    /// [`EVENTS_PER_CALL`] (a pass catching up after an outage may have thousands). On a failure,
    /// the version of the first event not appended, and when to try again.
    async fn append_events(
        &self,
        tenant: &str,
        events: &[&Notification],
    ) -> Result<(), (u64, Failure)> {
        for chunk in events.chunks(EVENTS_PER_CALL) {
            let bodies: Vec<String> = chunk
                .iter()
                .map(|notification| serde_json::to_string(notification).unwrap_or_default())
                .collect();
            if let Err(error) = self
                .tabula
                .events
                .append_events(tenant, &bodies, EVENTS_KEPT)
                .await
            {
                tracing::debug!(%error, "event stream append failed; retried");
                let retry_at = unix_millis() + self.options.first_backoff.as_millis() as u64;
                return Err((chunk[0].version, Failure::Retry(retry_at)));
            }
        }
        Ok(())
    }

    /// Puts the game, as it is now, in its turn inbox: under the player whose seat must act (by
    /// `Player.external_id`, the creator's or a joiner's; a seat without one, or played by a bot,
    /// is not indexed), or under nobody once the game has ended.
    async fn index_turn(&self, tenant: &str, game: &Game) -> ServiceResult<()> {
        let state = &*game.state;
        let players = super::players::of_game(&game.meta, state);
        // Nothing was ever indexed for a game none of whose players has an external id (an id
        // is given for good, at creation or by a join), and there is nothing to index: no
        // store call.
        if players.iter().all(|player| player.external_id.is_empty()) {
            return Ok(());
        }
        let waiting = state
            .status()
            .to_act
            .filter(|seat| !state.is_bot_seat(*seat))
            .and_then(|seat| {
                let player = players
                    .iter()
                    .find(|player| player.seat == seat && !player.external_id.is_empty())?;
                let deadline = state
                    .deadline()
                    .filter(|(to_act, _)| *to_act == seat)
                    .map(|(_, deadline)| deadline);
                Some((player.external_id.as_str(), seat, deadline))
            });
        Ok(self
            .tabula
            .inbox
            .set_waiting(
                tenant,
                &game.meta.game_id,
                game.version,
                waiting,
                unix_millis(),
            )
            .await?)
    }

    /// Everything delivered up to the log's version: drop the game unless a higher version is
    /// marked (or keep it for `timer_at`, a clock that will run low); a mark ahead of the log for
    /// long (an append that failed after its mark) is dropped too, and so is any mark of a game
    /// that has ended.
    fn settle_delivered(
        &self,
        pending: &PendingNotifications,
        log_version: u64,
        finished: bool,
        timer_at: Option<u64>,
    ) -> Settle {
        let mut stale = self.stale_since.lock();
        // Up to the log's version only: an entry marked while this pass ran (a player answering
        // the notification at once) keeps the game pending, due again now.
        if pending.marked_version <= log_version {
            stale.remove(&pending.game_id);
            return Settle::Delivered {
                up_to: log_version,
                again_in: 0,
                timer_at,
            };
        }
        if finished {
            stale.remove(&pending.game_id);
            return Settle::everything();
        }
        let since = *stale
            .entry(pending.game_id.clone())
            .or_insert_with(Instant::now);
        if since.elapsed() > STALE_MARK {
            stale.remove(&pending.game_id);
            return Settle::everything();
        }
        // An append in flight: look again shortly.
        Settle::Delivered {
            up_to: log_version,
            again_in: 250,
            timer_at,
        }
    }

    /// One call of `hook` with `notification`: delivered, to retry at a time, or given up (a dead
    /// letter now).
    async fn attempt(
        &self,
        hook: &WebhookRecord,
        notification: &Notification,
    ) -> Result<(), Failure> {
        let body = serde_json::to_string(notification).unwrap_or_default();
        let key = format!("{}/{}", hook.id, notification.event_id);
        let error = match self
            .tabula
            .webhook_sender
            .post(hook, &notification.event_id, &body)
            .await
        {
            Ok(()) => {
                self.attempts.lock().remove(&key);
                crate::metrics::webhook_call(&notification.tenant_id, true);
                return Ok(());
            }
            Err(error) => error,
        };
        crate::metrics::webhook_call(&notification.tenant_id, false);
        let attempts = {
            let mut attempts = self.attempts.lock();
            let now = Instant::now();
            let (count, last_failed) = attempts.entry(key.clone()).or_insert((0, now));
            *count += 1;
            *last_failed = now;
            *count
        };
        if attempts < self.options.max_attempts {
            tracing::debug!(webhook = %hook.id, event = %notification.event_id, attempts, %error, "webhook call failed");
            return Err(Failure::Retry(unix_millis() + self.backoff(attempts)));
        }
        self.attempts.lock().remove(&key);
        tracing::warn!(webhook = %hook.id, event = %notification.event_id, attempts, %error, "webhook notification given up: a dead letter");
        let record = DeadRecord {
            format: super::webhooks::NOTIFICATION_FORMAT,
            webhook_id: hook.id.clone(),
            event_id: notification.event_id.clone(),
            attempts,
            last_error: error,
            body,
        };
        let letter = DeadLetter {
            id: key,
            dead_at_ms: unix_millis(),
            record: serde_json::to_vec(&record).unwrap_or_default(),
        };
        match self
            .tabula
            .outbox
            .put_dead_letter(&notification.tenant_id, &letter, MAX_DEAD_LETTERS)
            .await
        {
            Ok(()) => Err(Failure::GivenUp),
            // Not kept: try again later rather than lose it.
            Err(_) => Err(Failure::Retry(unix_millis() + self.backoff(attempts))),
        }
    }

    /// Drops what this replica remembers of notifications and games it has stopped hearing of
    /// (see [`forget_untouched`]).
    fn forget_untouched(&self, now: Instant) {
        let mut attempts = self.attempts.lock();
        let mut stale = self.stale_since.lock();
        forget_untouched(&mut attempts, &mut stale, now, attempts_kept(&self.options));
    }

    /// The delay after the `attempts`-th failure: doubling from the first backoff, capped, then
    /// between half and all of it (jitter, so a receiver that comes back is not hit by every
    /// replica at once).
    fn backoff(&self, attempts: u32) -> u64 {
        let first = self.options.first_backoff.as_millis() as u64;
        let cap = self.options.max_backoff.as_millis() as u64;
        let full = first
            .saturating_mul(1u64 << attempts.saturating_sub(1).min(32))
            .min(cap);
        let mut random = [0u8; 2];
        let _ = getrandom::fill(&mut random);
        let fraction = u64::from(u16::from_le_bytes(random));
        full / 2 + (full / 2) * fraction / u64::from(u16::MAX)
    }
}

/// Where a game's notifications go, each with its own cursor in the game.
enum Target {
    /// The tenant's event stream (`WatchEvents`): every kind.
    EventStream,
    /// A webhook: the kinds it wants.
    Webhook(WebhookRecord),
}

impl Target {
    /// Its cursor's name in the game (a webhook's id is hex digits, never this).
    fn id(&self) -> &str {
        match self {
            Target::EventStream => "~events",
            Target::Webhook(hook) => &hook.id,
        }
    }

    fn wants(&self, kind: super::webhooks::EventKind) -> bool {
        match self {
            Target::EventStream => kind != super::webhooks::EventKind::Unknown,
            Target::Webhook(hook) => hook.wants(kind),
        }
    }
}

/// What becomes of a claimed game.
enum Settle {
    /// Delivered up to a version; look again after `again_in` ms if more was marked, else at
    /// `timer_at` (a clock that will run low), if any.
    Delivered {
        up_to: u64,
        again_in: u64,
        timer_at: Option<u64>,
    },
    /// A call failed: claim the game again at this time.
    RetryAt(u64),
}

impl Settle {
    /// Nothing left to deliver, whatever was marked.
    fn everything() -> Settle {
        Settle::Delivered {
            up_to: u64::MAX,
            again_in: 0,
            timer_at: None,
        }
    }
}

/// Why a call did not deliver.
enum Failure {
    /// Try again at this time.
    Retry(u64),
    /// Given up after every attempt: a dead letter now.
    GivenUp,
}

impl WebhookWorker {
    /// Claims `game_id` on this replica's next pass, without waiting for a scan.
    fn claim_soon(&self, game_id: &str) {
        let mut committed = self.committed.lock();
        if committed.len() < COMMITTED_REMEMBERED {
            committed.insert(game_id.to_owned());
        }
        drop(committed);
        self.wake.notify_one();
    }
}

impl EntryObserver for WebhookWorker {
    fn committed(&self, commit: &Commit<'_>) {
        // Every tenant game has notifications: its webhooks', its event stream's, its players'
        // turn inbox.
        if commit.game.meta.tenant.is_some() {
            self.claim_soon(&commit.game.meta.game_id);
        }
    }

    fn followed(&self, _game: &Game) {}
}
