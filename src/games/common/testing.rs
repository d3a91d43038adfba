//! Helpers every game's tests share: apply a move that must succeed, or check that a move is
//! refused citing the right rule and leaving the state byte-identical.

use crate::games::{ActionError, Engine, Seat};

/// The canonical encoding of a state: two states are the same iff their encodings are.
pub fn encode<E: Engine>(state: &E) -> Vec<u8> {
    postcard::to_stdvec(state).expect("a state always serializes")
}

/// Applies `action` by `seat`, which must be legal, and checks the spec's invariants after it.
#[track_caller]
pub fn apply_ok<E: Engine>(state: &mut E, seat: Seat, action: &E::Action) -> Vec<E::Event> {
    let events = state
        .apply(seat, action)
        .unwrap_or_else(|e| panic!("{action:?} by seat {seat} rejected: {e}"));
    if let Err(broken) = state.check_invariants() {
        panic!("invariant broken after {action:?} by seat {seat}: {broken}");
    }
    events
}

/// Asserts that `action` by `seat` is refused as illegal citing `rule` (a spec section such as
/// `"§4.2"`), and that the refusal changed nothing. Returns the refusal's message.
#[track_caller]
pub fn assert_illegal<E: Engine>(state: &E, seat: Seat, action: &E::Action, rule: &str) -> String {
    let mut probe = state.clone();
    let result = probe.apply(seat, action);
    assert_eq!(
        encode(&probe),
        encode(state),
        "the refused action {action:?} changed the state"
    );
    match result {
        Err(ActionError::Illegal {
            rule: cited,
            message,
        }) => {
            assert_eq!(cited, rule, "wrong rule cited for {action:?} ({message})");
            message
        }
        other => {
            panic!("expected {action:?} by seat {seat} to be illegal by {rule}, got {other:?}")
        }
    }
}
