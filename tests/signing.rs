//! Signed commitments (issue #29, items 1 and 2), through real replica processes: `tabula
//! signing-key` makes a key pair; replicas given the key publish it (and the rotated-out keys
//! they still accept) with GetSigningKeys; every game's commitment is signed at creation, and
//! the creator, seats and spectators (CreateGame, GetView, ExportLog) get the same signed bytes,
//! which verify under the published key and say what the game is. Bad key files stop the replica
//! with the line at fault and never the key.

use crate::common;

use std::time::Duration;

use common::servers::{TabulaServe, tabula};
use common::*;
use futures::StreamExt;
use prost::Message;
use tabula::proto::v1 as pb;
use tabula::service::ServiceOptions;
use tabula::signing::{COMMITMENT_CONTEXT, PublicKey, public_keys_from_text, verify};

/// `tabula signing-key --id <id>`: (signing line, public line).
fn new_key(id: &str) -> (String, String) {
    let output = tabula(&["signing-key", "--id", id]);
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8(output.stdout).expect("UTF-8");
    let line = |label: &str| {
        stdout
            .lines()
            .find_map(|line| line.strip_prefix(label))
            .unwrap_or_else(|| panic!("{label} in {stdout}"))
            .trim()
            .to_owned()
    };
    (
        line("signing key (--signing-key-file, secret):"),
        line("public key (GetSigningKeys publishes it):"),
    )
}

/// The published keys, as a verifier reads them.
async fn published(client: &mut Client) -> (Vec<PublicKey>, Vec<pb::SigningKey>) {
    let keys = client
        .get_signing_keys(pb::GetSigningKeysRequest {})
        .await
        .expect("GetSigningKeys")
        .into_inner()
        .keys;
    let text: String = keys
        .iter()
        .map(|key| {
            assert_eq!(key.algorithm, "Ed25519");
            format!("{}:{}\n", key.key_id, hex::encode(&key.public_key))
        })
        .collect();
    (
        public_keys_from_text(&text).expect("published keys parse"),
        keys,
    )
}

/// Checks `signed` against `keys` and `game`; the commitment it signs.
fn check_signed(
    signed: &pb::SignedCommitment,
    keys: &[PublicKey],
    game: &pb::CreateGameResponse,
    config: &pb::GameConfig,
) -> pb::GameCommitment {
    verify(
        keys,
        &signed.key_id,
        COMMITMENT_CONTEXT,
        &signed.commitment,
        &signed.signature,
    )
    .expect("the commitment verifies under the published key");
    let commitment = pb::GameCommitment::decode(signed.commitment.as_slice()).expect("decodes");
    assert_eq!(commitment.format, 1);
    assert_eq!(commitment.game_id, game.game_id);
    assert_eq!(commitment.game, game.game);
    assert_eq!(commitment.rules_version, game.rules_version);
    assert_eq!(commitment.seed_commitment, game.seed_commitment);
    assert_eq!(commitment.players, game.players);
    assert_eq!(commitment.seat_count, 2);
    assert_eq!(
        pb::GameConfig::decode(commitment.config.as_slice()).expect("config"),
        *config
    );
    // Another game's id, or one flipped bit, and it no longer verifies.
    let mut forged = commitment.clone();
    forged.game_id = "0".repeat(32);
    assert!(
        verify(
            keys,
            &signed.key_id,
            COMMITMENT_CONTEXT,
            &forged.encode_to_vec(),
            &signed.signature
        )
        .is_err()
    );
    let mut flipped = signed.commitment.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    assert!(
        verify(
            keys,
            &signed.key_id,
            COMMITMENT_CONTEXT,
            &flipped,
            &signed.signature
        )
        .is_err()
    );
    commitment
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_sign_every_commitment_with_the_deployments_key_and_publish_it() {
    let dir = tempfile::tempdir().expect("dir");
    let (_, old_public) = new_key("k-2026-10");
    let (signing, public) = new_key("k-2026-11");
    assert_ne!(signing, public);
    let key_file = dir.path().join("signing.key");
    std::fs::write(&key_file, format!("# the deployment's key\n{signing}\n")).expect("write");
    let accepted = dir.path().join("accepted.pub");
    std::fs::write(&accepted, format!("{old_public}\n")).expect("write");
    let key_path = key_file.to_str().expect("path");
    let accepted_path = accepted.to_str().expect("path");

    let replica = TabulaServe::start(&[
        "--signing-key-file",
        key_path,
        "--signing-public-keys",
        accepted_path,
    ]);
    let mut client = replica.client().await;
    let (keys, listed) = published(&mut client).await;
    assert_eq!(
        listed
            .iter()
            .map(|key| (key.key_id.as_str(), key.active))
            .collect::<Vec<_>>(),
        [("k-2026-11", true), ("k-2026-10", false)]
    );
    assert_eq!(
        keys,
        public_keys_from_text(&format!("{public}\n{old_public}")).expect("parses"),
        "the public keys of the files, no others"
    );

    let config = medici_config();
    let game = client
        .create_game(pb::CreateGameRequest {
            config: Some(config.clone()),
            players: vec![pb::Player {
                seat: 1,
                display_name: "Bo".into(),
                external_id: "player-bo".into(),
            }],
            ..Default::default()
        })
        .await
        .expect("CreateGame")
        .into_inner();
    let signed = game.signed_commitment.clone().expect("signed at creation");
    assert_eq!(signed.key_id, "k-2026-11");
    let commitment = check_signed(&signed, &keys, &game, &config);
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as u64;
    assert!(commitment.created_at_ms <= now_ms && now_ms - commitment.created_at_ms < 60_000);
    // The old key alone does not verify it.
    let old_only = public_keys_from_text(&old_public).expect("parses");
    assert!(
        verify(
            &old_only,
            &signed.key_id,
            COMMITMENT_CONTEXT,
            &signed.commitment,
            &signed.signature
        )
        .is_err()
    );

    // Seats and spectators get the very same bytes, and so does the exported log.
    let spectator = spectator_view(&mut client, &game.game_id).await;
    assert_eq!(spectator.signed_commitment.as_ref(), Some(&signed));
    let seat = seat_view(&mut client, &game.game_id, &token(&game, 0)).await;
    assert_eq!(seat.signed_commitment.as_ref(), Some(&signed));
    let log = export(&mut client, &game.game_id).await;
    assert_eq!(log.signed_commitment.as_ref(), Some(&signed));

    // An Act's answer is the seat's receipt: the head of the entry it appended, as the log shows
    // it; an Observe stream starts at the chain's start, with the signed commitment.
    let to_act = spectator
        .status
        .as_ref()
        .and_then(|status| status.to_act)
        .expect("a seat to act");
    let mine = seat_view(&mut client, &game.game_id, &token(&game, to_act)).await;
    let mut rng = tabula::games::common::GameRng::from_seed(&tabula::games::Seed::from_u64(1));
    let acted = client
        .act(authorized(
            pb::ActRequest {
                narrate: false,
                game_id: game.game_id.clone(),
                action: Some(choose(&mine.legal_actions, &mut rng)),
                expected_version: Some(0),
                request_id: "receipt".into(),
                omit_view: false,
            },
            &token(&game, to_act),
        ))
        .await
        .expect("Act")
        .into_inner();
    let log = export(&mut client, &game.game_id).await;
    assert_eq!(acted.head.len(), 32);
    assert_eq!(
        acted.head, log.entries[0].head,
        "the receipt is the logged head"
    );
    let mut stream = observe(&mut client, &game.game_id, Some(0)).await;
    let first = stream
        .next()
        .await
        .expect("a first message")
        .expect("no error");
    assert_eq!(first.signed_commitment.as_ref(), Some(&signed));
    assert_eq!(
        first.head,
        tabula::chain::genesis(&signed.commitment).to_vec()
    );
    let second = stream.next().await.expect("the Act").expect("no error");
    assert_eq!(second.head, acted.head);
    assert_eq!(second.signed_commitment, None, "on the first message only");

    // A second replica of the deployment (the key from the environment) publishes the same keys.
    let second = TabulaServe::start_with_env(
        &["--signing-public-keys", accepted_path],
        &[("TABULA_SIGNING_KEY", signing.as_str())],
    );
    let mut second_client = second.client().await;
    assert_eq!(published(&mut second_client).await.0, keys);

    // A rotation: the next key signs, the previous one stays published, and the first game's
    // commitment still verifies under what the new deployment publishes.
    let (next_signing, _) = new_key("k-2026-12");
    let next_key = dir.path().join("next.key");
    std::fs::write(&next_key, &next_signing).expect("write");
    std::fs::write(&accepted, format!("{public}\n{old_public}\n")).expect("write");
    let rotated = TabulaServe::start(&[
        "--signing-key-file",
        next_key.to_str().expect("path"),
        "--signing-public-keys",
        accepted_path,
    ]);
    let mut rotated_client = rotated.client().await;
    let (rotated_keys, _) = published(&mut rotated_client).await;
    assert_eq!(rotated_keys[0].key_id, "k-2026-12");
    check_signed(&signed, &rotated_keys, &game, &config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_without_a_key_generates_one_and_bad_keys_stop_it() {
    // Without a key: one generated at start, published, and signing.
    let replica = Replica::start_with(&Backend::memory(), test_options()).await;
    let mut client = replica.client().await;
    let (keys, listed) = published(&mut client).await;
    assert_eq!(listed.len(), 1);
    assert!(listed[0].active);
    let config = medici_config();
    let game = create(&mut client, config.clone(), 5).await;
    let signed = game.signed_commitment.clone().expect("signed");
    check_signed(&signed, &keys, &game, &config);

    // Bad key files: the replica does not start, says which line, never shows the key.
    let dir = tempfile::tempdir().expect("dir");
    let (signing, public) = new_key("good");
    let secret_part = signing.split_once(':').expect("line").1.to_owned();
    for (name, signing_text, accepted_text, expected) in [
        ("short", "k:abcd".to_owned(), None, "line 1"),
        ("two", format!("{signing}\n{signing}"), None, "line 2"),
        (
            "duplicate",
            signing.clone(),
            Some(public.clone()),
            "appears twice",
        ),
        (
            "bad-public",
            signing.clone(),
            Some(format!("old:{}", "zz".repeat(32))),
            "line 1",
        ),
    ] {
        let key_file = dir.path().join(format!("{name}.key"));
        std::fs::write(&key_file, &signing_text).expect("write");
        let mut args = vec![
            "serve".to_owned(),
            "--listen".to_owned(),
            format!("127.0.0.1:{}", free_port()),
            "--signing-key-file".to_owned(),
            key_file.to_str().expect("path").to_owned(),
        ];
        if let Some(accepted_text) = accepted_text {
            let accepted = dir.path().join(format!("{name}.pub"));
            std::fs::write(&accepted, accepted_text).expect("write");
            args.push("--signing-public-keys".into());
            args.push(accepted.to_str().expect("path").to_owned());
        }
        let output = tokio::time::timeout(
            Duration::from_secs(30),
            tokio::task::spawn_blocking(move || {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                tabula(&args)
            }),
        )
        .await
        .expect("the replica stops at once")
        .expect("ran");
        assert!(!output.status.success(), "{name}: refused");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(
            !stderr.contains(&secret_part),
            "{name}: the key leaked: {stderr}"
        );
    }
}

/// `tabula verify FILE --keys KEYS` on `log`: (exit success, the report).
fn verify_offline(
    dir: &std::path::Path,
    log: &pb::GameLog,
    keys: &str,
) -> (bool, serde_json::Value) {
    let file = dir.join("log.binpb");
    std::fs::write(&file, log.encode_to_vec()).expect("write the log");
    let output = tabula(&["verify", file.to_str().expect("path"), "--keys", keys]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("a JSON report: {output:?}"));
    (output.status.success(), report)
}

/// A finished game's exported log verifies offline, with nothing but the file and the published
/// keys; every forgery is caught, at the entry at fault, with a reason a person understands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_logs_are_caught_offline_at_the_entry_at_fault() {
    let dir = tempfile::tempdir().expect("dir");
    let (signing, public) = new_key("k-1");
    let key_file = dir.path().join("signing.key");
    std::fs::write(&key_file, &signing).expect("write");
    let keys_file = dir.path().join("keys.pub");
    std::fs::write(&keys_file, format!("{public}\n")).expect("write");
    let keys = keys_file.to_str().expect("path");
    let replica = TabulaServe::start(&[
        "--allow-client-seed",
        "--signing-key-file",
        key_file.to_str().expect("path"),
    ]);
    let mut client = replica.client().await;

    let mut rng = tabula::games::common::GameRng::from_seed(&tabula::games::Seed::from_u64(3));
    let game = create(&mut client, medici_config(), 3).await;
    let last = play_random(std::slice::from_mut(&mut client), &game, &mut rng, 5_000).await;
    let other = create(&mut client, medici_config(), 4).await;
    let log = export(&mut client, &game.game_id).await;
    assert!(log.complete);
    assert_eq!(log.entries.len() as u64, last);
    assert!(last >= 6, "a game long enough to forge in");

    // The genuine log: valid offline, signed, chained to its end, its end signed.
    let (ok, report) = verify_offline(dir.path(), &log, keys);
    assert!(ok, "{report}");
    assert_eq!(report["valid"], true);
    assert_eq!(report["provenance"]["keyKnown"], true, "{report}");
    assert_eq!(report["provenance"]["finalHeadVerified"], true, "{report}");
    assert_eq!(
        report["provenance"]["chainVersion"],
        last.to_string(),
        "{report}"
    );
    // VerifyLog says the same against the deployment's own keys.
    let online = client
        .verify_log(pb::VerifyLogRequest {
            log: Some(log.clone()),
        })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(online.valid, "{online:?}");
    let provenance = online.provenance.expect("provenance");
    assert!(provenance.key_known && provenance.final_head_verified);
    // Ending at version 0 of the chain: the receipts of the Acts are the heads of the log.
    assert_eq!(
        log.entries.last().map(|entry| entry.head.clone()),
        Some(
            pb::FinalHead::decode(
                log.signed_final_head
                    .as_ref()
                    .expect("signed end")
                    .final_head
                    .as_slice()
            )
            .expect("decodes")
            .head
        )
    );

    let renumbered = |mut log: pb::GameLog| {
        for (index, entry) in log.entries.iter_mut().enumerate() {
            entry.version = index as u64 + 1;
        }
        log
    };
    let middle = (last / 2) as usize;
    let mut forgeries: Vec<(&str, pb::GameLog, Option<u64>, &str)> = Vec::new();
    // Another seed, with a commitment that matches it.
    let mut reseeded = log.clone();
    reseeded.seed = vec![9; 32];
    reseeded.seed_commitment =
        tabula::service::verify::seed_commitment(&tabula::games::Seed([9; 32])).to_vec();
    forgeries.push((
        "another seed",
        reseeded,
        Some(0),
        "seed commitment is not the one the server signed",
    ));
    // Two entries swapped, renumbered so the versions look right.
    let mut swapped = log.clone();
    swapped.entries.swap(middle, middle + 1);
    forgeries.push((
        "reordered",
        renumbered(swapped),
        Some(middle as u64 + 1),
        "not the one the chain committed to",
    ));
    // Swapped without renumbering: the versions are out of order.
    let mut unnumbered = log.clone();
    unnumbered.entries.swap(middle, middle + 1);
    forgeries.push((
        "reordered as is",
        unnumbered,
        Some(middle as u64 + 1),
        "out of order",
    ));
    // An entry dropped.
    let mut dropped = log.clone();
    dropped.entries.remove(middle);
    forgeries.push((
        "dropped",
        renumbered(dropped),
        Some(middle as u64 + 1),
        "not the one the chain committed to",
    ));
    // An entry inserted (a copy of another).
    let mut inserted = log.clone();
    let copy = inserted.entries[middle].clone();
    inserted.entries.insert(middle, copy);
    forgeries.push((
        "inserted",
        renumbered(inserted),
        Some(middle as u64 + 2),
        "not the one the chain committed to",
    ));
    // Reordered in a running game's log (no seed yet: the actions cannot be checked, the links
    // can).
    let mut running = log.clone();
    running.seed.clear();
    running.complete = false;
    running.signed_final_head = None;
    running.entries.swap(middle, middle + 1);
    forgeries.push((
        "reordered while running",
        renumbered(running),
        Some(middle as u64 + 1),
        "does not follow",
    ));
    // An entry's time altered.
    let mut retimed = log.clone();
    retimed.entries[middle].server_time_ms += 1;
    forgeries.push((
        "altered time",
        retimed,
        Some(middle as u64 + 1),
        "does not follow",
    ));
    // An entry's action altered (another action of the log, at this version).
    let mut altered = log.clone();
    let (a, b) = (
        middle,
        (0..last as usize)
            .find(|&i| log.entries[i].action != log.entries[middle].action)
            .expect("two different actions"),
    );
    altered.entries[a].action = log.entries[b].action.clone();
    forgeries.push((
        "altered action",
        altered,
        Some(a as u64 + 1),
        "not the one the chain committed to",
    ));
    // Truncated, the end still signed.
    let mut truncated = log.clone();
    truncated.entries.truncate(middle);
    forgeries.push(("truncated", truncated, Some(middle as u64 + 1), "cut off"));
    // Truncated and the signed end removed, still claiming to be complete.
    let mut unended = log.clone();
    unended.entries.truncate(middle);
    unended.signed_final_head = None;
    forgeries.push((
        "truncated, end removed",
        unended,
        None,
        "no signed final head",
    ));
    // Another game's signed commitment.
    let mut borrowed = log.clone();
    borrowed.signed_commitment = other.signed_commitment.clone();
    forgeries.push(("another game's signature", borrowed, Some(0), "is for game"));
    // The commitment's signature swapped for the other game's.
    let mut resigned = log.clone();
    if let Some(signed) = resigned.signed_commitment.as_mut() {
        signed.signature = other
            .signed_commitment
            .as_ref()
            .expect("signed")
            .signature
            .clone();
    }
    forgeries.push(("swapped signature", resigned, Some(0), "does not match"));
    // Signed with a key nobody published.
    let mut unknown = log.clone();
    if let Some(signed) = unknown.signed_commitment.as_mut() {
        signed.key_id = "k-unknown".into();
    }
    forgeries.push(("unknown key", unknown, Some(0), "not among the keys given"));
    // The chain's start removed.
    let mut unsigned = log.clone();
    unsigned.signed_commitment = None;
    forgeries.push((
        "commitment removed",
        unsigned,
        Some(0),
        "no signed commitment",
    ));

    for (name, forged, version, why) in forgeries {
        let (ok, report) = verify_offline(dir.path(), &forged, keys);
        assert!(!ok, "{name}: caught: {report}");
        assert_eq!(
            report["valid"],
            serde_json::Value::Null,
            "{name}: not valid: {report}"
        );
        let error = report["error"].as_str().unwrap_or_default();
        assert!(error.contains(why), "{name}: {error}");
        assert_eq!(
            report["invalidVersion"]
                .as_str()
                .map(|v| v.parse::<u64>().expect("number")),
            version,
            "{name}: at the entry at fault: {report}"
        );
    }

    // A log without any chain (a game from before signing) still verifies, reported unsigned.
    let mut old = log.clone();
    old.signed_commitment = None;
    old.signed_final_head = None;
    for entry in &mut old.entries {
        entry.action_commitment.clear();
        entry.head.clear();
    }
    let (ok, report) = verify_offline(dir.path(), &old, keys);
    assert!(ok, "an unsigned log still verifies: {report}");
    assert_eq!(
        report["provenance"]["signed"],
        serde_json::Value::Null,
        "{report}"
    );
}

/// A stream entry as XRANGE returns it: its id and its fields.
type StreamEntry = (String, Vec<(String, Vec<u8>)>);

/// On Redis: each entry's head is stored with it (`h`, in the same script as the entry), and a
/// replica that rebuilds a game from a snapshot (with its head) or from a snapshot without one (a
/// snapshot 1.0.0 wrote: the whole log is replayed instead) extends the chain exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heads_are_stored_with_their_entries_and_survive_snapshots() {
    let backend = Backend::redis();
    let options = ServiceOptions {
        snapshot_every: 4,
        ..test_options()
    };
    let first = Replica::start_with(&backend, options.clone()).await;
    let mut client = first.client().await;
    let game = create(&mut client, medici_config(), 12).await;
    let mut rng = tabula::games::common::GameRng::from_seed(&tabula::games::Seed::from_u64(12));
    let version = play_steps(&mut client, &game, &mut rng, 10).await;
    assert_eq!(version, 10);
    tokio::time::sleep(Duration::from_millis(300)).await; // snapshots are written in the background
    let url = backend.redis_url().expect("a single node");
    let mut redis = redis::Client::open(url.as_str())
        .expect("client")
        .get_connection()
        .expect("connection");
    let snapshot_head: Option<Vec<u8>> = redis::cmd("HGET")
        .arg(format!("tabula:{{{}}}:snap", game.game_id))
        .arg("head")
        .query(&mut redis)
        .expect("HGET");
    let snapshot_head = snapshot_head.expect("the snapshot keeps its head");
    assert_eq!(snapshot_head.len(), 8 + 32, "tagged with its version");

    // Each time a fresh replica rebuilds the game and acts, its receipt is the head the log has.
    for snapshot_without_head in [false, true] {
        if snapshot_without_head {
            let _: i64 = redis::cmd("HDEL")
                .arg(format!("tabula:{{{}}}:snap", game.game_id))
                .arg("head")
                .query(&mut redis)
                .expect("HDEL");
        }
        let fresh = Replica::start_with(&backend, options.clone()).await;
        let mut fresh_client = fresh.client().await;
        let before = spectator_view(&mut fresh_client, &game.game_id).await;
        let seat = before
            .status
            .and_then(|status| status.to_act)
            .expect("to act");
        let mine = seat_view(&mut fresh_client, &game.game_id, &token(&game, seat)).await;
        let acted = fresh_client
            .act(authorized(
                pb::ActRequest {
                    narrate: false,
                    game_id: game.game_id.clone(),
                    action: Some(choose(&mine.legal_actions, &mut rng)),
                    expected_version: Some(mine.version),
                    request_id: format!("fresh-{snapshot_without_head}"),
                    omit_view: false,
                },
                &token(&game, seat),
            ))
            .await
            .expect("Act")
            .into_inner();
        let log = export(&mut client, &game.game_id).await;
        let logged = log
            .entries
            .iter()
            .find(|entry| entry.version == acted.version)
            .expect("the entry");
        assert_eq!(
            acted.head, logged.head,
            "snapshot without head: {snapshot_without_head}"
        );
    }

    // The stream holds each entry's head, as the export shows it.
    let log = export(&mut client, &game.game_id).await;
    let stored: Vec<StreamEntry> = redis::cmd("XRANGE")
        .arg(format!("tabula:{{{}}}:log", game.game_id))
        .arg("-")
        .arg("+")
        .query(&mut redis)
        .expect("XRANGE");
    assert_eq!(stored.len(), log.entries.len());
    for ((_, fields), entry) in stored.iter().zip(&log.entries) {
        let h = fields
            .iter()
            .find(|(name, _)| name == "h")
            .map(|(_, value)| value.clone());
        assert_eq!(h.as_ref(), Some(&entry.head), "version {}", entry.version);
    }
}
