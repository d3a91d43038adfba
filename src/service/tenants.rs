//! Tenants: the independent backends that share one deployment. Each has an id, a display name and
//! up to two API keys at once (so a key can be rotated without downtime: issue the new one, move
//! the backend over, revoke the old one). A tenant's key creates games that belong to the tenant,
//! and is an operator for those games only (`AdminService` listings, EndGame, HandSeatToBot);
//! another tenant's game answers exactly as a missing game does. The operator token keeps every
//! power, and is the only credential that manages tenants.
//!
//! # Keys
//!
//! `tbk_<key id: 16 hex digits>_<secret: 64 hex digits>`: 256 random bits of secret from the OS.
//! The store keeps only the key's SHA-256 (a key is never shown again after it is issued); the key
//! id in clear lets a replica find the record without trying every hash. A presented key is hashed
//! and compared in constant time.
//!
//! # Where tenants live
//!
//! In the store's tenant directory ([`crate::store::TenantDirectory`]), so every replica accepts
//! the same keys. Each replica keeps a copy and reads the directory's revision every
//! [`TENANT_REFRESH`]: a key revoked on one replica is refused by every replica within that time
//! (plus a store round trip); on the replica that revoked it, at once. A replica whose copy was
//! never loaded (the store has not answered since it started) refuses tenant keys with
//! UNAVAILABLE rather than guessing.
//!
//! An operator may also declare tenants in a file read at start (`--tenants`, see
//! [`TenantsFile`]): each tenant it names is written as the file says (display name and keys,
//! given as their hashes), so a declarative deployment never calls the API.

use parking_lot::RwLock;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::auth::{bearer_token, constant_time_eq, hash_token};
use super::error::{ServiceError, ServiceResult};
use crate::store::{TenantDirectory, unix_millis};

/// How often a replica checks the tenant directory for changes: the bound on how long a key
/// revoked elsewhere stays usable here.
pub const TENANT_REFRESH: Duration = Duration::from_secs(2);
/// How often a failing refresh of the tenant directory is logged again.
const FAILURE_LOG_EVERY: Duration = Duration::from_secs(10);

/// What every tenant API key starts with.
pub const KEY_PREFIX: &str = "tbk_";

/// The most keys a tenant holds at once: one in use and one being rolled out.
pub const MAX_LIVE_KEYS: usize = 2;

/// The most keys a tenant's record remembers, revoked ones included: past it the oldest revoked
/// keys are forgotten, so that issuing and revoking keys cannot grow the record for ever.
pub const MAX_KEY_RECORDS: usize = 32;

/// The longest tenant id.
pub const MAX_TENANT_ID_LEN: usize = 64;

/// The longest display name, in bytes.
pub const MAX_DISPLAY_NAME_LEN: usize = 128;

/// The most tenants a deployment holds: each replica keeps them all in memory.
pub const MAX_TENANTS: usize = 10_000;

/// The encoding of [`TenantRecord`]s; a record of a later format is refused, not misread.
const RECORD_FORMAT: u32 = 1;

/// One tenant as the store keeps it (JSON, so an operator can read it in Redis).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TenantRecord {
    /// `RECORD_FORMAT`.
    pub format: u32,
    /// The tenant's id (see [`check_tenant_id`]).
    pub id: String,
    /// What the operator calls it.
    pub display_name: String,
    /// When it was created (ms since the Unix epoch).
    pub created_at_ms: u64,
    /// Every key ever issued, revoked ones included (they say when they were revoked).
    pub keys: Vec<KeyRecord>,
    /// Its quotas (see `quotas.rs`); absent in records written before quotas existed.
    #[serde(default)]
    pub limits: TenantLimits,
    /// Its webhooks (see `webhooks.rs`); absent in records written before webhooks existed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub webhooks: Vec<super::webhooks::WebhookRecord>,
}

/// A tenant's quotas, each over all of its games on every replica; `None`: no limit.
///
/// Stored in the tenant's record, where a quota this build does not know is ignored: during a
/// rolling deploy the previous build reads records the next one wrote (and enforces the quotas
/// it knows). A tenants file is checked strictly instead ([`TenantsFile::parse`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TenantLimits {
    /// Games created and not yet finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_games: Option<u64>,
    /// Games created per calendar minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub games_per_minute: Option<u64>,
    /// Acts accepted in its games per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acts_per_second: Option<u64>,
    /// Observe streams open at once on its games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observe_streams: Option<u64>,
    /// Bot seats in its running games.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_seats: Option<u64>,
    /// Milliseconds of bot thinking for its games per calendar minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bot_think_ms_per_minute: Option<u64>,
}

impl TenantLimits {
    /// From the API's message: 0 is no limit.
    pub fn from_pb(limits: Option<&crate::proto::v1::TenantLimits>) -> Self {
        let limit = |value: u64| (value > 0).then_some(value);
        limits.map_or_else(TenantLimits::default, |limits| TenantLimits {
            active_games: limit(limits.active_games),
            games_per_minute: limit(limits.games_per_minute),
            acts_per_second: limit(limits.acts_per_second),
            observe_streams: limit(limits.observe_streams),
            bot_seats: limit(limits.bot_seats),
            bot_think_ms_per_minute: limit(limits.bot_think_ms_per_minute),
        })
    }

    /// The API's message: 0 is no limit.
    pub fn to_pb(self) -> crate::proto::v1::TenantLimits {
        crate::proto::v1::TenantLimits {
            active_games: self.active_games.unwrap_or_default(),
            games_per_minute: self.games_per_minute.unwrap_or_default(),
            acts_per_second: self.acts_per_second.unwrap_or_default(),
            observe_streams: self.observe_streams.unwrap_or_default(),
            bot_seats: self.bot_seats.unwrap_or_default(),
            bot_think_ms_per_minute: self.bot_think_ms_per_minute.unwrap_or_default(),
        }
    }
}

/// One API key of a tenant: never the key itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// The key id (16 hex digits), also in the key.
    pub id: String,
    /// SHA-256 of the whole key, hex.
    pub sha256: String,
    /// When it was issued (ms since the Unix epoch).
    pub created_at_ms: u64,
    /// When it was revoked; `None` while it is valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at_ms: Option<u64>,
}

impl TenantRecord {
    fn live_keys(&self) -> impl Iterator<Item = &KeyRecord> {
        self.keys.iter().filter(|key| key.revoked_at_ms.is_none())
    }

    /// The public description of the tenant: no hashes.
    pub fn to_pb(&self) -> crate::proto::v1::Tenant {
        crate::proto::v1::Tenant {
            tenant_id: self.id.clone(),
            display_name: self.display_name.clone(),
            create_time: Some(super::listing::timestamp(self.created_at_ms)),
            keys: self
                .keys
                .iter()
                .map(|key| crate::proto::v1::TenantKey {
                    key_id: key.id.clone(),
                    create_time: Some(super::listing::timestamp(key.created_at_ms)),
                    revoke_time: key.revoked_at_ms.map(super::listing::timestamp),
                })
                .collect(),
            limits: Some(self.limits.to_pb()),
            webhooks: self.webhooks.iter().map(|hook| hook.to_pb()).collect(),
        }
    }
}

/// Who is calling, as the bearer token says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caller {
    /// The operator token: every power.
    Operator,
    /// A tenant's API key: an operator for the tenant's own games.
    Tenant(String),
    /// Neither.
    Anonymous,
}

impl Caller {
    /// Whether this caller has operator powers over a game owned by `owner`.
    pub fn may_operate(&self, owner: Option<&str>) -> bool {
        match self {
            Caller::Operator => true,
            Caller::Tenant(tenant) => owner == Some(tenant.as_str()),
            Caller::Anonymous => false,
        }
    }

    /// The tenant this caller names with `tenant_id` and may manage (its webhooks, dead letters
    /// and turn inbox): the operator any tenant it names, a tenant's key its own only (its own
    /// id, or none); another tenant's id answers as a missing tenant.
    pub fn managed_tenant(&self, tenant_id: &str) -> ServiceResult<String> {
        match self {
            Caller::Operator if tenant_id.is_empty() => Err(ServiceError::InvalidArgument(
                "tenant_id is required: name the tenant".into(),
            )),
            Caller::Operator => {
                check_tenant_id(tenant_id)?;
                Ok(tenant_id.to_owned())
            }
            Caller::Tenant(own) if tenant_id.is_empty() || tenant_id == own => Ok(own.clone()),
            // As a missing tenant: a key learns nothing of other tenants.
            Caller::Tenant(_) => {
                check_tenant_id(tenant_id)?;
                Err(ServiceError::Missing(format!(
                    "tenant {tenant_id} does not exist"
                )))
            }
            Caller::Anonymous => Err(ServiceError::Unauthenticated(
                "send the operator token or a tenant's API key".into(),
            )),
        }
    }

    /// The tenant whose games a listing that names `tenant_id` holds (`None`: every game): the
    /// operator's named tenant, if any; a tenant's key its own, when it names none or itself;
    /// another tenant's id answers as a missing tenant.
    pub fn listed_tenant(&self, tenant_id: &str) -> ServiceResult<Option<String>> {
        match self {
            Caller::Operator if tenant_id.is_empty() => Ok(None),
            _ => self.managed_tenant(tenant_id).map(Some),
        }
    }

    /// The tenant, for a tenant's key.
    pub fn tenant(&self) -> Option<&str> {
        match self {
            Caller::Tenant(tenant) => Some(tenant),
            _ => None,
        }
    }
}

/// A replica's copy of the tenant directory.
struct Directory {
    revision: u64,
    tenants: HashMap<String, (TenantRecord, u64)>,
    /// Live keys: key id → (tenant id, SHA-256 of the key).
    keys: HashMap<String, (String, [u8; 32])>,
}

impl Directory {
    fn build(revision: u64, tenants: HashMap<String, (TenantRecord, u64)>) -> Self {
        let mut keys = HashMap::new();
        for (record, _) in tenants.values() {
            for key in record.live_keys() {
                if let Some(hash) = decode_hash(&key.sha256) {
                    keys.insert(key.id.clone(), (record.id.clone(), hash));
                }
            }
        }
        Directory {
            revision,
            tenants,
            keys,
        }
    }
}

/// The tenants as this replica knows them, and the operator's changes to them.
pub struct Tenants {
    store: Arc<dyn TenantDirectory>,
    /// `None` until the directory was first read.
    copy: RwLock<Option<Arc<Directory>>>,
}

impl Tenants {
    /// The tenants of `store`'s directory, not read yet (see [`Tenants::refresh`]).
    pub fn new(store: Arc<dyn TenantDirectory>) -> Self {
        Tenants {
            store,
            copy: RwLock::new(None),
        }
    }

    fn current(&self) -> Option<Arc<Directory>> {
        self.copy.read().clone()
    }

    /// Reads the directory again if its revision moved (or it was never read).
    pub async fn refresh(&self) -> ServiceResult<()> {
        if let Some(copy) = self.current() {
            let revision = self.store.tenants_revision().await?;
            if revision == copy.revision {
                return Ok(());
            }
        }
        self.reload().await
    }

    /// Reads the whole directory.
    async fn reload(&self) -> ServiceResult<()> {
        let (revision, stored) = self.store.tenants().await?;
        let mut tenants = HashMap::new();
        for tenant in stored {
            match decode_record(&tenant.record) {
                Ok(record) => {
                    tenants.insert(tenant.id, (record, tenant.generation));
                }
                // A damaged or newer record: that tenant's keys are refused here, the others work.
                Err(reason) => {
                    tracing::warn!(tenant = %tenant.id, %reason, "tenant record unusable")
                }
            }
        }
        *self.copy.write() = Some(Arc::new(Directory::build(revision, tenants)));
        Ok(())
    }

    /// Who `metadata`'s bearer token says the caller is, given the operator token (if any).
    /// A token shaped as a tenant key that is unknown or revoked is UNAUTHENTICATED.
    pub fn caller(
        &self,
        metadata: &tonic::metadata::MetadataMap,
        operator: Option<&super::OperatorToken>,
    ) -> ServiceResult<Caller> {
        let Some(token) = bearer_token(metadata)? else {
            return Ok(Caller::Anonymous);
        };
        if token.starts_with(KEY_PREFIX) {
            return self.authenticate(&token).map(Caller::Tenant);
        }
        if operator.is_some_and(|operator| operator.matches(&token)) {
            return Ok(Caller::Operator);
        }
        Ok(Caller::Anonymous)
    }

    /// The caller of a game RPC as a viewer of `meta`'s game: as `super::auth::viewer` says,
    /// except for a tenant's API key, which sees its own games as a spectator does and another
    /// tenant's game as a missing one (NOT_FOUND, the message a missing game gets).
    pub fn viewer(
        &self,
        meta: &crate::store::GameMeta,
        state: &dyn crate::hosting::GameState,
        metadata: &tonic::metadata::MetadataMap,
    ) -> ServiceResult<crate::games::Viewer> {
        match self.key_holder(meta, metadata)? {
            Some(()) => Ok(crate::games::Viewer::Spectator),
            None => super::auth::viewer(meta, state, metadata),
        }
    }

    /// The seat the caller acts for in `meta`'s game, as `super::auth::required_seat` says; a
    /// tenant's API key acts for no seat (PERMISSION_DENIED in its own game, NOT_FOUND in another
    /// tenant's).
    pub fn required_seat(
        &self,
        meta: &crate::store::GameMeta,
        state: &dyn crate::hosting::GameState,
        metadata: &tonic::metadata::MetadataMap,
    ) -> ServiceResult<crate::games::Seat> {
        match self.key_holder(meta, metadata)? {
            Some(()) => Err(ServiceError::PermissionDenied(
                "a tenant's API key acts for no seat: send the seat's own token".into(),
            )),
            None => super::auth::required_seat(meta, state, metadata),
        }
    }

    /// Whether the caller may redeem an invitation to `meta`'s game: anyone for a game without a
    /// tenant, only the owning tenant's key for a tenant's game (NOT_FOUND otherwise, as for a
    /// missing game: a code joins only games of its tenant).
    pub fn may_join(
        &self,
        meta: &crate::store::GameMeta,
        metadata: &tonic::metadata::MetadataMap,
    ) -> ServiceResult<()> {
        match self.key_holder(meta, metadata)? {
            Some(()) => Ok(()),
            None if meta.tenant.is_none() => Ok(()),
            None => Err(ServiceError::NotFound(meta.game_id.clone())),
        }
    }

    /// `Some` when the bearer token is a live key of the tenant owning `meta`'s game, `None` when
    /// it is no tenant key; NOT_FOUND for another tenant's key, UNAUTHENTICATED for a dead one.
    fn key_holder(
        &self,
        meta: &crate::store::GameMeta,
        metadata: &tonic::metadata::MetadataMap,
    ) -> ServiceResult<Option<()>> {
        // Spans and access-log lines name the game's tenant (not another tenant's caller).
        if let Some(tenant) = &meta.tenant {
            tracing::Span::current().record("tenant", tenant.as_str());
        }
        match bearer_token(metadata)? {
            Some(token) if token.starts_with(KEY_PREFIX) => {
                let tenant = self.authenticate(&token)?;
                if meta.tenant.as_deref() == Some(tenant.as_str()) {
                    Ok(Some(()))
                } else {
                    Err(ServiceError::NotFound(meta.game_id.clone()))
                }
            }
            _ => Ok(None),
        }
    }

    /// Tenant `id`'s quotas, as this replica last read them (none for an unknown tenant).
    pub fn limits(&self, id: &str) -> TenantLimits {
        self.current()
            .and_then(|directory| directory.tenants.get(id).map(|(record, _)| record.limits))
            .unwrap_or_default()
    }

    /// The tenant whose live key `key` is.
    fn authenticate(&self, key: &str) -> ServiceResult<String> {
        let refused = || {
            ServiceError::Unauthenticated(
                "the tenant API key is unknown or revoked: ask the operator for a valid one".into(),
            )
        };
        let directory = self.current().ok_or_else(|| {
            ServiceError::Store(crate::store::StoreError::Unavailable(
                "this replica has not read the tenant directory yet; retry shortly".into(),
            ))
        })?;
        let key_id = parse_key_id(key).ok_or_else(refused)?;
        let (tenant, hash) = directory.keys.get(key_id).ok_or_else(refused)?;
        if constant_time_eq(hash, &hash_token(key)) {
            Ok(tenant.clone())
        } else {
            Err(refused())
        }
    }

    /// Every tenant, by id.
    pub async fn list(&self) -> ServiceResult<Vec<TenantRecord>> {
        self.reload().await?;
        let directory = self.current().ok_or_else(|| {
            ServiceError::Store(crate::store::StoreError::Unavailable(
                "the tenant directory could not be read".into(),
            ))
        })?;
        let mut records: Vec<TenantRecord> = directory
            .tenants
            .values()
            .map(|(record, _)| record.clone())
            .collect();
        records.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(records)
    }

    /// Creates a tenant. ALREADY_EXISTS if the id is taken.
    pub async fn create(
        &self,
        id: &str,
        display_name: &str,
        limits: TenantLimits,
    ) -> ServiceResult<TenantRecord> {
        check_tenant_id(id)?;
        check_display_name(display_name)?;
        self.reload().await?;
        if self
            .current()
            .is_some_and(|directory| directory.tenants.len() >= MAX_TENANTS)
        {
            return Err(ServiceError::Exhausted(format!(
                "this deployment holds {MAX_TENANTS} tenants, the most it keeps"
            )));
        }
        let record = TenantRecord {
            format: RECORD_FORMAT,
            id: id.to_owned(),
            display_name: display_name.to_owned(),
            created_at_ms: unix_millis(),
            keys: Vec::new(),
            limits,
            webhooks: Vec::new(),
        };
        match self
            .store
            .put_tenant(id, &encode_record(&record)?, 0)
            .await?
        {
            Some(_) => {
                self.reload().await?;
                Ok(record)
            }
            None => Err(ServiceError::Taken(format!("tenant {id} already exists"))),
        }
    }

    /// Issues a new key for tenant `id`: returns the key (shown this once) and the record.
    pub async fn issue_key(&self, id: &str) -> ServiceResult<(String, TenantRecord)> {
        let (key, key_id, hash) = new_key()?;
        let record = self
            .update(id, |record| {
                if record.live_keys().count() >= MAX_LIVE_KEYS {
                    return Err(ServiceError::FailedPrecondition(format!(
                        "tenant {id} already holds {MAX_LIVE_KEYS} valid keys: revoke one \
                         (RevokeTenantKey) before issuing another"
                    )));
                }
                record.keys.push(KeyRecord {
                    id: key_id.clone(),
                    sha256: hex::encode(hash),
                    created_at_ms: unix_millis(),
                    revoked_at_ms: None,
                });
                while record.keys.len() > MAX_KEY_RECORDS {
                    match record
                        .keys
                        .iter()
                        .position(|key| key.revoked_at_ms.is_some())
                    {
                        Some(oldest_revoked) => record.keys.remove(oldest_revoked),
                        None => break,
                    };
                }
                Ok(())
            })
            .await?;
        Ok((key, record))
    }

    /// Revokes key `key_id` of tenant `id`: refused on this replica at once, on every other
    /// within [`TENANT_REFRESH`]. Revoking a revoked key changes nothing.
    pub async fn revoke_key(&self, id: &str, key_id: &str) -> ServiceResult<TenantRecord> {
        self.update(id, |record| {
            let key = record
                .keys
                .iter_mut()
                .find(|key| key.id == key_id)
                .ok_or_else(|| {
                    ServiceError::Missing(format!(
                        "tenant {id} has no key {}",
                        super::error::bounded(key_id)
                    ))
                })?;
            key.revoked_at_ms.get_or_insert_with(unix_millis);
            Ok(())
        })
        .await
    }

    /// Whether the directory holds any tenant, as this replica last read it: without one no game
    /// has a tenant, so nothing has notifications to deliver.
    pub fn any(&self) -> bool {
        self.current()
            .is_some_and(|directory| !directory.tenants.is_empty())
    }

    /// Tenant `id`'s webhooks, as this replica last read them (none for an unknown tenant).
    pub fn webhooks(&self, id: &str) -> Vec<super::webhooks::WebhookRecord> {
        self.current()
            .and_then(|directory| {
                directory
                    .tenants
                    .get(id)
                    .map(|(record, _)| record.webhooks.clone())
            })
            .unwrap_or_default()
    }

    /// Adds `webhook` to tenant `id` (at most `super::webhooks::MAX_WEBHOOKS`).
    pub async fn add_webhook(
        &self,
        id: &str,
        webhook: super::webhooks::WebhookRecord,
    ) -> ServiceResult<TenantRecord> {
        self.update(id, |record| {
            if record.webhooks.len() >= super::webhooks::MAX_WEBHOOKS {
                return Err(ServiceError::FailedPrecondition(format!(
                    "tenant {id} already holds {} webhooks: remove one (RemoveWebhook) first",
                    super::webhooks::MAX_WEBHOOKS
                )));
            }
            record.webhooks.push(webhook.clone());
            Ok(())
        })
        .await
    }

    /// Removes webhook `webhook_id` of tenant `id`.
    pub async fn remove_webhook(&self, id: &str, webhook_id: &str) -> ServiceResult<TenantRecord> {
        self.update(id, |record| {
            let before = record.webhooks.len();
            record.webhooks.retain(|hook| hook.id != webhook_id);
            if record.webhooks.len() == before {
                return Err(ServiceError::Missing(format!(
                    "tenant {id} has no webhook {}",
                    super::error::bounded(webhook_id)
                )));
            }
            Ok(())
        })
        .await
    }

    /// Replaces tenant `id`'s quotas.
    pub async fn set_limits(&self, id: &str, limits: TenantLimits) -> ServiceResult<TenantRecord> {
        self.update(id, |record| {
            record.limits = limits;
            Ok(())
        })
        .await
    }

    /// Reads tenant `id`, changes it with `change` and writes it back, again if another write
    /// got in between.
    async fn update(
        &self,
        id: &str,
        change: impl Fn(&mut TenantRecord) -> ServiceResult<()>,
    ) -> ServiceResult<TenantRecord> {
        check_tenant_id(id)?;
        for _ in 0..8 {
            self.reload().await?;
            let (mut record, generation) = self
                .current()
                .and_then(|directory| directory.tenants.get(id).cloned())
                .ok_or_else(|| ServiceError::Missing(format!("tenant {id} does not exist")))?;
            change(&mut record)?;
            if self
                .store
                .put_tenant(id, &encode_record(&record)?, generation)
                .await?
                .is_some()
            {
                self.reload().await?;
                return Ok(record);
            }
        }
        Err(ServiceError::Contention)
    }

    /// Writes the tenants `file` declares, each as the file says (see [`TenantsFile`]); tenants
    /// the file does not name are left alone. Every replica may do this at start: a tenant
    /// already as declared is not written again.
    pub async fn declare(&self, file: &TenantsFile) -> ServiceResult<()> {
        for declared in &file.tenants {
            check_tenant_id(&declared.id)?;
            check_display_name(&declared.display_name)?;
            let live = declared.keys.len();
            if live > MAX_LIVE_KEYS {
                return Err(ServiceError::InvalidArgument(format!(
                    "tenant {} declares {live} keys; at most {MAX_LIVE_KEYS} are valid at once",
                    declared.id
                )));
            }
            for key in &declared.keys {
                if !is_key_id(&key.id) || decode_hash(&key.sha256).is_none() {
                    return Err(ServiceError::InvalidArgument(format!(
                        "tenant {}: a key needs `id` (16 hex digits) and `sha256` (64 hex \
                         digits), as `tabula tenant-key` prints them",
                        declared.id
                    )));
                }
            }
            for _ in 0..8 {
                self.reload().await?;
                let stored = self
                    .current()
                    .and_then(|directory| directory.tenants.get(&declared.id).cloned());
                let generation = stored.as_ref().map_or(0, |(_, generation)| *generation);
                let now = unix_millis();
                let record = TenantRecord {
                    format: RECORD_FORMAT,
                    id: declared.id.clone(),
                    display_name: declared.display_name.clone(),
                    created_at_ms: stored
                        .as_ref()
                        .map_or(now, |(record, _)| record.created_at_ms),
                    keys: declared
                        .keys
                        .iter()
                        .map(|key| KeyRecord {
                            id: key.id.clone(),
                            sha256: key.sha256.to_ascii_lowercase(),
                            created_at_ms: stored
                                .as_ref()
                                .and_then(|(record, _)| {
                                    record.keys.iter().find(|old| old.id == key.id)
                                })
                                .map_or(now, |old| old.created_at_ms),
                            revoked_at_ms: None,
                        })
                        .collect(),
                    limits: declared.limits,
                    // A tenants file declares no webhooks: those added through the API stay.
                    webhooks: stored
                        .as_ref()
                        .map(|(record, _)| record.webhooks.clone())
                        .unwrap_or_default(),
                };
                if stored.as_ref().is_some_and(|(old, _)| *old == record) {
                    break;
                }
                if self
                    .store
                    .put_tenant(&declared.id, &encode_record(&record)?, generation)
                    .await?
                    .is_some()
                {
                    break;
                }
            }
        }
        self.reload().await
    }

    /// Keeps this replica's copy current until `stop`: one revision read per [`TENANT_REFRESH`].
    ///
    /// While the store is away the refresh fails every pass: the first failure is logged, then at
    /// most one line per [`FAILURE_LOG_EVERY`], and one when it succeeds again, as the other
    /// background passes do (an outage is a few lines, not one per pass).
    pub(super) async fn follow(self: Arc<Self>, mut stop: super::stop::StopSignal) {
        let mut last_logged: Option<std::time::Instant> = None;
        loop {
            match self.refresh().await {
                Err(error) => {
                    let now = std::time::Instant::now();
                    if last_logged.is_none_or(|at| now.duration_since(at) >= FAILURE_LOG_EVERY) {
                        tracing::warn!(
                            %error,
                            "tenant directory not refreshed; retried every {} s, logged again \
                             every {} s while it fails",
                            TENANT_REFRESH.as_secs(),
                            FAILURE_LOG_EVERY.as_secs()
                        );
                        last_logged = Some(now);
                    }
                }
                Ok(()) => {
                    if last_logged.take().is_some() {
                        tracing::info!("tenant directory refreshed again");
                    }
                }
            }
            if !stop.pause(TENANT_REFRESH).await {
                return;
            }
        }
    }
}

/// The tenants an operator declares in a file (`--tenants FILE`), JSON:
///
/// ```json
/// {"tenants": [{"id": "acme", "display_name": "Acme Games",
///               "keys": [{"id": "0123456789abcdef", "sha256": "<64 hex digits>"}]}]}
/// ```
///
/// `tabula tenant-key` makes a key and prints its file entry. A tenant the file names gets
/// exactly the keys the file lists (others are dropped at the next start).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantsFile {
    /// The tenants declared.
    pub tenants: Vec<DeclaredTenant>,
}

/// One tenant of a [`TenantsFile`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredTenant {
    /// The tenant's id.
    pub id: String,
    /// What the operator calls it.
    #[serde(default)]
    pub display_name: String,
    /// Its valid keys (at most two): any other key it held is dropped.
    #[serde(default)]
    pub keys: Vec<DeclaredKey>,
    /// Its quotas (none when absent).
    #[serde(default)]
    pub limits: TenantLimits,
}

/// A key of a [`DeclaredTenant`]: its id and hash, never the key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredKey {
    /// The key id (16 hex digits, after `tbk_` in the key).
    pub id: String,
    /// SHA-256 of the whole key (64 hex digits).
    pub sha256: String,
}

impl TenantsFile {
    /// Reads a tenants file, refusing any field it does not know: a misspelt quota would
    /// otherwise be no quota at all.
    pub fn parse(text: &str) -> Result<TenantsFile, String> {
        let file: TenantsFile = serde_json::from_str(text).map_err(|e| e.to_string())?;
        // `TenantLimits` reads stored records leniently; the file's limits are checked against
        // its fields here, named as the type serializes them.
        let all = TenantLimits {
            active_games: Some(0),
            games_per_minute: Some(0),
            acts_per_second: Some(0),
            observe_streams: Some(0),
            bot_seats: Some(0),
            bot_think_ms_per_minute: Some(0),
        };
        let known = serde_json::to_value(all).map_err(|e| e.to_string())?;
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let declared = value["tenants"].as_array().cloned().unwrap_or_default();
        for (index, tenant) in declared.iter().enumerate() {
            if let Some(limits) = tenant.get("limits").and_then(|limits| limits.as_object())
                && let Some(unknown) = limits.keys().find(|name| known.get(name).is_none())
            {
                return Err(format!(
                    "tenants[{index}].limits: unknown quota {unknown:?}; the quotas are {}",
                    known
                        .as_object()
                        .map(|names| names.keys().cloned().collect::<Vec<_>>().join(", "))
                        .unwrap_or_default()
                ));
            }
        }
        Ok(file)
    }
}

/// A new key, its id and its SHA-256.
pub fn new_key() -> ServiceResult<(String, String, [u8; 32])> {
    let mut bytes = [0u8; 40];
    getrandom::fill(&mut bytes)
        .map_err(|e| ServiceError::Internal(format!("no OS randomness: {e}")))?;
    let key_id = hex::encode(&bytes[..8]);
    let key = format!("{KEY_PREFIX}{key_id}_{}", hex::encode(&bytes[8..]));
    let hash = hash_token(&key);
    Ok((key, key_id, hash))
}

/// The key id of a well-formed key.
fn parse_key_id(key: &str) -> Option<&str> {
    let rest = key.strip_prefix(KEY_PREFIX)?;
    let (key_id, secret) = rest.split_once('_')?;
    (is_key_id(key_id) && secret.len() == 64 && secret.bytes().all(|b| b.is_ascii_hexdigit()))
        .then_some(key_id)
}

fn is_key_id(text: &str) -> bool {
    text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

fn decode_hash(text: &str) -> Option<[u8; 32]> {
    hex::decode(text).ok()?.try_into().ok()
}

fn encode_record(record: &TenantRecord) -> ServiceResult<Vec<u8>> {
    serde_json::to_vec(record)
        .map_err(|e| ServiceError::Internal(format!("tenant record does not encode: {e}")))
}

fn decode_record(bytes: &[u8]) -> Result<TenantRecord, String> {
    let record: TenantRecord =
        serde_json::from_slice(bytes).map_err(|e| format!("does not decode: {e}"))?;
    if record.format != RECORD_FORMAT {
        return Err(format!(
            "format {} is not one this build (Tabula {}) knows",
            record.format,
            crate::RELEASE
        ));
    }
    Ok(record)
}

/// Tenant ids: 1 to 64 of `a-z`, `0-9`, `-` and `_`, so that they fit in logs, metric labels
/// and keys as they are.
pub fn check_tenant_id(id: &str) -> ServiceResult<()> {
    let valid = !id.is_empty()
        && id.len() <= MAX_TENANT_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if valid {
        Ok(())
    } else {
        Err(ServiceError::InvalidArgument(format!(
            "a tenant id is 1 to {MAX_TENANT_ID_LEN} characters of a-z, 0-9, '-' and '_'; got {:?}",
            super::error::bounded(id)
        )))
    }
}

fn check_display_name(name: &str) -> ServiceResult<()> {
    if name.len() > MAX_DISPLAY_NAME_LEN || name.chars().any(char::is_control) {
        return Err(ServiceError::InvalidArgument(format!(
            "a tenant's display name is at most {MAX_DISPLAY_NAME_LEN} bytes, without control \
             characters"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::memory::MemoryStore;

    fn metadata(token: &str) -> tonic::metadata::MetadataMap {
        let mut metadata = tonic::metadata::MetadataMap::new();
        metadata.insert(
            "authorization",
            format!("Bearer {token}").parse().expect("ascii"),
        );
        metadata
    }

    #[tokio::test]
    async fn keys_authenticate_their_tenant_until_revoked() {
        let tenants = Tenants::new(Arc::new(MemoryStore::default()));
        tenants
            .create("acme", "Acme", TenantLimits::default())
            .await
            .expect("created");
        let (key, record) = tenants.issue_key("acme").await.expect("issued");
        assert!(key.starts_with(KEY_PREFIX));
        // The record holds the hash, never the key.
        let stored = serde_json::to_string(&record).expect("encodes");
        assert!(!stored.contains(&key[KEY_PREFIX.len() + 17..]));
        assert_eq!(
            tenants.caller(&metadata(&key), None).expect("known"),
            Caller::Tenant("acme".into())
        );
        // Two at once, not three.
        let (second, _) = tenants.issue_key("acme").await.expect("second key");
        let third = tenants.issue_key("acme").await;
        assert!(matches!(third, Err(ServiceError::FailedPrecondition(_))));
        tenants
            .revoke_key("acme", &record.keys[0].id)
            .await
            .expect("revoked");
        assert!(matches!(
            tenants.caller(&metadata(&key), None),
            Err(ServiceError::Unauthenticated(_))
        ));
        assert_eq!(
            tenants
                .caller(&metadata(&second), None)
                .expect("still valid"),
            Caller::Tenant("acme".into())
        );
        // A key with a right id and a wrong secret is refused.
        let forged = format!("{}{}", &second[..second.len() - 1], "0");
        let forged = if forged == second {
            format!("{}{}", &second[..second.len() - 1], "1")
        } else {
            forged
        };
        assert!(tenants.caller(&metadata(&forged), None).is_err());
    }

    #[tokio::test]
    async fn a_declared_file_is_written_once_and_read_by_every_replica() {
        let store = Arc::new(MemoryStore::default());
        let (key, key_id, hash) = new_key().expect("key");
        let file = TenantsFile {
            tenants: vec![DeclaredTenant {
                id: "acme".into(),
                display_name: "Acme".into(),
                keys: vec![DeclaredKey {
                    id: key_id,
                    sha256: hex::encode(hash),
                }],
                limits: TenantLimits::default(),
            }],
        };
        let first = Tenants::new(store.clone());
        first.declare(&file).await.expect("declared");
        let revision = store.tenants_revision().await.expect("revision");
        let second = Tenants::new(store.clone());
        second.declare(&file).await.expect("declared again");
        assert_eq!(
            store.tenants_revision().await.expect("revision"),
            revision,
            "an unchanged declaration writes nothing"
        );
        assert_eq!(
            second.caller(&metadata(&key), None).expect("known"),
            Caller::Tenant("acme".into())
        );
    }

    #[test]
    fn records_ignore_quotas_of_later_builds_and_files_refuse_unknown_ones() {
        // A record written by a later build, with a quota this one does not know.
        let later = br#"{"format":1,"id":"acme","display_name":"","created_at_ms":1,"keys":[],
            "limits":{"acts_per_second":5,"quota_of_the_future":1}}"#;
        let record = decode_record(later).expect("read by the previous build");
        assert_eq!(record.limits.acts_per_second, Some(5));
        // A file is the operator's own: a misspelt quota is an error, not no quota.
        let file = r#"{"tenants":[{"id":"acme","limits":{"acts_per_secnd":5}}]}"#;
        let refused = TenantsFile::parse(file).expect_err("a misspelt quota");
        assert!(refused.contains("acts_per_secnd"), "{refused}");
        let good = r#"{"tenants":[{"id":"acme","limits":{"acts_per_second":5}}]}"#;
        let parsed = TenantsFile::parse(good).expect("a good file");
        assert_eq!(parsed.tenants[0].limits.acts_per_second, Some(5));
    }

    #[test]
    fn tenant_ids_are_short_and_plain() {
        assert!(check_tenant_id("acme-games_2").is_ok());
        for bad in ["", "Acme", "a b", "a:b", &"x".repeat(65)] {
            assert!(check_tenant_id(bad).is_err(), "{bad:?}");
        }
    }
}
