//! Turn order around the table. Seats are numbered clockwise from 0, so the player on a seat's
//! left (the next clockwise) is `seat + 1` and the player on its right is `seat - 1`, modulo the
//! number of players.

use crate::games::Seat;

/// The next seat clockwise: the player on `seat`'s left.
pub fn left_of(seat: Seat, players: u32) -> Seat {
    (seat + 1) % players
}

/// The previous seat clockwise: the player on `seat`'s right.
pub fn right_of(seat: Seat, players: u32) -> Seat {
    (seat + players - 1) % players
}

/// Every seat once, clockwise, starting with `start`.
pub fn clockwise_from(start: Seat, players: u32) -> impl Iterator<Item = Seat> {
    (0..players).map(move |offset| (start + offset) % players)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_wrap_around_the_table() {
        assert_eq!(left_of(3, 4), 0);
        assert_eq!(right_of(0, 4), 3);
        assert_eq!(clockwise_from(2, 4).collect::<Vec<_>>(), vec![2, 3, 0, 1]);
    }
}
