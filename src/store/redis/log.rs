//! The game log on Redis: creating a game, appending to its stream (the append script, one
//! round trip), reading entries and snapshots, and recognising retried requests. The key layout
//! is described in the parent module.

use super::*;
use redis::ScriptInvocation;

#[async_trait]
impl GameLog for RedisStore {
    #[tracing::instrument(skip_all, fields(store = "redis", game_id = %meta.game_id))]
    async fn create(&self, meta: &GameMeta) -> StoreResult<()> {
        // Indexed first: a game that exists is always listed (see `index.rs`).
        self.index.add(&self.connection, meta).await?;
        let tokens: Vec<u8> = meta.token_hashes.concat();
        let mut invocation = self.create.key(keys::game(&meta.game_id, "meta"));
        invocation
            .arg("kind")
            .arg(meta.kind as i32)
            .arg("config")
            .arg(&meta.config)
            .arg("rules_version")
            .arg(&meta.rules_version)
            .arg("seed")
            .arg(&meta.seed.0[..])
            .arg("tokens")
            .arg(tokens)
            .arg("created_at_ms")
            .arg(meta.created_at_ms)
            // Since 1.0.0 (docs/compatibility.md): the format of this game's keys, and the
            // release that created it. Older readers ignore both.
            .arg("format")
            .arg(keys::GAME_FORMAT)
            .arg("created_by")
            .arg(&meta.created_by);
        // Since 1.1.0: the owning tenant. 1.0.0 ignores the field (it has no tenants).
        if let Some(tenant) = &meta.tenant {
            invocation.arg("tenant").arg(tenant);
        }
        // Since 1.1.0: the signed commitment. 1.0.0 ignores the field.
        if !meta.signed_commitment.is_empty() {
            invocation.arg("commitment").arg(&meta.signed_commitment);
        }
        // Since 1.1.0: the game's own webhooks. 1.0.0 ignores the field.
        if !meta.webhooks.is_empty() {
            invocation.arg("webhooks").arg(&meta.webhooks);
        }
        // Since 1.1.0: the open seats' secrets. 1.0.0 ignores the field (and serves no store
        // where a game can have open seats: see `serves_only_current_releases`).
        if !meta.seating.is_empty() {
            invocation.arg("seating").arg(&meta.seating);
        }
        // Since 1.1.0: what answers a retry of the CreateGame (its request id). 1.0.0 ignores
        // the field; the game is the same to it.
        if !meta.creation.is_empty() {
            invocation.arg("creation").arg(&meta.creation);
        }
        if !meta.players.is_empty() {
            let players = postcard::to_allocvec(&meta.players)
                .map_err(|e| corrupt(format!("players do not encode: {e}")))?;
            invocation.arg("players").arg(players);
        }
        let created: i64 = invocation
            .invoke_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        if created == 1 {
            Ok(())
        } else {
            Err(StoreError::AlreadyExists(meta.game_id.clone()))
        }
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn load(&self, game_id: &str) -> StoreResult<Option<Loaded>> {
        let reply: Value = self
            .read(|mut connection| async move {
                self.load
                    .key(keys::game(game_id, "meta"))
                    .key(keys::game(game_id, "log"))
                    .key(keys::game(game_id, "snap"))
                    .invoke_async(&mut connection)
                    .await
            })
            .await?;
        let parts = match reply {
            Value::Nil => return Ok(None),
            Value::Array(parts) if parts.len() == 3 => parts,
            other => return Err(corrupt(format!("unexpected load reply {other:?}"))),
        };
        let [meta, snapshot, entries]: [Value; 3] =
            parts.try_into().map_err(|_| corrupt("load reply shape"))?;
        let meta = parse_meta(game_id, &field_map(meta)?)?;
        let snapshot = parse_snapshot(&field_map(snapshot)?)?;
        Ok(Some(Loaded {
            meta,
            snapshot,
            entries: parse_entries(entries)?,
        }))
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id, after))]
    async fn entries_after(&self, game_id: &str, after: u64) -> StoreResult<Option<Vec<LogEntry>>> {
        read_entries_after(&self.connection, game_id, after).await
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id, expected))]
    async fn append(&self, game_id: &str, expected: u64, entry: &NewEntry) -> StoreResult<Append> {
        // An entry that ends the game moves it in the game index, after the append (another
        // slot); the intent recorded first lets any replica finish the move should this one die
        // in between (see `index.rs`).
        let intent = if entry.finishes {
            Some(
                self.index
                    .intend_to_finish(&self.connection, game_id)
                    .await?,
            )
        } else {
            None
        };
        let now_ms = unix_millis();
        // A deadline that comes earlier is lowered in the index before the append, so the index
        // never holds a later deadline than the log's, whatever happens next (see `deadlines.rs`).
        if let Some(change) = entry.deadline
            && let Some(after) = change.after_ms
            && change.before_ms.is_none_or(|before| after < before)
        {
            self.deadlines
                .lower(&self.connection, game_id, after)
                .await?;
        }
        let lean = self.layout.load(Ordering::Relaxed) == keys::LAYOUT_LEAN;
        // The append and its durability confirmation must go over one Redis client: WAIT and
        // WAITAOF wait for that client's own writes.
        let mut connection = self.connection.pinned().await.map_err(unavailable)?;
        // An ordinary move goes through the lean script, which needs neither the meta nor the
        // request-id index (see `scripts.rs`); an empty log sends it on to the full one.
        let mut lean_reply = None;
        if lean && expected > 0 && !entry.finishes && entry.retry == RetryScope::AtVersion {
            let reply: Value = self
                .lean_append(game_id, expected, entry)
                .invoke_async(&mut connection)
                .await
                .map_err(unavailable)?;
            if !is_empty_log_reply(&reply) {
                lean_reply = Some(reply);
            }
        }
        let reply = match lean_reply {
            Some(reply) => reply,
            None => self
                .full_append(game_id, expected, entry, lean, now_ms)
                .invoke_async(&mut connection)
                .await
                .map_err(unavailable)?,
        };
        let parts = match reply {
            // The common case: appended, the game goes on.
            Value::Int(version) => {
                let version = u64::try_from(version)
                    .map_err(|_| corrupt(format!("append replied version {version}")))?;
                vec![
                    Value::SimpleString("appended".into()),
                    Value::Int(version as i64),
                ]
            }
            Value::Array(parts) => parts,
            reply => return Err(corrupt(format!("unexpected append reply {reply:?}"))),
        };
        let mut parts = parts.into_iter();
        let tag = parts.next().map(as_string).transpose()?.unwrap_or_default();
        let number = parts.next().map(as_u64).transpose()?.unwrap_or_default();
        if let Some(intent) = &intent {
            self.settle_finish(game_id, &tag, intent, now_ms, &mut parts)
                .await;
        }
        match tag.as_str() {
            "appended" => {
                if let Some(change) = entry.deadline
                    && let Err(error) = self
                        .deadlines
                        .set(&self.connection, game_id, number, change.after_ms)
                        .await
                {
                    // The index still holds a deadline no later than the log's (lowered above
                    // if the new one is earlier): the sweep that finds it due corrects it.
                    tracing::warn!(%game_id, %error, "deadline index not updated; a sweep repairs it");
                }
                self.confirm_durable(&mut connection, number).await?;
                // Durable as configured: this replica's own observers and Play sessions learn
                // of it now (`Announcements::appended_here`).
                self.announcements.appended_here(game_id, number, entry);
                Ok(Append::Appended { version: number })
            }
            "duplicate" => Ok(Append::Duplicate { version: number }),
            "conflict" => {
                let missing = parts
                    .next()
                    .map(parse_entries)
                    .transpose()?
                    .unwrap_or_default();
                // A retry of a request proposed at `expected` finds itself right after it.
                if let Some(version) = retried(entry, &missing) {
                    return Ok(Append::Duplicate { version });
                }
                Ok(Append::Conflict {
                    current: number,
                    missing,
                })
            }
            "missing" => Ok(Append::UnknownGame),
            other => Err(corrupt(format!("unexpected append reply tag {other:?}"))),
        }
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id))]
    async fn find_request(
        &self,
        game_id: &str,
        seat: Seat,
        request_id: &str,
        at_version: Option<u64>,
    ) -> StoreResult<Option<u64>> {
        // The index and, when the request named its version, the entry right after it: one
        // round trip.
        let (indexed, next): (Option<u64>, Value) = self
            .read(|mut connection| async move {
                let mut pipe = redis::pipe();
                pipe.cmd("HGET")
                    .arg(keys::game(game_id, "req"))
                    .arg(request_key(seat, request_id));
                match at_version {
                    Some(version) => {
                        let id = format!("{}-0", version + 1);
                        pipe.cmd("XRANGE")
                            .arg(keys::game(game_id, "log"))
                            .arg(&id)
                            .arg(&id)
                    }
                    // Keeps the reply's shape: an empty range.
                    None => pipe
                        .cmd("XRANGE")
                        .arg(keys::game(game_id, "log"))
                        .arg("+")
                        .arg("-"),
                };
                pipe.query_async(&mut connection).await
            })
            .await?;
        let after = parse_entries(next)?;
        let found = after
            .first()
            .filter(|entry| entry.seat == seat && entry.request_id == request_id)
            .map(|entry| entry.version);
        Ok(found.or(indexed))
    }

    #[tracing::instrument(skip_all, fields(store = "redis", game_id, version = snapshot.version))]
    async fn save_snapshot(&self, game_id: &str, snapshot: &Snapshot) -> StoreResult<()> {
        let _: i64 = self
            .snapshot
            .key(keys::game(game_id, "snap"))
            .arg(snapshot.version)
            .arg(&snapshot.rules_version)
            .arg(&snapshot.state)
            .arg(tagged_head(snapshot))
            .invoke_async(&mut self.conn())
            .await
            .map_err(unavailable)?;
        Ok(())
    }

    fn serves_only_current_releases(&self) -> bool {
        // 1.0.0 knows layout 1 only, and does not serve a store past it.
        self.layout.load(Ordering::Relaxed) >= keys::LAYOUT_LEAN
    }

    async fn subscribe(&self, game_id: &str) -> StoreResult<broadcast::Receiver<LogEntry>> {
        let (receiver, new_sender) = self.feeds.subscribe(game_id);
        if let Some(sender) = new_sender {
            // The feed starts after the log's version now, before the caller reads the game's
            // state, so nothing appended in between is missed.
            let start: u64 = self
                .read(|mut connection| async move {
                    redis::cmd("XLEN")
                        .arg(keys::game(game_id, "log"))
                        .query_async(&mut connection)
                        .await
                })
                .await?;
            self.announcements.watch(game_id, sender, start);
        }
        Ok(receiver)
    }
}

/// A snapshot's head as the snapshot hash keeps it: its version (8 bytes big-endian), then the
/// head; empty for none.
fn tagged_head(snapshot: &Snapshot) -> Vec<u8> {
    match &snapshot.head {
        Some(head) => {
            let mut tagged = snapshot.version.to_be_bytes().to_vec();
            tagged.extend_from_slice(head);
            tagged
        }
        None => Vec::new(),
    }
}

impl RedisStore {
    /// The lean append script's call for `entry` at `expected` (`scripts.rs`,
    /// `APPEND_LEAN_TEMPLATE`): the log and the channel, the entry, its id and its chain head.
    fn lean_append(&self, game_id: &str, expected: u64, entry: &NewEntry) -> ScriptInvocation<'_> {
        let mut invocation = self.append_lean.prepare_invoke();
        invocation
            .key(keys::game(game_id, "log"))
            .key(keys::appended_channel(game_id));
        entry_arguments(&mut invocation, expected, entry);
        invocation.arg(format!("{}-0", expected + 1));
        if let Some(head) = &entry.head {
            invocation.arg(head.as_slice());
        }
        invocation
    }

    /// The full append script's call for `entry` at `expected` (`scripts.rs`, `APPEND_TEMPLATE`),
    /// with what it checks and records besides the entry: the request id (checked when it may
    /// repeat at any version; recorded then, or always in layout 1), the meta's finish time and,
    /// in layout 1, the game's last activity.
    fn full_append(
        &self,
        game_id: &str,
        expected: u64,
        entry: &NewEntry,
        lean: bool,
        now_ms: u64,
    ) -> ScriptInvocation<'_> {
        let any_version = entry.retry == RetryScope::AnyVersion;
        let request_key = if entry.request_id.is_empty() {
            String::new()
        } else {
            request_key(entry.seat, &entry.request_id)
        };
        let check = if any_version {
            request_key.as_str()
        } else {
            ""
        };
        let record = if any_version || !lean {
            request_key.as_str()
        } else {
            ""
        };
        let ttl = if record.is_empty() {
            String::new()
        } else {
            self.request_id_ttl_seconds.to_string()
        };
        let finished_at = if entry.finishes {
            now_ms.to_string()
        } else {
            String::new()
        };
        let active = if lean {
            String::new()
        } else {
            now_ms.to_string()
        };
        let head: &[u8] = entry.head.as_ref().map_or(&[], |head| head.as_slice());
        let mut invocation = self.append.prepare_invoke();
        invocation
            .key(keys::game(game_id, "meta"))
            .key(keys::game(game_id, "log"))
            .key(keys::game(game_id, "req"))
            .key(keys::appended_channel(game_id));
        entry_arguments(&mut invocation, expected, entry);
        // Trailing arguments the script would read as empty are left out (fewer to convert).
        let optional: [&[u8]; 6] = [
            head,
            check.as_bytes(),
            record.as_bytes(),
            ttl.as_bytes(),
            finished_at.as_bytes(),
            active.as_bytes(),
        ];
        let used = optional
            .iter()
            .rposition(|argument| !argument.is_empty())
            .map_or(0, |last| last + 1);
        for argument in &optional[..used] {
            invocation.arg(*argument);
        }
        invocation
    }
}

/// The arguments both append scripts open with (`scripts.rs`): the expected version, the entry's
/// fields (seat, action, request id, server time) and its announcement.
fn entry_arguments(invocation: &mut ScriptInvocation<'_>, expected: u64, entry: &NewEntry) {
    invocation
        .arg(expected)
        .arg(entry.seat)
        .arg(&entry.action)
        .arg(&entry.request_id)
        .arg(entry.server_time_ms)
        .arg(announcement(expected + 1, entry));
}

/// Whether the lean append script answered `{'empty'}`: an empty log at an expected version
/// above 0, which the full script tells apart (a game that left the store, or a log that lost
/// its writes).
fn is_empty_log_reply(reply: &Value) -> bool {
    match reply {
        Value::Array(parts) => match parts.as_slice() {
            [Value::BulkString(tag)] => tag == b"empty",
            [Value::SimpleString(tag)] => tag == "empty",
            _ => false,
        },
        _ => false,
    }
}
