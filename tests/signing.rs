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
use prost::Message;
use tabula::proto::v1 as pb;
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
