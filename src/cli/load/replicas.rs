//! The connections to the replicas and the per-call choice between them (`--pick`).

use super::*;

/// The connections to the replicas, and the per-call choice between them.
pub(super) struct Replicas {
    /// Per replica, a few connections; a caller keeps to one connection index (`lane`).
    pub(super) channels: Vec<Vec<Channel>>,
    pub(super) pick: Pick,
    pub(super) next: AtomicU64,
}

impl Replicas {
    pub(super) async fn connect(args: &LoadArgs) -> anyhow::Result<Replicas> {
        anyhow::ensure!(!args.servers.is_empty(), "give at least one --server");
        // With `--turns observe` or `play`, every seat of a game holds a stream too.
        let seat_streams = match (args.turns, args.game.game()) {
            (Turns::View, _) => 0,
            (Turns::Observe | Turns::Play, Some(game)) => args
                .players
                .unwrap_or(game.game_type.max_seats)
                .try_into()
                .unwrap_or(usize::MAX),
            (Turns::Observe | Turns::Play, None) => hosting::registry()
                .iter()
                .map(|game| game.game_type.max_seats as usize)
                .max()
                .unwrap_or(1),
        };
        let callers = args.games.saturating_mul(1 + args.observers + seat_streams);
        let per_replica = callers.div_ceil(CALLS_PER_CONNECTION).max(1);
        let mut channels = Vec::new();
        for server in &args.servers {
            let mut connections = Vec::with_capacity(per_replica);
            for _ in 0..per_replica {
                connections.push(connect(server, args.ca_cert.as_deref(), CALL_TIMEOUT).await?);
            }
            channels.push(connections);
        }
        Ok(Replicas {
            channels,
            pick: args.pick,
            next: AtomicU64::new(0),
        })
    }

    /// The replica for the next call that no game's home decides (see [`Pick::ByGame`]).
    pub(super) fn replica(&self, rng: &mut GameRng) -> usize {
        match self.pick {
            Pick::RoundRobin | Pick::ByGame => {
                (self.next.fetch_add(1, Ordering::Relaxed) % self.channels.len() as u64) as usize
            }
            Pick::Random => rng.index(self.channels.len()),
        }
    }

    /// A client of `replica` on the connection of `lane`.
    pub(super) fn client(
        &self,
        replica: usize,
        lane: usize,
    ) -> pb::game_service_client::GameServiceClient<Channel> {
        let connections = &self.channels[replica];
        pb::game_service_client::GameServiceClient::new(
            connections[lane % connections.len()].clone(),
        )
        .max_decoding_message_size(16 << 20)
    }
}
