//! What a run measured: latency percentiles, the report and its text form, and the recording of
//! latencies (after the warm-up).

use super::*;

/// Latency percentiles in microseconds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Percentiles {
    /// How many samples.
    pub count: u64,
    /// Median.
    pub p50_us: u64,
    /// 90th percentile.
    pub p90_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// Largest sample.
    pub max_us: u64,
}

impl Percentiles {
    pub(super) fn of(histogram: &Histogram<u64>) -> Percentiles {
        if histogram.is_empty() {
            return Percentiles::default();
        }
        Percentiles {
            count: histogram.len(),
            p50_us: histogram.value_at_quantile(0.50),
            p90_us: histogram.value_at_quantile(0.90),
            p99_us: histogram.value_at_quantile(0.99),
            max_us: histogram.max(),
        }
    }
}

/// What a load run measured.
#[derive(Clone, Debug, Serialize)]
pub struct LoadReport {
    /// The replicas the load went to.
    pub servers: Vec<String>,
    /// Concurrent games.
    pub games: usize,
    /// Spectator streams per game.
    pub observers_per_game: usize,
    /// How seats learned their turn.
    pub turns: Turns,
    /// Whether the answers were asked for without the view (`--omit-views`).
    pub omit_views: bool,
    /// Mean thinking time before each move, in milliseconds (0: flat out).
    pub think_ms: u64,
    /// The warm-up at the start whose latencies are not recorded, in milliseconds.
    pub warm_up_ms: u64,
    /// Seconds the load ran.
    pub seconds: f64,
    /// Acts acknowledged.
    pub acts: u64,
    /// Acts acknowledged per second.
    pub acts_per_second: f64,
    /// Act latency, as the client saw it (including retries of one request id).
    pub act_latency: Percentiles,
    /// GetView calls (a seat learning that its turn has come, with `--turns view`).
    pub views: u64,
    /// Games played to the end.
    pub games_finished: u64,
    /// Games abandoned after an error the load could not recover from.
    pub games_abandoned: u64,
    /// Act acknowledged → the same version on a spectator's stream.
    pub observe_delivery: Percentiles,
    /// Messages the spectators received.
    pub observe_messages: u64,
    /// Messages the seats' own streams received (with `--turns observe`).
    pub seat_messages: u64,
    /// Failed calls by gRPC status code (retries included).
    pub errors: BTreeMap<String, u64>,
    /// A health check round trip to a replica, sampled during the run.
    pub grpc_echo: Percentiles,
    /// The append script round trip against Redis, sampled during the run (with `--probe-redis`).
    pub append_round_trip: Option<Percentiles>,
    /// CPU time the replicas (`--replica-pid`) spent per acknowledged Act, in microseconds.
    pub replica_cpu_us_per_act: Option<f64>,
    /// The load generator's own CPU time per Act acknowledged, in microseconds (Linux): on a
    /// machine it shares with the replicas, what the clients cost.
    pub load_cpu_us_per_act: Option<f64>,
    /// Redis's CPU time per Act acknowledged, in microseconds (`INFO cpu` of `--probe-redis`; it
    /// includes the probe's own appends, about a hundred per second).
    pub redis_cpu_us_per_act: Option<f64>,
    /// Redis's command time per Act acknowledged, from `INFO commandstats` of `--probe-redis`.
    pub redis_commands: Option<RedisCommandCost>,
}

/// Redis's command time per Act (`INFO commandstats` over the run, divided by the Acts).
#[derive(Clone, Debug, Serialize)]
pub struct RedisCommandCost {
    /// Every command called during the run.
    pub commands: Vec<CommandCost>,
    /// The time of the commands clients sent (scripts whole, and commands outside scripts), in
    /// microseconds per Act: what Redis spends executing an Act's commands.
    pub top_level_us_per_act: f64,
    /// A bare `XADD`'s time per call in the same run: the unit that makes the cost a ratio,
    /// comparable across machines and days.
    pub xadd_us_per_call: Option<f64>,
}

/// One command's share of an Act.
#[derive(Clone, Debug, Serialize)]
pub struct CommandCost {
    /// Upper-case name.
    pub name: String,
    /// Calls per Act.
    pub calls_per_act: f64,
    /// Microseconds per Act (for a script, with the commands it calls).
    pub us_per_act: f64,
    /// Called only inside Tabula's scripts: its time is in theirs, and not counted again.
    pub only_in_scripts: bool,
}

/// The report as a few readable lines.
pub fn render(report: &LoadReport) -> String {
    let p = |label: &str, p: &Percentiles| {
        format!(
            "{label}: p50 {} µs, p90 {} µs, p99 {} µs, max {} µs ({} samples)\n",
            p.p50_us, p.p90_us, p.p99_us, p.max_us, p.count
        )
    };
    let mut text = format!(
        "tabula load: {} games at once, {} spectators per game, {} replica(s), {:.1} s, {}\n",
        report.games,
        report.observers_per_game,
        report.servers.len(),
        report.seconds,
        if report.think_ms == 0 {
            "flat out".to_owned()
        } else {
            format!("thinking {} ms per move on average", report.think_ms)
        }
    );
    if report.omit_views {
        text += "Answers without views (--omit-views)\n";
    }
    if report.warm_up_ms > 0 {
        text += &format!(
            "Latencies from {:.1} s on (warm-up); counts over the whole run\n",
            report.warm_up_ms as f64 / 1000.0
        );
    }
    text += &format!(
        "Acts: {} acknowledged = {:.0} Acts/s; {}; {} games finished, {} abandoned\n",
        report.acts,
        report.acts_per_second,
        match report.turns {
            Turns::View => format!("{} views", report.views),
            Turns::Observe => format!(
                "turns from the seats' streams ({} messages)",
                report.seat_messages
            ),
            Turns::Play => format!(
                "moves and turns on the seats' Play streams ({} turn messages)",
                report.seat_messages
            ),
        },
        report.games_finished,
        report.games_abandoned
    );
    text += &p("Act latency", &report.act_latency);
    if report.observers_per_game > 0 {
        text += &p(
            "Observe delivery (ack → spectator)",
            &report.observe_delivery,
        );
    }
    text += &p("gRPC echo (health check)", &report.grpc_echo);
    if let Some(append) = &report.append_round_trip {
        text += &p("Append script round trip", append);
    }
    if let Some(cpu) = report.replica_cpu_us_per_act {
        text += &format!("Replica CPU per Act: {cpu:.1} µs (all replicas given)\n");
    }
    if let Some(cpu) = report.redis_cpu_us_per_act {
        text += &format!("Redis CPU per Act: {cpu:.1} µs\n");
    }
    if let Some(cost) = &report.redis_commands {
        let in_xadds = cost
            .xadd_us_per_call
            .filter(|&xadd| xadd > 0.0)
            .map(|xadd| format!(" = {:.1} bare XADDs", cost.top_level_us_per_act / xadd))
            .unwrap_or_default();
        text += &format!(
            "Redis command time per Act: {:.1} µs{in_xadds} (INFO commandstats; XADD {} µs per call)\n",
            cost.top_level_us_per_act,
            cost.xadd_us_per_call
                .map(|xadd| format!("{xadd:.2}"))
                .unwrap_or_else(|| "-".into())
        );
        let parts: Vec<String> = cost
            .commands
            .iter()
            .filter(|command| command.calls_per_act >= 0.005)
            .map(|command| {
                format!(
                    "{}{} {:.2}×/{:.1} µs",
                    command.name,
                    if command.only_in_scripts { "*" } else { "" },
                    command.calls_per_act,
                    command.us_per_act
                )
            })
            .collect();
        text += &format!(
            "  per Act: {} (* only inside scripts: counted in their time)\n",
            parts.join(", ")
        );
    }
    if let Some(cpu) = report.load_cpu_us_per_act {
        text += &format!("Load generator CPU per Act: {cpu:.1} µs (the clients)\n");
    }
    if report.errors.is_empty() {
        text += "Errors: none\n";
    } else {
        let errors: Vec<String> = report
            .errors
            .iter()
            .map(|(code, count)| format!("{code} {count}"))
            .collect();
        text += &format!("Errors: {}\n", errors.join(", "));
    }
    text
}

pub(super) fn new_histogram() -> Histogram<u64> {
    // Three significant figures from 1 µs up to an hour: every latency this can see.
    Histogram::new_with_bounds(1, 3_600_000_000, 3)
        .unwrap_or_else(|_| unreachable!("1 µs to an hour at 3 significant figures is valid"))
}

/// The instant latencies count from, as microseconds after [`EPOCH`] (`--warm-up`).
pub(super) static MEASURED_FROM_MICROS: AtomicU64 = AtomicU64::new(0);
/// A fixed instant of this process, which [`MEASURED_FROM_MICROS`] counts from.
pub(super) static EPOCH: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);

/// Records latencies only from `from` on (the run's start plus its warm-up).
pub(super) fn measure_from(from: Instant) {
    let micros = from.saturating_duration_since(*EPOCH).as_micros() as u64;
    MEASURED_FROM_MICROS.store(micros, Ordering::Relaxed);
}

/// Records a latency that ended now, unless the warm-up is still on.
pub(super) fn record(histogram: &mut Histogram<u64>, elapsed: Duration) {
    let now = Instant::now().saturating_duration_since(*EPOCH).as_micros() as u64;
    if now < MEASURED_FROM_MICROS.load(Ordering::Relaxed) {
        return;
    }
    let micros = (elapsed.as_micros() as u64).max(1);
    // A sample beyond the histogram's range is saturated rather than lost.
    histogram.saturating_record(micros);
}
