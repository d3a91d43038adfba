//! A replica's settings, every part's in one place: the core's ([`ServiceOptions`]) and those of
//! the background workers it runs ([`BotOptions`], [`SweeperOptions`], [`RetentionOptions`]).
//! Plain data at the bottom of the service: the core holds them and the workers read theirs,
//! so neither imports the other for its settings. `config.rs` builds them from the flags.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use super::operator::OperatorOptions;

/// Service settings that are not about the store.
#[derive(Clone, Debug)]
pub struct ServiceOptions {
    /// Accept client-chosen seeds in CreateGame (tests, reproducible tournaments).
    pub allow_client_seed: bool,
    /// How many games this replica keeps rebuilt in memory.
    pub cache_capacity: usize,
    /// Store a snapshot every this many versions (0: never).
    pub snapshot_every: u64,
    /// The operator's token and what it guards; `None`: no operator API (`AdminService` is not
    /// served) and anyone may create games.
    pub operator: Option<OperatorOptions>,
    /// How this replica plays bot seats (see `bots.rs`).
    pub bots: BotOptions,
    /// Where finished games go before they leave the store, and where the service reads games
    /// the store no longer has (`--archive`); `None`: no archive.
    pub archive: Option<Arc<crate::archive::Archive>>,
    /// The retention task `serve` starts (see [`super::retention`]); `None`: no task (tests and
    /// benchmarks that run passes themselves).
    pub retention: Option<RetentionOptions>,
    /// How this replica sweeps for expired turn clocks (see [`super::sweeper`]).
    pub sweeper: SweeperOptions,
    /// The rules version new games of a kind get when the creator names none, where the operator
    /// pinned one (`--new-game-rules`: during a rollout that adds a version, the previous one, so
    /// that replicas of the older release can serve the games created meanwhile); other kinds
    /// get their newest. Each is one the registry lists for its game.
    pub new_game_rules: HashMap<crate::proto::v1::GameKind, &'static str>,
    /// CreateGame without credentials is allowed (`--anonymous-create`); with `false` a game needs
    /// a tenant's API key or the operator token.
    pub anonymous_create: bool,
    /// The tenants the operator declared in a file (`--tenants`), written at start; with it the
    /// tenants' API (`AdminService`) is served even without an operator token.
    pub tenants_file: Option<super::tenants::TenantsFile>,
    /// How this replica delivers webhooks (see `webhook_delivery.rs`).
    pub webhooks: WebhookOptions,
    /// The deployment's signing keys (`crate::signing`); `None`: a key generated at start.
    pub signing: Option<Arc<crate::signing::SigningKeys>>,
}

/// How a replica delivers webhooks. Every replica delivers: none owns a game's notifications.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookOptions {
    /// Call private, loopback and link-local addresses too (`--webhook-allow-private`): tests,
    /// and deployments whose receivers live in the same private network.
    pub allow_private: bool,
    /// The deadline of one call (connect, send, and read the answer).
    pub timeout: Duration,
    /// Attempts of one notification before it becomes a dead letter.
    pub max_attempts: u32,
    /// The delay after the first failure; doubled after each further one (with jitter), up to
    /// `max_backoff`.
    pub first_backoff: Duration,
    /// The longest delay between two attempts.
    pub max_backoff: Duration,
    /// Calls to one webhook in flight at once from this replica.
    pub per_endpoint: usize,
    /// How often this replica looks for games with notifications to deliver (it also looks at
    /// once after each entry it commits itself).
    pub poll: Duration,
    /// How long a claimed game is this replica's before another may take it over (a replica that
    /// died mid-delivery is taken over after it).
    pub lease: Duration,
    /// A clock runs low (`clock_running_low`) when this share of its decision's time is left, in
    /// percent.
    pub clock_low_percent: u64,
}

impl Default for WebhookOptions {
    fn default() -> Self {
        WebhookOptions {
            allow_private: false,
            timeout: Duration::from_secs(10),
            max_attempts: 10,
            first_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(600),
            per_endpoint: 8,
            poll: Duration::from_millis(500),
            lease: Duration::from_secs(30),
            clock_low_percent: 20,
        }
    }
}

impl Default for ServiceOptions {
    fn default() -> Self {
        ServiceOptions {
            allow_client_seed: false,
            cache_capacity: 10_000,
            snapshot_every: 64,
            operator: None,
            bots: BotOptions::default(),
            archive: None,
            retention: None,
            sweeper: SweeperOptions::default(),
            new_game_rules: HashMap::new(),
            anonymous_create: true,
            tenants_file: None,
            webhooks: WebhookOptions::default(),
            signing: None,
        }
    }
}

/// How a replica runs bots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotOptions {
    /// Bot decisions running at once on this replica (and so the cores bots may use); 0: this
    /// replica plays no bot (it still records bot turns, for the other replicas' sweeps).
    pub threads: usize,
    /// The most time a search bot thinks per decision (its iteration budget may end it sooner).
    pub think_time: Duration,
}

impl Default for BotOptions {
    fn default() -> Self {
        BotOptions {
            threads: 1,
            think_time: Duration::from_millis(2000),
        }
    }
}

impl BotOptions {
    /// How long a pending turn is left to the replica that recorded it before any replica may
    /// sweep it: a decision's time limit twice over, plus room for the store round trips.
    pub fn grace(&self) -> Duration {
        self.think_time * 2 + Duration::from_secs(2)
    }
}

/// How a replica sweeps for expired turn clocks.
#[derive(Clone, Debug)]
pub struct SweeperOptions {
    /// Whether this replica sweeps at all (tests of other features may turn it off; in
    /// production every replica should).
    pub enabled: bool,
    /// The time between passes: how late after its deadline a timeout is appended, at worst.
    pub interval: Duration,
    /// Each pause between passes is `interval` plus or minus up to this fraction of it, at random.
    pub jitter: f64,
    /// The most due deadlines one pass reads per index shard.
    pub batch: usize,
    /// How many games a pass handles at once.
    pub concurrency: usize,
    /// The deadline of each store call (and of each game's whole re-check and append).
    pub call_timeout: Duration,
}

impl Default for SweeperOptions {
    fn default() -> Self {
        SweeperOptions {
            enabled: true,
            interval: Duration::from_millis(500),
            jitter: 0.2,
            batch: 1000,
            concurrency: 32,
            call_timeout: Duration::from_secs(5),
        }
    }
}

/// What the retention task does, and how often.
#[derive(Clone, Debug)]
pub struct RetentionOptions {
    /// How long a finished game stays in the store before it is archived and deleted; `None`:
    /// finished games stay (a Redis store without an archive: see the README).
    pub retain_finished: Option<Duration>,
    /// How long a running game may go without an entry before it is ended as abandoned; `None`:
    /// never.
    pub abandon_after: Option<Duration>,
    /// Time between passes (each waits this plus up to a quarter more, at random).
    pub interval: Duration,
    /// The most games a pass retires, and the most it examines for abandonment.
    pub batch: usize,
    /// The deadline of every store and archive call of a pass.
    pub call_timeout: Duration,
}

impl Default for RetentionOptions {
    fn default() -> Self {
        RetentionOptions {
            retain_finished: Some(Duration::from_secs(7 * 24 * 3600)),
            abandon_after: Some(Duration::from_secs(30 * 24 * 3600)),
            interval: Duration::from_secs(60),
            batch: 100,
            call_timeout: Duration::from_secs(10),
        }
    }
}
