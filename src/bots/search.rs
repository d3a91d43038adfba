//! Information-set Monte Carlo tree search: SO-ISMCTS with partially observable moves (Cowling,
//! Powley and Whitehouse 2012, Algorithm 3 and §V-B), over any [`Engine`].
//!
//! One tree is grown for the deciding seat's information set. Each iteration:
//!
//! 1. **Determinize**: draw a complete state from the seat's information set with
//!    [`Engine::resample_hidden`] (everything the seat cannot see redrawn, the RNG's future
//!    included, so dice and draws differ between iterations too);
//! 2. **Select**: from the root, while every move legal in this determinization already has a
//!    child, follow the child with the best UCB1 score, `mean + c·√(ln available / visits)`,
//!    where `available` counts the iterations in which the move was legal (ISMCTS's replacement
//!    for the parent's visit count: a move that only some determinizations allow is not
//!    penalized for the others);
//! 3. **Expand**: add one child for a move not tried yet (chosen at random);
//! 4. **Roll out**: play random moves to the end (`amounts::random_move`);
//! 5. **Back up**: every node on the path adds the reward of the seat that made its move
//!    (`reward::rewards`), so each seat's nodes maximize that seat's own reward.
//!
//! Edges are keyed by the move *as the deciding seat sees it* ([`Engine::redact_action`]): the
//! other seats' moves that differ only in what is hidden from the bot (Manila's mortgaged share)
//! share one child, and the concrete move is then drawn at random among those legal in the
//! determinization (the POM variant), so the tree never distinguishes what the bot cannot.
//! Chance is not a node: it lives in each determinization's RNG ("open loop").
//!
//! The decision is the root's most visited child (ties: the better mean, then the earlier
//! expanded), the robust choice of MCTS practice and OpenSpiel's default.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Instant;

use prost::Message;

use crate::bots::amounts::{concrete_moves, random_move};
use crate::bots::reward::rewards;
use crate::bots::{BotError, Departures, SearchSettings, check_turn};
use crate::games::common::GameRng;
use crate::games::{Engine, Seat, Seed, Viewer};

/// What a search decided, and how much it looked.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome<A> {
    /// The move to make.
    pub action: A,
    /// Iterations run (fewer than the budget when the time limit struck; 0 for a forced move).
    pub iterations: u32,
    /// Nodes in the tree, the root included.
    pub nodes: usize,
    /// How often the chosen move was visited.
    pub visits: u32,
    /// Its mean reward for the deciding seat (its estimated win share), 0..=1.
    pub value: f64,
}

/// Decides `seat`'s move in `state` by information-set MCTS with `settings`, all randomness drawn
/// from `seed`. Reads `state` only through `resample_hidden(Viewer::Seat(seat), …)`.
pub fn search<E: Engine>(
    state: &E,
    seat: Seat,
    settings: &SearchSettings,
    seed: &Seed,
) -> Result<SearchOutcome<E::Action>, BotError> {
    search_at_table(state, seat, settings, seed, &Departures::default())
}

/// [`search`] at a table that the `departures` left: their default actions are played for them
/// in the tree and the rollouts, and they cannot win (`crate::bots` module docs).
pub fn search_at_table<E: Engine>(
    state: &E,
    seat: Seat,
    settings: &SearchSettings,
    seed: &Seed,
    departures: &Departures,
) -> Result<SearchOutcome<E::Action>, BotError> {
    search_with(
        state,
        seat,
        settings,
        seed,
        departures,
        |state, sample_seed| state.resample_hidden(Viewer::Seat(seat), sample_seed),
    )
}

/// [`search`] with the determinization as a parameter: the tests pass one that peeks at the
/// real state, to show that the fairness check catches a bot that does.
pub(crate) fn search_with<E: Engine>(
    state: &E,
    seat: Seat,
    settings: &SearchSettings,
    seed: &Seed,
    departures: &Departures,
    determinize: impl Fn(&E, &Seed) -> E,
) -> Result<SearchOutcome<E::Action>, BotError> {
    match grow(state, seat, settings, seed, departures, determinize)? {
        Grown::Forced(outcome) => Ok(outcome),
        Grown::Tree(tree, iterations) => tree.decision(iterations),
    }
}

/// What [`grow`] produced: a forced move, decided without a tree, or the tree and its
/// iteration count.
enum Grown<'t, E: Engine> {
    Forced(SearchOutcome<E::Action>),
    Tree(Tree<'t, E>, u32),
}

/// Grows the search tree for [`search_with`].
fn grow<'t, E: Engine>(
    state: &E,
    seat: Seat,
    settings: &SearchSettings,
    seed: &Seed,
    departures: &'t Departures,
    determinize: impl Fn(&E, &Seed) -> E,
) -> Result<Grown<'t, E>, BotError> {
    check_turn(state, seat)?;
    let started = Instant::now();
    let mut rng = GameRng::from_seed(seed);
    let mut tree = Tree::<E>::new(seat, departures);
    let mut scratch = Scratch::default();

    // A forced move needs no search (the root's moves are the seat's own legal moves, the same
    // in every determinization).
    let first = determinize(state, &rng.next_seed());
    concrete_moves::<E>(first.legal_actions(seat), &mut scratch.moves);
    match scratch.moves.len() {
        0 => return Err(BotError::NoLegalAction(seat)),
        1 => {
            return Ok(Grown::Forced(SearchOutcome {
                action: scratch.moves.swap_remove(0),
                iterations: 0,
                nodes: 1,
                visits: 0,
                value: 0.0,
            }));
        }
        _ => {}
    }

    let mut iterations = 0;
    let mut sample = Some(first);
    while iterations < settings.iterations {
        if let Some(limit) = settings.time_limit
            && iterations > 0
            && started.elapsed() >= limit
        {
            break;
        }
        let determinization = match sample.take() {
            Some(first) => first,
            None => determinize(state, &rng.next_seed()),
        };
        iterations += 1;
        tree.iterate(
            determinization,
            iterations,
            &mut rng,
            settings,
            &mut scratch,
        )?;
    }
    Ok(Grown::Tree(tree, iterations))
}

/// The seats that act at the tree's nodes, root excluded, after a search: what the tests read to
/// see that no node stands for a move the table forces.
#[cfg(test)]
pub(crate) fn tree_actors<E: Engine>(
    state: &E,
    seat: Seat,
    settings: &SearchSettings,
    seed: &Seed,
    departures: &Departures,
) -> Result<Vec<Seat>, BotError> {
    let determinize =
        |state: &E, sample_seed: &Seed| state.resample_hidden(Viewer::Seat(seat), sample_seed);
    Ok(
        match grow(state, seat, settings, seed, departures, determinize)? {
            Grown::Forced(_) => Vec::new(),
            Grown::Tree(tree, _) => tree.nodes[1..].iter().map(|node| node.actor).collect(),
        },
    )
}

/// One node: the move that led here (as the deciding seat sees it) and its statistics.
#[derive(Debug)]
struct Node<A> {
    /// The move into this node, redacted for the deciding seat (the root's is a placeholder).
    key: A,
    /// The seat that made that move: the node's rewards are this seat's.
    actor: Seat,
    visits: u32,
    /// Iterations in which this node's move was legal when its parent was reached.
    available: u32,
    /// Sum of `actor`'s rewards over the visits.
    reward: f64,
    /// The last iteration that counted this node as available (counts it once per iteration).
    stamp: u32,
    /// Children in order of expansion.
    children: Vec<u32>,
    /// Children by the hash of their key (`key_hash`).
    by_key: HashMap<u64, u32, BuildHasherDefault<PassThrough>>,
}

impl<A> Node<A> {
    fn new(key: A, actor: Seat) -> Self {
        Node {
            key,
            actor,
            visits: 0,
            available: 0,
            reward: 0.0,
            stamp: 0,
            children: Vec::new(),
            by_key: HashMap::default(),
        }
    }

    fn mean(&self) -> f64 {
        if self.visits == 0 {
            0.0
        } else {
            self.reward / f64::from(self.visits)
        }
    }
}

/// Buffers reused across iterations, so that an iteration allocates only what the engine does.
struct Scratch<A> {
    /// The concrete moves legal at the current node.
    moves: Vec<A>,
    /// Their keys, when the mover is not the deciding seat (otherwise the key is the move).
    keys: Vec<A>,
    /// Per move: its key's hash, and the child it leads to if expanded.
    hashes: Vec<u64>,
    children: Vec<Option<u32>>,
    /// Moves without a child yet.
    untried: Vec<usize>,
    /// Moves leading to the selected child.
    tied: Vec<usize>,
    /// The path of this iteration, root first.
    path: Vec<u32>,
    /// Encoding buffer for hashing keys.
    encoded: Vec<u8>,
}

impl<A> Default for Scratch<A> {
    fn default() -> Self {
        Scratch {
            moves: Vec::new(),
            keys: Vec::new(),
            hashes: Vec::new(),
            children: Vec::new(),
            untried: Vec::new(),
            tied: Vec::new(),
            path: Vec::new(),
            encoded: Vec::new(),
        }
    }
}

struct Tree<'t, E: Engine> {
    /// The deciding seat.
    me: Seat,
    /// Who left the table.
    departures: &'t Departures,
    /// All nodes; index 0 is the root.
    nodes: Vec<Node<E::Action>>,
}

impl<'t, E: Engine> Tree<'t, E> {
    fn new(me: Seat, departures: &'t Departures) -> Self {
        Tree {
            me,
            departures,
            nodes: vec![Node::new(E::Action::default(), me)],
        }
    }

    /// One iteration on `state`, a fresh determinization (steps 2 to 5 of the module docs).
    fn iterate(
        &mut self,
        mut state: E,
        stamp: u32,
        rng: &mut GameRng,
        settings: &SearchSettings,
        scratch: &mut Scratch<E::Action>,
    ) -> Result<(), BotError> {
        scratch.path.clear();
        scratch.path.push(0);
        let mut node = 0usize;
        while let Some(actor) = state.to_act() {
            if self.departures.plays_default(actor) {
                // Forced by the table, not a choice: no node (the next decision hangs below this
                // one, as a chance outcome would).
                play_default(&mut state, actor)?;
                continue;
            }
            self.list_moves(&state, node, actor, stamp, scratch)?;
            let (chosen, child, expanded) = if scratch.untried.is_empty() {
                match self.select(settings.exploration, rng, scratch) {
                    Some((chosen, child)) => (chosen, child, false),
                    // Only keys lost to a hash collision are left: roll out from here.
                    None => break,
                }
            } else {
                let chosen = scratch.untried[rng.index(scratch.untried.len())];
                (
                    chosen,
                    self.expand(node, actor, chosen, stamp, scratch),
                    true,
                )
            };
            apply(&mut state, actor, &scratch.moves[chosen])?;
            scratch.path.push(child);
            node = child as usize;
            if expanded {
                break;
            }
        }
        let rewards = rollout(&mut state, rng, settings, self.me, self.departures)?;
        for &index in &scratch.path[1..] {
            let node = &mut self.nodes[index as usize];
            node.visits += 1;
            node.reward += rewards[node.actor as usize];
        }
        Ok(())
    }

    /// Lists `actor`'s concrete moves in `state` at `node`, matches them to the node's children
    /// and counts each matched child as available once in this iteration.
    fn list_moves(
        &mut self,
        state: &E,
        node: usize,
        actor: Seat,
        stamp: u32,
        scratch: &mut Scratch<E::Action>,
    ) -> Result<(), BotError> {
        scratch.moves.clear();
        scratch.keys.clear();
        scratch.hashes.clear();
        scratch.children.clear();
        scratch.untried.clear();
        concrete_moves::<E>(state.legal_actions(actor), &mut scratch.moves);
        if scratch.moves.is_empty() {
            return Err(BotError::NoLegalAction(actor));
        }
        let mine = actor == self.me;
        if !mine {
            let viewer = Viewer::Seat(self.me);
            scratch.keys.extend(
                scratch
                    .moves
                    .iter()
                    .map(|action| E::redact_action(action, actor, viewer)),
            );
        }
        for index in 0..scratch.moves.len() {
            let key = if mine {
                &scratch.moves[index]
            } else {
                &scratch.keys[index]
            };
            let hash = key_hash(key, &mut scratch.encoded);
            // A 64-bit hash collision between two different keys would leave the second
            // unexpandable at this node; its key is compared to be sure it is not mistaken for
            // the first.
            let child = self.nodes[node]
                .by_key
                .get(&hash)
                .copied()
                .filter(|child| self.nodes[*child as usize].key == *key);
            scratch.hashes.push(hash);
            scratch.children.push(child);
            match child {
                Some(child) => {
                    let child = &mut self.nodes[child as usize];
                    if child.stamp != stamp {
                        child.stamp = stamp;
                        child.available += 1;
                    }
                }
                None if !self.nodes[node].by_key.contains_key(&hash) => scratch.untried.push(index),
                None => {}
            }
        }
        Ok(())
    }

    /// Adds a child of `node` for the untried move `chosen` and returns it.
    fn expand(
        &mut self,
        node: usize,
        actor: Seat,
        chosen: usize,
        stamp: u32,
        scratch: &Scratch<E::Action>,
    ) -> u32 {
        let key = if actor == self.me {
            scratch.moves[chosen].clone()
        } else {
            scratch.keys[chosen].clone()
        };
        let child = self.nodes.len() as u32;
        let mut created = Node::new(key, actor);
        // Legal in this iteration, like its siblings counted by `list_moves`.
        created.stamp = stamp;
        created.available = 1;
        self.nodes.push(created);
        let parent = &mut self.nodes[node];
        parent.children.push(child);
        parent.by_key.insert(scratch.hashes[chosen], child);
        child
    }

    /// The child of the current node with the best UCB1 score among those legal now, and a concrete move
    /// leading to it (drawn at random when several do: another seat's choice that differs only
    /// in what the deciding seat cannot see). Ties go to the earlier listed move.
    fn select(
        &self,
        exploration: f64,
        rng: &mut GameRng,
        scratch: &mut Scratch<E::Action>,
    ) -> Option<(usize, u32)> {
        let mut best: Option<(u32, f64)> = None;
        for child in scratch.children.iter().flatten() {
            if best.is_some_and(|(best, _)| best == *child) {
                continue;
            }
            let stats = &self.nodes[*child as usize];
            let score = if stats.visits == 0 {
                f64::INFINITY
            } else {
                stats.mean()
                    + exploration
                        * (f64::from(stats.available).ln() / f64::from(stats.visits)).sqrt()
            };
            if best.is_none_or(|(_, best)| score > best) {
                best = Some((*child, score));
            }
        }
        let (child, _) = best?;
        scratch.tied.clear();
        scratch.tied.extend(
            (0..scratch.moves.len()).filter(|index| scratch.children[*index] == Some(child)),
        );
        let chosen = match scratch.tied.len() {
            1 => scratch.tied[0],
            tied => scratch.tied[rng.index(tied)],
        };
        Some((chosen, child))
    }

    /// The root's most visited child.
    fn decision(&self, iterations: u32) -> Result<SearchOutcome<E::Action>, BotError> {
        let root = &self.nodes[0];
        let best = root
            .children
            .iter()
            .map(|child| &self.nodes[*child as usize])
            .reduce(|best, child| {
                let better = child.visits > best.visits
                    || (child.visits == best.visits && child.mean() > best.mean());
                if better { child } else { best }
            })
            .ok_or(BotError::NoLegalAction(self.me))?;
        Ok(SearchOutcome {
            action: best.key.clone(),
            iterations,
            nodes: self.nodes.len(),
            visits: best.visits,
            value: best.mean(),
        })
    }
}

/// Applies a listed move; a refusal is a broken engine contract, reported rather than panicking.
fn apply<E: Engine>(state: &mut E, actor: Seat, action: &E::Action) -> Result<(), BotError> {
    state
        .apply(actor, action)
        .map(drop)
        .map_err(|error| BotError::EngineRefused(format!("{action:?} by seat {actor}: {error}")))
}

/// Plays the table's default action for `actor`, a seat that left (`hosting/table.rs`).
fn play_default<E: Engine>(state: &mut E, actor: Seat) -> Result<(), BotError> {
    let action = state
        .default_action()
        .ok_or(BotError::NoLegalAction(actor))?;
    apply(state, actor, &action)
}

/// Plays `state` to the end with random moves (default actions for the seats the table plays)
/// and returns every seat's reward for the deciding seat `me`'s search.
pub(super) fn rollout<E: Engine>(
    state: &mut E,
    rng: &mut GameRng,
    settings: &SearchSettings,
    me: Seat,
    departures: &Departures,
) -> Result<Vec<f64>, BotError> {
    let seats = state.seat_count();
    let mut moves = 0;
    while let Some(actor) = state.to_act() {
        if moves >= settings.max_rollout_actions {
            return Ok(vec![1.0 / f64::from(seats.max(1)); seats as usize]);
        }
        if departures.plays_default(actor) {
            play_default(state, actor)?;
            moves += 1;
            continue;
        }
        let legal = state.legal_actions(actor);
        if legal.is_empty() {
            return Err(BotError::NoLegalAction(actor));
        }
        let action = random_move::<E>(&legal, rng);
        apply(state, actor, &action)?;
        moves += 1;
    }
    Ok(match state.outcome() {
        Some(outcome) if departures.is_empty() => rewards(&outcome, seats),
        Some(mut outcome) => {
            // The seats still playing share the win by the game's ranking; a resigned seat
            // cannot win. A deciding seat that resigned (handed to a bot) is scored by where it
            // would have ranked among them, since any move of it is otherwise worth nothing.
            let remaining: Vec<Seat> = (0..seats)
                .filter(|seat| !departures.resigned.contains(seat))
                .collect();
            outcome.winners = state.winners_among(&remaining);
            let mut shares = rewards(&outcome, seats);
            if departures.resigned.contains(&me) {
                let mut with_me = remaining;
                with_me.push(me);
                outcome.winners = state.winners_among(&with_me);
                shares[me as usize] = rewards(&outcome, seats)[me as usize];
            }
            shares
        }
        None => vec![1.0 / f64::from(seats.max(1)); seats as usize],
    })
}

/// A 64-bit hash of a key's protobuf encoding (deterministic: prost encodes fields in order).
fn key_hash<A: Message>(key: &A, encoded: &mut Vec<u8>) -> u64 {
    encoded.clear();
    // Encoding into a Vec cannot run out of room.
    let _ = key.encode(encoded);
    let mut hash = 0xcbf2_9ce4_8422_2325u64 ^ encoded.len() as u64;
    for chunk in encoded.chunks(8) {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        hash = (hash.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    hash
}

/// The children maps' keys are already hashes: pass them through.
#[derive(Default)]
struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*byte);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
