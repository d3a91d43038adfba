//! Player metadata: who sits in which seat, as the game's creator described them
//! (`CreateGameRequest.players`). Checked once at creation, stored with the game's meta, and
//! returned as it is by CreateGame, GetView, Observe (first message), ExportLog and ListGames.
//! The service never acts on it: the seat token alone says who may act.

use super::error::{ServiceError, ServiceResult};
use crate::proto::v1 as pb;
use crate::store::PlayerMeta;

/// The longest display name, in characters (Unicode scalar values).
pub const MAX_DISPLAY_NAME_CHARS: usize = 64;
/// The longest external id, in bytes.
pub const MAX_EXTERNAL_ID_BYTES: usize = 128;

/// Why a player entry is refused: where it is, the seat it names, and the limit it breaks. Its
/// message quotes no value the caller sent: only lengths, positions and seats.
#[derive(Debug)]
pub(crate) struct PlayerRefusal {
    /// Its position in the list.
    pub index: usize,
    /// The seat it describes.
    pub seat: u32,
    /// What is wrong with it.
    pub why: String,
}

/// Checks the players a CreateGame names for a game of `seat_count` seats; the metadata to store,
/// in seat order. No value the caller sent is quoted back: only lengths, positions and seats.
pub fn checked(players: Vec<pb::Player>, seat_count: u32) -> ServiceResult<Vec<PlayerMeta>> {
    check(&players, Some(seat_count)).map_err(|refusal| {
        ServiceError::InvalidArgument(format!(
            "CreateGameRequest.players[{}] (seat {}): {}",
            refusal.index, refusal.seat, refusal.why
        ))
    })?;
    let mut checked: Vec<PlayerMeta> = players
        .into_iter()
        .map(|player| PlayerMeta {
            seat: player.seat,
            display_name: player.display_name,
            external_id: player.external_id,
        })
        .collect();
    checked.sort_by_key(|player| player.seat);
    Ok(checked)
}

/// Checks player metadata against CreateGame's limits: each seat described at most once, and
/// below `seat_count` when it is known (a submitted log's players are checked before its config
/// is set up, and again after), names and ids within their lengths and characters.
pub(crate) fn check(players: &[pb::Player], seat_count: Option<u32>) -> Result<(), PlayerRefusal> {
    let mut described: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    for (index, player) in players.iter().enumerate() {
        let refuse = |why: String| PlayerRefusal {
            index,
            seat: player.seat,
            why,
        };
        if let Some(seat_count) = seat_count
            && player.seat >= seat_count
        {
            return Err(refuse(format!(
                "this game has {seat_count} seats, numbered 0 to {}",
                seat_count.saturating_sub(1)
            )));
        }
        if let Some(first) = described.insert(player.seat, index) {
            return Err(refuse(format!(
                "the seat is already described by players[{first}]; describe each seat at most once"
            )));
        }
        let name_chars = player.display_name.chars().count();
        if name_chars > MAX_DISPLAY_NAME_CHARS {
            return Err(refuse(format!(
                "display_name is {name_chars} characters long; the limit is {MAX_DISPLAY_NAME_CHARS}"
            )));
        }
        if let Some(bad) = player.display_name.chars().find(|&c| unprintable(c)) {
            return Err(refuse(format!(
                "display_name contains U+{:04X}, a control or text-direction character; send plain \
                 text",
                u32::from(bad)
            )));
        }
        if player.external_id.len() > MAX_EXTERNAL_ID_BYTES {
            return Err(refuse(format!(
                "external_id is {} bytes long; the limit is {MAX_EXTERNAL_ID_BYTES} bytes",
                player.external_id.len()
            )));
        }
        if let Some(bad) = player
            .external_id
            .chars()
            .find(|&c| unprintable(c) || c.is_whitespace())
        {
            return Err(refuse(format!(
                "external_id contains U+{:04X}; an external id has no spaces and no control \
                 characters",
                u32::from(bad)
            )));
        }
        if player.display_name.is_empty() && player.external_id.is_empty() {
            return Err(refuse(
                "neither display_name nor external_id is set; leave the seat out instead".into(),
            ));
        }
    }
    Ok(())
}

/// Characters a name must not hold: controls, and the invisible text-direction marks that can make
/// a name display as another (Unicode's bidirectional formatting characters).
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200E}' | '\u{200F}' | '\u{061C}')
        || ('\u{202A}'..='\u{202E}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// The stored metadata as the wire carries it.
pub fn to_proto(players: &[PlayerMeta]) -> Vec<pb::Player> {
    players
        .iter()
        .map(|player| pb::Player {
            seat: player.seat,
            display_name: player.display_name.clone(),
            external_id: player.external_id.clone(),
        })
        .collect()
}

/// Who sits where now: the creator's players, and those who took open seats since (JoinGame,
/// from the log), in seat order.
pub fn of_game(
    meta: &crate::store::GameMeta,
    state: &dyn crate::hosting::GameState,
) -> Vec<pb::Player> {
    let mut players = to_proto(&meta.players);
    let joined = state.joined_players();
    if joined.is_empty() {
        return players;
    }
    players.retain(|player| !joined.iter().any(|taken| taken.seat == player.seat));
    players.extend(joined);
    players.sort_by_key(|player| player.seat);
    players
}

/// The external id of the player in `seat` now (`Player.external_id`), as [`of_game`] has it (a
/// joiner's, if JoinGame filled the seat); empty for none.
pub fn external_id_of(
    meta: &crate::store::GameMeta,
    state: &dyn crate::hosting::GameState,
    seat: u32,
) -> String {
    of_game(meta, state)
        .into_iter()
        .find(|player| player.seat == seat)
        .map(|player| player.external_id)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(seat: u32, display_name: &str, external_id: &str) -> pb::Player {
        pb::Player {
            seat,
            display_name: display_name.into(),
            external_id: external_id.into(),
        }
    }

    fn refusal(players: Vec<pb::Player>) -> String {
        checked(players, 3).expect_err("refused").to_string()
    }

    #[test]
    fn players_come_back_in_seat_order() {
        let stored =
            checked(vec![player(2, "Cosimo", ""), player(0, "", "user-17")], 3).expect("valid");
        assert_eq!(stored.iter().map(|p| p.seat).collect::<Vec<_>>(), [0, 2]);
        assert_eq!(to_proto(&stored)[1].display_name, "Cosimo");
        assert!(checked(Vec::new(), 2).expect("none").is_empty());
    }

    #[test]
    fn each_limit_is_refused_with_its_reason() {
        assert!(refusal(vec![player(3, "a", "")]).contains("3 seats, numbered 0 to 2"));
        assert!(
            refusal(vec![player(1, "a", ""), player(1, "b", "")])
                .contains("already described by players[0]")
        );
        let long = "é".repeat(MAX_DISPLAY_NAME_CHARS + 1);
        assert!(refusal(vec![player(0, &long, "")]).contains("65 characters"));
        assert!(checked(vec![player(0, &"é".repeat(64), "")], 3).is_ok());
        assert!(refusal(vec![player(0, "a\nb", "")]).contains("U+000A"));
        assert!(refusal(vec![player(0, "evil\u{202E}gnp", "")]).contains("U+202E"));
        let id = "x".repeat(MAX_EXTERNAL_ID_BYTES + 1);
        assert!(refusal(vec![player(0, "", &id)]).contains("129 bytes"));
        assert!(refusal(vec![player(0, "", "a b")]).contains("U+0020"));
        assert!(refusal(vec![player(0, "", "")]).contains("neither"));
    }

    #[test]
    fn refusals_never_quote_what_was_sent() {
        let secret = "s3cr3t-value";
        let message = refusal(vec![player(0, &format!("{secret}\u{7}"), "")]);
        assert!(!message.contains(secret), "{message}");
    }
}
