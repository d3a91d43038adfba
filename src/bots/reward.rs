//! What a finished game is worth to each seat: the quantity the search maximizes.

use crate::games::Outcome;

/// Each seat's share of the win: `1/k` for each of `k` winners (a shared victory is split),
/// 0 for the others; the shares sum to 1.
///
/// Win share rather than score: every game here is won by rank (most money, most gold, with
/// tie-breaks), so a margin is worth nothing, and a reward in 0..=1 suits UCT's exploration
/// constant. In a multi-player game each seat maximizes its own share (the "max^n" view of
/// multi-player MCTS, Sturtevant 2008, as in Cowling et al. 2012 §IV), so opponents are modelled
/// as playing for themselves, not against the bot.
pub fn rewards(outcome: &Outcome, seats: u32) -> Vec<f64> {
    let mut shares = vec![0.0; seats as usize];
    let winners: Vec<usize> = outcome
        .winners
        .iter()
        .map(|seat| *seat as usize)
        .filter(|seat| *seat < shares.len())
        .collect();
    if winners.is_empty() {
        // No winner named (never by the engines' contract): a tie among all.
        shares.fill(1.0 / f64::from(seats.max(1)));
    } else {
        let share = 1.0 / winners.len() as f64;
        for seat in winners {
            shares[seat] = share;
        }
    }
    shares
}
