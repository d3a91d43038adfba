//! The `tabula` command, the composition root: run a replica, export a game's log as canonical
//! JSON, verify a log, check a replica's health. It reads the flags (`config.rs`) and builds every
//! floor from them.
//!
//! It lives in the library, and `src/main.rs` only calls [`main`], because a binary crate compiles
//! again every generic and async function of the library it reaches (release builds share no
//! instances between crates): with this code in `main.rs` the binary re-instantiated the whole
//! server, the clients and the protobuf decoding after the library had finished, 42 s at the end
//! of every release build on a 2-core machine. Here the library compiles them once, in parallel
//! with the rest of it: the crate's release build went from 130-133 s to 111-114 s (README,
//! *Run it*).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use prost::Message;
use std::sync::Arc;
use std::time::Duration;

use crate::config::{self, ServeArgs, TelemetryArgs};
use crate::proto::v1 as pb;
use crate::server::StoreChoice;
use crate::service::verify;
use crate::shutdown::Drain;
use crate::signing::SigningKeys;
use crate::store::Store;
use crate::store::redis::Durability;
use crate::{cli, json, server, telemetry};

#[derive(Parser)]
#[command(
    name = "tabula",
    version,
    about = "Tabula: turn-based board games as a gRPC service"
)]
struct Cli {
    /// Threads that run the service's tasks (default: one per CPU the machine has). In a container
    /// limited to fewer CPUs than the machine has, set it to the limit: more threads than CPUs only
    /// adds context switches. 1 runs everything on one thread with the single-threaded scheduler
    /// (no work stealing, no wake-ups across threads), which costs far less CPU per call: on a
    /// machine shared with Redis or other replicas, or to scale by process (one replica per core,
    /// as the service is stateless), prefer it (docs/benchmarks.md, *Threads per process*).
    #[arg(long, global = true, env = "TABULA_WORKER_THREADS")]
    worker_threads: Option<std::num::NonZeroUsize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a replica of the game service.
    Serve(Box<ServeArgs>),
    /// Fetch a game's log from a running server and print it as canonical proto3 JSON.
    Export {
        /// The server: `host:port` or a URI (e.g. `127.0.0.1:50051`, `https://tabula.example:443`).
        #[arg(long, env = "TABULA_SERVER", default_value = "127.0.0.1:50051")]
        server: String,
        game_id: String,
        /// A seat token, to export as that seat (a spectator otherwise).
        #[arg(long, env = "TABULA_TOKEN")]
        token: Option<String>,
        /// PEM CA certificate(s) to verify an https:// server with.
        #[arg(long, env = "TABULA_CA_CERT")]
        ca_cert: Option<PathBuf>,
    },
    /// Re-execute an exported log (canonical JSON or binary `tabula.v1.GameLog`), check its
    /// signed commitment, hash chain and signed final head, and print the result; exits with 1
    /// when the log is invalid. `-` reads the log from standard input. Works offline.
    Verify {
        file: PathBuf,
        /// The deployment's public keys, one `<key id>:<64 hex digits>` per line (what
        /// GetSigningKeys publishes): the signatures must verify under one of them. Without it the
        /// signatures are not checked (the chain and the commitment's contents still are).
        #[arg(long)]
        keys: Option<PathBuf>,
    },
    /// Ask a replica's gRPC health service; exits with 0 when it reports SERVING, 1 otherwise
    /// (a container HEALTHCHECK).
    Health {
        /// The server: `host:port` or a URI.
        #[arg(long, env = "TABULA_SERVER", default_value = "127.0.0.1:50051")]
        server: String,
        /// The health-checking service name: "" or tabula.v1.GameService for readiness (follows
        /// the store), tabula.v1.Liveness for liveness (the process alone).
        #[arg(long, default_value = "")]
        service: String,
        /// PEM CA certificate(s) to verify an https:// server with.
        #[arg(long, env = "TABULA_CA_CERT")]
        ca_cert: Option<PathBuf>,
        /// How long to wait for an answer: 100ms to 10m.
        #[arg(long, default_value = "3s", value_parser = crate::config::bounded(crate::config::HEALTH_TIMEOUT))]
        timeout: Duration,
    },
    /// Generate load against running replicas like real clients (random legal moves with expected
    /// versions and request ids, optional spectators) and print Acts/s, latencies and errors.
    Load(Box<cli::load::LoadArgs>),
    /// Play a game from this terminal against the server's bots (e.g. `tabula play --game manila
    /// --players 4 --seats human,bot,bot,bot`): against --server, or an embedded in-memory server.
    Play(Box<cli::play::PlayArgs>),
    /// Make a tenant API key: prints the key (give it to the tenant's backend, once) and its entry
    /// for a `--tenants` file (its id and SHA-256; the file never holds the key).
    TenantKey,
    /// Make a signing key for a deployment (issue #29): prints the key's line for
    /// --signing-key-file (secret: give the same to every replica) and its public key's line (for
    /// --signing-public-keys once it is rotated out).
    SigningKey {
        /// The key's id, carried beside every signature it makes (e.g. the month it starts).
        #[arg(long = "id")]
        key_id: String,
    },
    /// Finish an upgrade from 1.0.0: move a Redis store to layout 2, where appends write less
    /// (docs/compatibility.md, *Upgrading*). Run it once every replica runs 1.1.0 or later:
    /// replicas of 1.0.0 will not serve on layout 2, and one still running would misread it.
    /// Replicas follow within 5 seconds. A store already in layout 2 is left alone. Also lists
    /// every tenant game of an older store in its tenant's own index, which tenants' listings
    /// then read instead of every game's.
    UpgradeStore {
        /// The Redis of the deployment (comma-separated seed nodes with --redis-cluster).
        #[arg(long, env = "TABULA_REDIS_URL")]
        redis_url: String,
        /// Treat --redis-url as Redis Cluster seed nodes.
        #[arg(long, env = "TABULA_REDIS_CLUSTER")]
        redis_cluster: bool,
        /// PEM file with the CA certificate(s) to verify a `rediss://` Redis with.
        #[arg(long, env = "TABULA_REDIS_CA")]
        redis_ca: Option<PathBuf>,
    },
}

/// Runs the command the process's arguments name, and says how it ended.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut builder = match cli.worker_threads.map(std::num::NonZeroUsize::get) {
        // One thread: the scheduler made for it. A multi-threaded scheduler with one worker still
        // hands tasks between that worker and the thread that started it, and pays for stealing.
        // CPU-heavy work (bots' search, verifying logs) runs on the blocking pool either way.
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        threads => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            if let Some(threads) = threads {
                builder.worker_threads(threads);
            }
            builder
        }
    };
    builder.enable_all();
    let runtime = match builder.build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tabula: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = match runtime.block_on(run(cli.command)) {
        Ok(code) => code,
        // Output nobody reads any more (`tabula export … | head`) ends a command quietly.
        Err(error) if crate::cli::is_closed_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tabula: {error:#}");
            ExitCode::FAILURE
        }
    };
    // Tasks still running (stream followers, the store's subscriber) are cancelled, not awaited.
    runtime.shutdown_timeout(Duration::from_secs(1));
    code
}

/// The signing keys the flags name; `None` when no signing key is configured.
fn signing_keys(args: &ServeArgs) -> anyhow::Result<Option<SigningKeys>> {
    let signing = match (&args.signing_key_file, &args.signing_key) {
        (Some(path), _) => std::fs::read_to_string(path)
            .with_context(|| format!("--signing-key-file: reading {}", path.display()))?,
        // An empty value (a deployment file passing an unset variable on) is no key.
        (None, Some(key)) if !key.trim().is_empty() => key.clone(),
        (None, _) => {
            anyhow::ensure!(
                args.signing_public_keys.is_none(),
                "--signing-public-keys needs a signing key (--signing-key-file or \
                 TABULA_SIGNING_KEY)"
            );
            return Ok(None);
        }
    };
    let accepted = match &args.signing_public_keys {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("--signing-public-keys: reading {}", path.display()))?,
        ),
        None => None,
    };
    // The error names the line, never the key.
    let keys = SigningKeys::from_text(&signing, accepted.as_deref())
        .map_err(|error| anyhow::anyhow!("the signing keys are refused: {error}"))?;
    tracing::info!(
        key_id = keys.signing_key_id(),
        published = keys.published().len(),
        "signing games with the configured key"
    );
    Ok(Some(keys))
}

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Serve(args) => serve(*args).await.map(|()| ExitCode::SUCCESS),
        Command::Export {
            server,
            game_id,
            token,
            ca_cert,
        } => export(&server, ca_cert.as_deref(), game_id, token)
            .await
            .map(|()| ExitCode::SUCCESS),
        Command::Verify { file, keys } => verify_file(&file, keys.as_deref()),
        Command::SigningKey { key_id } => {
            anyhow::ensure!(
                crate::signing::is_key_id(&key_id),
                "--id: a key id is 1 to {} of A-Z, a-z, 0-9, '.', '_', '-'",
                crate::signing::MAX_KEY_ID_LEN
            );
            let (signing, public) = crate::signing::new_key_lines(&key_id)
                .map_err(|error| anyhow::anyhow!("no randomness: {error}"))?;
            cli::say(format_args!(
                "signing key (--signing-key-file, secret): {signing}"
            ))?;
            cli::say(format_args!(
                "public key (GetSigningKeys publishes it): {public}"
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::TenantKey => {
            let (key, key_id, hash) = crate::service::tenants::new_key()?;
            cli::say(format_args!("key: {key}"))?;
            cli::say(format_args!(
                "file entry: {}",
                serde_json::json!({"id": key_id, "sha256": hex::encode(hash)})
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Health {
            server,
            service,
            ca_cert,
            timeout,
        } => health(&server, ca_cert.as_deref(), service, timeout).await,
        Command::Play(args) => cli::play::run(&args).await.map(|()| ExitCode::SUCCESS),
        Command::UpgradeStore {
            redis_url,
            redis_cluster,
            redis_ca,
        } => {
            let mut options = crate::store::redis::RedisOptions::single(String::new());
            options.urls = redis_url
                .split(',')
                .map(str::trim)
                .map(str::to_owned)
                .collect();
            options.cluster = redis_cluster;
            options.ca_certificate = redis_ca
                .map(|path| {
                    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
                })
                .transpose()?;
            let upgrade = crate::store::redis::upgrade_store(&options).await?;
            let (before, after) = (upgrade.layout_before, upgrade.layout_after);
            if before == after {
                cli::say(format_args!("the store is in layout {after} already"))?;
            } else {
                cli::say(format_args!(
                    "the store moved from layout {before} to layout {after}"
                ))?;
            }
            if upgrade.tenant_entries_filled > 0 {
                cli::say(format_args!(
                    "{} games were added to their tenants' own indexes",
                    upgrade.tenant_entries_filled
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Load(args) => {
            let report = cli::load::run(&args).await?;
            if args.json {
                cli::say(serde_json::to_string_pretty(&report)?)?;
            } else {
                cli::say_part(cli::load::render(&report))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let TelemetryArgs {
        log_filter,
        log_format,
        otlp_endpoint,
        metrics_listen,
        access_log,
    } = &args.telemetry;
    let telemetry = telemetry::init(
        log_filter,
        *log_format,
        otlp_endpoint.as_deref(),
        metrics_listen.is_some(),
        *access_log,
    )?;
    if args.redis_url.is_none() && args.durability != Durability::None {
        anyhow::bail!(
            "--durability {} needs --redis-url: the memory store keeps nothing across a restart",
            args.durability
        );
    }
    if let (Some(address), Some(reader)) = (metrics_listen, telemetry.scrape_reader()) {
        let listener = tokio::net::TcpListener::bind(address.as_str())
            .await
            .with_context(|| format!("serving metrics on {address}"))?;
        tracing::info!(address = %listener.local_addr()?, "metrics at /metrics");
        tokio::spawn(crate::metrics::serve_scrape(listener, reader));
    }
    // Before anything slow, so a SIGTERM during start-up is handled too.
    let stopping = Drain::new();
    let signal = shutdown_signal()?;
    tokio::spawn({
        let stopping = stopping.clone();
        async move {
            signal.await;
            stopping.start();
        }
    });
    let choice = args.store_choice()?;
    let serve_options = args.serve_options()?;
    let mut service_options = args.service_options();
    if let Some(path) = &args.tenants {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--tenants: reading {}", path.display()))?;
        let file = crate::service::tenants::TenantsFile::parse(&text).map_err(|reason| {
            anyhow::anyhow!(
                "--tenants: {} is not a tenants file: {reason}",
                path.display()
            )
        })?;
        service_options.tenants_file = Some(file);
    }
    service_options.signing = signing_keys(&args)?.map(Arc::new);
    let (archive, retention) = args.retention()?;
    if archive.is_none() && args.redis_url.is_some() {
        tracing::warn!(
            "no --archive: finished games stay in Redis (--retain-finished applies only with an archive)"
        );
    }
    if let Some(archive) = &archive {
        tracing::info!(archive = archive.description(), "archiving finished games");
    }
    service_options.archive = archive;
    service_options.retention = Some(retention);
    let Some(store) = wait_for_store(&choice, &stopping).await else {
        tracing::info!("stopped before the store answered");
        return Ok(());
    };
    let listener = tokio::net::TcpListener::bind(args.listen.as_str())
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let address = listener.local_addr()?;
    tracing::info!(%address, store = store.kind(), "tabula serving");
    if serve_options.web {
        // The one line a person needs: where to open the web client (an unspecified listen
        // address is reachable on loopback).
        let scheme = if serve_options.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let shown = match address {
            std::net::SocketAddr::V4(v4) if v4.ip().is_unspecified() => {
                format!("127.0.0.1:{}", v4.port())
            }
            std::net::SocketAddr::V6(v6) if v6.ip().is_unspecified() => {
                format!("[::1]:{}", v6.port())
            }
            other => other.to_string(),
        };
        tracing::info!(url = %format!("{scheme}://{shown}/"), "web client: open this address in a browser");
    }
    server::serve_with(
        listener,
        store,
        service_options,
        serve_options,
        stopping.started(),
    )
    .await?;
    tracing::info!("stopped");
    // Flushes spans (and metrics) still buffered for export.
    drop(telemetry);
    Ok(())
}

/// The store's URLs without passwords (or `memory`), for logs.
fn describe_store(choice: &StoreChoice) -> String {
    match choice {
        StoreChoice::Memory { .. } => "memory".to_owned(),
        StoreChoice::Redis(options) => options
            .urls
            .iter()
            .map(|url| config::redact_url(url))
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// Opens the store, retrying with exponential backoff (up to every 10 s) while it does not
/// answer: a replica started before its Redis (or during an outage) waits instead of exiting and
/// being restarted in a loop. `None` when shutdown starts first.
async fn wait_for_store(choice: &StoreChoice, stopping: &Drain) -> Option<Arc<dyn Store>> {
    const FIRST_RETRY: Duration = Duration::from_millis(250);
    const LONGEST_RETRY: Duration = Duration::from_secs(10);
    let store_name = describe_store(choice);
    let mut retry_in = FIRST_RETRY;
    let mut failures = 0_u32;
    loop {
        let opened = tokio::select! {
            opened = server::open_store(choice) => opened,
            () = stopping.started() => return None,
        };
        match opened {
            Ok(store) => {
                if failures > 0 {
                    tracing::info!(store = %store_name, failures, "store reachable: starting");
                }
                return Some(store);
            }
            Err(error) => {
                failures += 1;
                tracing::warn!(
                    store = %store_name,
                    %error,
                    ?retry_in,
                    "store not reachable: waiting for it"
                );
            }
        }
        tokio::select! {
            () = tokio::time::sleep(retry_in) => {}
            () = stopping.started() => return None,
        }
        retry_in = (retry_in * 2).min(LONGEST_RETRY);
    }
}

/// Completes on the first SIGTERM (what container runtimes and Kubernetes send) or SIGINT
/// (Ctrl-C). A second one while draining stops the process at once. Handlers are installed when
/// this is called, which also makes the signals work when the process is PID 1 in a container
/// (where the kernel ignores signals without a handler).
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).context("installing a SIGTERM handler")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("installing a SIGINT handler")?;
    Ok(async move {
        let name = tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        };
        tracing::info!(
            signal = name,
            "shutting down gracefully (the same signal again stops at once)"
        );
        tokio::spawn(async move {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
            eprintln!("tabula: second signal: stopping at once");
            std::process::exit(1);
        });
    })
}

/// How long the client subcommands wait for a server.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(30);

async fn export(
    server: &str,
    ca_cert: Option<&Path>,
    game_id: String,
    token: Option<String>,
) -> anyhow::Result<()> {
    let channel = cli::connect(server, ca_cert, CLIENT_TIMEOUT).await?;
    let mut client = pb::game_service_client::GameServiceClient::new(channel);
    let mut request = tonic::Request::new(pb::ExportLogRequest {
        narrate: false,
        game_id,
    });
    if let Some(token) = token {
        let value = format!("Bearer {token}")
            .parse()
            .context("the token is not a valid header value")?;
        request.metadata_mut().insert("authorization", value);
    }
    let log = client
        .export_log(request)
        .await
        .map_err(|status| anyhow::anyhow!(cli::describe_status(&status)))?
        .into_inner()
        .log
        .unwrap_or_default();
    cli::say(json::to_json(&log, "tabula.v1.GameLog")?)?;
    Ok(())
}

async fn health(
    server: &str,
    ca_cert: Option<&Path>,
    service: String,
    timeout: Duration,
) -> anyhow::Result<ExitCode> {
    use tonic_health::pb::health_check_response::ServingStatus;
    let channel = cli::connect(server, ca_cert, timeout).await?;
    let mut client = tonic_health::pb::health_client::HealthClient::new(channel);
    let response = client
        .check(tonic_health::pb::HealthCheckRequest { service })
        .await
        .map_err(|status| anyhow::anyhow!(cli::describe_status(&status)))?;
    let status = response.into_inner().status();
    cli::say(status.as_str_name())?;
    Ok(if status == ServingStatus::Serving {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn verify_file(file: &PathBuf, keys: Option<&Path>) -> anyhow::Result<ExitCode> {
    let published = match keys {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("--keys: reading {}", path.display()))?;
            Some(
                crate::signing::public_keys_from_text(&text)
                    .map_err(|error| anyhow::anyhow!("--keys {}: {error}", path.display()))?,
            )
        }
        None => None,
    };
    let bytes = if file.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading the log from standard input")?;
        bytes
    } else {
        std::fs::read(file).with_context(|| format!("reading {}", file.display()))?
    };
    let log = match std::str::from_utf8(&bytes) {
        Ok(text) if text.trim_start().starts_with('{') => {
            // Also as exported before 1.0.0 (a few fields were renamed then).
            json::log_from_json(text)?
        }
        _ => pb::GameLog::decode(bytes.as_slice()).context("not a JSON or binary GameLog")?,
    };
    let mut report = verify::with_provenance(
        verify::verify(&log),
        &log,
        published.as_deref().unwrap_or_default(),
    );
    let provenance = report.provenance.clone().unwrap_or_default();
    match &published {
        // Keys given: a signature by none of them is no signature of that deployment.
        Some(_) if provenance.signed && !provenance.key_known && report.valid => {
            report.valid = false;
            report.invalid_version = Some(0);
            report.error = format!(
                "the log's provenance: signed with key {:?}, which is not among the keys given",
                provenance.key_id
            );
        }
        Some(_) => {}
        None if provenance.signed => eprintln!(
            "tabula verify: no --keys: the signatures were not checked (the chain and what the \
             commitment says were)"
        ),
        None => {}
    }
    if !provenance.signed {
        eprintln!("tabula verify: the log is unsigned (a game created before signed logs)");
    }
    cli::say(json::to_json(&report, "tabula.v1.VerifyLogResponse")?)?;
    Ok(if report.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
