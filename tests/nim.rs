//! Nim, the test-only game (the `nim` feature), played end to end through the real gRPC service
//! by name alone: found in ListGameTypes, created from its registry config, played by two seats
//! from their legal-action listings (an amount set through `amount_field`), and verified.

use crate::common;

use common::*;
use tabula::proto::v1 as pb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nim_is_listed_created_played_to_the_end_and_verified() {
    let replica = Replica::start(&Backend::memory()).await;
    let mut client = replica.client().await;
    let listed = list_game_types(&mut client).await;
    let nim = listed
        .iter()
        .find(|game| game.name == "nim")
        .expect("the test build hosts Nim");
    assert_eq!(nim.game, pb::GameKind::Nim as i32);
    assert_eq!((nim.min_seats, nim.max_seats), (2, 2));
    assert_eq!(nim.chance(), pb::ChanceMode::Deterministic);
    assert_eq!(nim.information(), pb::InformationKind::Perfect);

    let registered = tabula::hosting::find_game("nim").expect("registered");
    let game = create(&mut client, registered.config(2), 1).await;
    assert_eq!(game.game, pb::GameKind::Nim as i32);
    assert_eq!(game.seats.len(), 2);

    // Each seat takes the most it may from the first heap: the listing's range, sent through the
    // amount field the listing names.
    let mut version = 0;
    loop {
        let view = spectator_view(&mut client, &game.game_id).await;
        let status = view.status.expect("status");
        let Some(seat) = status.to_act else {
            assert!(status.finished);
            assert_eq!(status.winners.len(), 1, "{status:?}");
            break;
        };
        let mine = seat_view(&mut client, &game.game_id, &token(&game, seat)).await;
        let entry = mine.legal_actions.first().expect("a legal move");
        let action = match &entry.amount_range {
            Some(range) => {
                assert_eq!(entry.amount_field, "nim.count");
                tabula::hosting::with_amount(entry.action.as_ref().expect("action"), range.max)
            }
            None => entry.action.clone().expect("action"),
        };
        let answer = client
            .act(authorized(
                pb::ActRequest {
                    game_id: game.game_id.clone(),
                    action: Some(action),
                    expected_version: Some(version),
                    request_id: format!("nim-{version}"),
                },
                &token(&game, seat),
            ))
            .await
            .expect("Act")
            .into_inner();
        version = answer.version;
        assert!(
            version < 50,
            "Nim with heaps 3, 4 and 5 ends within 12 moves"
        );
    }
    // 3, 4 and 5 taken whole, heap by heap: seat 0 takes the first and the last.
    assert_eq!(version, 3);
    let log = export(&mut client, &game.game_id).await;
    assert!(log.complete);
    let verdict = client
        .verify_log(pb::VerifyLogRequest { log: Some(log) })
        .await
        .expect("VerifyLog")
        .into_inner();
    assert!(verdict.valid, "{}", verdict.error);
    assert_eq!(verdict.status.map(|status| status.winners), Some(vec![0]));
}
