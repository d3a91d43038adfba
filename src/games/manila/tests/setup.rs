//! Setup (spec §3): cash, shares, accomplices, config validation and the opening events.

use super::*;

#[test]
fn setup_gives_cash_shares_and_accomplices() {
    for players in 3..=5 {
        let state = new_game(&cfg(players));
        let expected_accomplices = if players == 3 { 4 } else { 3 };
        for player in &state.players {
            assert_eq!(player.cash, 30);
            assert_eq!(player.dealt.len(), 2);
            assert_eq!(player.in_hand, expected_accomplices);
            assert_eq!(player.mortgaged_count(), 0);
        }
        // Supply: 5 per ware minus those dealt (2 left out + the undealt shuffled ones).
        let supply: u32 = state.supply.iter().sum();
        assert_eq!(supply, 20 - 2 * players);
        assert!(state.supply.iter().all(|s| (2..=5).contains(s)));
        assert_eq!(state.to_act(), Some(0));
        assert_eq!(state.values, [0; 4]);
        state.check_invariants().expect("invariants");
    }
}

#[test]
fn config_is_validated() {
    for players in [0, 1, 2, 6] {
        assert!(
            Manila::setup(&cfg(players), &Seed::from_u64(1)).is_err(),
            "{players} players accepted"
        );
    }
    let bad_start = pb::Config {
        players: 4,
        start_seat: 4,
        ..Default::default()
    };
    assert!(Manila::setup(&bad_start, &Seed::from_u64(1)).is_err());
    let bad_tie = pb::Config {
        players: 4,
        tie_break: 9,
        ..Default::default()
    };
    assert!(Manila::setup(&bad_tie, &Seed::from_u64(1)).is_err());
    let start = pb::Config {
        players: 4,
        start_seat: 2,
        ..Default::default()
    };
    assert_eq!(new_game(&start).to_act(), Some(2));
}

#[test]
fn opening_events_deal_the_shares_face_down_and_start_voyage_1() {
    for players in 3..=5 {
        let config = pb::Config {
            players,
            start_seat: players - 1,
            ..Default::default()
        };
        let (state, emitted) =
            Manila::setup_with_events(&config, &Seed::from_u64(11)).expect("valid config");
        let opening = state.opening_events();
        assert_eq!(opening, emitted, "the opening events are what setup did");
        let seats = players as usize;
        assert_eq!(opening.len(), seats + 1);
        for (seat, event) in opening[..seats].iter().enumerate() {
            let dealt: Vec<i32> = state.players[seat]
                .dealt
                .iter()
                .map(|w| w.to_pb())
                .collect();
            assert_eq!(
                event.kind,
                Some(E::SharesDealt(pb::SharesDealt {
                    seat: seat as u32,
                    wares: dealt
                }))
            );
        }
        assert_eq!(
            opening[seats].kind,
            Some(E::VoyageStarted(pb::VoyageStarted {
                voyage: 1,
                opener: players - 1
            }))
        );
        // Each seat sees its own deal; everyone else sees 2 shares dealt face down.
        for viewer in (0..players).map(Viewer::Seat).chain([Viewer::Spectator]) {
            for (seat, event) in opening[..seats].iter().enumerate() {
                let seen = Manila::redact_event(event, viewer)
                    .seen(event)
                    .expect("visible");
                if viewer.is(seat as u32) {
                    assert_eq!(&seen, event);
                } else {
                    assert_eq!(
                        seen.kind,
                        Some(E::SharesDealt(pb::SharesDealt {
                            seat: seat as u32,
                            wares: vec![0, 0]
                        }))
                    );
                }
            }
            assert_eq!(
                Manila::redact_event(&opening[seats], viewer),
                crate::games::Redaction::Public
            );
        }
    }
}
