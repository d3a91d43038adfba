//! What is sampled beside the load: the gRPC echo and raw append round trips, the CPU time of the
//! replicas, Redis and this process, and the progress line.

use super::*;

/// Health checks, one after another, until `stop`: the gRPC echo round trip.
pub(super) async fn probe_echo(replicas: Arc<Replicas>, stop: Arc<AtomicBool>) -> Histogram<u64> {
    let mut samples = new_histogram();
    let mut rng = GameRng::from_seed(&Seed::from_u64(u64::MAX));
    while !stop.load(Ordering::Relaxed) {
        let replica = replicas.replica(&mut rng);
        let mut health = tonic_health::pb::health_client::HealthClient::new(
            replicas.channels[replica][0].clone(),
        );
        let mut request = tonic::Request::new(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        });
        request.set_timeout(CALL_TIMEOUT);
        let begin = Instant::now();
        if health.check(request).await.is_ok() {
            record(&mut samples, begin.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    samples
}

/// One section of Redis's `INFO`, read over a connection of its own.
async fn redis_info(url: &str, section: &str) -> anyhow::Result<String> {
    let client = redis::Client::open(url).context("--probe-redis")?;
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .context("--probe-redis: connecting")?;
    redis::cmd("INFO")
        .arg(section)
        .query_async(&mut connection)
        .await
        .with_context(|| format!("--probe-redis: INFO {section}"))
}

/// The CPU time Redis has used so far (`used_cpu_sys` + `used_cpu_user` of `INFO cpu`).
pub(super) async fn redis_cpu(url: &str) -> anyhow::Result<Duration> {
    let info = redis_info(url, "cpu").await?;
    let seconds: f64 = info
        .lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| *name == "used_cpu_sys" || *name == "used_cpu_user")
        .filter_map(|(_, value)| value.trim().parse::<f64>().ok())
        .sum();
    Ok(Duration::from_secs_f64(seconds))
}

/// Redis's per-command statistics so far (`INFO commandstats`): calls and microseconds of each
/// command, by upper-case name (subcommands such as `CONFIG|RESETSTAT` under their own names).
pub(super) async fn redis_commandstats(url: &str) -> anyhow::Result<BTreeMap<String, (u64, u64)>> {
    Ok(parse_commandstats(&redis_info(url, "commandstats").await?))
}

/// `cmdstat_<name>:calls=<n>,usec=<n>,…` lines as (calls, usec) by upper-case name.
pub(super) fn parse_commandstats(info: &str) -> BTreeMap<String, (u64, u64)> {
    let mut stats = BTreeMap::new();
    for line in info.lines() {
        let Some((name, fields)) = line
            .strip_prefix("cmdstat_")
            .and_then(|rest| rest.split_once(':'))
        else {
            continue;
        };
        let field = |key: &str| -> Option<u64> {
            fields
                .split(',')
                .find_map(|pair| pair.strip_prefix(key)?.strip_prefix('='))?
                .trim()
                .parse()
                .ok()
        };
        if let (Some(calls), Some(usec)) = (field("calls"), field("usec")) {
            stats.insert(name.to_ascii_uppercase(), (calls, usec));
        }
    }
    stats
}

/// What Redis's commands cost per Act between two `INFO commandstats` readings.
pub(super) fn command_cost(
    before: &BTreeMap<String, (u64, u64)>,
    after: &BTreeMap<String, (u64, u64)>,
    acts: u64,
) -> Option<RedisCommandCost> {
    if acts == 0 {
        return None;
    }
    let in_scripts = crate::store::redis::commands_in_scripts();
    let direct = crate::store::redis::commands_sent_directly();
    let delta = |name: &str| {
        let (calls, usec) = after.get(name).copied().unwrap_or_default();
        let (calls_before, usec_before) = before.get(name).copied().unwrap_or_default();
        (
            calls.saturating_sub(calls_before),
            usec.saturating_sub(usec_before),
        )
    };
    // Each append the script makes first calls these once (the log's length), so at least as
    // many of them as XADDs ran inside scripts.
    let each_append = crate::store::redis::APPEND_CALLS_EACH_TIME;
    let (xadd_calls, _) = delta("XADD");
    let mut commands = Vec::new();
    let mut top_level_us = 0.0;
    for name in after.keys() {
        let (calls, usec) = delta(name);
        if calls == 0 || name == "INFO" {
            continue;
        }
        let us_per_act = usec as f64 / acts as f64;
        // A script's time includes the commands it calls, which Redis also counts on their own:
        // a command only scripts call is counted in their time. One the replica also sends itself
        // (XRANGE, XLEN, EXISTS, …) is counted whole, except the share the appends account for
        // (one per XADD, at the average time of a call); its other calls from scripts (a
        // conflict's, an index listing's) are counted twice: the figure errs high.
        let only_in_scripts = in_scripts.contains(name) && !direct.contains(name);
        if !only_in_scripts {
            let scripted_calls = if each_append.contains(&name.as_str()) {
                xadd_calls.min(calls)
            } else {
                0
            };
            top_level_us += us_per_act * (calls - scripted_calls) as f64 / calls as f64;
        }
        commands.push(CommandCost {
            name: name.clone(),
            calls_per_act: calls as f64 / acts as f64,
            us_per_act,
            only_in_scripts,
        });
    }
    let xadd_us_per_call = {
        let (calls, usec) = delta("XADD");
        (calls > 0).then(|| usec as f64 / calls as f64)
    };
    Some(RedisCommandCost {
        commands,
        top_level_us_per_act: top_level_us,
        xadd_us_per_call,
    })
}

/// Appends to a scratch game of its own through the store's append script, one after another,
/// until `stop`: the raw round trip an Act's append costs, without the service around it.
pub(super) async fn probe_append(
    url: String,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<Histogram<u64>> {
    use crate::store::redis::{RedisOptions, RedisStore};
    use crate::store::{GameLog, GameMeta, NewEntry};

    let store = RedisStore::connect(&RedisOptions::single(url))
        .await
        .context("--probe-redis")?;
    let mut id = [0u8; 8];
    getrandom::fill(&mut id).map_err(|error| anyhow::anyhow!("no randomness: {error}"))?;
    let game_id = format!("load-probe-{}", hex::encode(id));
    let meta = GameMeta {
        game_id: game_id.clone(),
        kind: pb::GameKind::MediciVsStrozzi,
        config: Vec::new(),
        rules_version: "load-probe".into(),
        seed: Seed([0; 32]),
        token_hashes: vec![[0; 32]; 2],
        created_at_ms: 0,
        players: Vec::new(),
        created_by: crate::RELEASE.to_owned(),
        tenant: None,
        webhooks: Vec::new(),
        seating: Vec::new(),
        signed_commitment: Vec::new(),
        creation: Vec::new(),
    };
    store.create(&meta).await.context("probe game")?;
    let mut samples = new_histogram();
    let mut version = 0;
    while !stop.load(Ordering::Relaxed) {
        // Like an Act's append: a small action and a request id (which the script also records).
        let entry = NewEntry {
            retry: crate::store::RetryScope::AtVersion,
            seat: 0,
            action: vec![0; 8],
            request_id: format!("probe-{version}"),
            finishes: false,
            server_time_ms: 0,
            // Games carry their hash chain's head with every entry.
            head: Some([0; 32]),
            deadline: None,
        };
        let begin = Instant::now();
        store
            .append(&game_id, version, &entry)
            .await
            .context("probe append")?;
        record(&mut samples, begin.elapsed());
        version += 1;
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(samples)
}

/// The CPU time (user + system) the given processes have used so far, from `/proc/<pid>/stat`;
/// `None` when no process was given.
pub(super) fn replica_cpu(pids: &[u32]) -> anyhow::Result<Option<Duration>> {
    if pids.is_empty() {
        return Ok(None);
    }
    // Clock ticks per second: 100 on every Linux this runs on (USER_HZ is fixed by the ABI).
    const TICKS_PER_SECOND: u64 = 100;
    let mut ticks = 0;
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .with_context(|| format!("--replica-pid {pid}: reading /proc/{pid}/stat"))?;
        // Fields after the command name, which is in parentheses and may contain spaces.
        let after = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .context("unexpected /proc stat format")?;
        let fields: Vec<&str> = after.split_whitespace().collect();
        // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after the name.
        let utime: u64 = fields.get(11).and_then(|f| f.parse().ok()).unwrap_or(0);
        let stime: u64 = fields.get(12).and_then(|f| f.parse().ok()).unwrap_or(0);
        ticks += utime + stime;
    }
    Ok(Some(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND)))
}

/// The progress line: Acts so far and the current rate, redrawn while the load runs.
pub(super) fn progress_bar(
    args: &LoadArgs,
    tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
    started: Instant,
) -> Option<tokio::task::JoinHandle<()>> {
    let bar = indicatif::ProgressBar::new(args.duration.as_secs().max(1));
    if bar.is_hidden() {
        return None;
    }
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {elapsed}/{len}s {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    Some(tokio::spawn(async move {
        let mut last = (Instant::now(), 0_u64);
        while !stop.load(Ordering::Relaxed) {
            tokio::time::sleep(Duration::from_millis(250)).await;
            let acts = tally.acts.load(Ordering::Relaxed);
            let now = Instant::now();
            let rate = (acts - last.1) as f64 / now.duration_since(last.0).as_secs_f64();
            last = (now, acts);
            let errors: u64 = tally.errors.lock().values().sum();
            bar.set_position(started.elapsed().as_secs());
            bar.set_message(format!(
                "{acts} Acts, {rate:.0}/s, {} games finished, {errors} errors",
                tally.finished.load(Ordering::Relaxed)
            ));
        }
        bar.finish_and_clear();
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commandstats_are_read_and_scripted_commands_counted_once() {
        let before = parse_commandstats(
            "# Commandstats\r\ncmdstat_xadd:calls=10,usec=20,usec_per_call=2.00,rejected_calls=0\r\n\
             cmdstat_evalsha:calls=10,usec=100,usec_per_call=10.00\r\n",
        );
        let after = parse_commandstats(
            "cmdstat_xadd:calls=30,usec=60,usec_per_call=2.00\r\n\
             cmdstat_evalsha:calls=30,usec=300,usec_per_call=10.00\r\n\
             cmdstat_ping:calls=12,usec=40,usec_per_call=3.33\r\n\
             cmdstat_config|resetstat:calls=1,usec=9\r\n",
        );
        assert_eq!(after.get("XADD"), Some(&(30, 60)));
        assert_eq!(after.get("CONFIG|RESETSTAT"), Some(&(1, 9)));
        let cost = command_cost(&before, &after, 20).expect("a cost");
        assert_eq!(cost.xadd_us_per_call, Some(2.0));
        // EVALSHA (10 µs per Act, its XADD inside) + PING (2) + CONFIG (0.45); XADD is
        // inside the script's time.
        assert!((cost.top_level_us_per_act - 12.45).abs() < 1e-9, "{cost:?}");
        let xadd = cost
            .commands
            .iter()
            .find(|c| c.name == "XADD")
            .expect("XADD");
        assert!(xadd.only_in_scripts && (xadd.calls_per_act - 1.0).abs() < 1e-9);
        assert!(command_cost(&before, &after, 0).is_none());
    }

    #[test]
    fn the_appends_xlen_is_not_counted_again_but_a_replicas_own_is() {
        let before = parse_commandstats("");
        // 20 appends (each an XLEN and an XADD inside EVALSHA), at 1 µs an XLEN, with: 10 XLENs
        // a replica sent itself, then EVALSHA's 10 µs per Act and their 0.5; or fewer XLENs
        // than XADDs (another script appends), none of them counted.
        for (xlens, expected_us_per_act) in [(30, 10.5), (5, 10.0)] {
            let after = parse_commandstats(&format!(
                "cmdstat_xadd:calls=20,usec=40\r\n\
                 cmdstat_xlen:calls={xlens},usec={xlens}\r\n\
                 cmdstat_evalsha:calls=20,usec=200\r\n"
            ));
            let cost = command_cost(&before, &after, 20).expect("a cost");
            assert!(
                (cost.top_level_us_per_act - expected_us_per_act).abs() < 1e-9,
                "{xlens} XLENs: {cost:?}"
            );
        }
    }

    #[test]
    fn the_append_scripts_commands_are_known_to_be_scripted() {
        let scripted = crate::store::redis::commands_in_scripts();
        for name in ["XADD", "XLEN", "PUBLISH", "SPUBLISH", "HSET"] {
            assert!(scripted.contains(name), "{name} in {scripted:?}");
        }
        assert!(!scripted.contains("EVALSHA"));
        let direct = crate::store::redis::commands_sent_directly();
        for name in ["XLEN", "XRANGE", "EXISTS", "PING", "WAITAOF"] {
            assert!(direct.contains(name), "{name} in {direct:?}");
        }
        assert!(!direct.contains("XADD"), "appends are scripted");
    }
}
