//! How appends reach the observers on every replica, over O(1) Redis connections per replica.
//!
//! The append script announces each entry it appends on the game's channel
//! `tabula:{<id>}:appended` — `PUBLISH` on a single node; `SPUBLISH` on a Redis Cluster, so the
//! message stays on the shard that owns the game's slot instead of crossing the cluster bus to
//! every node. The message carries the entry itself (version, seat, request id, action), so a
//! replica fans it out to its local [`Feeds`] without reading the log back: one Redis round trip
//! per append whatever the number of replicas and observers.
//!
//! Each replica holds one subscriber connection (RESP3, messages arrive as pushes; on a Cluster,
//! one per master), subscribed to the channels of the games observed on this replica only: a
//! game's channel is subscribed when its first local observer arrives and unsubscribed within a
//! heartbeat after the last one leaves. So a replica with 10,000 observed games holds two Redis
//! connections per node (this one and the store's shared one), not one per game.
//!
//! The replica that appended an entry does not wait for its announcement: once the append is
//! acknowledged (and as durable as configured), it passes the entry to its own feed at once
//! ([`Announcements::appended_here`]), so a seat playing on the replica that committed the move
//! before it learns of it without a second trip through Redis. Both sources go through one
//! delivery rule (only the version after the last one delivered is passed on), so the announcement
//! that follows is dropped as already delivered.
//!
//! Why not one blocking `XREAD` over many streams: on a Cluster every key of one `XREAD` must be in
//! one slot, so it would take a blocking call per slot; and every wake-up re-sends the whole list
//! of streams.
//!
//! Pub/sub delivers at most once — whatever is published while the subscriber is disconnected or
//! not yet subscribed is lost — so the log stays the truth:
//! - every subscription confirmation (the first one, and each re-subscription after a reconnect,
//!   a failover or a slot move) is followed by a catch-up: the log after the last version this
//!   replica delivered, read through the store's ordinary shared connection. A game counts as
//!   followed only once that read succeeded; until then it is subscribed and read again every
//!   heartbeat;
//! - a message that skips versions is not passed on; it triggers the same catch-up, so the feed
//!   stays gapless;
//! - a half-open subscriber connection (no data, no FIN) is found by a `PING` every heartbeat
//!   whose deadline is the response timeout; it is replaced and every game caught up;
//! - a game not followed for the give-up time has its feed closed: its observers' streams end with
//!   UNAVAILABLE and their clients resume elsewhere, rather than waiting on a stream that
//!   silently stopped.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use futures::future::join_all;
use redis::aio::MultiplexedConnection;
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{ProtocolVersion, PushInfo, PushKind, RedisResult, Value};
use tokio::sync::{Notify, broadcast, mpsc};

use super::healing::{HealingConnection, SingleNode, connection_is_suspect};
use super::keys::{appended_channel as channel, game_of_channel};
use super::{read_entries_after, tls_certificates};
use crate::outage::{OUTAGE_REPORT_EVERY, Outage, OutageReport};
use crate::store::feed::Feeds;
use crate::store::{LogEntry, NewEntry};

/// How often the subscriber pings its connection, subscribes again the games not yet followed,
/// lets go of games nobody observes any more, and gives up on games it cannot follow.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(1);

/// Channels per `SUBSCRIBE` / `UNSUBSCRIBE` command on a single node.
const BATCH: usize = 256;

/// What a subscriber makes of an announcement's payload.
#[derive(Debug, PartialEq, Eq)]
enum Announcement {
    /// Format 1, as the append script writes it: the entry itself.
    Entry(LogEntry),
    /// A later format (docs/compatibility.md, *Announcement*): its payload starts with a letter,
    /// which no format-1 payload does (it starts with the version's digits). Written only once
    /// every replica reads it; until then a replica of this release that meets one reads the
    /// log instead, without taking it for damage.
    Later,
    /// Neither: damaged, or not written by Tabula.
    Malformed,
}

/// Decodes an announcement. Format 1, the append script's:
/// `<version>:<seat>:<server time>:<request id length>:<request id><action>`.
fn parse_announcement(payload: &[u8]) -> Announcement {
    match payload.first() {
        Some(first) if first.is_ascii_alphabetic() => Announcement::Later,
        _ => parse_format_1(payload).map_or(Announcement::Malformed, Announcement::Entry),
    }
}

fn parse_format_1(payload: &[u8]) -> Option<LogEntry> {
    let mut parts = payload.splitn(5, |&byte| byte == b':');
    let mut number = || -> Option<u64> { std::str::from_utf8(parts.next()?).ok()?.parse().ok() };
    let version = number()?;
    let seat = u32::try_from(number()?).ok()?;
    let server_time_ms = number()?;
    let request_length = usize::try_from(number()?).ok()?;
    let rest = parts.next()?;
    if rest.len() < request_length {
        return None;
    }
    let (request_id, action) = rest.split_at(request_length);
    Some(LogEntry {
        version,
        seat,
        action: action.to_vec(),
        request_id: String::from_utf8(request_id.to_vec()).ok()?,
        server_time_ms,
    })
}

/// Opens subscriber connections: RESP3, with a fresh push channel each, so that pushes from a
/// connection already replaced never reach the new one's reader.
#[derive(Clone)]
pub(super) enum SubscriberConnector {
    /// One node: a client speaking RESP3 to it, and the connection and response deadlines.
    Single(Box<SingleNode>),
    /// A Redis Cluster: a connection per master, opened and re-routed by the cluster client.
    Cluster {
        /// Seed nodes.
        urls: Vec<String>,
        connection_timeout: Duration,
        response_timeout: Duration,
        ca_certificate: Option<Vec<u8>>,
    },
}

/// Settings of the subscriber that do not depend on the topology.
pub(super) struct SubscriberOptions {
    /// How to open its connection.
    pub(super) connector: SubscriberConnector,
    /// The deadline of one command on it (and of a PING that checks it is alive).
    pub(super) response_timeout: Duration,
    /// The deadline for opening it.
    pub(super) connection_timeout: Duration,
    /// How long a game may go unfollowed before its feed is closed.
    pub(super) follow_deadline: Duration,
}

impl SubscriberConnector {
    async fn connect(&self) -> RedisResult<Subscriber> {
        let (sender, pushes) = mpsc::unbounded_channel();
        let connection = match self {
            SubscriberConnector::Single(node) => Connection::Single(
                node.client
                    .get_multiplexed_async_connection_with_config(
                        &node.config.clone().set_push_sender(sender),
                    )
                    .await?,
            ),
            SubscriberConnector::Cluster {
                urls,
                connection_timeout,
                response_timeout,
                ca_certificate,
            } => {
                let mut builder = ClusterClient::builder(urls.clone())
                    .connection_timeout(*connection_timeout)
                    .response_timeout(*response_timeout)
                    .use_protocol(ProtocolVersion::RESP3)
                    .push_sender(sender);
                if let Some(ca) = ca_certificate {
                    builder = builder.certs(tls_certificates(ca));
                }
                Connection::Cluster(builder.build()?.get_async_connection().await?)
            }
        };
        Ok(Subscriber { connection, pushes })
    }
}

/// A RESP3 connection to a single node, or a cluster connection (one per master).
#[derive(Clone)]
enum Connection {
    Single(MultiplexedConnection),
    Cluster(ClusterConnection),
}

/// The subscriber connection and the pushes it receives (messages, confirmations, disconnects).
struct Subscriber {
    connection: Connection,
    pushes: mpsc::UnboundedReceiver<PushInfo>,
}

impl Subscriber {
    /// Subscribes to `channels`; true if the connection still looks usable. Each confirmation
    /// arrives as a push (which starts that game's catch-up).
    async fn subscribe(&mut self, channels: &[String]) -> bool {
        match &mut self.connection {
            Connection::Single(connection) => {
                for batch in channels.chunks(BATCH) {
                    if let Err(error) = connection.subscribe(batch).await {
                        tracing::warn!(%error, "SUBSCRIBE failed");
                        if connection_is_suspect(&error) {
                            return false;
                        }
                    }
                }
                true
            }
            // Sharded channels of different slots cannot share a command: one per channel, routed
            // to the channel's shard by the cluster client, all in flight at once.
            Connection::Cluster(connection) => {
                let results = join_all(channels.iter().map(|channel| {
                    let mut connection = connection.clone();
                    async move { connection.ssubscribe(channel).await }
                }))
                .await;
                for error in results.into_iter().filter_map(Result::err) {
                    // The game stays unfollowed and is subscribed again next heartbeat; a dead
                    // node connection is the PING's business.
                    tracing::warn!(%error, "SSUBSCRIBE failed");
                }
                true
            }
        }
    }

    async fn unsubscribe(&mut self, channels: &[String]) {
        match &mut self.connection {
            Connection::Single(connection) => {
                for batch in channels.chunks(BATCH) {
                    if let Err(error) = connection.unsubscribe(batch).await {
                        tracing::warn!(%error, "UNSUBSCRIBE failed");
                    }
                }
            }
            Connection::Cluster(connection) => {
                let results = join_all(channels.iter().map(|channel| {
                    let mut connection = connection.clone();
                    async move { connection.sunsubscribe(channel).await }
                }))
                .await;
                for error in results.into_iter().filter_map(Result::err) {
                    tracing::warn!(%error, "SUNSUBSCRIBE failed");
                }
            }
        }
    }

    /// PING on the connection (every master's, on a Cluster), within the response timeout.
    async fn ping(&mut self) -> RedisResult<()> {
        let ping = redis::cmd("PING");
        match &mut self.connection {
            Connection::Single(connection) => ping.query_async::<Value>(connection).await?,
            Connection::Cluster(connection) => ping.query_async::<Value>(connection).await?,
        };
        Ok(())
    }
}

/// One game observed on this replica.
struct Watched {
    /// Its local feed.
    sender: broadcast::Sender<LogEntry>,
    /// The newest version passed to the feed: announcements and catch-ups continue from here.
    last: u64,
    /// Since when the game has not been known to be followed (subscribed, then caught up); `None`
    /// while it is.
    unfollowed_since: Option<Instant>,
    /// When its subscription was last requested while it was unfollowed.
    requested_at: Option<Instant>,
}

impl Watched {
    /// The one delivery rule, whatever brought `entry` (an announcement, a catch-up read, this
    /// replica's own append): only the version right after the last one delivered is passed on,
    /// so the feed stays gapless, in order, and without duplicates.
    fn pass_on(&mut self, entry: LogEntry) {
        if entry.version == self.last + 1 {
            self.last = entry.version;
            // Lagging or absent receivers are their own business.
            let _ = self.sender.send(entry);
        }
    }
}

/// What the subscriber and the store's handle share.
struct Shared {
    games: Mutex<HashMap<String, Watched>>,
    feeds: Arc<Feeds>,
    /// The store's shared connection, for catch-up reads.
    reader: HealingConnection,
    follow_deadline: Duration,
}

/// This replica's subscriber to announcements of appended entries (see the module doc). Dropping
/// it stops the subscriber within a heartbeat, which closes its connection.
pub(super) struct Announcements {
    shared: Arc<Shared>,
    wake: Arc<Notify>,
}

impl Announcements {
    /// Starts the subscriber. It connects when the first game is watched.
    pub(super) fn start(
        options: SubscriberOptions,
        reader: HealingConnection,
        feeds: Arc<Feeds>,
    ) -> Self {
        let shared = Arc::new(Shared {
            games: Mutex::default(),
            feeds,
            reader,
            follow_deadline: options.follow_deadline,
        });
        let wake = Arc::new(Notify::new());
        tokio::spawn(run(Arc::downgrade(&shared), wake.clone(), options));
        Announcements { shared, wake }
    }

    /// Starts filling `sender` (the game's new local feed) with the entries after version `last`.
    pub(super) fn watch(&self, game_id: &str, sender: broadcast::Sender<LogEntry>, last: u64) {
        let mut games = self.shared.games.lock();
        // Replacing a feed (its predecessor's observers all left) subscribes again too: the
        // confirmation's catch-up fills the new feed from `last` whatever the old one received.
        games.insert(
            game_id.to_owned(),
            Watched {
                sender,
                last,
                unfollowed_since: Some(Instant::now()),
                requested_at: None,
            },
        );
        drop(games);
        self.wake.notify_one();
    }

    /// This replica appended `entry` at `version`: its local feed gets it now rather than when
    /// the announcement comes back from Redis (a round trip through the subscriber connection,
    /// on the path of every move a seat on this replica waits for). Only the entry right after
    /// the last one delivered is passed on, under the same lock as every other delivery, so the
    /// feed stays gapless and in order; the announcement that follows is then a duplicate and
    /// is dropped, and an entry after a gap is left to the announcements (which catch up).
    pub(super) fn appended_here(&self, game_id: &str, version: u64, entry: &NewEntry) {
        let mut games = self.shared.games.lock();
        // Built only for a watched game, and only when it is the next one.
        if let Some(watched) = games.get_mut(game_id)
            && version == watched.last + 1
        {
            watched.pass_on(entry.logged_at(version));
        }
    }
}

impl Shared {
    /// Passes the entries after the game's last delivered version to its feed, in order. With
    /// `followed_as_of`, a successful catch-up for a confirmation received then: the game is
    /// followed again unless it lost its subscription after that.
    fn deliver(&self, game_id: &str, entries: Vec<LogEntry>, followed_as_of: Option<Instant>) {
        let mut games = self.games.lock();
        let Some(watched) = games.get_mut(game_id) else {
            return;
        };
        for entry in entries {
            watched.pass_on(entry);
        }
        if let Some(confirmed_at) = followed_as_of
            && watched
                .unfollowed_since
                .is_some_and(|since| since <= confirmed_at)
        {
            watched.unfollowed_since = None;
        }
    }

    /// Passes one announced entry on, or, when it skips versions, catches the game up from the log.
    fn announced(self: &Arc<Self>, game_id: String, entry: LogEntry) {
        let in_order = {
            let games = self.games.lock();
            let Some(watched) = games.get(&game_id) else {
                return;
            };
            entry.version <= watched.last + 1
        };
        if in_order {
            self.deliver(&game_id, vec![entry], None);
        } else {
            tokio::spawn(catch_up(self.clone(), game_id, None));
        }
    }

    /// Every game becomes unfollowed (its subscription may be gone): each is subscribed again and
    /// caught up.
    fn unfollow_all(&self) {
        let now = Instant::now();
        for watched in self.games.lock().values_mut() {
            watched.unfollowed_since.get_or_insert(now);
            watched.requested_at = None;
        }
    }

    fn unfollow(&self, game_id: &str) {
        if let Some(watched) = self.games.lock().get_mut(game_id) {
            watched.unfollowed_since.get_or_insert_with(Instant::now);
            watched.requested_at = None;
        }
    }

    /// The channels of unfollowed games whose subscription is due (never requested since they
    /// became unfollowed, or not confirmed within a heartbeat), marked as requested now.
    fn due_for_subscription(&self) -> Vec<String> {
        let now = Instant::now();
        let mut due = Vec::new();
        for (game_id, watched) in self.games.lock().iter_mut() {
            if watched.unfollowed_since.is_some()
                && watched
                    .requested_at
                    .is_none_or(|at| now.duration_since(at) >= HEARTBEAT)
            {
                watched.requested_at = Some(now);
                due.push(channel(game_id));
            }
        }
        due
    }

    /// Lets go of games nobody on this replica observes any more, and closes the feeds of games
    /// unfollowed for longer than the give-up time. Returns their channels, to unsubscribe.
    fn sweep(&self) -> Vec<String> {
        let mut released = Vec::new();
        self.games.lock().retain(|game_id, watched| {
            if watched.sender.receiver_count() == 0
                && self.feeds.release_if_unused(game_id, &watched.sender)
            {
                released.push(channel(game_id));
                return false;
            }
            if watched
                .unfollowed_since
                .is_some_and(|since| since.elapsed() >= self.follow_deadline)
            {
                tracing::warn!(%game_id, "cannot follow the game's log: closing its feed");
                // Dropping the sender (with the entry) ends every observer's stream.
                self.feeds.close(game_id, &watched.sender);
                released.push(channel(game_id));
                return false;
            }
            true
        });
        released
    }

    fn is_idle(&self) -> bool {
        self.games.lock().is_empty()
    }
}

/// Reads the game's log after the last version delivered and passes it on.
async fn catch_up(shared: Arc<Shared>, game_id: String, confirmed_at: Option<Instant>) {
    let Some(after) = shared
        .games
        .lock()
        .get(&game_id)
        .map(|watched| watched.last)
    else {
        return;
    };
    match read_entries_after(&shared.reader, &game_id, after).await {
        // A game that left the store had finished, so its streams have ended: nothing to pass on.
        Ok(entries) => shared.deliver(&game_id, entries.unwrap_or_default(), confirmed_at),
        // It stays unfollowed: subscribed and read again next heartbeat.
        Err(error) => tracing::warn!(%game_id, %error, "catch-up read failed"),
    }
}

/// What woke the subscriber.
enum Event {
    Push(Option<PushInfo>),
    Wake,
    Heartbeat,
}

/// The subscriber: owns the connection, handles its pushes, subscribes and unsubscribes, checks
/// the connection every heartbeat. Ends once the store dropped its [`Announcements`].
async fn run(shared: Weak<Shared>, wake: Arc<Notify>, options: SubscriberOptions) {
    let mut subscriber: Option<Subscriber> = None;
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Bounds every command, on top of the connection's own deadlines.
    let command_deadline = options.response_timeout + options.connection_timeout;
    let single_node = matches!(options.connector, SubscriberConnector::Single(_));
    // Reconnecting is tried on every heartbeat and every new Observe while Redis is down: log the
    // outage's changes, not each attempt (see `crate::outage`).
    let mut outage = Outage::default();
    loop {
        let event = {
            let push = async {
                match subscriber.as_mut() {
                    Some(subscriber) => subscriber.pushes.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                push = push => Event::Push(push),
                () = wake.notified() => Event::Wake,
                _ = heartbeat.tick() => Event::Heartbeat,
            }
        };
        // Hold the shared state only while handling an event, so dropping the store ends this.
        let Some(shared) = shared.upgrade() else {
            return;
        };
        // Whether to (re)connect and subscribe what is due: not after an ordinary message.
        let maintain = match event {
            Event::Push(Some(push)) => {
                let lost = on_push(&shared, push, single_node) == Link::Lost;
                if lost {
                    subscriber = None;
                    shared.unfollow_all();
                }
                lost
            }
            Event::Push(None) => {
                // The connection's driver ended: it is gone.
                subscriber = None;
                shared.unfollow_all();
                true
            }
            Event::Wake => true,
            Event::Heartbeat => {
                let released = shared.sweep();
                if let Some(subscriber) = subscriber.as_mut()
                    && !released.is_empty()
                {
                    let _ =
                        tokio::time::timeout(command_deadline, subscriber.unsubscribe(&released))
                            .await;
                }
                if let Some(connected) = subscriber.as_mut()
                    && !shared.is_idle()
                {
                    let alive = tokio::time::timeout(command_deadline, connected.ping())
                        .await
                        .unwrap_or_else(|_| Err(timed_out()));
                    if let Err(error) = alive {
                        tracing::warn!(%error, "subscriber connection failed its PING: replacing it");
                        subscriber = None;
                        shared.unfollow_all();
                    }
                }
                true
            }
        };
        if !maintain || shared.is_idle() {
            continue;
        }
        if subscriber.is_none() {
            let error = match tokio::time::timeout(command_deadline, options.connector.connect())
                .await
            {
                Ok(Ok(connected)) => {
                    subscriber = Some(connected);
                    if let Some(OutageReport::BackUp { down_for, failures }) =
                        outage.success(Instant::now())
                    {
                        tracing::info!(
                            failures,
                            "subscriber connected again after {down_for:.1?}; {failures} attempts \
                             failed meanwhile"
                        );
                    }
                    None
                }
                Ok(Err(error)) => Some(error.to_string()),
                Err(_) => Some("no connection within the command deadline".to_owned()),
            };
            if let Some(error) = error {
                match outage.failure(Instant::now()) {
                    Some(OutageReport::Down) => tracing::warn!(
                        %error,
                        "subscriber cannot connect; retried every second, logged again every {}s \
                         while it fails",
                        OUTAGE_REPORT_EVERY.as_secs()
                    ),
                    Some(OutageReport::StillDown { down_for, failures }) => tracing::warn!(
                        %error,
                        failures,
                        "subscriber still cannot connect after {down_for:.1?}: {failures} \
                         attempts failed so far"
                    ),
                    _ => tracing::debug!(%error, "subscriber cannot connect"),
                }
            }
        }
        if let Some(connected) = subscriber.as_mut() {
            let due = shared.due_for_subscription();
            if !due.is_empty() {
                let usable = tokio::time::timeout(command_deadline, connected.subscribe(&due))
                    .await
                    .unwrap_or(false);
                if !usable {
                    subscriber = None;
                    shared.unfollow_all();
                }
            }
        }
    }
}

fn timed_out() -> redis::RedisError {
    redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut))
}

/// Whether the subscriber connection survived a push.
#[derive(PartialEq, Eq)]
enum Link {
    Kept,
    Lost,
}

fn on_push(shared: &Arc<Shared>, push: PushInfo, single_node: bool) -> Link {
    let mut data = push.data.into_iter();
    let channel = match data.next() {
        Some(Value::BulkString(bytes)) => bytes,
        _ if push.kind == PushKind::Disconnection => Vec::new(),
        _ => return Link::Kept,
    };
    let game_id = game_of_channel(&channel);
    match push.kind {
        PushKind::Message | PushKind::SMessage => {
            let Some(game_id) = game_id else {
                return Link::Kept;
            };
            let payload = match data.next() {
                Some(Value::BulkString(bytes)) => bytes,
                _ => Vec::new(),
            };
            match parse_announcement(&payload) {
                Announcement::Entry(entry) => shared.announced(game_id, entry),
                // The log is the truth: an announcement this replica cannot read costs a read.
                Announcement::Later => {
                    tracing::debug!(%game_id, "announcement of a later format: reading the log");
                    tokio::spawn(catch_up(shared.clone(), game_id, None));
                }
                Announcement::Malformed => {
                    tracing::warn!(%game_id, "malformed announcement: reading the log instead");
                    tokio::spawn(catch_up(shared.clone(), game_id, None));
                }
            }
        }
        PushKind::Subscribe | PushKind::SSubscribe => {
            if let Some(game_id) = game_id {
                tokio::spawn(catch_up(shared.clone(), game_id, Some(Instant::now())));
            }
        }
        // Not asked for when the game is still watched (its slot moved, say): subscribe again.
        PushKind::Unsubscribe | PushKind::SUnsubscribe => {
            if let Some(game_id) = game_id {
                shared.unfollow(&game_id);
            }
        }
        PushKind::Disconnection => {
            // A single node's connection is dead for good; a cluster connection reconnects the
            // node and subscribes again by itself, and every game is caught up on confirmation.
            if single_node {
                return Link::Lost;
            }
            shared.unfollow_all();
        }
        _ => {}
    }
    Link::Kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn announcements_decode_what_the_append_script_encodes() {
        // As the script writes it: version, seat, server time, request id length, request id, then
        // the action (binary, and free to contain the separator).
        let payload = b"12:1:1700000000123:5:r:1:2\x00:\xff".to_vec();
        let Announcement::Entry(entry) = parse_announcement(&payload) else {
            panic!("decodes");
        };
        assert_eq!(entry.version, 12);
        assert_eq!(entry.seat, 1);
        assert_eq!(entry.server_time_ms, 1_700_000_000_123);
        assert_eq!(entry.request_id, "r:1:2");
        assert_eq!(entry.action, b"\x00:\xff");
        let Announcement::Entry(no_request) = parse_announcement(b"3:0:0:0:\x08\x01") else {
            panic!("decodes");
        };
        assert_eq!(no_request.request_id, "");
        assert_eq!(no_request.action, b"\x08\x01");
    }

    #[test]
    fn announcements_decode_what_the_replica_builds_for_the_append_script() {
        let entry = crate::store::NewEntry {
            seat: 2,
            action: b"\x00:\xff".to_vec(),
            request_id: "r:1".into(),
            retry: crate::store::RetryScope::AtVersion,
            finishes: false,
            server_time_ms: 1_700_000_000_123,
            head: None,
            deadline: None,
        };
        let payload = super::super::announcement(8, &entry);
        assert_eq!(
            parse_announcement(&payload),
            Announcement::Entry(LogEntry {
                version: 8,
                seat: 2,
                action: entry.action.clone(),
                request_id: entry.request_id.clone(),
                server_time_ms: entry.server_time_ms,
            })
        );
    }

    #[test]
    fn malformed_announcements_are_refused() {
        for payload in [
            &b""[..],
            b"1:0",
            b"-1:0:0:0:",
            b"1:0:0:9:short",
            b"1:99999999999:0:0:",
            b"1:0:x:0:",
            b":1:0:0:0:",
        ] {
            assert_eq!(
                parse_announcement(payload),
                Announcement::Malformed,
                "{payload:?}"
            );
        }
    }

    #[test]
    fn announcements_of_a_later_format_are_told_from_damage() {
        // A later format starts with a letter (its tag), whatever follows.
        for payload in [&b"v2:12:1:0:0:"[..], b"b", b"Z:anything"] {
            assert_eq!(
                parse_announcement(payload),
                Announcement::Later,
                "{payload:?}"
            );
        }
        // Format 1 always starts with the version's digits.
        assert!(matches!(
            parse_announcement(b"1:0:0:0:"),
            Announcement::Entry(_)
        ));
    }

    #[test]
    fn channels_carry_the_game_id_and_its_hash_tag() {
        let name = channel("abc");
        assert_eq!(name, "tabula:{abc}:appended");
        assert_eq!(game_of_channel(name.as_bytes()).as_deref(), Some("abc"));
        assert_eq!(game_of_channel(b"tabula:{abc}:log"), None);
    }
}
