//! The example clients under examples/ play against a real `tabula serve`, as a third-party
//! developer would run them: the Python one (grpcio, code generated from proto/ with
//! grpcio-tools) and the TypeScript one on Node (protobuf-es + Connect's gRPC transport). Each
//! must exit 0 having finished one game of every kind the service hosts, which the test checks
//! with the server itself: every game id the example prints is a finished game of its kind.
//!
//! Dependencies are installed once and cached: a Python venv under target/tmp/examples/ (never
//! the system's Python), and examples/typescript/node_modules from its package-lock.json. Needs
//! `python3` (with venv) and `node` (≥ 20, with npm); without them the tests are skipped with a
//! message, except under CI (`CI=true`), where they fail.

use crate::common;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::servers::TabulaServe;
use tabula::proto::v1 as pb;

/// How long one step (an install, a code generation, an example's run) may take.
const STEP_DEADLINE: Duration = Duration::from_secs(300);

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Where the tests keep what they install and generate: cached across runs, ignored by git.
fn work_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("examples")
}

/// True when `program --version` runs; otherwise skips the test (after saying why), or fails it
/// under CI.
fn tool_present(program: &str, needed_for: &str) -> bool {
    let runs = Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if runs {
        return true;
    }
    let message = format!("{needed_for} needs `{program}` on PATH");
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{message} (under CI it must run)"
    );
    eprintln!("SKIPPED: {message}");
    false
}

/// Runs `command` to its end within [`STEP_DEADLINE`] (killed past it); its stdout, or an error
/// with everything it printed.
fn run(what: &str, command: &mut Command) -> Result<String, String> {
    let logs = work_dir().join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let out_path = logs.join(format!("{stamp}.out"));
    let err_path = logs.join(format!("{stamp}.err"));
    let out = File::create(&out_path).map_err(|e| format!("{}: {e}", out_path.display()))?;
    let err = File::create(&err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("{what}: cannot start: {e}"))?;
    let deadline = Instant::now() + STEP_DEADLINE;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("{what}: {e}"))? {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    match status {
        Some(status) if status.success() => Ok(stdout),
        Some(status) => Err(format!("{what} failed ({status}):\n{stdout}\n{stderr}")),
        None => Err(format!(
            "{what} still ran after {STEP_DEADLINE:?}:\n{stdout}\n{stderr}"
        )),
    }
}

/// A modification time, or `None` when the file is missing.
fn modified(path: &Path) -> Option<std::time::SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The Python example's interpreter: a venv under target/ with examples/python/requirements.txt
/// installed, reinstalled only when the requirements changed since the last install.
fn python_venv() -> Result<PathBuf, String> {
    let venv = work_dir().join("venv");
    let python = venv.join("bin/python");
    let requirements = repo().join("examples/python/requirements.txt");
    let installed = venv.join("installed-requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .map_err(|e| format!("{}: {e}", requirements.display()))?;
    if std::fs::read_to_string(&installed).ok().as_deref() == Some(wanted.as_str()) {
        return Ok(python);
    }
    run(
        "python3 -m venv",
        Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
    )?;
    run(
        "pip install -r examples/python/requirements.txt",
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&requirements),
    )?;
    std::fs::write(&installed, wanted).map_err(|e| format!("{}: {e}", installed.display()))?;
    Ok(python)
}

/// Generates the Python modules from proto/ (grpcio-tools) into a fresh directory; its path.
fn python_generated(python: &Path) -> Result<PathBuf, String> {
    let out = work_dir().join("python-gen");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let proto = repo().join("proto");
    let mut files = Vec::new();
    collect_protos(&proto, &mut files)?;
    run(
        "grpc_tools.protoc",
        Command::new(python)
            .args(["-m", "grpc_tools.protoc"])
            .arg(format!("-I{}", proto.display()))
            .arg(format!("--python_out={}", out.display()))
            .arg(format!("--grpc_python_out={}", out.display()))
            .args(&files),
    )?;
    Ok(out)
}

/// The Python examples' interpreter and generated modules, made ready off the async threads,
/// once per run: the Python tests run at once, and a second generation would remove the modules
/// from under the first test's interpreter.
async fn python_prepared() -> (PathBuf, PathBuf) {
    static PREPARED: std::sync::OnceLock<Result<(PathBuf, PathBuf), String>> =
        std::sync::OnceLock::new();
    let prepared = tokio::task::spawn_blocking(|| {
        PREPARED
            .get_or_init(|| {
                let python = python_venv()?;
                let generated = python_generated(&python)?;
                Ok((python, generated))
            })
            .clone()
    })
    .await
    .expect("the preparation ran");
    prepared.unwrap_or_else(|error| panic!("{error}"))
}

/// Every .proto file under `dir`.
fn collect_protos(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.is_dir() {
            collect_protos(&path, files)?;
        } else if path.extension().is_some_and(|ext| ext == "proto") {
            files.push(path);
        }
    }
    Ok(())
}

/// Installs the TypeScript example's pinned packages when package-lock.json changed since the
/// last install (without install scripts: buf finds its platform's binary package without them),
/// then generates its client from proto/ and compiles it.
/// [`build_typescript`] once per test run: the TypeScript tests run in parallel, and two `npm ci`
/// in one directory would remove each other's node_modules.
fn typescript_built() -> Result<PathBuf, String> {
    static BUILT: std::sync::OnceLock<Result<PathBuf, String>> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_typescript).clone()
}

fn build_typescript() -> Result<PathBuf, String> {
    let dir = repo().join("examples/typescript");
    let installed = modified(&dir.join("node_modules/.package-lock.json"));
    if installed.is_none() || installed < modified(&dir.join("package-lock.json")) {
        run(
            "npm ci",
            Command::new("npm")
                .args(["ci", "--prefer-offline", "--ignore-scripts"])
                .args(["--no-audit", "--no-fund"])
                .current_dir(&dir),
        )?;
    }
    run(
        "npm run build",
        Command::new("npm").args(["run", "build"]).current_dir(&dir),
    )?;
    Ok(dir.join("dist/src/play_every_game.js"))
}

/// Checks what an example printed against the server: one `finished GAME_KIND_… game <id>` line
/// per game kind the service hosts, each naming a game the server reports finished and of that
/// kind.
async fn assert_every_kind_finished(server: &TabulaServe, example: &str, output: &str) {
    let mut games: BTreeMap<String, String> = BTreeMap::new();
    for line in output.lines() {
        let mut words = line.split_whitespace();
        if let (Some("finished"), Some(kind), Some("game"), Some(id)) =
            (words.next(), words.next(), words.next(), words.next())
        {
            games.insert(kind.to_owned(), id.trim_end_matches(':').to_owned());
        }
    }
    let hosted: Vec<pb::GameKind> = tabula::hosting::registry()
        .iter()
        .map(|game| game.kind)
        .collect();
    assert!(!hosted.is_empty());
    let mut client = server.client().await;
    for kind in hosted {
        let id = games.get(kind.as_str_name()).unwrap_or_else(|| {
            panic!(
                "{example} reported no finished {} game:\n{output}",
                kind.as_str_name()
            )
        });
        let view = common::spectator_view(&mut client, id).await;
        assert_eq!(view.game, kind as i32, "{example}: game {id}'s kind");
        let status = view.status.expect("a status");
        assert!(status.finished, "{example}: game {id} has ended");
        assert_eq!(status.to_act, None, "{example}: nobody acts in game {id}");
    }
}

/// `tabula serve` (in-memory games, default limits), once it answers health checks.
fn serve() -> TabulaServe {
    let server = TabulaServe::start(&[]);
    let health = common::servers::wait_serving(&server.address(), &[], Duration::from_secs(30));
    assert!(
        health.status.success(),
        "tabula serve did not become healthy: {}",
        String::from_utf8_lossy(&health.stderr)
    );
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_example_plays_every_game_to_the_end() {
    if !tool_present("python3", "the Python example") {
        return;
    }
    let server = serve();
    let (python, generated) = python_prepared().await;
    let address = server.address();
    let output = tokio::task::spawn_blocking(move || {
        run(
            "examples/python/play_every_game.py",
            Command::new(python)
                .arg(repo().join("examples/python/play_every_game.py"))
                .arg(address)
                .env("PYTHONPATH", generated),
        )
    })
    .await
    .expect("the example ran")
    .unwrap_or_else(|error| panic!("{error}"));
    assert_every_kind_finished(&server, "the Python example", &output).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_example_plays_every_game_to_the_end() {
    if !tool_present("node", "the TypeScript example")
        || !tool_present("npm", "the TypeScript example")
    {
        return;
    }
    let server = serve();
    let script = tokio::task::spawn_blocking(typescript_built)
        .await
        .expect("the build ran")
        .unwrap_or_else(|error| panic!("{error}"));
    let address = server.address();
    let output = tokio::task::spawn_blocking(move || {
        run(
            "examples/typescript (node)",
            Command::new("node").arg(script).arg(address),
        )
    })
    .await
    .expect("the example ran")
    .unwrap_or_else(|error| panic!("{error}"));
    assert_every_kind_finished(&server, "the TypeScript example", &output).await;
}

/// `tabula serve` with an operator token, webhooks allowed to loopback, and a tenant: the server
/// and the tenant's API key, for the webhook examples.
async fn serve_a_tenant() -> (TabulaServe, String) {
    let server = TabulaServe::start(&[
        "--operator-token",
        common::OPERATOR,
        "--webhook-allow-private",
    ]);
    let health = common::servers::wait_serving(&server.address(), &[], Duration::from_secs(30));
    assert!(
        health.status.success(),
        "tabula serve did not become healthy"
    );
    let mut admin = common::admin_at(&server.url()).await;
    let key = common::tenant_with_key(&mut admin, "example", "Example").await;
    (server, key)
}

/// Checks that a webhook example finished a Medici vs Strozzi game the server reports ended.
async fn assert_finished_by_webhooks(server: &TabulaServe, example: &str, output: &str) {
    let id = output
        .lines()
        .find_map(|line| line.strip_prefix("finished GAME_KIND_MEDICI_VS_STROZZI game "))
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("{example} finished no game:\n{output}"));
    let mut client = server.client().await;
    let status = common::spectator_view(&mut client, id)
        .await
        .status
        .expect("a status");
    assert!(status.finished, "{example}: game {id} has ended");
}

/// The Python webhook receiver: a game played only from signed `turn_started` notifications.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_webhook_example_plays_a_game_it_is_told_of() {
    if !tool_present("python3", "the Python webhook example") {
        return;
    }
    let (server, key) = serve_a_tenant().await;
    let (python, generated) = python_prepared().await;
    let address = server.address();
    let output = tokio::task::spawn_blocking(move || {
        run(
            "examples/python/webhook_player.py",
            Command::new(python)
                .arg(repo().join("examples/python/webhook_player.py"))
                .arg(address)
                .env("PYTHONPATH", generated)
                .env("TABULA_KEY", key),
        )
    })
    .await
    .expect("the example ran")
    .unwrap_or_else(|error| panic!("{error}"));
    assert_finished_by_webhooks(&server, "the Python webhook example", &output).await;
}

/// The TypeScript webhook receiver, likewise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_typescript_webhook_example_plays_a_game_it_is_told_of() {
    if !tool_present("node", "the TypeScript webhook example")
        || !tool_present("npm", "the TypeScript webhook example")
    {
        return;
    }
    let (server, key) = serve_a_tenant().await;
    let script = tokio::task::spawn_blocking(typescript_built)
        .await
        .expect("the build ran")
        .unwrap_or_else(|error| panic!("{error}"));
    let script = script.with_file_name("webhook_player.js");
    let address = server.address();
    let output = tokio::task::spawn_blocking(move || {
        run(
            "examples/typescript webhook_player (node)",
            Command::new("node")
                .arg(script)
                .arg(address)
                .env("TABULA_KEY", key),
        )
    })
    .await
    .expect("the example ran")
    .unwrap_or_else(|error| panic!("{error}"));
    assert_finished_by_webhooks(&server, "the TypeScript webhook example", &output).await;
}

/// The Python log verifier (examples/python/verify_log.py) checks, with nothing but an exported
/// file and the published keys, the signatures and the hash chain of a finished game of every
/// kind, and of a running Manila game as a spectator exported it (actions redacted, so only the
/// links can be checked); a forged log fails at the entry at fault.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_verifier_checks_signatures_and_the_chain_offline() {
    use prost::Message;
    if !tool_present("python3", "the Python log verifier") {
        return;
    }
    let server = TabulaServe::start(&["--allow-client-seed"]);
    let mut client = server.client().await;
    let dir = tempfile::tempdir().expect("dir");
    let keys: String = client
        .get_signing_keys(pb::GetSigningKeysRequest {})
        .await
        .expect("GetSigningKeys")
        .into_inner()
        .keys
        .iter()
        .map(|key| format!("{}:{}\n", key.key_id, hex::encode(&key.public_key)))
        .collect();
    let keys_file = dir.path().join("keys.pub");
    std::fs::write(&keys_file, keys).expect("write");
    let (python, generated) = python_prepared().await;
    let verify = |name: &str, log: &pb::GameLog| {
        let file = dir.path().join(format!("{name}.binpb"));
        std::fs::write(&file, log.encode_to_vec()).expect("write");
        run(
            "examples/python/verify_log.py",
            Command::new(&python)
                .arg(repo().join("examples/python/verify_log.py"))
                .arg(&file)
                .arg(&keys_file)
                .env("PYTHONPATH", &generated),
        )
    };

    let mut finished = None;
    for (index, registered) in tabula::hosting::registry().iter().enumerate() {
        let config = registered.config(registered.game_type.min_seats);
        let seed = 40 + index as u64;
        let game = common::create(&mut client, config, seed).await;
        let mut rng =
            tabula::games::common::GameRng::from_seed(&tabula::games::Seed::from_u64(seed));
        let last =
            common::play_random(std::slice::from_mut(&mut client), &game, &mut rng, 5_000).await;
        let log = common::export(&mut client, &game.game_id).await;
        let output =
            verify(registered.game_type.name, &log).unwrap_or_else(|error| panic!("{error}"));
        assert!(
            output.contains(&format!("chain verified to version {last}, its end signed")),
            "{}: {output}",
            registered.game_type.name
        );
        finished = Some(log);
    }

    // A running Manila game, as a spectator exported it: the links check without the actions.
    let manila = tabula::hosting::registered(pb::GameKind::Manila).expect("Manila");
    let game = common::create(&mut client, manila.config(3), 7).await;
    let mut rng = tabula::games::common::GameRng::from_seed(&tabula::games::Seed::from_u64(7));
    let version = common::play_steps(&mut client, &game, &mut rng, 30).await;
    let running = common::export(&mut client, &game.game_id).await;
    assert!(!running.complete);
    let output = verify("running", &running).unwrap_or_else(|error| panic!("{error}"));
    assert!(
        output.contains(&format!(
            "chain verified to version {version}, not finished"
        )),
        "{output}"
    );

    // Forged: two entries swapped (and renumbered), then the end cut off.
    let mut forged = finished.expect("a finished game");
    forged.entries.swap(2, 3);
    for (index, entry) in forged.entries.iter_mut().enumerate() {
        entry.version = index as u64 + 1;
    }
    let error = verify("forged", &forged).expect_err("a forged log fails");
    assert!(error.contains("FORGED at entry 3"), "{error}");
}
