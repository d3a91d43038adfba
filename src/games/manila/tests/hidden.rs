//! Hidden information (spec §7): views, the redaction of events and actions, and the
//! information-set check over random games.

use super::*;
use crate::games::common::random_play::{Checks, play};

#[test]
fn views_hide_other_players_shares_and_mortgaged_wares() {
    let mut state = new_game(&cfg(4));
    let ware = state.players[1].dealt[0];
    act(&mut state, A::PassAuction(pb::PassAuction {}));
    let events = act(
        &mut state,
        A::MortgageShare(pb::MortgageShare { ware: ware.to_pb() }),
    );
    for viewer in [Viewer::Seat(0), Viewer::Seat(2), Viewer::Spectator] {
        let view = state.view(viewer);
        let seat1 = &view.players[1];
        assert!(seat1.shares.is_empty() && seat1.mortgaged.is_empty());
        assert_eq!((seat1.share_count, seat1.mortgaged_count), (2, 1));
        let redacted = Manila::redact_event(&events[0], viewer)
            .seen(&events[0])
            .expect("visible");
        assert!(matches!(&redacted.kind, Some(E::ShareMortgaged(m)) if m.ware == 0 && m.seat == 1));
        // No view names any ware of another player's dealt shares.
        for (seat, player) in view.players.iter().enumerate() {
            if !viewer.is(seat as u32) {
                assert!(
                    player.shares.is_empty()
                        && player.mortgaged.is_empty()
                        && player.bought.is_empty()
                );
            }
        }
    }
    let own = state.view(Viewer::Seat(1));
    let total: u32 = own.players[1].shares.iter().map(|c| c.count).sum();
    assert_eq!(total, 2);
    assert_eq!(
        own.players[1].mortgaged,
        vec![pb::WareCount {
            ware: ware.to_pb(),
            count: 1
        }]
    );
    assert_eq!(
        Manila::redact_event(&events[0], Viewer::Seat(1)),
        crate::games::Redaction::Public
    );
}

#[test]
fn views_do_not_depend_on_hidden_information() {
    let mut state = new_game(&cfg(5));
    let ware = state.players[0].dealt[0].to_pb();
    act(&mut state, A::MortgageShare(pb::MortgageShare { ware }));
    for viewer in (0..5).map(Viewer::Seat).chain([Viewer::Spectator]) {
        for n in 0..20 {
            let other = state.resample_hidden(viewer, &Seed::from_u64(n));
            assert_eq!(other.view(viewer), state.view(viewer));
            other
                .check_invariants()
                .expect("resampled state is consistent");
            if let Viewer::Seat(s) = viewer {
                assert_eq!(other.players[s as usize], state.players[s as usize]);
            }
        }
    }
    // Resampling really redraws: some other seat's dealt shares differ for some seed.
    let changed = (0..50).any(|n| {
        let other = state.resample_hidden(Viewer::Spectator, &Seed::from_u64(n));
        other
            .players
            .iter()
            .zip(&state.players)
            .any(|(a, b)| a.dealt != b.dealt)
    });
    assert!(changed);
    // The serialized view never contains the RNG seed bytes.
    let bytes = prost::Message::encode_to_vec(&state.view(Viewer::Spectator));
    let seed = Seed::from_u64(7).0;
    assert!(!bytes.windows(8).any(|w| w == &seed[..8]));
}

#[test]
fn mortgage_and_redeem_actions_show_their_ware_only_to_the_author() {
    let jade = Ware::Jade.to_pb();
    for kind in [
        A::MortgageShare(pb::MortgageShare { ware: jade }),
        A::RedeemShare(pb::RedeemShare { ware: jade }),
    ] {
        let action = pb::Action { kind: Some(kind) };
        assert_eq!(Manila::redact_action(&action, 2, Viewer::Seat(2)), action);
        for viewer in [0, 1, 3]
            .map(Viewer::Seat)
            .into_iter()
            .chain([Viewer::Spectator])
        {
            let ware = match Manila::redact_action(&action, 2, viewer).kind {
                Some(A::MortgageShare(m)) => m.ware,
                Some(A::RedeemShare(r)) => r.ware,
                other => panic!("the redacted action changed kind: {other:?}"),
            };
            assert_eq!(ware, 0, "{viewer:?} saw the ware of seat 2's share");
        }
    }
    // Every other action is made openly: a whole random game's actions reach a spectator as
    // they were played.
    let game = play::<Manila>(&cfg(4), Seed::from_u64(5), 20_000, Checks::NONE).expect("ends");
    let mut public = 0;
    for (author, action) in &game.actions {
        if !matches!(action.kind, Some(A::MortgageShare(_) | A::RedeemShare(_))) {
            assert_eq!(
                &Manila::redact_action(action, *author, Viewer::Spectator),
                action
            );
            public += 1;
        }
    }
    assert!(public > 50, "the game played {public} public actions");
}

/// The information-set check (see `information_set_check`) at every action of whole games, for
/// every seat and a spectator: views, whose turn, own legal actions, the actor's action as each
/// viewer sees it and the redacted events never depend on what is hidden from that viewer (other
/// seats' dealt shares, which shares are mortgaged, the dice to come). Manila has no option that
/// hides more (money is open, spec §7); the configs alternate between the defaults and every
/// rules option on, so each code path is covered. 2,000 games per player count, split so that
/// each test takes 10-16 s in the test profile on an idle machine (3 and 4 players: 1,000 games
/// per test; 5 players: 667).
fn hidden_information_games(players: u32, games: std::ops::Range<u64>) {
    let options = [cfg(players), every_option(players)];
    for i in games {
        let config = &options[(i % 2) as usize];
        let seed = Seed::from_u64(i + 50_000 + 1000 * u64::from(players));
        if let Err(e) = play::<Manila>(config, seed, 20_000, Checks::HIDDEN) {
            panic!("{players} players, game {i} ({config:?}): {e}");
        }
    }
}

#[test]
fn hidden_information_3_players_a() {
    hidden_information_games(3, 0..1_000);
}

#[test]
fn hidden_information_3_players_b() {
    hidden_information_games(3, 1_000..2_000);
}

#[test]
fn hidden_information_4_players_a() {
    hidden_information_games(4, 0..1_000);
}

#[test]
fn hidden_information_4_players_b() {
    hidden_information_games(4, 1_000..2_000);
}

#[test]
fn hidden_information_5_players_a() {
    hidden_information_games(5, 0..667);
}

#[test]
fn hidden_information_5_players_b() {
    hidden_information_games(5, 667..1_334);
}

#[test]
fn hidden_information_5_players_c() {
    hidden_information_games(5, 1_334..2_000);
}
