//! A real browser: headless Chromium loads a page from one origin (a small file server on its own
//! port) that plays Tabula over gRPC-Web against a `tabula serve` on another origin. With
//! `--cors-origin` naming the page's origin, the page creates a Medici vs Strozzi game, plays
//! moves picked from the listed legal actions, follows them on Observe (a server stream) and reads
//! an ABORTED status with its `tabula-current-version`; without it, or with another origin
//! listed, Chromium refuses the call with a CORS error.
//!
//! The page (tests/browser/src/page.ts) uses a client generated from proto/ at test time
//! (protobuf-es and Connect-Web, bundled with esbuild: `npm run build`); tests/browser/drive.mjs
//! drives the system's Chromium with playwright-core. Needs `node` (≥ 20, with npm) and
//! Chromium (`/usr/bin/chromium`, or `CHROMIUM`; scripts/test.sh installs Debian's). Without
//! them the tests are skipped with a message, except under CI (`CI=true`), where they fail.
//! Screenshots of the pages are left in target/tmp/.

use crate::common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use common::browser::{chromium, start_replica};
use tabula::proto::v1 as pb;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long the page may take to play (its own deadline) and the driver to wait for it.
const PAGE_DEADLINE: Duration = Duration::from_secs(30);

/// How many moves the page plays.
const MOVES: usize = 6;

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser")
}

/// Runs `npm` with `args` in tests/browser, failing with its output.
fn npm(args: &[&str]) -> Result<(), String> {
    let output = Command::new("npm")
        .args(args)
        .current_dir(browser_dir())
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("npm {}: {error}", args.join(" ")))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "npm {} failed:\n{}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}

/// Installs the pinned packages when package-lock.json changed since the last install (without
/// install scripts: buf and esbuild find their platform's binary package without them), generates
/// the client from proto/ and bundles the page, once per test process; the bundle's directory.
fn built_page() -> &'static Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = browser_dir();
        let modified = |path: PathBuf| std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let installed = modified(dir.join("node_modules/.package-lock.json"));
        let locked = modified(dir.join("package-lock.json"));
        if installed.is_none() || installed < locked {
            npm(&[
                "ci",
                "--prefer-offline",
                "--ignore-scripts",
                "--no-audit",
                "--no-fund",
            ])?;
        }
        npm(&["run", "build"])?;
        Ok(dir.join("dist"))
    })
}

/// Serves the bundled page (index.html and page.js from `dir`) over HTTP/1.1 on a loopback port
/// of its own: the page's origin. Runs until the test's runtime ends.
async fn serve_page(dir: PathBuf) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the page's server");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(serve_file(socket, dir.clone()));
        }
    });
    address
}

/// Answers one request on `socket` with a file of the page, or 404.
async fn serve_file(mut socket: tokio::net::TcpStream, dir: PathBuf) {
    let mut head = Vec::new();
    let mut buffer = [0_u8; 1024];
    let read_head = async {
        while !head.windows(4).any(|window| window == b"\r\n\r\n") && head.len() < 16 * 1024 {
            match socket.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => head.extend_from_slice(&buffer[..read]),
            }
        }
    };
    if tokio::time::timeout(Duration::from_secs(5), read_head)
        .await
        .is_err()
    {
        return;
    }
    let request_line = String::from_utf8_lossy(&head);
    let path = request_line
        .split_whitespace()
        .nth(1)
        .and_then(|target| target.split('?').next())
        .unwrap_or("");
    // Only the page's two files: nothing else on disk is reachable.
    let file = match path {
        "/" | "/index.html" => Some(("index.html", "text/html; charset=utf-8")),
        "/page.js" => Some(("page.js", "text/javascript; charset=utf-8")),
        _ => None,
    };
    let (status, content_type, body) = match file {
        Some((name, content_type)) => match tokio::fs::read(dir.join(name)).await {
            Ok(body) => ("200 OK", content_type, body),
            Err(_) => ("404 Not Found", "text/plain", b"not built".to_vec()),
        },
        None => ("404 Not Found", "text/plain", b"not found".to_vec()),
    };
    let response_head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(response_head.as_bytes()).await;
    let _ = socket.write_all(&body).await;
    let _ = socket.shutdown().await;
}

/// What the driver reports: the page's title and outcome and the browser's console messages.
struct PageRun {
    title: String,
    outcome: serde_json::Value,
    console: Vec<String>,
    raw: String,
}

/// Opens the page from `page` (its origin) against the replica at `replica` in headless
/// Chromium, and saves a screenshot as target/tmp/`name`.png.
async fn run_page(chromium: &Path, page: SocketAddr, replica: SocketAddr, name: &str) -> PageRun {
    let url = format!(
        "http://{page}/index.html?server=http://{replica}&moves={MOVES}&deadline_ms={}",
        PAGE_DEADLINE.as_millis()
    );
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.png"));
    let driver_timeout = PAGE_DEADLINE + Duration::from_secs(10);
    let mut driver = tokio::process::Command::new("node");
    driver
        .arg(browser_dir().join("drive.mjs"))
        .arg(&url)
        .arg(&screenshot)
        .arg(driver_timeout.as_millis().to_string())
        .env("CHROMIUM", chromium)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(driver_timeout + Duration::from_secs(20), driver.output())
        .await
        .expect("the browser driver finishes")
        .expect("node runs drive.mjs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "drive.mjs failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = stdout
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str(line).ok())
        .unwrap_or_else(|| panic!("drive.mjs printed no report: {stdout}"));
    eprintln!("{name}: screenshot at {}", screenshot.display());
    PageRun {
        title: report["title"].as_str().unwrap_or_default().to_owned(),
        outcome: report["outcome"].clone(),
        console: report["console"]
            .as_array()
            .map(|messages| {
                messages
                    .iter()
                    .filter_map(|message| message.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
        raw: stdout,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_on_another_origin_plays_over_grpc_web() {
    let Some(chromium) = chromium("the browser test") else {
        return;
    };
    let dist = built_page().as_ref().expect("the page builds");
    let page = serve_page(dist.clone()).await;
    let page_origin = format!("http://{page}");
    let (_served, replica, mut client) = start_replica(&["--cors-origin", &page_origin]).await;
    assert_ne!(page.port(), replica.port(), "two origins");

    let run = run_page(&chromium, page, replica, "browser-cors-allowed").await;
    assert_eq!(run.title, "PASS", "{}", run.raw);
    let outcome = &run.outcome;
    let played = outcome["played"].as_array().expect("played moves");
    assert_eq!(played.len(), MOVES, "{}", run.raw);
    let versions: Vec<String> = played
        .iter()
        .map(|moved| moved["version"].as_str().unwrap_or_default().to_owned())
        .collect();
    let expected: Vec<String> = (1..=MOVES).map(|version| version.to_string()).collect();
    assert_eq!(versions, expected, "one version per move");
    let observed: Vec<&str> = outcome["observed"]
        .as_array()
        .expect("observed versions")
        .iter()
        .filter_map(|version| version.as_str())
        .collect();
    for version in &versions {
        assert!(
            observed.contains(&version.as_str()),
            "Observe delivered {version}: {}",
            run.raw
        );
    }
    assert_eq!(outcome["conflict"]["code"], "Aborted", "{}", run.raw);
    assert_eq!(
        outcome["conflict"]["currentVersion"],
        MOVES.to_string(),
        "the page reads tabula-current-version: {}",
        run.raw
    );

    // The replica agrees: the page's game exists and is at the version the page reached, with
    // moves by both seats.
    let game_id = outcome["gameId"].as_str().expect("game id").to_owned();
    let view = client
        .get_view(pb::GetViewRequest {
            narrate: false,
            game_id: game_id.clone(),
            version: None,
            min_version: None,
            omit_view: false,
        })
        .await
        .expect("the page's game")
        .into_inner();
    assert_eq!(view.version, MOVES as u64);
    let log = client
        .export_log(pb::ExportLogRequest {
            narrate: false,
            game_id,
        })
        .await
        .expect("ExportLog")
        .into_inner()
        .log
        .expect("a log");
    let seats: Vec<u64> = played
        .iter()
        .map(|moved| moved["seat"].as_u64().unwrap_or(u64::MAX))
        .collect();
    let logged: Vec<u64> = log
        .entries
        .iter()
        .map(|entry| u64::from(entry.seat))
        .collect();
    assert_eq!(logged, seats, "the log holds the page's moves by its seats");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_pages_origin_allowed_the_browser_refuses_the_calls() {
    let Some(chromium) = chromium("the browser test") else {
        return;
    };
    let dist = built_page().as_ref().expect("the page builds");
    let page = serve_page(dist.clone()).await;
    // `localhost` names the same machine, but it is another origin than 127.0.0.1.
    let other_origin = format!("http://localhost:{}", page.port());
    for (case, extra) in [
        ("browser-cors-none", vec![]),
        (
            "browser-cors-other-origin",
            vec!["--cors-origin", other_origin.as_str()],
        ),
    ] {
        let (_served, replica, _client) = start_replica(&extra).await;
        let run = run_page(&chromium, page, replica, case).await;
        assert_eq!(run.title, "FAIL", "{case}: {}", run.raw);
        assert_eq!(
            run.outcome["stage"], "CreateGame",
            "{case}: the first call fails: {}",
            run.raw
        );
        assert!(
            run.console
                .iter()
                .any(|message| message.contains("blocked by CORS policy")),
            "{case}: Chromium says why: {}",
            run.raw
        );
    }
}
