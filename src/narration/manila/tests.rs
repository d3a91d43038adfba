//! Manila's words, by worked examples.

use super::*;
use crate::games::{Engine, LegalAction, Redaction, Seed, Viewer};
use crate::proto::v1 as tabula;

fn names() -> Names {
    let players: Vec<tabula::Player> = ["Ann", "Ben", "Cleo"]
        .iter()
        .enumerate()
        .map(|(seat, name)| tabula::Player {
            seat: seat as u32,
            display_name: (*name).to_owned(),
            external_id: String::new(),
        })
        .collect();
    Names::new(3, &players, |_| None)
}

fn text(kind: E) -> String {
    let event = pb::Event { kind: Some(kind) };
    Manila::event_text(&event, &names()).expect("a sentence")
}

fn ware(ware: pb::Ware) -> i32 {
    ware as i32
}

#[test]
fn dealt_shares_are_hidden_from_other_seats() {
    let event = pb::Event {
        kind: Some(E::SharesDealt(pb::SharesDealt {
            seat: 1,
            wares: vec![ware(pb::Ware::Silk), ware(pb::Ware::Jade)],
        })),
    };
    let Redaction::Replaced(seen) = Manila::redact_event(&event, Viewer::Seat(0)) else {
        panic!("another seat's shares are redacted");
    };
    assert_eq!(
        Manila::event_text(&seen, &names()).as_deref(),
        Some("Ben is dealt 2 shares face down; their wares are hidden.")
    );
    assert_eq!(
        Manila::event_text(&event, &names()).as_deref(),
        Some("Ben is dealt a silk share and a jade share in secret.")
    );
    let same = E::SharesDealt(pb::SharesDealt {
        seat: 2,
        wares: vec![ware(pb::Ware::Nutmeg), ware(pb::Ware::Nutmeg)],
    });
    assert_eq!(text(same), "Cleo is dealt 2 nutmeg shares in secret.");
}

#[test]
fn a_mortgage_hides_its_ware_from_others() {
    let event = pb::Event {
        kind: Some(E::ShareMortgaged(pb::ShareMortgaged {
            seat: 0,
            ware: ware(pb::Ware::Ginseng),
            forced: true,
        })),
    };
    let Redaction::Replaced(seen) = Manila::redact_event(&event, Viewer::Spectator) else {
        panic!("a mortgaged share's ware is redacted");
    };
    assert_eq!(
        Manila::event_text(&seen, &names()).as_deref(),
        Some("Ann must mortgage a share of a hidden ware for 12 pesos to cover a payment.")
    );
    assert_eq!(
        Manila::event_text(&event, &names()).as_deref(),
        Some("Ann must mortgage a ginseng share for 12 pesos to cover a payment.")
    );
}

#[test]
fn the_harbour_master_is_chosen_and_loads() {
    assert_eq!(
        text(E::HarbourMasterChosen(pb::HarbourMasterChosen {
            seat: 1,
            price: 12,
            uncontested: false,
        })),
        "Ben wins the auction and becomes harbour master for 12 pesos."
    );
    assert_eq!(
        text(E::HarbourMasterChosen(pb::HarbourMasterChosen {
            seat: 0,
            price: 0,
            uncontested: true,
        })),
        "Nobody bids: Ann, who opened the auction, is harbour master for free."
    );
    assert_eq!(
        text(E::ShareBought(pb::ShareBought {
            seat: 1,
            ware: ware(pb::Ware::Silk),
            price: 15,
        })),
        "Ben buys a silk share for 15 pesos."
    );
    let punts = [
        (pb::Ware::Nutmeg, 0),
        (pb::Ware::Silk, 4),
        (pb::Ware::Jade, 5),
    ]
    .into_iter()
    .map(|(w, start)| pb::PuntStart {
        ware: ware(w),
        start,
    })
    .collect();
    assert_eq!(
        text(E::PuntsLoaded(pb::PuntsLoaded {
            seat: 1,
            left_out: ware(pb::Ware::Ginseng),
            punts,
        })),
        "Ben loads the punts and launches them: nutmeg on space 0, silk on 4 and jade on 5; \
         ginseng sits out this voyage."
    );
}

#[test]
fn placements_and_dice_read_as_the_board_shows_them() {
    assert_eq!(
        text(E::AccomplicePlaced(pb::AccomplicePlaced {
            seat: 2,
            kind: pb::SpaceKind::Crew as i32,
            ware: ware(pb::Ware::Jade),
            berth: 0,
            slot: 0,
            cost: 3,
            received: 0,
            stowaway: false,
        })),
        "Cleo puts an accomplice in the first crew place of the jade punt for 3 pesos."
    );
    assert_eq!(
        text(E::AccomplicePlaced(pb::AccomplicePlaced {
            seat: 0,
            kind: pb::SpaceKind::Insurance as i32,
            ware: 0,
            berth: 0,
            slot: 0,
            cost: 0,
            received: 10,
            stowaway: false,
        })),
        "Ann takes the insurance office for free and receives 10 pesos at once."
    );
    let dice = [
        (pb::Ware::Nutmeg, 3),
        (pb::Ware::Silk, 5),
        (pb::Ware::Jade, 4),
    ]
    .into_iter()
    .map(|(w, pips)| pb::DieView {
        ware: ware(w),
        pips,
    })
    .collect();
    let moves = vec![
        pb::PuntMoved {
            ware: ware(pb::Ware::Nutmeg),
            from_space: 4,
            to_space: 7,
        },
        pb::PuntMoved {
            ware: ware(pb::Ware::Silk),
            from_space: 10,
            to_space: 14,
        },
    ];
    assert_eq!(
        text(E::DiceRolled(pb::DiceRolled {
            roll: 2,
            dice,
            moves,
        })),
        "Roll 2 of 3: the dice show nutmeg 3, silk 5 and jade 4. The nutmeg punt moves from \
         space 4 to space 7 and the silk punt sails from space 10 into the harbour."
    );
}

#[test]
fn a_voyage_end_reads_as_a_summary() {
    let payout = |seat, amount, reason: pb::PayoutReason, w: i32, berth: pb::Berth, paid_by| {
        text(E::Payout(pb::Payout {
            seat,
            amount,
            reason: reason as i32,
            ware: w,
            berth: berth as i32,
            paid_by,
        }))
    };
    assert_eq!(
        text(E::PuntWrecked(pb::PuntWrecked {
            ware: ware(pb::Ware::Nutmeg),
            berth: pb::Berth::A as i32,
        })),
        "The nutmeg punt does not reach the harbour: it is wrecked and towed to shipyard \
         berth A."
    );
    assert_eq!(
        payout(
            1,
            15,
            pb::PayoutReason::Plunder,
            ware(pb::Ware::Silk),
            pb::Berth::Unspecified,
            None
        ),
        "Ben's pirate takes half of the plundered silk cargo: 15 pesos of its 30."
    );
    assert_eq!(
        payout(
            0,
            12,
            pb::PayoutReason::Crew,
            ware(pb::Ware::Jade),
            pb::Berth::Unspecified,
            None
        ),
        "Ann's accomplice on the jade punt earns 12 pesos, a third of its 36-peso cargo."
    );
    assert_eq!(
        payout(2, 6, pb::PayoutReason::Harbour, 0, pb::Berth::A, None),
        "A punt lies at wharf A: Cleo's accomplice there earns 6 pesos."
    );
    assert_eq!(
        text(E::InsuranceSettled(pb::InsuranceSettled {
            insurer: 2,
            owed: 14,
            paid: 5,
            bank_covered: 3,
        })),
        "Cleo's insurance covers the shipyard and owes 14 pesos: Cleo pays 5 pesos, \
         the bank covers the 3 pesos Cleo cannot raise and the 6 pesos owed to Cleo's own \
         accomplice in the shipyard cancel out."
    );
    assert_eq!(
        payout(1, 8, pb::PayoutReason::Shipyard, 0, pb::Berth::B, Some(2)),
        "A wreck lies at shipyard berth B: Cleo's insurance pays Ben's accomplice there 8 pesos."
    );
    assert_eq!(
        text(E::ValuesRaised(pb::ValuesRaised {
            raised: vec![
                pb::WareStatus {
                    ware: ware(pb::Ware::Silk),
                    value: 20,
                    supply: 2,
                },
                pb::WareStatus {
                    ware: ware(pb::Ware::Jade),
                    value: 30,
                    supply: 1,
                },
            ],
        })),
        "The wares that reached the harbour rise on the black market: silk to 20 pesos and \
         jade to 30 pesos, the top of the track. This is the last voyage."
    );
    assert_eq!(
        text(E::GameEnded(pb::GameEnded {
            scores: vec![85, -3, 85],
            winners: vec![0, 2],
        })),
        "The game is over. Final fortunes, counting cash and every share at its final value, \
         less 15 pesos per mortgaged share: Ann with 85 pesos, Ben with minus 3 pesos and Cleo \
         with 85 pesos. Ann and Cleo share the victory."
    );
}

/// Plays a 3-player game until the harbour master may buy: everyone passes, so the opener
/// (seat 0) keeps the office for free.
fn at_purchase() -> Manila {
    let mut game = Manila::setup(&Manila::config_for(3), &Seed::from_u64(1)).expect("setup");
    for seat in 0..3 {
        let pass = pb::Action {
            kind: Some(A::PassAuction(pb::PassAuction {})),
        };
        game.apply(seat, &pass).expect("a pass");
    }
    game
}

fn labels(game: &Manila, seat: Seat) -> Vec<String> {
    let view = game.view(Viewer::Seat(seat));
    game.legal_actions(seat)
        .iter()
        .map(|legal| {
            let action = match legal {
                LegalAction::Exact(action) | LegalAction::Amount { action, .. } => action,
            };
            Manila::choice_label(action, &view, &names())
        })
        .collect()
}

#[test]
fn labels_name_prices_from_the_view() {
    let game = Manila::setup(&Manila::config_for(3), &Seed::from_u64(1)).expect("setup");
    let auction = labels(&game, 0);
    assert!(
        auction.contains(&"Bid for harbour master".to_owned()),
        "{auction:?}"
    );
    assert!(auction.contains(&"Pass".to_owned()), "{auction:?}");

    let mut game = at_purchase();
    let purchase = labels(&game, 0);
    // Every ware starts at 0 on the black market: a share costs the minimum, 5 pesos.
    assert!(
        purchase.contains(&"Buy a silk share for 5 pesos".to_owned()),
        "{purchase:?}"
    );
    assert!(
        purchase.contains(&"Buy no share".to_owned()),
        "{purchase:?}"
    );
    let skip = pb::Action {
        kind: Some(A::SkipPurchase(pb::SkipPurchase {})),
    };
    game.apply(0, &skip).expect("skip");
    let loading = labels(&game, 0);
    assert!(
        loading.contains(&"Load ginseng, nutmeg and silk; start them at 0, 4 and 5".to_owned()),
        "{loading:?}"
    );
    assert!(loading.len() >= 100, "{loading:?}");
}

#[test]
fn placement_labels_say_what_a_space_costs() {
    let mut game = at_purchase();
    let skip = pb::Action {
        kind: Some(A::SkipPurchase(pb::SkipPurchase {})),
    };
    game.apply(0, &skip).expect("skip");
    let load = pb::Action {
        kind: Some(A::LoadPunts(pb::LoadPunts {
            punts: [
                (pb::Ware::Nutmeg, 3),
                (pb::Ware::Silk, 3),
                (pb::Ware::Jade, 3),
            ]
            .into_iter()
            .map(|(w, start)| pb::PuntStart {
                ware: ware(w),
                start,
            })
            .collect(),
        })),
    };
    game.apply(0, &load).expect("load");
    let placement = labels(&game, 0);
    for expected in [
        "Join the nutmeg crew for 2 pesos",
        "Join the jade crew for 3 pesos",
        "Take wharf A for 4 pesos",
        "Take shipyard berth C for 2 pesos",
        "Join the pirate ship as captain for 5 pesos",
        "Become the small pilot for 2 pesos",
        "Take the insurance office and receive 10 pesos",
        "Stop placing this voyage",
    ] {
        assert!(
            placement.contains(&expected.to_owned()),
            "{expected}: {placement:?}"
        );
    }
}
