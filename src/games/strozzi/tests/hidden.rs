//! Hidden information (spec A13 S16): what each viewer is shown, and what it receives over whole games.

use super::*;

#[test]
fn views_never_show_deck_order_removed_cards_or_the_stack() {
    let state = new_game(&config(4), 3);
    for viewer in [Viewer::Seat(0), Viewer::Seat(2), Viewer::Spectator] {
        let view = state.view(viewer);
        let shown: Vec<u32> = view
            .card
            .iter()
            .chain(&view.set_aside)
            .map(|c| c.id)
            .chain(
                view.ports
                    .iter()
                    .flat_map(|p| p.ships.iter().filter_map(|s| s.card.as_ref().map(|c| c.id))),
            )
            .collect();
        assert_eq!(shown.len(), 1, "only the face-up card");
        assert_eq!(view.deck_count as usize, state.deck.len());
        assert_eq!(view.removed_count, 14);
        assert_eq!(view.stack_count, 33);
        let tiles: Vec<u32> = view.display.iter().map(|t| t.id).collect();
        assert_eq!(tiles.len(), 3);
        // Every resampling of the hidden parts gives the same view.
        for i in 0..20 {
            let other = state.resample_hidden(viewer, &Seed::from_u64(100 + i));
            assert_eq!(other.view(viewer), view);
        }
    }
    // The resampling really moves the hidden parts.
    let other = state.resample_hidden(Viewer::Seat(0), &Seed::from_u64(5));
    assert!(other.deck != state.deck || other.removed != state.removed);
    assert_ne!(other.stack, state.stack);
}

#[test]
fn hidden_money_is_shown_only_to_its_owner_until_the_end() {
    let options = pb::Config {
        players: 3,
        hidden_money: true,
        ..pb::Config::default()
    };
    let mut state = arranged(&options);
    put_marker(&mut state, 1, City::Rome, 6);
    let mut events = Vec::new();
    state.end_round(RoundEnd::DeckEmpty, &mut events);
    assert_eq!(state.players[1].money, 20);
    let view = state.view(Viewer::Seat(1));
    assert_eq!(view.players[1].money, Some(20));
    assert!(
        view.players
            .iter()
            .all(|p| p.money.is_some() == (p.seat == 1))
    );
    let view0 = state.view(Viewer::Seat(0));
    assert_eq!(view0.players[1].money, None);
    assert_eq!(view0.players[0].money, Some(0));
    assert!(
        state
            .view(Viewer::Spectator)
            .players
            .iter()
            .all(|p| p.money.is_none())
    );
    let scored = &events[0];
    let for_seat0 = Strozzi::redact_event(scored, Viewer::Seat(0))
        .seen(scored)
        .expect("visible");
    let Some(Ev::RoundScored(r0)) = for_seat0.kind else {
        panic!("round scored")
    };
    assert!(r0.payouts.iter().all(|p| p.seat == 0) && r0.money.iter().all(|m| m.seat == 0));
    let for_seat1 = Strozzi::redact_event(scored, Viewer::Seat(1))
        .seen(scored)
        .expect("visible");
    let Some(Ev::RoundScored(r1)) = for_seat1.kind else {
        panic!("round scored")
    };
    assert_eq!(r1.payouts.len(), 2);
    assert_eq!(
        r1.money,
        vec![pb::SeatMoney {
            seat: 1,
            earned: 20,
            total: 20
        }]
    );
    let for_spectator = Strozzi::redact_event(scored, Viewer::Spectator)
        .seen(scored)
        .expect("visible");
    let Some(Ev::RoundScored(rs)) = for_spectator.kind else {
        panic!("round scored")
    };
    assert!(rs.payouts.is_empty() && rs.money.is_empty());
    // After the game, everything is public.
    state.round = ROUNDS;
    let mut events = Vec::new();
    state.end_round(RoundEnd::DeckEmpty, &mut events);
    assert!(
        state
            .view(Viewer::Spectator)
            .players
            .iter()
            .all(|p| p.money.is_some())
    );
    let ended = events.last().expect("ended");
    let ended = Strozzi::redact_event(ended, Viewer::Spectator)
        .seen(ended)
        .expect("visible");
    assert!(matches!(ended.kind, Some(Ev::GameEnded(g)) if g.money.len() == 3));
    // Without the option, money is public and events are not redacted.
    let mut open = arranged(&config(3));
    let mut events = Vec::new();
    open.end_round(RoundEnd::DeckEmpty, &mut events);
    assert_eq!(
        Strozzi::redact_event(&events[0], Viewer::Spectator),
        crate::games::Redaction::Public
    );
    assert!(
        open.view(Viewer::Spectator)
            .players
            .iter()
            .all(|p| p.money.is_some())
    );
}

/// The cards and tiles a view or event names.
fn named_cards(view: &pb::View) -> Vec<u8> {
    let ships = view
        .ports
        .iter()
        .flat_map(|p| &p.ships)
        .filter_map(|s| s.card.as_ref());
    view.card
        .iter()
        .chain(&view.set_aside)
        .chain(ships)
        .map(|c| c.id as u8)
        .collect()
}

#[test]
fn views_and_events_never_name_a_hidden_card_or_tile() {
    for players in 3..=6 {
        for seed in 0..20 {
            let game = play::<Strozzi>(&config(players), Seed::from_u64(seed), 5_000, Checks::NONE)
                .expect("plays");
            let mut replay = new_game(&config(players), seed);
            for (seat, action) in &game.actions {
                let events = replay.apply(*seat, action).expect("replays");
                let hidden_cards: Vec<u8> =
                    replay.deck.iter().chain(&replay.removed).copied().collect();
                for viewer in (0..players).map(Viewer::Seat).chain([Viewer::Spectator]) {
                    let view = replay.view(viewer);
                    assert!(named_cards(&view).iter().all(|c| !hidden_cards.contains(c)));
                    assert!(
                        view.display
                            .iter()
                            .all(|t| !replay.stack.contains(&(t.id as u8)))
                    );
                    assert_eq!(view.deck_count as usize, replay.deck.len());
                    assert_eq!(view.stack_count as usize, replay.stack.len());
                }
                // Events after the last reshuffle of this action name only face-up cards.
                let since_reshuffle = events
                    .iter()
                    .rposition(|e| matches!(e.kind, Some(Ev::RoundStarted(_))))
                    .map_or(0, |i| i + 1);
                for event in &events[since_reshuffle..] {
                    let card = match &event.kind {
                        Some(Ev::CardRevealed(r)) => r.card.as_ref(),
                        Some(Ev::CardSetAside(c)) => c.card.as_ref(),
                        Some(Ev::ShipTaken(t)) => t.card.as_ref(),
                        _ => None,
                    };
                    if let Some(card) = card {
                        assert!(
                            !hidden_cards.contains(&(card.id as u8)),
                            "event names hidden card {}",
                            card.id
                        );
                    }
                    if let Some(Ev::DisplayRefilled(r)) = &event.kind
                        && let Some(tile) = &r.tile
                    {
                        assert!(replay.display.contains(&(tile.id as u8)));
                    }
                }
            }
        }
    }
}

#[test]
fn the_opening_events_are_what_setup_did() {
    for players in 3..=6 {
        for config in [config(players), every_option(players)] {
            for seed in 0..40 {
                let (state, setup_events) =
                    Strozzi::set_up(&config, &Seed::from_u64(seed)).expect("valid config");
                assert_eq!(state.opening_events(), setup_events);
                let [started, revealed] = setup_events.as_slice() else {
                    panic!("setup starts round 1 and reveals one card: {setup_events:?}")
                };
                let Some(Ev::RoundStarted(started)) = &started.kind else {
                    panic!("round 1 starts first")
                };
                assert_eq!(
                    (started.round, started.start_seat),
                    (1, state.round_start_seat)
                );
                assert_eq!(started.deck_count as usize, deck_size(players));
                assert_eq!(started.removed_count as usize, removed_cards(players));
                let Some(Ev::CardRevealed(revealed)) = &revealed.kind else {
                    panic!("then the start player reveals")
                };
                assert_eq!(revealed.active_seat, state.round_start_seat);
                assert_eq!(revealed.deck_count as usize, deck_size(players) - 1);
                assert_eq!(
                    revealed.card.as_ref().map(|c| c.id),
                    state.view(Viewer::Spectator).card.map(|c| c.id)
                );
            }
        }
    }
}

#[test]
fn resampling_redraws_exactly_the_money_a_viewer_cannot_see() {
    let mut state = new_game(
        &pb::Config {
            hidden_money: true,
            ..config(4)
        },
        1,
    );
    for (seat, money) in [(0, 15), (1, 40), (2, 0), (3, 65)] {
        state.players[seat].money = money;
    }
    let money = |s: &Strozzi| s.players.iter().map(|p| p.money).collect::<Vec<_>>();
    let mut redrawn = [false; 4];
    for i in 0..20 {
        let for_seat1 = state.resample_hidden(Viewer::Seat(1), &Seed::from_u64(i));
        assert_eq!(
            for_seat1.players[1].money, 40,
            "a seat's own money is known to it"
        );
        for seat in [0, 2, 3] {
            redrawn[seat] |= for_seat1.players[seat].money != state.players[seat].money;
        }
        let for_spectator = state.resample_hidden(Viewer::Spectator, &Seed::from_u64(i));
        redrawn[1] |= for_spectator.players[1].money != 40;
        for resampled in [&for_seat1, &for_spectator] {
            resampled.check_invariants().expect("a consistent state");
        }
    }
    assert_eq!(redrawn, [true; 4], "every hidden total is redrawn");
    // Public money is never redrawn.
    let mut open = new_game(&config(4), 1);
    open.players[3].money = 65;
    assert_eq!(
        money(&open.resample_hidden(Viewer::Spectator, &Seed::from_u64(9))),
        money(&open)
    );
}

#[test]
fn actions_are_seen_unredacted_by_everyone() {
    for action in every_conceivable_action() {
        for author in 0..4 {
            for viewer in (0..4).map(Viewer::Seat).chain([Viewer::Spectator]) {
                assert_eq!(Strozzi::redact_action(&action, author, viewer), action);
            }
        }
    }
}
