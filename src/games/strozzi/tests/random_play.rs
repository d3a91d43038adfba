//! Random play: the invariants (spec A14) after every action, the listing against what apply accepts, and, at every action, the information-set check for every viewer.

use super::*;

/// `count` seeded games for `players`, the first `standard` with the full contract checks.
fn random_games(config: &pb::Config, count: u64, standard: u64) {
    let light = Checks::INVARIANTS;
    let mut rounds_by_flags = 0;
    for i in 0..count {
        let checks = if i < standard {
            Checks::STANDARD
        } else {
            light
        };
        let game = play::<Strozzi>(config, Seed::from_u64(i), 5_000, checks)
            .unwrap_or_else(|e| panic!("{} players, seed {i}: {e}", config.players));
        assert_eq!(game.outcome.winners.len(), 1);
        assert!(game.outcome.scores.iter().all(|s| s % 5 == 0));
        rounds_by_flags += usize::from(game.final_state.players.iter().all(|p| p.flags.is_empty()));
    }
    assert!(
        rounds_by_flags > 0,
        "some games end their last round by using every flag"
    );
}

#[test]
fn random_play_3_players() {
    random_games(&config(3), 10_000, 300);
}

#[test]
fn random_play_4_players() {
    random_games(&config(4), 10_000, 300);
}

#[test]
fn random_play_5_players() {
    random_games(&config(5), 10_000, 300);
}

#[test]
fn random_play_6_players() {
    random_games(&config(6), 10_000, 300);
}

#[test]
fn random_play_with_every_option() {
    let all_on = pb::Config {
        players: 0,
        first_seat: 0,
        random_first_seat: true,
        hidden_money: true,
        track_layout: pb::TrackLayout::Numbered as i32,
        round_start_rule: pb::RoundStartRule::KeepWhileNobodyMoved as i32,
        rank_zero_progress_totals: true,
        bonus_payment: pb::BonusPayment::OnArrival as i32,
        goods_flag_needs_match: true,
        optional_extra_steps: true,
        pirate_chance_full_circle: true,
        tentative_overbid: true,
        next_active_rule: pb::NextActiveRule::LeftOfActive as i32,
    };
    for players in 3..=6 {
        random_games(&pb::Config { players, ..all_on }, 300, 100);
        // Each option alone as well.
        let singles = [
            pb::Config {
                optional_extra_steps: true,
                ..config(players)
            },
            pb::Config {
                pirate_chance_full_circle: true,
                ..config(players)
            },
            pb::Config {
                tentative_overbid: true,
                ..config(players)
            },
            pb::Config {
                hidden_money: true,
                ..config(players)
            },
        ];
        for single in singles {
            random_games(&single, 100, 30);
        }
    }
}

#[test]
fn the_listing_is_exactly_what_apply_accepts() {
    let all = every_conceivable_action();
    let with_options = pb::Config {
        optional_extra_steps: true,
        tentative_overbid: true,
        pirate_chance_full_circle: true,
        goods_flag_needs_match: true,
        ..config(4)
    };
    for config in [config(3), config(5), with_options] {
        for seed in 0..6 {
            let game =
                play::<Strozzi>(&config, Seed::from_u64(seed), 5_000, Checks::NONE).expect("plays");
            let mut state = new_game(&config, seed);
            for (seat, action) in &game.actions {
                let others = [*seat, (*seat + 1) % config.players];
                for candidate in &all {
                    for who in others {
                        let listed = state
                            .legal_actions(who)
                            .contains(&LegalAction::Exact(*candidate));
                        let accepted = state.clone().apply(who, candidate).is_ok();
                        assert_eq!(
                            listed, accepted,
                            "seat {who} {candidate:?} listed {listed} accepted {accepted}"
                        );
                    }
                }
                state.apply(*seat, action).expect("replays");
            }
        }
    }
}

/// Every action of every game, for every seat and a spectator: views, whose turn, own legal
/// actions, the action as seen and its events are the same under redrawn deck, removed cards,
/// progress stack, RNG and (hidden) money. `with_every_option` seeded games with every option on
/// (`hidden_money` included), then `hidden_money_only` with just that one. At least 2,000
/// games per player count; a game costs more the more seats check it (6 players: ~40 s of CPU in
/// the test profile).
fn hidden_information_holds(players: u32, with_every_option: u64, hidden_money_only: u64) {
    let only_hidden_money = pb::Config {
        hidden_money: true,
        ..config(players)
    };
    for (config, games, from) in [
        (every_option(players), with_every_option, 30_000),
        (only_hidden_money, hidden_money_only, 40_000),
    ] {
        for seed in from..from + games {
            play::<Strozzi>(&config, Seed::from_u64(seed), 5_000, Checks::HIDDEN)
                .unwrap_or_else(|e| panic!("{players} players, seed {seed}: {e}"));
        }
    }
}

#[test]
fn no_viewer_learns_hidden_information_3_players() {
    hidden_information_holds(3, 1_200, 800);
}

#[test]
fn no_viewer_learns_hidden_information_4_players() {
    hidden_information_holds(4, 1_200, 800);
}

#[test]
fn no_viewer_learns_hidden_information_5_players() {
    hidden_information_holds(5, 1_200, 800);
}

#[test]
fn no_viewer_learns_hidden_information_6_players() {
    hidden_information_holds(6, 1_200, 800);
}

/// One button per distinct move (issue #31): at sampled steps of 300 seeded games at every seat
/// count, no two listed moves have the same effect.
#[test]
fn every_listed_move_is_a_distinct_move() {
    use crate::games::common::distinct_moves::check_distinct_moves;
    for players in 3..=6 {
        check_distinct_moves::<Strozzi>(&config(players), u64::from(players) * 1_000, 75, 3, 5_000);
    }
}

/// Taking back alone (issue #30): at sampled steps of 160 seeded games at every seat count, with
/// money open and hidden, no move a seat may take back on its own shows any viewer anything that
/// 48 redraws of the deck, the removed cards, the stack and the hidden money can tell apart.
#[test]
fn no_move_taken_back_alone_drew_or_revealed_anything() {
    use crate::games::common::takeback::check_takeback;
    let mut takeable = 0;
    for players in 3..=6 {
        for hidden_money in [false, true] {
            let config = pb::Config {
                hidden_money,
                ..config(players)
            };
            let seeds = 5_000 + u64::from(players) * 1_000 + u64::from(hidden_money) * 500;
            takeable += check_takeback::<Strozzi>(&config, seeds, 20, 5, 5_000);
        }
    }
    assert!(
        takeable > 1_000,
        "only {takeable} moves were takeable: the check proved little"
    );
}
