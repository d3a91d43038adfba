//! The archive: where a finished game's complete log goes before it leaves the store
//! (`--archive`, issue #14 item 3). A directory or an S3-compatible object store, through the
//! `object_store` crate; one object per game, `games/<id>`, written once and never changed (a
//! finished game's log is final).
//!
//! An archived game holds everything ExportLog, VerifyLog, GetView and Observe need: the meta
//! (config, rules version, seed, seat token hashes, creation time, players), when it finished, and
//! every log entry. Snapshots are not archived: they are only a cache of a replay.

use std::sync::Arc;
use std::time::Duration;

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use crate::games::Seed;
use crate::proto::v1::GameKind;
use crate::store::{GameMeta, LogEntry, PlayerMeta};

/// The first bytes of every archived game: what it is and its format's version, so a later format
/// can tell old objects apart. Every magic keeps its reader for good: archived games never change.
const MAGIC_V1: &[u8] = b"tabula-archive-v1\n";
/// Format 2 adds the release that created the game (`created_by`).
const MAGIC_V2: &[u8] = b"tabula-archive-v2\n";
/// What every archive magic starts with; after it, the format's number.
const MAGIC_PREFIX: &[u8] = b"tabula-archive-v";
/// What may follow a record, in every format: fields added within a format, which a release
/// reading the format without them skips. Postcard reads a record and ignores the bytes after it,
/// so 1.0.0 reads format 1 with a trailer exactly as without one: the trailer carries what a game
/// must not lose even while the previous release still writes and reads the archive (a game's
/// tenant, so that the tenant's key still reaches its archived game). The trailer has its own
/// magic and version; a later trailer is skipped like an absent one.
const TRAILER_V1: &[u8] = b"tabula-archive-trailer-v1\n";
/// Trailer 2 adds the game's signed commitment (issue #29), so an archived game's exported log
/// stays signed and chained.
const TRAILER_V2: &[u8] = b"tabula-archive-trailer-v2\n";
/// What every trailer magic starts with.
const TRAILER_PREFIX: &[u8] = b"tabula-archive-trailer-v";

/// The formats of archived games this build reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// Since the archive's start: no `created_by`.
    V1,
    /// Since 1.1.0 (read; written from the release after, docs/compatibility.md): format 1 and
    /// the release that created the game.
    V2,
}

/// The format this build writes. Expand, then contract (docs/compatibility.md): 1.1.0 reads
/// format 2 but still writes format 1, which 1.0.0 replicas, running beside it during the rollout,
/// read; the release after 1.1.0 writes format 2.
pub const WRITTEN_ARCHIVE_FORMAT: ArchiveFormat = ArchiveFormat::V1;

/// The longest an archived game may be when read back: far above any real game's log (a few
/// thousand entries of at most a few hundred bytes), and a bound on what a corrupt or foreign
/// object can make a replica hold.
const MAX_ARCHIVED_BYTES: u64 = 64 * 1024 * 1024;

/// Why an archive operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// The archive URL is not one of the supported forms.
    #[error("--archive {0}")]
    BadUrl(String),
    /// The archive did not answer (in time), or refused: retrying may help.
    #[error("archive unavailable: {0}")]
    Unavailable(String),
    /// An archived object in a format of a later release than this build.
    #[error(
        "archived game {game_id} is in archive format {format}, written by a later release than \
         this one ({release}): a replica of that release reads it"
    )]
    NewerFormat {
        /// The game.
        game_id: String,
        /// The format's number, as the object names it (bounded).
        format: String,
        /// This build's release.
        release: &'static str,
    },
    /// An archived object does not decode.
    #[error("archived game {game_id} is corrupt: {reason}")]
    Corrupt {
        /// The game.
        game_id: String,
        /// What is wrong.
        reason: String,
    },
}

/// A finished game as the archive keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArchivedGame {
    /// What never changes about the game.
    pub meta: GameMeta,
    /// When the entry that ended it was appended (ms since the Unix epoch).
    pub finished_at_ms: u64,
    /// Its whole log, from version 1.
    pub entries: Vec<LogEntry>,
}

/// The archived form (postcard): a mirror of [`ArchivedGame`] with plain field types.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    game_id: String,
    kind: i32,
    config: Vec<u8>,
    rules_version: String,
    seed: [u8; 32],
    token_hashes: Vec<[u8; 32]>,
    created_at_ms: u64,
    players: Vec<PlayerMeta>,
    finished_at_ms: u64,
    /// (version, seat, action, request id, server time in ms) of each entry.
    entries: Vec<(u64, u32, Vec<u8>, String, u64)>,
}

/// Format 2: format 1's record, then the release that created the game. Postcard has no field
/// names, so a field is added by a new format, never by changing a record.
#[derive(serde::Serialize, serde::Deserialize)]
struct RecordV2 {
    record: Record,
    created_by: String,
}

/// Trailer 1: the tenant owning the game (none for a game created without a tenant key).
#[derive(serde::Serialize, serde::Deserialize)]
struct TrailerV1 {
    tenant: Option<String>,
}

/// Trailer 2: trailer 1, and the game's signed commitment (empty for a game without one).
#[derive(serde::Serialize, serde::Deserialize)]
struct TrailerV2 {
    tenant: Option<String>,
    signed_commitment: Vec<u8>,
}

impl ArchivedGame {
    /// The archived bytes, in the format this build writes ([`WRITTEN_ARCHIVE_FORMAT`]).
    pub fn encode(&self) -> Vec<u8> {
        self.encode_as(WRITTEN_ARCHIVE_FORMAT)
    }

    /// The archived bytes in `format` (format 1 leaves out `created_by`).
    pub fn encode_as(&self, format: ArchiveFormat) -> Vec<u8> {
        let meta = &self.meta;
        let record = Record {
            game_id: meta.game_id.clone(),
            kind: meta.kind as i32,
            config: meta.config.clone(),
            rules_version: meta.rules_version.clone(),
            seed: meta.seed.0,
            token_hashes: meta.token_hashes.clone(),
            created_at_ms: meta.created_at_ms,
            players: meta.players.clone(),
            finished_at_ms: self.finished_at_ms,
            entries: self
                .entries
                .iter()
                .map(|e| {
                    (
                        e.version,
                        e.seat,
                        e.action.clone(),
                        e.request_id.clone(),
                        e.server_time_ms,
                    )
                })
                .collect(),
        };
        // Encoding plain data into a Vec cannot fail.
        let mut bytes = match format {
            ArchiveFormat::V1 => {
                let mut bytes = MAGIC_V1.to_vec();
                bytes.extend(postcard::to_allocvec(&record).unwrap_or_default());
                bytes
            }
            ArchiveFormat::V2 => {
                let mut bytes = MAGIC_V2.to_vec();
                let record = RecordV2 {
                    record,
                    created_by: meta.created_by.clone(),
                };
                bytes.extend(postcard::to_allocvec(&record).unwrap_or_default());
                bytes
            }
        };
        // Only when there is something to carry: a game without a tenant or a signed commitment
        // is archived exactly as before trailers existed.
        if meta.tenant.is_some() || !meta.signed_commitment.is_empty() {
            bytes.extend(TRAILER_V2);
            let trailer = TrailerV2 {
                tenant: meta.tenant.clone(),
                signed_commitment: meta.signed_commitment.clone(),
            };
            bytes.extend(postcard::to_allocvec(&trailer).unwrap_or_default());
        }
        bytes
    }

    /// Decodes what [`ArchivedGame::encode`] wrote for `game_id`.
    pub fn decode(game_id: &str, bytes: &[u8]) -> Result<ArchivedGame, ArchiveError> {
        let corrupt = |reason: String| ArchiveError::Corrupt {
            game_id: game_id.to_owned(),
            reason,
        };
        let decode_error = |e: postcard::Error| corrupt(format!("does not decode: {e}"));
        let (record, created_by, rest) = if let Some(body) = bytes.strip_prefix(MAGIC_V1) {
            // Format 1 does not keep it.
            let (record, rest): (Record, _) =
                postcard::take_from_bytes(body).map_err(decode_error)?;
            (record, String::new(), rest)
        } else if let Some(body) = bytes.strip_prefix(MAGIC_V2) {
            let (RecordV2 { record, created_by }, rest) =
                postcard::take_from_bytes(body).map_err(decode_error)?;
            (record, created_by, rest)
        } else if let Some(rest) = bytes.strip_prefix(MAGIC_PREFIX) {
            // A later format's magic: its number, then a newline.
            let format: String = rest
                .iter()
                .take_while(|byte| byte.is_ascii_digit())
                .take(8)
                .map(|&byte| char::from(byte))
                .collect();
            if format.is_empty() {
                return Err(corrupt("not a Tabula archive (unknown format)".into()));
            }
            return Err(ArchiveError::NewerFormat {
                game_id: game_id.to_owned(),
                format,
                release: crate::RELEASE,
            });
        } else {
            return Err(corrupt("not a Tabula archive (unknown format)".into()));
        };
        if record.game_id != game_id {
            return Err(corrupt(format!("holds game {}", record.game_id)));
        }
        let (tenant, signed_commitment) = if rest.is_empty() {
            (None, Vec::new())
        } else if let Some(trailer) = rest.strip_prefix(TRAILER_V1) {
            let trailer: TrailerV1 = postcard::from_bytes(trailer).map_err(decode_error)?;
            (trailer.tenant, Vec::new())
        } else if let Some(trailer) = rest.strip_prefix(TRAILER_V2) {
            let trailer: TrailerV2 = postcard::from_bytes(trailer).map_err(decode_error)?;
            (trailer.tenant, trailer.signed_commitment)
        } else if rest.starts_with(TRAILER_PREFIX) {
            // A later release's trailer: what it adds is skipped, as 1.0.0 skips trailer 1.
            (None, Vec::new())
        } else {
            return Err(corrupt("unknown bytes after its record".into()));
        };
        let kind = GameKind::try_from(record.kind)
            .map_err(|_| corrupt(format!("unknown game kind {}", record.kind)))?;
        let entries: Vec<LogEntry> = record
            .entries
            .into_iter()
            .map(
                |(version, seat, action, request_id, server_time_ms)| LogEntry {
                    version,
                    seat,
                    action,
                    request_id,
                    server_time_ms,
                },
            )
            .collect();
        if entries
            .iter()
            .enumerate()
            .any(|(i, e)| e.version != i as u64 + 1)
        {
            return Err(corrupt("its log has a gap".into()));
        }
        Ok(ArchivedGame {
            meta: GameMeta {
                game_id: record.game_id,
                kind,
                config: record.config,
                rules_version: record.rules_version,
                seed: Seed(record.seed),
                token_hashes: record.token_hashes,
                created_at_ms: record.created_at_ms,
                players: record.players,
                created_by,
                tenant,
                // Not archived (see `GameMeta::webhooks`).
                webhooks: Vec::new(),
                seating: Vec::new(),
                signed_commitment,
                // Not archived (see `GameMeta::creation`).
                creation: Vec::new(),
            },
            finished_at_ms: record.finished_at_ms,
            entries,
        })
    }
}

/// Where archived games are written and read, with a deadline on every call.
pub struct Archive {
    objects: Arc<dyn ObjectStore>,
    /// What the archive is, for logs (never credentials: they come from the environment).
    description: String,
    timeout: Duration,
}

impl std::fmt::Debug for Archive {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Archive")
            .field("at", &self.description)
            .finish()
    }
}

impl Archive {
    /// Opens the archive at `url`: `file:///path`, a plain path (a directory, created if missing),
    /// or `s3://bucket[/prefix]` (credentials, region and endpoint from the usual `AWS_*`
    /// environment variables: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
    /// `AWS_ENDPOINT_URL` for an S3-compatible server; an `http://` endpoint is allowed).
    /// `timeout` bounds every archive call.
    pub fn open(url: &str, timeout: Duration) -> Result<Archive, ArchiveError> {
        Self::open_with(url, timeout, &[])
    }

    /// [`Archive::open`] with S3 settings that take precedence over the environment's, named as
    /// `object_store`'s `AmazonS3ConfigKey` parses them (`aws_endpoint`, `aws_access_key_id`,
    /// `aws_secret_access_key`, `aws_region`, …): for embedding, and for tests that must not
    /// change their process's environment.
    pub fn open_with(
        url: &str,
        timeout: Duration,
        s3_settings: &[(&str, &str)],
    ) -> Result<Archive, ArchiveError> {
        let bad = |why: String| ArchiveError::BadUrl(format!("{url:?}: {why}"));
        let objects: Arc<dyn ObjectStore> = if let Some(rest) = url.strip_prefix("s3://") {
            let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
            if bucket.is_empty() {
                return Err(bad("no bucket (s3://bucket/prefix)".into()));
            }
            // reqwest's TLS uses the process's rustls provider; ring is the one this build has.
            // Already installed (by an earlier archive) is fine.
            let _ = rustls::crypto::ring::default_provider().install_default();
            let endpoint = std::env::var("AWS_ENDPOINT_URL")
                .or_else(|_| std::env::var("AWS_ENDPOINT"))
                .ok()
                .or_else(|| {
                    s3_settings
                        .iter()
                        .find(|(key, _)| key.contains("endpoint"))
                        .map(|(_, value)| (*value).to_owned())
                });
            let mut builder = object_store::aws::AmazonS3Builder::from_env()
                .with_bucket_name(bucket)
                .with_retry(object_store::RetryConfig {
                    max_retries: 2,
                    retry_timeout: timeout,
                    ..Default::default()
                });
            if std::env::var("AWS_REGION").is_err() && std::env::var("AWS_DEFAULT_REGION").is_err()
            {
                builder = builder.with_region("us-east-1");
            }
            if let Some(endpoint) = endpoint {
                if endpoint.starts_with("http://") {
                    builder = builder.with_allow_http(true);
                }
                builder = builder.with_endpoint(endpoint);
            }
            for (key, value) in s3_settings {
                let key: object_store::aws::AmazonS3ConfigKey = key
                    .parse()
                    .map_err(|e: object_store::Error| bad(e.to_string()))?;
                builder = builder.with_config(key, *value);
            }
            let s3 = builder.build().map_err(|e| bad(e.to_string()))?;
            let prefix = prefix.trim_matches('/');
            if prefix.is_empty() {
                Arc::new(s3)
            } else {
                Arc::new(object_store::prefix::PrefixStore::new(s3, prefix))
            }
        } else {
            let path = match url.strip_prefix("file://") {
                Some(path) => path,
                None if url.contains("://") => {
                    return Err(bad(
                        "expected file:///path, a path, or s3://bucket/prefix".into()
                    ));
                }
                None => url,
            };
            if path.is_empty() {
                return Err(bad("empty path".into()));
            }
            std::fs::create_dir_all(path).map_err(|e| bad(format!("cannot create it: {e}")))?;
            Arc::new(
                object_store::local::LocalFileSystem::new_with_prefix(path)
                    .map_err(|e| bad(e.to_string()))?,
            )
        };
        Ok(Archive {
            objects,
            description: url.to_owned(),
            timeout,
        })
    }

    /// What the archive is (its URL), for logs.
    pub fn description(&self) -> &str {
        &self.description
    }

    fn location(game_id: &str) -> ObjectPath {
        // Game ids are checked (letters, digits, '-', '_') before they reach here.
        ObjectPath::from(format!("games/{game_id}"))
    }

    /// Writes `game` (replacing an earlier write of the same game, which holds the same bytes: a
    /// finished game's log never changes). Returns once the archive confirmed the write: on a
    /// directory, the object is renamed into place; on S3, the PUT succeeded.
    pub async fn put(&self, game: &ArchivedGame) -> Result<(), ArchiveError> {
        let location = Self::location(&game.meta.game_id);
        let payload = PutPayload::from(game.encode());
        tokio::time::timeout(self.timeout, self.objects.put(&location, payload))
            .await
            .map_err(|_| self.timed_out("write"))?
            .map_err(|e| ArchiveError::Unavailable(e.to_string()))?;
        Ok(())
    }

    /// The archived game, or `None` when the archive does not have it.
    pub async fn get(&self, game_id: &str) -> Result<Option<ArchivedGame>, ArchiveError> {
        let location = Self::location(game_id);
        let read = async {
            let result = match self.objects.get(&location).await {
                Ok(result) => result,
                Err(object_store::Error::NotFound { .. }) => return Ok(None),
                Err(e) => return Err(ArchiveError::Unavailable(e.to_string())),
            };
            if result.meta.size > MAX_ARCHIVED_BYTES {
                return Err(ArchiveError::Corrupt {
                    game_id: game_id.to_owned(),
                    reason: format!("{} bytes, more than any game", result.meta.size),
                });
            }
            let bytes = result
                .bytes()
                .await
                .map_err(|e| ArchiveError::Unavailable(e.to_string()))?;
            Ok(Some(bytes))
        };
        let bytes = tokio::time::timeout(self.timeout, read)
            .await
            .map_err(|_| self.timed_out("read"))??;
        bytes
            .map(|bytes| ArchivedGame::decode(game_id, &bytes))
            .transpose()
    }

    fn timed_out(&self, what: &str) -> ArchiveError {
        ArchiveError::Unavailable(format!(
            "{what} at {} took longer than {:?}",
            self.description, self.timeout
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game() -> ArchivedGame {
        ArchivedGame {
            meta: GameMeta {
                game_id: "abc".into(),
                kind: GameKind::Manila,
                config: vec![1, 2, 3],
                rules_version: "1".into(),
                seed: Seed([7; 32]),
                token_hashes: vec![[1; 32], [2; 32]],
                created_at_ms: 5,
                ..GameMeta::for_tests("abc")
            },
            finished_at_ms: 9,
            entries: vec![
                LogEntry {
                    version: 1,
                    seat: 0,
                    action: vec![4],
                    request_id: "r".into(),
                    server_time_ms: 6,
                },
                LogEntry {
                    version: 2,
                    seat: u32::MAX,
                    action: vec![5],
                    request_id: String::new(),
                    server_time_ms: 8,
                },
            ],
        }
    }

    #[test]
    fn an_archived_game_decodes_to_itself() {
        let game = game();
        assert_eq!(ArchivedGame::decode("abc", &game.encode()).unwrap(), game);
    }

    #[test]
    fn format_2_keeps_the_release_that_created_the_game_and_format_1_reads_without_it() {
        let mut game = game();
        game.meta.created_by = "1.1.0".into();
        let v2 = game.encode_as(ArchiveFormat::V2);
        assert!(v2.starts_with(b"tabula-archive-v2\n"));
        assert_eq!(ArchivedGame::decode("abc", &v2).unwrap(), game);
        let v1 = game.encode_as(ArchiveFormat::V1);
        assert!(v1.starts_with(b"tabula-archive-v1\n"));
        let read = ArchivedGame::decode("abc", &v1).unwrap();
        assert_eq!(read.meta.created_by, "");
        assert_eq!(read.entries, game.entries);
        // Until the contract step, what this build writes is what 1.0.0 reads.
        assert_eq!(game.encode(), v1);
    }

    #[test]
    fn the_trailer_keeps_the_tenant_in_every_format_and_the_previous_reader_skips_it() {
        let mut game = game();
        game.meta.tenant = Some("alpha".into());
        game.meta.created_by = "1.1.0".into();
        let v2 = game.encode_as(ArchiveFormat::V2);
        assert_eq!(ArchivedGame::decode("abc", &v2).unwrap(), game);
        let v1 = game.encode_as(ArchiveFormat::V1);
        let read = ArchivedGame::decode("abc", &v1).unwrap();
        assert_eq!(read.meta.tenant.as_deref(), Some("alpha"));
        // 1.0.0's reader: the record alone, with `from_bytes`, which ignores what follows it.
        let previous: Record = postcard::from_bytes(&v1[MAGIC_V1.len()..]).unwrap();
        let without: Record = postcard::from_bytes(
            &ArchivedGame {
                meta: GameMeta {
                    tenant: None,
                    webhooks: Vec::new(),
                    seating: Vec::new(),
                    signed_commitment: Vec::new(),
                    creation: Vec::new(),
                    ..game.meta.clone()
                },
                ..game.clone()
            }
            .encode_as(ArchiveFormat::V1)[MAGIC_V1.len()..],
        )
        .unwrap();
        assert_eq!(
            postcard::to_allocvec(&previous).unwrap(),
            postcard::to_allocvec(&without).unwrap()
        );
        // A game without a tenant has no trailer: byte for byte what 1.0.0 writes.
        game.meta.tenant = None;
        assert!(!contains(&game.encode(), TRAILER_PREFIX));
        // A later trailer is skipped; bytes that are no trailer are damage.
        let mut later = game.encode();
        later.extend(b"tabula-archive-trailer-v3\nwhatever");
        assert_eq!(
            ArchivedGame::decode("abc", &later).unwrap().meta.tenant,
            None
        );
        let mut damaged = game.encode();
        damaged.extend(b"junk");
        assert!(matches!(
            ArchivedGame::decode("abc", &damaged),
            Err(ArchiveError::Corrupt { .. })
        ));
    }

    #[test]
    fn trailer_2_keeps_the_signed_commitment_and_trailer_1_is_still_read() {
        let mut game = game();
        game.meta.signed_commitment = b"signed bytes".to_vec();
        let encoded = game.encode();
        assert!(contains(&encoded, TRAILER_V2));
        assert_eq!(ArchivedGame::decode("abc", &encoded).unwrap(), game);
        // What builds wrote before trailer 2: trailer 1, the tenant alone.
        let mut v1_trailer = ArchivedGame {
            meta: GameMeta {
                signed_commitment: Vec::new(),
                creation: Vec::new(),
                ..game.meta.clone()
            },
            ..game.clone()
        }
        .encode();
        v1_trailer.extend(TRAILER_V1);
        v1_trailer.extend(
            postcard::to_allocvec(&TrailerV1 {
                tenant: Some("alpha".into()),
            })
            .unwrap(),
        );
        let read = ArchivedGame::decode("abc", &v1_trailer).unwrap();
        assert_eq!(read.meta.tenant.as_deref(), Some("alpha"));
        assert!(read.meta.signed_commitment.is_empty());
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    #[test]
    fn a_later_format_is_refused_naming_it_not_taken_for_damage() {
        let mut bytes = b"tabula-archive-v3\n".to_vec();
        bytes.extend(&game().encode()[MAGIC_V1.len()..]);
        let refused = ArchivedGame::decode("abc", &bytes).expect_err("format 3");
        assert!(
            matches!(&refused, ArchiveError::NewerFormat { format, .. } if format == "3"),
            "{refused}"
        );
        assert!(refused.to_string().contains("later release"), "{refused}");
        let refused = ArchivedGame::decode("abc", b"tabula-archive-vX\n").expect_err("no number");
        assert!(matches!(refused, ArchiveError::Corrupt { .. }), "{refused}");
    }

    #[test]
    fn a_foreign_or_misplaced_object_is_refused() {
        let bytes = game().encode();
        assert!(ArchivedGame::decode("other", &bytes).is_err());
        assert!(ArchivedGame::decode("abc", b"something else").is_err());
    }

    #[tokio::test]
    async fn a_directory_archive_keeps_games() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", dir.path().join("a").display());
        let archive = Archive::open(&url, Duration::from_secs(5)).unwrap();
        assert_eq!(archive.get("abc").await.unwrap(), None);
        archive.put(&game()).await.unwrap();
        archive.put(&game()).await.unwrap();
        assert_eq!(archive.get("abc").await.unwrap(), Some(game()));
        assert!(Archive::open("ftp://x", Duration::from_secs(1)).is_err());
    }
}
