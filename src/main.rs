//! The `tabula` command: run a replica, export a game's log as canonical JSON, verify a log.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use prost::Message;
use tabula::config::{ServeArgs, TelemetryArgs};
use tabula::proto::v1 as pb;
use tabula::{json, server, telemetry, verify};

#[derive(Parser)]
#[command(
    name = "tabula",
    version,
    about = "Tabula: turn-based board games as a gRPC service"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a replica of the game service.
    Serve(ServeArgs),
    /// Fetch a game's log from a running server and print it as canonical proto3 JSON.
    Export {
        /// The server, e.g. http://127.0.0.1:50051.
        #[arg(long, default_value = "http://127.0.0.1:50051")]
        server: String,
        game_id: String,
        /// A seat token, to export as that seat (a spectator otherwise).
        #[arg(long, env = "TABULA_TOKEN")]
        token: Option<String>,
    },
    /// Re-execute an exported log (canonical JSON or binary `tabula.v1.GameLog`) and print the
    /// result; exits with 1 when the log is invalid.
    Verify { file: PathBuf },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("tabula: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli.command)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("tabula: {error:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::Serve(args) => serve(args).await.map(|()| ExitCode::SUCCESS),
        Command::Export {
            server,
            game_id,
            token,
        } => export(&server, game_id, token)
            .await
            .map(|()| ExitCode::SUCCESS),
        Command::Verify { file } => verify_file(&file),
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let TelemetryArgs {
        log_filter,
        log_format,
        otlp_endpoint,
    } = &args.telemetry;
    let _telemetry = telemetry::init(log_filter, *log_format, otlp_endpoint.as_deref())?;
    let store = server::open_store(&args.store_choice())
        .await
        .context("opening the store")?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    tracing::info!(address = %listener.local_addr()?, store = store.kind(), "tabula serving");
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
        tracing::info!("shutting down");
    };
    server::serve(listener, store, args.service_options(), shutdown).await?;
    Ok(())
}

async fn export(server: &str, game_id: String, token: Option<String>) -> anyhow::Result<()> {
    let mut client = pb::game_service_client::GameServiceClient::connect(server.to_owned())
        .await
        .with_context(|| format!("connecting to {server}"))?;
    let mut request = tonic::Request::new(pb::ExportLogRequest { game_id });
    if let Some(token) = token {
        request
            .metadata_mut()
            .insert("authorization", format!("Bearer {token}").parse()?);
    }
    let log = client
        .export_log(request)
        .await?
        .into_inner()
        .log
        .unwrap_or_default();
    println!("{}", json::to_json(&log, "tabula.v1.GameLog")?);
    Ok(())
}

fn verify_file(file: &PathBuf) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let log = match std::str::from_utf8(&bytes) {
        Ok(text) if text.trim_start().starts_with('{') => {
            json::from_json::<pb::GameLog>(text, "tabula.v1.GameLog")?
        }
        _ => pb::GameLog::decode(bytes.as_slice()).context("not a JSON or binary GameLog")?,
    };
    let report = verify::verify(&log);
    println!("{}", json::to_json(&report, "tabula.v1.VerifyLogResponse")?);
    Ok(if report.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
