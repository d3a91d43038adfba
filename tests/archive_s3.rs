//! The archive on a real S3-compatible server: moto's (`moto_server`, from PyPI's `moto[server]`,
//! which scripts/test.sh installs), started on a free loopback port. A finished game past
//! retention leaves the store (memory, and a `redis-server` of the test's own), is in the bucket
//! under the configured prefix, and a replica that never saw it still exports and verifies it.
//!
//! Without `moto_server` the tests say so and pass, except under `CI=true`, where they fail.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::servers::Killed;
use common::*;
use tabula::archive::{Archive, ArchivedGame};
use tabula::games::Seed;
use tabula::games::common::GameRng;
use tabula::proto::v1 as pb;
use tabula::service::{RetentionOptions, ServiceOptions};

const BUCKET: &str = "tabula-archive";

/// A moto S3 server of the test's own, killed when dropped.
struct Moto {
    _process: Killed,
    port: u16,
}

/// Starts `moto_server` (or `$TABULA_TEST_MOTO_SERVER`) with a bucket; `None` when it is not
/// installed and this is not CI.
fn start_moto() -> Option<Moto> {
    let binary =
        std::env::var("TABULA_TEST_MOTO_SERVER").unwrap_or_else(|_| "moto_server".to_owned());
    for _ in 0..3 {
        let port = free_port();
        let child = Command::new(&binary)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let child = match child {
            Ok(child) => child,
            Err(error) => {
                let message = format!(
                    "{binary} not runnable ({error}): install it with `pip install 'moto[server]'` \
                     (scripts/test.sh does)"
                );
                assert!(std::env::var("CI").as_deref() != Ok("true"), "{message}");
                eprintln!("skipping the S3 archive test: {message}");
                return None;
            }
        };
        let mut process = Killed(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && process.is_running() {
            if let Some(status) = http(port, "PUT", &format!("/{BUCKET}"))
                && status == 200
            {
                return Some(Moto {
                    _process: process,
                    port,
                });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    panic!("moto_server did not start");
}

/// One plain HTTP/1.1 request without a body; the status code, `None` if nobody answers.
fn http(port: u16, method: &str, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 0\r\n\
         Connection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.split(' ').nth(1)?.parse().ok()
}

fn s3_archive(moto: &Moto, prefix: &str) -> Arc<Archive> {
    let endpoint = format!("http://127.0.0.1:{}", moto.port);
    Arc::new(
        Archive::open_with(
            &format!("s3://{BUCKET}/{prefix}"),
            Duration::from_secs(10),
            &[
                ("aws_endpoint", endpoint.as_str()),
                ("aws_access_key_id", "test"),
                ("aws_secret_access_key", "test"),
                ("aws_region", "us-east-1"),
            ],
        )
        .expect("an S3 archive"),
    )
}

fn options(archive: &Arc<Archive>, retain: Option<Duration>) -> ServiceOptions {
    ServiceOptions {
        archive: Some(archive.clone()),
        retention: retain.map(|retain| RetentionOptions {
            retain_finished: Some(retain),
            abandon_after: None,
            interval: Duration::from_millis(100),
            batch: 50,
            call_timeout: Duration::from_secs(10),
        }),
        ..test_options()
    }
}

async fn a_finished_game_goes_to_s3(backend: &Backend) {
    let Some(moto) = start_moto() else {
        return;
    };
    let archive = s3_archive(&moto, "tabula/games-test");
    let retaining =
        Replica::start_with(backend, options(&archive, Some(Duration::from_millis(300)))).await;
    let mut client = retaining.client().await;
    let game = create(&mut client, medici_config(), 5).await;
    let mut rng = GameRng::from_seed(&Seed::from_u64(5));
    let version = play_random(std::slice::from_mut(&mut client), &game, &mut rng, 2_000).await;
    let before = export(&mut client, &game.game_id).await;

    let store = backend.store().await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while store
        .read_whole(&game.game_id)
        .await
        .expect("store")
        .is_some()
    {
        assert!(Instant::now() < deadline, "the game is still in the store");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // In the bucket under the prefix, as a second client of the bucket finds it; not elsewhere.
    let elsewhere = s3_archive(&moto, "elsewhere");
    assert_eq!(
        elsewhere.get(&game.game_id).await.expect("S3 answers"),
        None
    );
    let archived: ArchivedGame = s3_archive(&moto, "tabula/games-test")
        .get(&game.game_id)
        .await
        .expect("S3 answers")
        .expect("the game is archived");
    assert_eq!(archived.entries.len() as u64, version);

    let cold = Replica::start_with(backend, options(&archive, None)).await;
    let mut cold_client = cold.client().await;
    let after = export(&mut cold_client, &game.game_id).await;
    assert_eq!(after, as_archived(&before));
    let report = cold_client
        .verify_log(pb::VerifyLogRequest { log: Some(after) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(report.valid, "{}", report.error);
    assert_eq!(report.verified_version, version);
    // A game nobody archived is still NOT_FOUND, not an S3 error.
    let missing = cold_client
        .export_log(pb::ExportLogRequest {
            narrate: false,
            game_id: "0123456789abcdef0123456789abcdef".into(),
        })
        .await
        .expect_err("unknown game");
    assert_eq!(missing.code(), tonic::Code::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_goes_to_s3_from_memory() {
    a_finished_game_goes_to_s3(&Backend::memory()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_goes_to_s3_from_redis() {
    a_finished_game_goes_to_s3(&Backend::redis()).await;
}
