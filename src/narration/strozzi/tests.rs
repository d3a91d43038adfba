//! Strozzi's words, by worked examples.

use super::*;
use crate::games::{Engine, LegalAction, Seed, Viewer};
use crate::proto::v1 as table_pb;

fn names() -> Names {
    let players: Vec<table_pb::Player> = ["Anna", "Ben", "Cleo"]
        .iter()
        .enumerate()
        .map(|(seat, name)| table_pb::Player {
            seat: seat as Seat,
            display_name: (*name).to_owned(),
            external_id: String::new(),
        })
        .collect();
    Names::new(3, &players, |_| None)
}

fn text(kind: Event) -> String {
    Strozzi::event_text(&pb::Event { kind: Some(kind) }, &names()).unwrap_or_default()
}

fn card(
    sails: u32,
    gold: u32,
    grain: u32,
    cloth: u32,
    scrolls: u32,
    progress: bool,
) -> pb::ShipCard {
    pb::ShipCard {
        id: 11,
        label: "X12".to_owned(),
        sails,
        gold,
        grain,
        cloth,
        scrolls,
        progress,
    }
}

#[test]
fn a_card_and_its_claim_read_as_a_person_says_them() {
    assert_eq!(
        text(Event::RoundStarted(pb::RoundStarted {
            round: 1,
            start_seat: 0,
            deck_count: 12,
            removed_count: 17,
        })),
        "Round 1 begins and Anna starts. The deck holds 12 ship cards; 17 more cards are removed \
         face down, unseen."
    );
    assert_eq!(
        text(Event::CardRevealed(pb::CardRevealed {
            active_seat: 0,
            card: Some(card(4, 1, 1, 0, 0, true)),
            deck_count: 0,
        })),
        "Anna reveals a ship of 4 sails with 1 gold, 1 grain and the progress symbol (no cards \
         left in the deck)."
    );
    assert_eq!(
        text(Event::FlagPlayed(pb::FlagPlayed {
            seat: 1,
            flag: pb::Flag::Goods as i32,
            tentative: true,
        })),
        "Ben claims the ship with the goods flag (one extra step on its port's track); a later \
         pirate flag may still take it."
    );
    assert_eq!(
        text(Event::FlagPlayed(pb::FlagPlayed {
            seat: 2,
            flag: pb::Flag::Pirate as i32,
            tentative: false,
        })),
        "Cleo plays the pirate flag."
    );
    assert_eq!(
        text(Event::FlagReturned(pb::FlagReturned {
            seat: 1,
            flag: pb::Flag::Goods as i32,
        })),
        "Ben gets the goods flag back, unused."
    );
    assert_eq!(
        text(Event::ShipTaken(pb::ShipTaken {
            seat: 2,
            flag: pb::Flag::Pirate as i32,
            card: Some(card(4, 1, 1, 0, 0, true)),
        })),
        "Cleo takes the ship of 4 sails with the pirate flag."
    );
    assert_eq!(
        text(Event::ShipPlaced(pb::ShipPlaced {
            seat: 2,
            port: pb::City::Venice as i32,
            speed: 4,
            place: 1,
            automatic: false,
        })),
        "Cleo places the ship in the port of Venice: it is the 2nd fastest there at speed 4."
    );
    assert_eq!(
        text(Event::MarkerMoved(pb::MarkerMoved {
            seat: 2,
            city: pb::City::Venice as i32,
            cause: pb::MoveCause::CardGoods as i32,
            steps: 1,
            from_space: 0,
            to_space: 1,
            slot: 0,
        })),
        "Cleo's Venice marker climbs 1 space for the 1 gold on the ship, from the starting space \
         to space 1; it stands first from the left."
    );
    assert_eq!(
        text(Event::MarkerMoved(pb::MarkerMoved {
            seat: 0,
            city: pb::City::Florence as i32,
            cause: pb::MoveCause::Scrolls as i32,
            steps: 2,
            from_space: 9,
            to_space: 10,
            slot: 1,
        })),
        "Anna's Florence marker climbs 1 space for the ship's 2 scrolls, from space 9 to space \
         10, the top of the track (1 step lost); it stands right of 1 marker already there."
    );
    assert_eq!(
        text(Event::ProgressTileTaken(pb::ProgressTileTaken {
            seat: 2,
            tile: Some(pb::ProgressTile {
                id: 0,
                category: pb::Category::Art as i32,
                value: 1,
                goods: pb::Goods::Gold as i32,
            }),
        })),
        "Cleo takes an art tile of value 1 with gold."
    );
    assert_eq!(
        text(Event::DisplayRefilled(pb::DisplayRefilled {
            tile: None,
            stack_count: 0,
        })),
        "The progress stack is empty: no tile is turned face up."
    );
    assert_eq!(
        text(Event::CardSetAside(pb::CardSetAside {
            active_seat: 1,
            card: Some(card(8, 0, 0, 0, 0, false)),
        })),
        "Everybody passes on the card Ben revealed: a ship of 8 sails with no goods is set aside \
         for this round."
    );
}

fn scored(money_hidden: bool) -> pb::Event {
    let payout = |seat, kind: pb::PayoutKind, city: pb::City, place, coins| pb::Payout {
        seat,
        kind: kind as i32,
        city: city as i32,
        place,
        coins,
    };
    pb::Event {
        kind: Some(Event::RoundScored(pb::RoundScored {
            round: 2,
            reason: pb::RoundEndReason::FlagsUsed as i32,
            payouts: vec![
                payout(0, pb::PayoutKind::Ship, pb::City::Venice, 1, 15),
                payout(1, pb::PayoutKind::Ship, pb::City::Venice, 2, 10),
                payout(0, pb::PayoutKind::Track, pb::City::Florence, 1, 15),
                payout(0, pb::PayoutKind::BonusSpace, pb::City::Florence, 8, 10),
            ],
            money: vec![
                pb::SeatMoney {
                    seat: 0,
                    earned: 40,
                    total: 65,
                },
                pb::SeatMoney {
                    seat: 1,
                    earned: 10,
                    total: 10,
                },
                pb::SeatMoney {
                    seat: 2,
                    earned: 0,
                    total: 0,
                },
            ],
            money_hidden,
        })),
    }
}

#[test]
fn round_scoring_sums_up_who_earned_what_and_why() {
    assert_eq!(
        Strozzi::event_text(&scored(false), &names()).unwrap_or_default(),
        "Round 2 ends: every player has used all three flags. \
         Anna earns 40 coins: 15 coins for the fastest ship in Venice, 15 coins for the \
         leading marker on the Florence track and 10 coins for the bonus space 8 on the Florence \
         track; Anna now has 65 coins. \
         Ben earns 10 coins: 10 coins for the 2nd fastest ship in Venice; Ben now has 10 coins. \
         Cleo earns no coins; Cleo now has no coins."
    );
}

#[test]
fn hidden_money_is_said_hidden_not_nothing() {
    let event = scored(true);
    let seen = |viewer| match Strozzi::redact_event(&event, viewer) {
        crate::games::Redaction::Replaced(event) => event,
        other => panic!("round scoring with hidden money is replaced, not {other:?}"),
    };
    assert_eq!(
        Strozzi::event_text(&seen(Viewer::Seat(1)), &names()).unwrap_or_default(),
        "Round 2 ends: every player has used all three flags. \
         Ben earns 10 coins: 10 coins for the 2nd fastest ship in Venice; Ben now has 10 coins. \
         Money is kept hidden: each player sees only their own."
    );
    assert_eq!(
        Strozzi::event_text(&seen(Viewer::Spectator), &names()).unwrap_or_default(),
        "Round 2 ends: every player has used all three flags. \
         Money is kept hidden: each player sees only their own."
    );
}

#[test]
fn the_game_end_names_the_majorities_and_the_winner() {
    let award = |category: pb::Category, seat, total, place, coins| pb::ProgressAward {
        category: category as i32,
        seat,
        total,
        place,
        coins,
    };
    let event = pb::Event {
        kind: Some(Event::GameEnded(pb::GameEnded {
            awards: vec![
                award(pb::Category::Art, 1, 3, 1, 30),
                award(pb::Category::Art, 0, 3, 2, 20),
                award(pb::Category::Science, 2, 2, 1, 30),
            ],
            money: vec![120, 135, 120],
            winners: vec![1],
        })),
    };
    assert_eq!(
        Strozzi::event_text(&event, &names()).unwrap_or_default(),
        "The game ends after round 3, and the progress majorities pay out. \
         In art, Ben is 1st with 3 (30 coins) and Anna is 2nd with 3 (20 coins). \
         In science, Cleo is 1st with 2 (30 coins). \
         Nobody scores in architecture. \
         Equal totals are ranked by the Florence track. \
         Final money: Ben 135 coins, Anna 120 coins and Cleo 120 coins. Ben wins."
    );
}

/// Plays seed 1 at 3 seats until someone must choose a progress tile: the first seat able to
/// takes every ship with the progress symbol, every other card is passed.
#[test]
fn a_progress_tile_button_says_what_the_tile_is() {
    let config = Strozzi::config_for(3);
    let mut state = Strozzi::setup(&config, &Seed::from_u64(1)).expect("setup");
    for _ in 0..200 {
        let seat = state.to_act().expect("the game goes on");
        let view = state.view(Viewer::Seat(seat));
        let actions: Vec<pb::Action> = state
            .legal_actions(seat)
            .into_iter()
            .map(|legal| match legal {
                LegalAction::Exact(action) => action,
                LegalAction::Amount { action, .. } => action,
            })
            .collect();
        let pick = |wanted: &dyn Fn(&pb::action::Kind) -> bool| {
            actions
                .iter()
                .find(|action| action.kind.as_ref().is_some_and(wanted))
                .copied()
        };
        if view.phase == pb::Phase::ChoosingTile as i32 {
            let labels: Vec<String> = actions
                .iter()
                .map(|action| Strozzi::choice_label(action, &view, &names()))
                .collect();
            for (label, tile) in labels.iter().zip(&view.display) {
                assert!(label.starts_with("Take the "), "{label}");
                assert!(
                    label.contains(&format!("tile of value {}", tile.value)),
                    "{label}"
                );
                assert!(!label.contains("id"), "{label}");
            }
            assert_eq!(
                labels,
                [
                    "Take the architecture tile of value 1 with grain: Rome marker +1",
                    "Take the art tile of value 1 with gold: Venice marker +1",
                    "Take the art tile of value 1 with grain: Rome marker +1",
                ]
            );
            return;
        }
        let progress = view.card.as_ref().is_some_and(|card| card.progress);
        let wanted = if view.phase == pb::Phase::Deciding as i32 && progress {
            pick(&|kind| {
                matches!(kind, pb::action::Kind::PlayFlag(play)
                    if play.flag == pb::Flag::Pirate as i32)
            })
        } else {
            None
        };
        let action = wanted
            .or_else(|| pick(&|kind| matches!(kind, pb::action::Kind::PassCard(_))))
            .unwrap_or(actions[0]);
        state.apply(seat, &action).expect("legal");
    }
    panic!("nobody took a ship with the progress symbol");
}

#[test]
fn flag_and_port_buttons_say_what_they_do() {
    let config = Strozzi::config_for(3);
    let state = Strozzi::setup(&config, &Seed::from_u64(1)).expect("setup");
    let seat = state.to_act().expect("someone decides");
    let mut view = state.view(Viewer::Seat(seat));
    view.card = Some(card(4, 1, 1, 0, 0, true));
    let label = |kind: pb::action::Kind, view: &pb::View| {
        Strozzi::choice_label(&pb::Action { kind: Some(kind) }, view, &names())
    };
    let flag = |flag: pb::Flag| pb::action::Kind::PlayFlag(pb::PlayFlag { flag: flag as i32 });
    assert_eq!(
        label(pb::action::Kind::PassCard(pb::PassCard {}), &view),
        "Pass"
    );
    assert_eq!(
        label(flag(pb::Flag::Pirate), &view),
        "Play the pirate flag: take the ship at once"
    );
    assert_eq!(
        label(flag(pb::Flag::PlusOne), &view),
        "Play the +1 flag: claim the ship at speed 5"
    );
    assert_eq!(
        label(flag(pb::Flag::Goods), &view),
        "Play the goods flag: claim the ship, one extra step in its port"
    );
    view.claim = Some(pb::Claim {
        seat: 1,
        flag: pb::Flag::Goods as i32,
    });
    assert_eq!(
        label(flag(pb::Flag::Pirate), &view),
        "Play the pirate flag: take the ship from Ben"
    );
    assert_eq!(
        label(pb::action::Kind::PassCard(pb::PassCard {}), &view),
        "Pass: leave the ship to Ben"
    );
    view.claim = None;
    view.taker = Some(pb::Claim {
        seat,
        flag: pb::Flag::Goods as i32,
    });
    let place = |port: pb::City| {
        pb::action::Kind::PlaceShip(pb::PlaceShip {
            port: port as i32,
            decline_goods_flag_step: false,
        })
    };
    assert_eq!(
        label(place(pb::City::Venice), &view),
        "Place the ship in Venice: the fastest there, Venice marker +2"
    );
    assert_eq!(
        label(place(pb::City::Naples), &view),
        "Place the ship in Naples: the fastest there, Naples marker +1"
    );
    // Two face-up tiles alike are told apart by where they lie, left to right.
    let art = pb::ProgressTile {
        id: 0,
        category: pb::Category::Art as i32,
        value: 1,
        goods: pb::Goods::Gold as i32,
    };
    view.display = vec![
        art,
        pb::ProgressTile { id: 1, ..art },
        pb::ProgressTile {
            id: 35,
            category: pb::Category::Architecture as i32,
            value: 2,
            goods: pb::Goods::Unspecified as i32,
        },
    ];
    let take = |tile_id: u32, decline_goods_step: bool| {
        pb::action::Kind::TakeProgressTile(pb::TakeProgressTile {
            tile_id,
            decline_goods_step,
        })
    };
    assert_eq!(
        label(take(0, false), &view),
        "Take the art tile of value 1 with gold on the left: Venice marker +1"
    );
    assert_eq!(
        label(take(1, true), &view),
        "Take the art tile of value 1 with gold in the middle without the Venice step"
    );
    assert_eq!(
        label(take(35, false), &view),
        "Take the architecture tile of value 2"
    );
}

/// Random play with every option on (hidden money, optional steps, overbids, the full pirate
/// circle, the goods flag needing a match): buttons stay distinct phrases and every event each
/// viewer receives reads as sentences.
#[test]
fn every_option_still_reads_as_sentences() {
    let config = pb::Config {
        players: 4,
        hidden_money: true,
        optional_extra_steps: true,
        tentative_overbid: true,
        pirate_chance_full_circle: true,
        goods_flag_needs_match: true,
        ..Default::default()
    };
    let viewers = [
        Viewer::Seat(0),
        Viewer::Seat(1),
        Viewer::Seat(2),
        Viewer::Seat(3),
        Viewer::Spectator,
    ];
    for seed in 0..5u64 {
        let mut state = Strozzi::setup(&config, &Seed::from_u64(seed)).expect("setup");
        let mut step = seed as usize;
        while let Some(seat) = state.to_act() {
            let view = state.view(Viewer::Seat(seat));
            let actions: Vec<pb::Action> = state
                .legal_actions(seat)
                .into_iter()
                .map(|legal| match legal {
                    LegalAction::Exact(action) => action,
                    LegalAction::Amount { action, .. } => action,
                })
                .collect();
            let labels: Vec<String> = actions
                .iter()
                .map(|action| Strozzi::choice_label(action, &view, &names()))
                .collect();
            for (i, label) in labels.iter().enumerate() {
                assert!(!label.ends_with('.') && !label.contains('_'), "{label}");
                assert!(!labels[..i].contains(label), "two buttons read {label:?}");
            }
            step = step.wrapping_mul(31).wrapping_add(7);
            let action = &actions[step % actions.len()];
            let events = state.apply(seat, action).expect("legal");
            for viewer in viewers {
                for event in &events {
                    let Some(seen) = Strozzi::redact_event(event, viewer).seen(event) else {
                        continue;
                    };
                    let line = Strozzi::event_text(&seen, &names()).unwrap_or_default();
                    assert!(line.ends_with('.') && !line.contains('_'), "{line:?}");
                }
            }
        }
    }
}
