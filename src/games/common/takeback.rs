//! Which moves their own seat may take back (issue #30, after Board Game Arena's undo policy): a
//! move that drew no randomness and revealed nothing hidden to any viewer. The default of
//! [`crate::games::Engine::may_take_back`], proved generically the way the hidden-information tests
//! prove that views hide what they must: each viewer's hidden information (the RNG's future, deck
//! and bag order, other seats' secrets) is redrawn ([`crate::games::Engine::resample_hidden`]), the
//! move is played in each such state, and if what the viewer then sees (its view, and the move's
//! events as redacted for it) ever differs, or the move is not even legal there, the move told that
//! viewer something it could not know before: a draw, or a reveal.

use crate::games::{Engine, Redaction, Seat, Seed, Viewer};

/// How many times each viewer's hidden information is redrawn. A draw or a reveal shows in the
/// first resampling unless the redrawn state happens to hold the same thing where the move looks
/// (the same tile on top of a bag): three make that unlikely, and the seeds are fixed, so every
/// replica decides alike.
const RESAMPLES: u64 = 3;
/// Mixed into the resampling seeds, so they are not those of the hidden-information tests.
const SALT: u64 = 0x7461_6b65_6261_636b;

/// True when `seat`'s `action` from `state` is legal, draws nothing and reveals nothing to any
/// viewer (every seat and the spectators).
pub fn reveals_nothing<E: Engine>(state: &E, seat: Seat, action: &E::Action) -> bool {
    let mut after = state.clone();
    let Ok(events) = after.apply(seat, action) else {
        return false;
    };
    let viewers = (0..state.seat_count())
        .map(Viewer::Seat)
        .chain(std::iter::once(Viewer::Spectator));
    for viewer in viewers {
        let seen = seen_by::<E>(&after, &events, viewer);
        for n in 0..RESAMPLES {
            let mut other = state.resample_hidden(viewer, &Seed::from_u64(SALT ^ n));
            let Ok(other_events) = other.apply(seat, action) else {
                return false;
            };
            if seen_by::<E>(&other, &other_events, viewer) != seen {
                return false;
            }
        }
    }
    true
}

/// What `viewer` receives of a state after a move and of the move's events.
fn seen_by<E: Engine>(
    state: &E,
    events: &[E::Event],
    viewer: Viewer,
) -> (E::View, Vec<Option<E::Event>>) {
    let events = events
        .iter()
        .map(|event| match E::redact_event(event, viewer) {
            Redaction::Public => Some(event.clone()),
            Redaction::Hidden => None,
            Redaction::Replaced(redacted) => Some(redacted),
        })
        .collect();
    (state.view(viewer), events)
}
