//! Setup (spec §3): the random layout, the workshop placement order and the first turn, and
//! workshop placement itself (spec §3.5, §9).

use super::SearchCache;
use crate::games::common::{GameRng, clockwise_from, left_of};
use crate::games::la_strada::data::{HexId, MAP, MAX_HEXES, POSITIONS, SettlementKind, Terrain};
use crate::games::la_strada::wire::{event, hex_to_pb};
use crate::games::la_strada::{
    LaStrada, MERCHANTS, Occupant, Options, Phase, Player, STARTING_SUPPLY, Site, SiteSeats,
    WorkshopSpacingRule,
};
use crate::games::{ActionError, Seat};
use crate::proto::la_strada::v1 as pb;

impl LaStrada {
    /// Spec §3.1-3.4: the start piece in a random position and the other five shuffled around it,
    /// the settlement tiles shuffled onto the sites, the start player drawn.
    pub(in crate::games::la_strada) fn draw(options: Options, mut rng: GameRng) -> LaStrada {
        let start_position = rng.index(POSITIONS);
        let mut others: Vec<usize> = (0..POSITIONS).filter(|p| *p != MAP.start_piece).collect();
        rng.shuffle(&mut others);
        let mut arrangement = [MAP.start_piece; POSITIONS];
        let mut rest = others.into_iter();
        for (position, slot) in arrangement.iter_mut().enumerate() {
            if position != start_position {
                *slot = rest.next().unwrap_or(MAP.start_piece);
            }
        }
        let mut kinds = MAP.settlement_tiles.clone();
        rng.shuffle(&mut kinds);
        let start_seat = rng.below(u64::from(options.players)) as Seat;
        LaStrada::with_layout(options, rng, arrangement, &kinds, start_seat)
    }

    /// A game on a given arrangement and settlement order (`kinds[i]` goes on the i-th site in
    /// hex id order), with `start_seat` as start player. [`LaStrada::draw`] draws these at random.
    pub(crate) fn with_layout(
        options: Options,
        rng: GameRng,
        arrangement: [usize; POSITIONS],
        kinds: &[SettlementKind],
        start_seat: Seat,
    ) -> LaStrada {
        let (terrain, piece_of) = MAP.lay_out(&arrangement);
        let mut sites = Vec::with_capacity(MAP.settlement_tiles.len());
        let mut site_at = vec![None; terrain.len()];
        for (hex, t) in terrain.iter().enumerate() {
            if *t == Terrain::Site {
                site_at[hex] = Some(sites.len() as u8);
                let kind = kinds
                    .get(sites.len())
                    .copied()
                    .unwrap_or(SettlementKind::Hamlet);
                sites.push(Site {
                    hex: hex as HexId,
                    kind,
                    merchants: SiteSeats::new(),
                    visitors: SiteSeats::new(),
                });
            }
        }
        let players = (0..options.players)
            .map(|_| Player {
                resources: 0,
                supply: STARTING_SUPPLY,
                merchants_left: MERCHANTS,
                workshops: Vec::new(),
            })
            .collect();
        let order = placement_order(start_seat, options.players);
        let first_turn_seat = first_turn_seat(&options, start_seat);
        // Each road reaches a settlement new to its builder (spec §5 rule 2): room for them all
        // at once, so that building them never reallocates the history.
        let roads = Vec::with_capacity(sites.len() * options.players as usize);
        LaStrada {
            options,
            rng,
            arrangement,
            terrain,
            piece_of,
            sites,
            site_at,
            occupant: vec![Occupant::Empty; MAP.hexes.len()],
            players,
            roads,
            phase: Phase::PlacingWorkshops { order, next: 0 },
            start_seat,
            first_turn_seat,
            round: 0,
            built_this_turn: false,
            silent_turns: 0,
            search_cache: SearchCache::default(),
        }
    }

    // ----- Workshops (spec §3.5, §9) -----

    /// Why `seat` may not put a workshop on `hex`, or `None` when it may: an empty plains hex
    /// (no site, no workshop) at least one hex away from other players' workshops (all workshops
    /// with the `ALL` spacing option, ruling A7).
    pub(in crate::games::la_strada) fn workshop_spot_error(
        &self,
        seat: Seat,
        hex: HexId,
    ) -> Option<ActionError> {
        let message = match self.workshop_spot_problem(seat, hex)? {
            SpotProblem::NotPlains(terrain) => {
                format!("a workshop must stand on a plains hex, not {terrain:?}")
            }
            SpotProblem::Occupied => "a workshop must stand on an empty hex".into(),
            SpotProblem::TooClose => {
                "there must be at least one hex between your workshop and another player's workshop"
                    .into()
            }
        };
        Some(ActionError::illegal("§3.5", message))
    }

    /// The §3.5 check behind [`LaStrada::workshop_spot_error`], without building a message (the
    /// listing asks it for every hex of the board).
    fn workshop_spot_problem(&self, seat: Seat, hex: HexId) -> Option<SpotProblem> {
        let terrain = self.terrain[hex as usize];
        if terrain != Terrain::Plains {
            return Some(SpotProblem::NotPlains(terrain));
        }
        if self.occupant[hex as usize] != Occupant::Empty {
            return Some(SpotProblem::Occupied);
        }
        let too_close = self.players.iter().enumerate().any(|(owner, player)| {
            let counts =
                owner as Seat != seat || self.options.workshop_spacing == WorkshopSpacingRule::All;
            counts
                && player
                    .workshops
                    .iter()
                    .any(|w| MAP.hex(*w).distance(MAP.hex(hex)) < 2)
        });
        too_close.then_some(SpotProblem::TooClose)
    }

    /// Every hex where `seat` may put its next workshop, in hex order (spec §3.5, ruling A7).
    /// The same test as [`LaStrada::workshop_spot_problem`]: the empty plains hexes, less every
    /// hex within distance 1 of a workshop that counts (the workshop's hex and its neighbours),
    /// marked first (the random-play sampler asks this at every setup step).
    pub(in crate::games::la_strada) fn legal_workshop_hexes(&self, seat: Seat) -> Vec<HexId> {
        self.workshop_hexes(seat).iter().collect()
    }

    /// [`LaStrada::legal_workshop_hexes`] as a set, without listing them (the random-play
    /// sampler counts them, then takes the one it drew).
    pub(in crate::games::la_strada) fn workshop_hexes(&self, seat: Seat) -> HexBits {
        let map = &*MAP;
        let mut hexes = self.empty_plains();
        for (owner, player) in self.players.iter().enumerate() {
            if owner as Seat == seat && self.options.workshop_spacing != WorkshopSpacingRule::All {
                continue;
            }
            for workshop in &player.workshops {
                // Off the board, `exits` gives one id past the last hex: never in the set.
                for hex in map.exits[usize::from(*workshop)]
                    .into_iter()
                    .chain([*workshop])
                {
                    hexes.remove(hex);
                }
            }
        }
        hexes
    }

    /// Puts `seat`'s workshop on `hex`; after the last one, the first turn begins (spec §3.6).
    pub(in crate::games::la_strada) fn place_workshop(
        &mut self,
        seat: Seat,
        hex: HexId,
    ) -> Result<Vec<pb::Event>, ActionError> {
        let Phase::PlacingWorkshops { order, next } = &self.phase else {
            return Err(ActionError::illegal(
                "§3.5",
                "workshops are placed only during setup",
            ));
        };
        let (order, next) = (order.clone(), *next);
        if let Some(error) = self.workshop_spot_error(seat, hex) {
            return Err(error);
        }
        self.occupant[hex as usize] = Occupant::Workshop(seat);
        self.players[seat as usize].workshops.push(hex);
        self.note_workshop_placed(seat, hex);
        let mut events = vec![event(pb::event::Kind::WorkshopPlaced(pb::WorkshopPlaced {
            seat,
            hex: Some(hex_to_pb(hex)),
        }))];
        if next + 1 < order.len() {
            self.phase = Phase::PlacingWorkshops {
                order,
                next: next + 1,
            };
        } else {
            self.begin_turn(self.first_turn_seat, &mut events);
        }
        Ok(events)
    }
}

/// A set of board hexes, a bit per hex id: where a workshop may go (spec §3.5). Setup asks for
/// it at every placement, and the random draw counts it and takes its n-th hex, which on bits
/// is a few word operations instead of a walk over the board.
#[derive(Clone, Debug)]
pub(in crate::games::la_strada) struct HexBits {
    words: [u64; HEX_WORDS],
    /// How many of `words` the board's hexes take (the rest are empty).
    used: usize,
}

/// Words of a [`HexBits`]: every hex id of the largest board, and the off-board id.
pub(in crate::games::la_strada) const HEX_WORDS: usize = (MAX_HEXES + 1).div_ceil(64);

impl HexBits {
    /// The set whose word `w` is `words[w]` (hex `64 w + i` is in it when bit `i` is set), on a
    /// board of `hexes` hexes.
    pub(in crate::games::la_strada) fn from_words(
        words: [u64; HEX_WORDS],
        hexes: usize,
    ) -> HexBits {
        HexBits {
            words,
            used: hexes.div_ceil(64).min(HEX_WORDS),
        }
    }

    /// Takes `hex` out of the set (an id past the words is never in it).
    fn remove(&mut self, hex: HexId) {
        let slot = usize::from(hex);
        if let Some(word) = self.words.get_mut(slot / 64) {
            *word &= !(1 << (slot % 64));
        }
    }

    /// How many hexes the set holds.
    pub(in crate::games::la_strada) fn len(&self) -> usize {
        self.words[..self.used]
            .iter()
            .map(|word| word.count_ones() as usize)
            .sum()
    }

    /// The `n`-th hex of the set in hex order (from 0), if it holds more than `n`.
    pub(in crate::games::la_strada) fn nth(&self, mut n: usize) -> Option<HexId> {
        for (index, word) in self.words[..self.used].iter().enumerate() {
            let count = word.count_ones() as usize;
            if n < count {
                let mut word = *word;
                for _ in 0..n {
                    word &= word - 1;
                }
                return Some((index * 64 + word.trailing_zeros() as usize) as HexId);
            }
            n -= count;
        }
        None
    }

    /// The hexes of the set in hex order.
    pub(in crate::games::la_strada) fn iter(&self) -> impl Iterator<Item = HexId> + '_ {
        self.words[..self.used]
            .iter()
            .enumerate()
            .flat_map(|(index, word)| {
                let mut word = *word;
                std::iter::from_fn(move || {
                    (word != 0).then(|| {
                        let bit = word.trailing_zeros() as usize;
                        word &= word - 1;
                        (index * 64 + bit) as HexId
                    })
                })
            })
    }
}

/// Why a hex cannot take a workshop (spec §3.5, ruling A7).
enum SpotProblem {
    NotPlains(Terrain),
    Occupied,
    TooClose,
}

/// The seats in workshop placement order (spec §3.5): the start player first, then clockwise;
/// with 2 players P1 P2 P1 P2 (spec §9).
pub fn placement_order(start_seat: Seat, players: u32) -> Vec<Seat> {
    if players == 2 {
        let second = left_of(start_seat, 2);
        vec![start_seat, second, start_seat, second]
    } else {
        clockwise_from(start_seat, players).collect()
    }
}

/// The seat that takes the first turn of play (spec §3.6): the start player, except in a 2-player
/// game, where the second placer moves first (spec §9, ruling A10) unless the option says otherwise.
fn first_turn_seat(options: &Options, start_seat: Seat) -> Seat {
    if options.players == 2 && !options.first_placer_starts {
        left_of(start_seat, 2)
    } else {
        start_seat
    }
}
