//! Scoring rulings (spec B7, B8, M2, M10–M12): marker movement, bonuses, loans, ties.

use super::*;

#[test]
fn net_and_sequential_movement_differ_near_a_track_end() {
    let spec = TrackSpec {
        harbour: 0,
        goods: Goods::Cloth,
        spaces_per_side: 5,
        bonus_by_distance: vec![0, 0, 0, 10, 20],
    };
    // From 4 spaces on Medici's side, Medici pushes 3 and Strozzi 2.
    assert_eq!(
        move_marker(MarkerMovement::Net, &spec, -4, 3, 2),
        -5,
        "net −1, clamped at the end"
    );
    assert_eq!(
        move_marker(MarkerMovement::Sequential, &spec, -4, 3, 2),
        -3,
        "−7 clamps to −5, then +2"
    );
    // Medici moves first, so only a clamp at Medici's end can lose steps that netting would
    // keep; at Strozzi's end both options agree.
    assert_eq!(move_marker(MarkerMovement::Net, &spec, 4, 1, 4), 5);
    assert_eq!(move_marker(MarkerMovement::Sequential, &spec, 4, 1, 4), 5);
    assert_eq!(move_marker(MarkerMovement::Net, &spec, -5, 2, 1), -5);
    assert_eq!(move_marker(MarkerMovement::Sequential, &spec, -5, 2, 1), -4);
    assert_eq!(
        move_marker(MarkerMovement::Net, &spec, 0, 2, 1),
        -1,
        "away from the ends they agree"
    );
    assert_eq!(move_marker(MarkerMovement::Sequential, &spec, 0, 2, 1), -1);

    // The same position scored through the engine under both options.
    for (option, expected_marker, expected_income) in [
        (pb::MarkerMovement::Unspecified, -5, 10 + 20),
        (pb::MarkerMovement::Sequential, -3, 10),
    ] {
        let mut g = game_with(&pb::Config {
            marker_movement: option as i32,
            max_price: 0,
        });
        let a_cloth = track(&g, 0, Goods::Cloth);
        g.markers[a_cloth] = -4;
        // Medici: three cloth tiles (3 steps). Strozzi: cloth 0 (2 steps). Values 1+2+3 vs 0.
        stow(
            &mut g,
            MEDICI,
            3,
            0,
            &[
                tile(Goods::Cloth, 1),
                tile(Goods::Cloth, 2),
                tile(Goods::Cloth, 3),
            ],
        );
        stow(&mut g, STROZZI, 3, 0, &[tile(Goods::Cloth, 0)]);
        leave_in_bag(&mut g, &[tile(Goods::Gold, 5)]);
        let scored = only_round_scored(&end_round_with_last_tile(&mut g));
        assert_eq!(g.markers[a_cloth], expected_marker, "{option:?}");
        assert_eq!(
            scored.income[MEDICI as usize].total, expected_income,
            "{option:?}"
        );
        assert_eq!(
            scored.markers,
            vec![pb::MarkerMoved {
                harbour: 0,
                goods: Goods::Cloth.to_pb() as i32,
                from_position: -4,
                to_position: expected_marker
            }]
        );
    }
}

#[test]
fn bonuses_pay_every_round_and_markers_are_never_reset() {
    let mut g = game();
    let c_spice = track(&g, 2, Goods::Spice);
    g.markers[c_spice] = -5;
    leave_in_bag(&mut g, &[tile(Goods::Gold, 5)]);
    let scored = only_round_scored(&end_round_with_last_tile(&mut g));
    assert!(scored.markers.is_empty(), "no ship, no movement");
    assert_eq!(
        scored.income[MEDICI as usize],
        pb::MonopolyIncome {
            seat: MEDICI,
            markers: 1,
            bonus: 20,
            total: 30
        }
    );
    assert_eq!(scored.income[STROZZI as usize].total, 0);
    assert_eq!(g.markers[c_spice], -5);
    leave_in_bag(&mut g, &[tile(Goods::Gold, 5)]);
    let scored = only_round_scored(&end_round_with_last_tile(&mut g));
    assert_eq!(scored.round, 2);
    assert_eq!(
        scored.income[MEDICI as usize].total, 30,
        "M11: the bonus is paid again"
    );
    assert_eq!(g.player(MEDICI).money, 360);
}

#[test]
fn loans_let_money_go_negative() {
    let mut g = game();
    set_money(&mut g, MEDICI, 5);
    apply_ok(&mut g, MEDICI, &draw());
    apply_ok(&mut g, MEDICI, &offer(50));
    apply_ok(&mut g, STROZZI, &decline());
    assert_eq!(g.player(MEDICI).money, -45, "B8: unlimited loans");
    assert_eq!(g.view(Viewer::Spectator).players[0].money, -45);
    apply_ok(&mut g, MEDICI, &discard());
    // Still free to bid anything up to the cap while in debt.
    apply_ok(&mut g, MEDICI, &draw());
    match &g.legal_actions(MEDICI)[1] {
        LegalAction::Amount { min, max, .. } => assert_eq!((*min, *max), (0, 999)),
        other => panic!("expected the price range, got {other:?}"),
    }
    apply_ok(&mut g, MEDICI, &offer(999));
    apply_ok(&mut g, STROZZI, &decline());
    assert_eq!(g.player(MEDICI).money, -1044);

    // Debts count in the final score.
    g.round = 3;
    apply_ok(&mut g, MEDICI, &discard());
    leave_in_bag(&mut g, &[tile(Goods::Gold, 5)]);
    end_round_with_last_tile(&mut g);
    let outcome = g.outcome().expect("game over");
    assert_eq!(outcome.scores, vec![-1044, 300]);
    assert_eq!(outcome.winners, vec![STROZZI]);
}

#[test]
fn equal_money_shares_the_victory() {
    let mut g = game();
    g.round = 3;
    g.active = STROZZI;
    set_money(&mut g, MEDICI, 420);
    set_money(&mut g, STROZZI, 420);
    leave_in_bag(&mut g, &[tile(Goods::Dye, 3)]);
    let events = end_round_with_last_tile(&mut g);
    assert_eq!(
        events.last(),
        Some(&pb::Event {
            kind: Some(Ev::GameEnded(pb::GameEnded {
                money: vec![420, 420],
                winners: vec![MEDICI, STROZZI]
            }))
        })
    );
    assert_eq!(
        g.outcome(),
        Some(Outcome {
            scores: vec![420, 420],
            winners: vec![MEDICI, STROZZI]
        })
    );
    assert_eq!(g.to_act(), None);
    assert_eq!(g.stage(), Stage::Finished);
    assert!(g.legal_actions(MEDICI).is_empty() && g.legal_actions(STROZZI).is_empty());
    assert_eq!(g.apply(STROZZI, &draw()), Err(ActionError::GameOver));
    assert_eq!(g.view(Viewer::Spectator).phase, pb::Phase::Finished as i32);
}
