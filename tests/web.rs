//! The web client (issue #16), served by `tabula serve` itself and used in a real browser.
//!
//! - The page is served on the gRPC port (`GET /` and its files), by default with the embedded
//!   store, and not with `--web false`.
//! - The committed bundle (web/dist/) is what its sources build to: the client is generated from
//!   proto/ and bundled again into a scratch directory and compared byte for byte, so a change to
//!   web/src or to the protos without `npm run build` in web/ fails here.
//! - Headless Chromium (the system's, driven by playwright-core: web/tests/drive.mjs) plays a
//!   whole Medici vs Strozzi game by clicking the page's controls in both seats' pages while a
//!   spectator page follows it live, then replays it (first, next, previous, slider, last),
//!   shows the seed check, and opens the replay's downloaded log as a file; it creates and draws a game of every other kind and plays a few moves,
//!   clicking the board where it offers a choice. Screenshots are left in target/tmp/web-*.png.
//!
//! Needs `node` (≥ 20, with npm) and Chromium (`/usr/bin/chromium`, or `CHROMIUM`), as
//! tests/browser.rs: without them these tests are skipped with a message, except under CI
//! (`CI=true`), where they fail.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use common::Client;
use tabula::proto::v1 as pb;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long one driver run may take (a whole game is a few hundred clicks).
const DRIVER_DEADLINE: Duration = Duration::from_secs(240);

fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("web")
}

/// Whether `node` runs; when not, says so (and fails under CI).
fn node_present(what: &str) -> bool {
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !node {
        let message = format!("{what} needs node (>= 20, with npm): run scripts/test.sh");
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{message} (under CI it must run)"
        );
        eprintln!("SKIPPED: {message}");
    }
    node
}

/// The Chromium to drive, or `None` (after saying why) when the test should be skipped.
fn chromium() -> Option<PathBuf> {
    if !node_present("the web client's browser test") {
        return None;
    }
    let chromium = std::env::var_os("CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    if chromium.is_file() {
        return Some(chromium);
    }
    let message = format!(
        "the web client's browser test needs Chromium at {}: run scripts/test.sh (it installs \
         Debian's chromium) or set CHROMIUM",
        chromium.display()
    );
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{message} (under CI it must run)"
    );
    eprintln!("SKIPPED: {message}");
    None
}

/// Runs `program` with `args` in web/, failing with its output.
fn run_in_web(program: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .current_dir(web_dir())
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("{program} {}: {error}", args.join(" ")))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if output.status.success() {
        return Ok(stdout);
    }
    Err(format!(
        "{program} {} failed:\n{stdout}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// Installs web/'s pinned packages when its package-lock.json changed since the last install
/// (without install scripts, as tests/browser.rs), once per test process.
fn installed() -> &'static Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let dir = web_dir();
        let modified = |path: PathBuf| std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let installed = modified(dir.join("node_modules/.package-lock.json"));
        let locked = modified(dir.join("package-lock.json"));
        if installed.is_none() || installed < locked {
            run_in_web(
                "npm",
                &[
                    "ci",
                    "--prefer-offline",
                    "--ignore-scripts",
                    "--no-audit",
                    "--no-fund",
                ],
            )?;
        }
        Ok(())
    })
}

#[test]
fn the_committed_bundle_matches_its_sources() {
    if !node_present("checking the web client's bundle") {
        return;
    }
    installed().as_ref().expect("web/'s packages install");
    run_in_web("npm", &["run", "generate"]).expect("the client generates from proto/");
    run_in_web("npm", &["run", "typecheck"]).expect("the web client typechecks");
    let scratch = tempfile::tempdir().expect("a scratch directory");
    let out = scratch.path().to_str().expect("a UTF-8 path");
    run_in_web("node", &["build.mjs", out]).expect("the web client bundles");
    for file in ["index.html", "app.js", "app.css"] {
        let built = std::fs::read(scratch.path().join(file)).expect("built");
        let committed = std::fs::read(web_dir().join("dist").join(file)).expect("committed");
        assert!(
            built == committed,
            "web/dist/{file} is not what web/ builds to: run `npm run build` in web/ and commit \
             web/dist/"
        );
    }
}

/// `tabula serve` killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `tabula serve` with `extra` arguments on a free loopback port; returns it and a client
/// once it accepts connections (within 5 s).
async fn start_replica(extra: &[&str]) -> (Served, SocketAddr, Client) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port");
    let address: SocketAddr = ([127, 0, 0, 1], port).into();
    let served = Served(
        Command::new(env!("CARGO_BIN_EXE_tabula"))
            .args(["serve", "--listen", &address.to_string()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tabula serve"),
    );
    for _ in 0..250 {
        if let Ok(client) = Client::connect(format!("http://{address}")).await {
            return (served, address, client);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("tabula serve at {address} does not accept connections");
}

/// A plain HTTP/1.1 GET: the status code, the content type and the body.
async fn http_get(address: SocketAddr, path: &str) -> (u16, String, String) {
    let mut socket = tokio::net::TcpStream::connect(address)
        .await
        .expect("connect");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nAccept: */*\r\n\r\n"
    );
    socket.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), socket.read_to_end(&mut answer))
        .await
        .expect("an answer within 5 s")
        .expect("read");
    let text = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let content_type = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-type")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_default();
    (status, content_type, body.to_owned())
}

#[tokio::test]
async fn the_page_is_served_on_the_grpc_port_unless_turned_off() {
    let (_served, address, mut client) = start_replica(&[]).await;
    let (status, content_type, body) = http_get(address, "/").await;
    assert_eq!(status, 200, "{body}");
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(body.contains("app.js"), "{body}");
    let (status, content_type, body) = http_get(address, "/app.js").await;
    assert_eq!(status, 200);
    assert!(
        content_type.starts_with("text/javascript"),
        "{content_type}"
    );
    assert!(
        body.contains("application/grpc-web+proto"),
        "the bundled gRPC-Web client"
    );
    let (status, _, _) = http_get(address, "/app.css").await;
    assert_eq!(status, 200);
    // Nothing else is a file: other GETs meet the method gate as before.
    let (status, _, _) = http_get(address, "/../Cargo.toml").await;
    assert_eq!(status, 405);
    // gRPC still answers on the same port.
    client
        .get_view(pb::GetViewRequest {
            game_id: "0".repeat(32),
            version: None,
        })
        .await
        .expect_err("no such game");

    let (_served, address, _client) = start_replica(&["--web", "false"]).await;
    let (status, _, _) = http_get(address, "/").await;
    assert_eq!(status, 405, "--web false serves no page");
}

/// Runs web/tests/drive.mjs with `args` against the replica at `replica`; its outcome.
async fn drive(chromium: &Path, replica: SocketAddr, args: &[&str]) -> serde_json::Value {
    installed().as_ref().expect("web/'s packages install");
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let mut driver = tokio::process::Command::new("node");
    driver
        .arg(web_dir().join("tests/drive.mjs"))
        .arg(args[0])
        .arg(format!("http://{replica}"))
        .arg(shots)
        .arg(DRIVER_DEADLINE.as_millis().to_string())
        .args(&args[1..])
        .current_dir(web_dir())
        .env("CHROMIUM", chromium)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(DRIVER_DEADLINE + Duration::from_secs(30), driver.output())
        .await
        .expect("the browser driver finishes")
        .expect("node runs drive.mjs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let report: serde_json::Value = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| {
            panic!(
                "drive.mjs printed no report: {stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    assert!(
        output.status.success() && report["ok"] == true,
        "drive.mjs {}: {report:#}\n(screenshots in {})",
        args[0],
        shots.display()
    );
    eprintln!("drive.mjs {}: screenshots in {}", args[0], shots.display());
    report["outcome"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_medici_vs_strozzi_game_is_played_and_replayed_in_the_page() {
    let Some(chromium) = chromium() else {
        return;
    };
    let (_served, replica, mut client) = start_replica(&[]).await;
    let outcome = drive(&chromium, replica, &["play-mvs"]).await;
    eprintln!("{outcome:#}");

    // The page played the whole game: the replica has it finished, every move made by a click.
    let game_id = outcome["gameId"].as_str().expect("game id").to_owned();
    let view = client
        .get_view(pb::GetViewRequest {
            game_id: game_id.clone(),
            version: None,
        })
        .await
        .expect("the page's game")
        .into_inner();
    let status = view.status.expect("status");
    assert!(status.finished, "the game was played to its end");
    let moves = outcome["moves"].as_u64().expect("moves");
    assert_eq!(view.version, moves, "one version per click");
    assert_eq!(outcome["finalVersion"], view.version.to_string());
    assert!(
        outcome["kinds"]["amount"].as_u64().unwrap_or(0) > 0,
        "prices were named with the amount field: {outcome}"
    );
    let turn = outcome["turnText"].as_str().unwrap_or_default();
    assert!(turn.starts_with("Game over"), "the page says so: {turn}");
    assert!(
        ["Medici", "Strozzi"].iter().any(|name| turn.contains(name)),
        "and names the winner: {turn}"
    );
    assert!(
        outcome["logLines"].as_u64().unwrap_or(0) > moves,
        "the log shows every move and its events"
    );

    // The replay: the log verifies, the seed matches its commitment, and the controls step.
    let replay = &outcome["replay"];
    assert_eq!(replay["verified"], "valid", "{replay}");
    assert!(
        replay["seedVerdict"]
            .as_str()
            .unwrap_or_default()
            .contains("equals the commitment"),
        "{replay}"
    );
    let positions: Vec<u64> = replay["positions"]
        .as_array()
        .expect("positions")
        .iter()
        .filter_map(serde_json::Value::as_u64)
        .collect();
    assert_eq!(
        positions,
        vec![0, 1, 2, 1, moves / 2, moves],
        "first, next, next, previous, the slider, last"
    );
    let from_file = &replay["fromFile"];
    assert_eq!(from_file["verified"], "valid", "{replay}");
    assert!(
        from_file["heading"]
            .as_str()
            .unwrap_or_default()
            .contains(&game_id),
        "the downloaded log opens as a file: {replay}"
    );
    assert_eq!(
        from_file["position"],
        format!("version {moves} of {moves}"),
        "{replay}"
    );
    assert!(
        replay["firstEvent"]
            .as_str()
            .unwrap_or_default()
            .contains("Draw tile"),
        "the move that led to version 1 is shown in words: {replay}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_other_game_is_created_drawn_and_played_in_the_page() {
    let Some(chromium) = chromium() else {
        return;
    };
    let (_served, replica, mut client) = start_replica(&[]).await;
    for (game, players, moves, board) in [
        ("strozzi", "4", "8", "Strozzi board"),
        ("manila", "3", "12", "Manila board"),
        ("laStrada", "3", "9", "La Strada board"),
    ] {
        let outcome = drive(&chromium, replica, &["draw", game, players, moves]).await;
        eprintln!("{game}: {outcome:#}");
        assert_eq!(outcome["board"]["label"], board, "{outcome}");
        assert!(
            outcome["board"]["shapes"].as_u64().unwrap_or(0) > 50,
            "a picture, not an empty frame: {outcome}"
        );
        let game_id = outcome["gameId"].as_str().expect("game id").to_owned();
        let view = client
            .get_view(pb::GetViewRequest {
                game_id,
                version: None,
            })
            .await
            .expect("the page's game")
            .into_inner();
        assert_eq!(
            view.version.to_string(),
            moves,
            "every move was made by a click"
        );
        assert_eq!(outcome["version"], moves);
    }
}
