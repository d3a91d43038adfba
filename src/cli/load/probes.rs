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

/// The CPU time Redis has used so far (`used_cpu_sys` + `used_cpu_user` of `INFO cpu`).
pub(super) async fn redis_cpu(url: &str) -> anyhow::Result<Duration> {
    let client = redis::Client::open(url).context("--probe-redis")?;
    let mut connection = client
        .get_multiplexed_async_connection()
        .await
        .context("--probe-redis: connecting")?;
    let info: String = redis::cmd("INFO")
        .arg("cpu")
        .query_async(&mut connection)
        .await
        .context("--probe-redis: INFO cpu")?;
    let seconds: f64 = info
        .lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(name, _)| *name == "used_cpu_sys" || *name == "used_cpu_user")
        .filter_map(|(_, value)| value.trim().parse::<f64>().ok())
        .sum();
    Ok(Duration::from_secs_f64(seconds))
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
    };
    store.create(&meta).await.context("probe game")?;
    let mut samples = new_histogram();
    let mut version = 0;
    while !stop.load(Ordering::Relaxed) {
        // Like an Act's append: a small action and a request id (which the script also records).
        let entry = NewEntry {
            seat: 0,
            action: vec![0; 8],
            request_id: format!("probe-{version}"),
            finishes: false,
            server_time_ms: 0,
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
            let errors: u64 = tally
                .errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .values()
                .sum();
            bar.set_position(started.elapsed().as_secs());
            bar.set_message(format!(
                "{acts} Acts, {rate:.0}/s, {} games finished, {errors} errors",
                tally.finished.load(Ordering::Relaxed)
            ));
        }
        bar.finish_and_clear();
    }))
}
