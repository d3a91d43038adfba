//! The `tabula` binary as a user runs it: `serve` against Redis, `export` to canonical JSON,
//! `verify` of the exported file (and refusal of a tampered one), graceful shutdown on SIGTERM.

use crate::common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::servers::{TABULA, TabulaServe, tabula, wait_serving};
use common::*;
use futures::StreamExt;
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_export_and_verify_from_the_command_line() {
    let redis = RedisServer::start();
    let server = TabulaServe::start(&[
        "--allow-client-seed",
        "--redis-url",
        &redis.url(),
        "--log-format",
        "json",
    ]);
    let mut clients = vec![server.client().await];
    let game = create(&mut clients[0], medici_config(), 12).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(12));
    play_random(&mut clients, &game, &mut rng, 5_000).await;

    // A plain host:port names the server, as --listen does.
    let export = tabula(&["export", "--server", &server.address(), &game.game_id]);
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let json = String::from_utf8(export.stdout).expect("utf-8");
    assert!(
        json.contains("\"complete\": true"),
        "canonical JSON names fields in camelCase: {json:.200}"
    );
    assert!(json.contains("\"medici_vs_strozzi\"") || json.contains("\"mediciVsStrozzi\""));

    // `tabula export … | head`: a reader that stops early ends the command quietly, never with a
    // panic. The log is longer than a pipe holds, so the export is still writing when it goes.
    assert!(
        json.len() > 96 * 1024,
        "a log of {} bytes fits a pipe (64 KiB)",
        json.len()
    );
    let mut head = Command::new(TABULA)
        .args(["export", "--server", &server.address(), &game.game_id])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tabula export");
    let mut first = [0u8; 100];
    std::io::Read::read_exact(&mut head.stdout.take().expect("stdout"), &mut first)
        .expect("the start of the log");
    let ended = head.wait_with_output().expect("tabula export");
    let stderr = String::from_utf8_lossy(&ended.stderr);
    assert!(ended.status.success(), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("game.json");
    std::fs::write(&file, &json).expect("write");
    let verify = tabula(&["verify", path(&file)]);
    let report = String::from_utf8_lossy(&verify.stdout);
    assert!(verify.status.success(), "{report}");
    assert!(report.contains("\"valid\": true"), "{report}");
    assert!(report.contains("\"stateHash\""), "{report}");

    // `verify -` reads the log from standard input, with the same report.
    let mut piped = Command::new(TABULA)
        .args(["verify", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("tabula verify -");
    std::io::Write::write_all(&mut piped.stdin.take().expect("stdin"), json.as_bytes())
        .expect("write to stdin");
    let from_stdin = piped.wait_with_output().expect("tabula verify -");
    assert!(from_stdin.status.success());
    assert_eq!(String::from_utf8_lossy(&from_stdin.stdout), report);

    // Change who made a move (canonical JSON omits seat 0, so flip a seat 1 to 2): verification
    // fails, naming the entry, with exit code 1.
    let tampered_json = json.replacen("\"seat\": 1,", "\"seat\": 2,", 1);
    assert!(tampered_json != json, "the log has a move by seat 1");
    let tampered = dir.path().join("tampered.json");
    std::fs::write(&tampered, tampered_json).expect("write");
    let verify = tabula(&["verify", path(&tampered)]);
    let report = String::from_utf8_lossy(&verify.stdout);
    assert_eq!(verify.status.code(), Some(1), "{report}");
    assert!(report.contains("\"invalidVersion\""), "{report}");

    let unreadable = dir.path().join("garbage.json");
    std::fs::write(&unreadable, "{ not json").expect("write");
    let verify = tabula(&["verify", path(&unreadable)]);
    assert!(!verify.status.success());
    assert!(
        !String::from_utf8_lossy(&verify.stderr).is_empty(),
        "a clear error on stderr"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_and_clean_errors_from_the_command_line() {
    let redis = RedisServer::start();
    // A host name is accepted for --listen.
    let server = TabulaServe::spawn("localhost", &["--redis-url", &redis.url()], None);
    let address = server.address();
    let health = wait_serving(&address, &[], Duration::from_secs(10));
    assert!(health.status.success(), "{health:?}");
    assert_eq!(String::from_utf8_lossy(&health.stdout).trim(), "SERVING");
    let liveness = tabula(&[
        "health",
        "--server",
        &address,
        "--service",
        "tabula.v1.Liveness",
    ]);
    assert!(liveness.status.success(), "{liveness:?}");

    // An unknown health-checking name is an error with its gRPC code, not a debug dump.
    let unknown = tabula(&[
        "health",
        "--server",
        &address,
        "--service",
        "no.such.Service",
    ]);
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&unknown.stderr).trim(),
        "tabula: NOT_FOUND: service not registered"
    );

    // Exporting a game that does not exist: one line with the code and the server's message.
    let export = tabula(&["export", "--server", &address, "no-such-game"]);
    assert_eq!(export.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&export.stderr);
    assert!(stderr.starts_with("tabula: NOT_FOUND: "), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("Status {"), "{stderr}");

    // Nobody listening: the health check fails and says where it tried.
    let nobody = format!("127.0.0.1:{}", free_port());
    let down = tabula(&["health", "--server", &nobody, "--timeout", "1s"]);
    assert_eq!(down.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&down.stderr);
    assert!(
        stderr.contains(&format!("cannot connect to http://{nobody}")),
        "{stderr}"
    );
}

/// `path` as a command-line argument (the test's temp paths are UTF-8).
fn path(path: &std::path::Path) -> &str {
    path.to_str().expect("a UTF-8 path")
}

/// `tabula serve` on a free loopback port against `redis`, with `extra` arguments.
fn serve_child(redis: &RedisServer, extra: &[&str]) -> TabulaServe {
    let url = redis.url();
    let mut args = vec!["--redis-url", &url, "--allow-client-seed"];
    args.extend_from_slice(extra);
    TabulaServe::start(&args)
}

/// Plays `game` to its end with random legal moves, on `clients[0]` until a call fails and then
/// on `clients[1]`; a failed Act is retried there unchanged (same request id and expected
/// version), as the README tells clients to. Reports each new version on `progress`.
async fn play_with_failover(
    mut clients: [Client; 2],
    game: pb::CreateGameResponse,
    seed: u64,
    progress: tokio::sync::watch::Sender<u64>,
) -> u64 {
    let mut rng = GameRng::from_seed(&Seed::from_u64(seed));
    let mut current = 0;
    for step in 0..5_000 {
        let views = async {
            let spectator = clients[current]
                .get_view(pb::GetViewRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    version: None,
                    min_version: None,
                    omit_view: false,
                })
                .await?
                .into_inner();
            let status = spectator.status.clone().expect("status");
            let Some(seat) = status.to_act else {
                return Ok::<_, tonic::Status>(None);
            };
            let request = authorized(
                pb::GetViewRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    version: None,
                    min_version: None,
                    omit_view: false,
                },
                &token(&game, seat),
            );
            let mine = clients[current].get_view(request).await?.into_inner();
            Ok(Some((seat, mine)))
        };
        let (seat, mine) = match views.await {
            Ok(Some(found)) => found,
            Ok(None) => return *progress.borrow(),
            Err(status) => {
                assert_eq!(current, 0, "the second replica answers: {status}");
                current = 1;
                continue;
            }
        };
        let request = pb::ActRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            action: Some(choose(&mine.legal_actions, &mut rng)),
            expected_version: Some(mine.version),
            request_id: format!("step-{step}"),
            omit_view: false,
        };
        let response = match clients[current]
            .act(authorized(request.clone(), &token(&game, seat)))
            .await
        {
            Ok(response) => response,
            Err(status) => {
                assert_eq!(current, 0, "the second replica answers: {status}");
                current = 1;
                clients[1]
                    .act(authorized(request, &token(&game, seat)))
                    .await
                    .expect("the retried Act on the second replica")
            }
        };
        let version = response.into_inner().version;
        assert_eq!(version, mine.version + 1);
        progress.send_replace(version);
        if current == 0 && version >= 20 {
            // Once the test may signal the first replica, play slowly there: unpaced, the rest
            // of the game takes ~0.2 s, and on a loaded machine it could end before the drain
            // starts (the observer's stream then ends cleanly, with the game).
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    panic!("the game did not end within 5000 actions");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_and_the_observer_resumes_on_another_replica() {
    let redis = RedisServer::start();
    let grace = Duration::from_secs(5);
    let mut leaving = serve_child(&redis, &["--shutdown-grace", "5s"]);
    let staying = serve_child(&redis, &[]);
    let (leaving_url, staying_url) = (leaving.url(), staying.url());
    let mut creator = connect(&leaving_url).await;
    let game = create(&mut creator, medici_config(), 31).await;

    // An observer on the replica that will leave, from the start of the game.
    let mut observer = connect(&leaving_url).await;
    let mut stream = observe(&mut observer, &game.game_id, Some(0)).await;
    let observed = tokio::spawn(async move {
        let mut versions = Vec::new();
        while let Some(message) = stream.next().await {
            match message {
                Ok(message) => versions.push(message.version),
                Err(status) => return (versions, Some(status)),
            }
        }
        (versions, None)
    });

    // Players keep acting on the leaving replica (and fail over when it is gone).
    let (progress, mut progressed) = tokio::sync::watch::channel(0);
    let players = [connect(&leaving_url).await, connect(&staying_url).await];
    let playing = tokio::spawn(play_with_failover(players, game.clone(), 31, progress));
    progressed
        .wait_for(|version| *version >= 20)
        .await
        .expect("the players reach version 20");

    leaving.process.signal("-TERM");
    let status = leaving
        .process
        .exit_within(grace + Duration::from_secs(2))
        .await;
    assert!(status.success(), "exit status after SIGTERM: {status}");

    let (versions, ended) = observed.await.expect("observer task");
    let ended = ended.expect("the stream ends with an error status, not a clean end");
    assert_eq!(ended.code(), tonic::Code::Unavailable, "{ended:?}");
    let last = *versions.last().expect("the observer saw the start");
    assert!(
        versions.iter().copied().eq(0..=last),
        "in order, without gaps: {versions:?}"
    );

    let final_version = playing.await.expect("players");
    assert!(
        final_version > last,
        "the game went on after the replica left"
    );
    let mut resumed = connect(&staying_url).await;
    let rest = collect_stream(
        &mut resumed,
        tonic::Request::new(pb::ObserveRequest {
            narrate: false,
            game_id: game.game_id.clone(),
            from_version: Some(last),
        }),
    )
    .await;
    let rest: Vec<u64> = rest.iter().map(|message| message.version).collect();
    assert!(
        rest.iter().copied().eq(last..=final_version),
        "the resumed stream continues from {last} to {final_version} without a gap: {rest:?}"
    );
}

/// Issue #24 (3): an interval or duration out of its range is refused at start, by the real
/// binary, with a message naming the flag (and its range) and clap's usage exit status, 2; the
/// same through the environment variable a deployment sets. A replica once accepted
/// `--retention-interval 0s` and `--clock-sweep-interval 0ms` and then queried its store flat out.
#[test]
fn out_of_range_durations_are_refused_at_start_naming_the_flag() {
    let refused = |args: &[&str], env: &[(&str, &str)]| {
        let mut child = Command::new(TABULA)
            .arg("serve")
            .args(["--listen", &format!("127.0.0.1:{}", free_port())])
            .args(args)
            .envs(env.iter().copied())
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tabula serve");
        // A value that is accepted starts a replica that serves until killed: give it a few
        // seconds to refuse, then fail rather than wait for ever.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while child.try_wait().expect("try_wait").is_none() {
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?} {env:?} was accepted: the replica started");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let output = child.wait_with_output().expect("tabula serve");
        assert_eq!(
            output.status.code(),
            Some(2),
            "refused at start: {args:?} {env:?}: {output:?}"
        );
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    for (flag, value, range) in [
        ("--retention-interval", "0s", "from 100ms to 1d"),
        ("--clock-sweep-interval", "0ms", "from 50ms to 1m"),
        ("--clock-sweep-interval", "2m", "from 50ms to 1m"),
        ("--clock-sweep-timeout", "0s", "from 100ms to 1m"),
        ("--archive-timeout", "0s", "from 100ms to 10m"),
        ("--request-id-ttl", "1s", "from 1m to 365d"),
        ("--abandon-after", "0s", "from 100ms to 3650d"),
        ("--retain-finished", "10000d", "from 0s to 3650d"),
        ("--shutdown-grace", "2h", "from 0s to 1h"),
        ("--redis-timeout-ms", "0", "10..=60000"),
        ("--bot-think-ms", "0", "1..=60000"),
        ("--clock-sweep-jitter", "2", "from 0 to 1"),
    ] {
        let stderr = refused(&[flag, value], &[]);
        assert!(
            stderr.contains(&format!("invalid value '{value}' for '{flag} "))
                && stderr.contains(range),
            "{flag} {value}: {stderr}"
        );
    }
    let stderr = refused(&[], &[("TABULA_RETENTION_INTERVAL", "0s")]);
    assert!(
        stderr.contains("--retention-interval") && stderr.contains("from 100ms to 1d"),
        "{stderr}"
    );
    let stderr = refused(&[], &[("TABULA_CLOCK_SWEEP_INTERVAL", "0ms")]);
    assert!(stderr.contains("--clock-sweep-interval"), "{stderr}");
    // The help states each range.
    let help = tabula(&["serve", "--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for range in [
        "Accepted: 100ms to 1d",
        "Accepted: 50ms to 1m",
        "Accepted: 10 to 60000",
    ] {
        assert!(help.contains(range), "--help states {range:?}");
    }
}
