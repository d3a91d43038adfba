//! The clients: each lane plays one game after another with every seat of it, like a third-party
//! backend (views, `expected_version`, request ids, retries), and its spectators follow on Observe.

use super::*;

/// The game (and player count) lane `lane` plays as its `round`-th game: under `mix`, the hosted
/// games in turn, each at a count drawn from its range.
pub(super) fn game_for(
    args: &LaneArgs,
    round: u64,
    rng: &mut GameRng,
) -> (&'static hosting::RegisteredGame, u32) {
    let (game, mix) = match args.game {
        GameChoice::Game(game) => (game, false),
        GameChoice::Mix => {
            // The registry is never empty: `hosted_games!` takes at least one game.
            let games = hosting::registry();
            (
                &games[((args.lane as u64 + round) % games.len() as u64) as usize],
                true,
            )
        }
    };
    let facts = game.game_type;
    let players = match (mix, args.players) {
        (true, _) => {
            facts.min_seats + rng.below(u64::from(facts.max_seats - facts.min_seats) + 1) as u32
        }
        (false, Some(players)) => players,
        (false, None) => facts.min_seats,
    };
    (game, players)
}

pub(super) struct LaneArgs {
    pub(super) lane: usize,
    pub(super) seed: u64,
    pub(super) game: GameChoice,
    pub(super) players: Option<u32>,
    pub(super) observers: usize,
    pub(super) turns: Turns,
    /// Ask for every answer without the view (`--omit-views`).
    pub(super) omit_views: bool,
    pub(super) total_games: Option<u64>,
    pub(super) think: Duration,
    pub(super) deadline: Instant,
    /// The tenant API key the games are created with, if any.
    pub(super) key: Option<String>,
    /// Send an Act refused with RESOURCE_EXHAUSTED again after this pause.
    pub(super) retry_exhausted: Option<Duration>,
}

/// One lane: plays games back to back until the deadline (or the total is reached). Returns its
/// Act latencies and its spectators' delivery delays.
pub(super) async fn play_lane(
    args: LaneArgs,
    replicas: Arc<Replicas>,
    tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
) -> (Histogram<u64>, Histogram<u64>) {
    let mut rng = GameRng::from_seed(&Seed::from_u64(
        args.seed
            .wrapping_mul(1_000_003)
            .wrapping_add(args.lane as u64),
    ));
    let mut latencies = new_histogram();
    let mut delivery = new_histogram();
    let mut round = 0;
    while Instant::now() < args.deadline && !stop.load(Ordering::Relaxed) {
        if let Some(total) = args.total_games
            && tally.finished.load(Ordering::Relaxed) >= total
        {
            break;
        }
        let (game, players) = game_for(&args, round, &mut rng);
        round += 1;
        let mut player = Player {
            lane: args.lane,
            replicas: &replicas,
            tally: &tally,
            rng: &mut rng,
            latencies: &mut latencies,
            home: None,
            turns: args.turns,
            omit_views: args.omit_views,
            key: args.key.as_deref(),
            retry_exhausted: args.retry_exhausted,
            deadline: args.deadline,
        };
        let outcome = player
            .play(
                game.config(players),
                args.observers,
                args.think,
                args.deadline,
            )
            .await;
        match outcome {
            Ok(Played {
                finished,
                spectators,
            }) => {
                if finished {
                    tally.finished.fetch_add(1, Ordering::Relaxed);
                }
                for spectator in spectators {
                    if let Ok(delays) = spectator.await {
                        let _ = delivery.add(delays);
                    }
                }
            }
            Err(code) => {
                tally.error(code);
                tally.abandoned.fetch_add(1, Ordering::Relaxed);
                // Do not spin on a replica that refuses everything.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    (latencies, delivery)
}

pub(super) struct Played {
    pub(super) finished: bool,
    pub(super) spectators: Vec<tokio::task::JoinHandle<Histogram<u64>>>,
}

/// One game's clients: every seat of it, played from one task.
pub(super) struct Player<'a> {
    pub(super) lane: usize,
    pub(super) replicas: &'a Arc<Replicas>,
    pub(super) tally: &'a Arc<Tally>,
    pub(super) rng: &'a mut GameRng,
    pub(super) latencies: &'a mut Histogram<u64>,
    /// With [`Pick::ByGame`], the replica that created the game being played.
    pub(super) home: Option<usize>,
    /// How a seat learns its turn has come.
    pub(super) turns: Turns,
    /// Ask for every answer without the view.
    pub(super) omit_views: bool,
    /// The tenant API key games are created with.
    pub(super) key: Option<&'a str>,
    /// Send an Act refused with RESOURCE_EXHAUSTED again after this pause (until the deadline).
    pub(super) retry_exhausted: Option<Duration>,
    /// When the run ends.
    pub(super) deadline: Instant,
}

/// A message on a seat's own stream ([`Turns::Observe`]), as far as the player needs it.
struct SeatMessage {
    seat: u32,
    version: u64,
    status: pb::GameStatus,
    legal_actions: Vec<pb::LegalAction>,
}

/// Tasks stopped when the game's player returns, however it returns.
struct AbortOnDrop(Vec<tokio::task::JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// One game's `Play` streams, one per seat, on one replica.
struct SeatStreams {
    /// The replica they are open on.
    replica: usize,
    /// Every seat's answers, each tagged with its seat.
    inbound: futures::stream::SelectAll<
        futures::stream::Zip<futures::stream::Repeat<u32>, tonic::Streaming<pb::PlayResponse>>,
    >,
    /// Every seat's requests, by seat.
    outbound: Vec<tokio::sync::mpsc::Sender<pb::PlayRequest>>,
}

impl SeatStreams {
    /// Sends `request` on `seat`'s stream, waiting for room until `deadline` at most. A stream
    /// that has failed refuses it; reading the streams reports the failure, so it is not
    /// reported here.
    async fn send(&self, seat: u32, request: pb::PlayRequest, deadline: Instant) {
        if let Some(stream) = self.outbound.get(seat as usize) {
            let until = tokio::time::Instant::from_std(deadline);
            let _ = tokio::time::timeout_at(until, stream.send(request)).await;
        }
    }

    /// The next message of any seat's stream; `None` at the deadline, an error when a stream
    /// fails or every one has ended before the game did.
    async fn next(
        &mut self,
        until: &mut std::pin::Pin<&mut tokio::time::Sleep>,
        deadline: Instant,
    ) -> Result<Option<(u32, pb::play_response::Kind)>, tonic::Code> {
        loop {
            let received = tokio::select! {
                biased;
                received = self.inbound.next() => received,
                () = until.as_mut() => return Ok(None),
            };
            match received {
                Some((seat, Ok(pb::PlayResponse { kind: Some(kind) }))) => {
                    return Ok(Some((seat, kind)));
                }
                Some((_, Ok(_))) => {}
                Some((_, Err(status))) => return Err(status.code()),
                None if Instant::now() >= deadline => return Ok(None),
                None => return Err(tonic::Code::Unavailable),
            }
        }
    }
}

impl Player<'_> {
    /// Creates a game and plays it until it ends or `deadline` passes.
    pub(super) async fn play(
        &mut self,
        config: pb::GameConfig,
        observers: usize,
        think: Duration,
        deadline: Instant,
    ) -> Result<Played, tonic::Code> {
        // A creation that fails in transit is retried as Act is. With a key it carries a request
        // id, so a retry whose first call's answer was lost gets that game instead of leaving it
        // behind, never played; an anonymous CreateGame may not carry one.
        let key = self.key;
        let request_id = key.map(|_| creation_request_id()).unwrap_or_default();
        let (replica, created) = self
            .with_retries_on(|mut client| {
                let request = with_token(
                    pb::CreateGameRequest {
                        config: Some(config.clone()),
                        seed: None,
                        request_id: request_id.clone(),
                        ..Default::default()
                    },
                    key,
                );
                async move { client.create_game(request).await }
            })
            .await?;
        if self.replicas.pick == Pick::ByGame {
            self.home = Some(replica);
        }
        let tokens: Vec<String> = {
            let mut seats = created.seats.clone();
            seats.sort_by_key(|seat| seat.seat);
            seats.into_iter().map(|seat| seat.token).collect()
        };
        let acknowledged = Arc::new(Acknowledged::default());
        let mut spectators = Vec::with_capacity(observers);
        for _ in 0..observers {
            let replica = self.replicas.replica(self.rng);
            spectators.push(tokio::spawn(spectate(
                StreamHome::new(self.replicas, replica, self.lane),
                created.game_id.clone(),
                created.version,
                acknowledged.clone(),
                deadline,
                self.tally.clone(),
            )));
        }
        if self.turns == Turns::Play {
            let finished = self
                .play_on_streams(&created.game_id, &tokens, &acknowledged, think, deadline)
                .await?;
            return Ok(Played {
                finished,
                spectators,
            });
        }
        let (seat_messages, mut turns_told) = tokio::sync::mpsc::unbounded_channel();
        // Held until this function returns, which stops the streams.
        let mut seat_streams = AbortOnDrop(Vec::new());
        if self.turns == Turns::Observe {
            for (seat, token) in tokens.iter().enumerate() {
                let replica = self.home.unwrap_or_else(|| self.replicas.replica(self.rng));
                let sender = seat_messages.clone();
                let seat = seat as u32;
                let counted = self.tally.clone();
                seat_streams.0.push(tokio::spawn(follow(
                    StreamHome::new(self.replicas, replica, self.lane),
                    created.game_id.clone(),
                    Some(token.clone()),
                    created.version,
                    deadline,
                    self.tally.clone(),
                    move |message, _| {
                        counted.seat_messages.fetch_add(1, Ordering::Relaxed);
                        let _ = sender.send(SeatMessage {
                            seat,
                            version: message.version,
                            status: message.status.unwrap_or_default(),
                            legal_actions: message.legal_actions,
                        });
                    },
                )));
            }
        }
        // The streams hold the only senders: when every one has given up, the channel closes.
        drop(seat_messages);
        let until = tokio::time::Instant::from_std(deadline);
        let mut version = created.version;
        // Whose turn it is and, once known, that seat's legal actions.
        let mut turn: Option<(u32, Vec<pb::LegalAction>)> = None;
        let mut to_act = None;
        let mut finished = false;
        let mut next_request = 0_u64;
        while Instant::now() < deadline {
            let (seat, legal) = match turn.take() {
                Some(turn) => turn,
                None if self.turns == Turns::Observe => {
                    // The seat whose turn came is told so on its own stream.
                    let message = match tokio::time::timeout_at(until, turns_told.recv()).await {
                        Err(_) => break,
                        // The streams stop at the deadline too, and may get there first.
                        Ok(None) if Instant::now() >= deadline => break,
                        // Every seat's stream gave up (its failures are in the tally).
                        Ok(None) => return Err(tonic::Code::Unavailable),
                        Ok(Some(message)) => message,
                    };
                    // A message about a version this player has already acted past is old news.
                    if message.version < version {
                        continue;
                    }
                    version = message.version;
                    if message.status.finished {
                        finished = true;
                        break;
                    }
                    if message.status.to_act != Some(message.seat) {
                        continue;
                    }
                    (message.seat, message.legal_actions)
                }
                None => {
                    // The seat whose turn came learns its legal actions from its own view.
                    let seat = to_act.unwrap_or(0);
                    let view = self
                        .view(&created.game_id, &tokens[seat as usize], version)
                        .await?;
                    version = view.version;
                    let status = view.status.unwrap_or_default();
                    if status.finished {
                        finished = true;
                        break;
                    }
                    match status.to_act {
                        Some(next) if next == seat => (seat, view.legal_actions),
                        next => {
                            to_act = next;
                            continue;
                        }
                    }
                }
            };
            if legal.is_empty() {
                return Err(tonic::Code::Internal);
            }
            let action = self.decide(&legal, think).await;
            next_request += 1;
            let request = pb::ActRequest {
                game_id: created.game_id.clone(),
                action: Some(action),
                expected_version: Some(version),
                request_id: format!("load-{}-{next_request}", self.lane),
                narrate: false,
                omit_view: self.omit_views,
            };
            let answer = self.act(request, &tokens[seat as usize]).await?;
            let acknowledged_at = Instant::now();
            acknowledged.record(answer.version, acknowledged_at);
            version = answer.version;
            let status = answer.status.unwrap_or_default();
            if status.finished {
                finished = true;
                break;
            }
            to_act = status.to_act;
            if status.to_act == Some(seat) && !answer.legal_actions.is_empty() {
                turn = Some((seat, answer.legal_actions));
            }
        }
        Ok(Played {
            finished,
            spectators,
        })
    }

    /// A random move from `legal`, after thinking for 0 to twice `think`.
    async fn decide(&mut self, legal: &[pb::LegalAction], think: Duration) -> pb::Action {
        let action = choose(legal, self.rng);
        if !think.is_zero() {
            let millis = think.as_millis().min(u128::from(u32::MAX)) as u64;
            tokio::time::sleep(Duration::from_millis(self.rng.below(2 * millis + 1))).await;
        }
        action
    }

    /// Plays the game on one `Play` stream per seat (all on the game's replica): each seat acts
    /// when its stream says its turn has come. Whether the game ended.
    ///
    /// When the streams fail in transit (a replica stopped or restarted, a connection dropped),
    /// the seats open them again on the next replica, as a client would, and a move sent but not
    /// yet answered is sent again with its request id: the service answers it once whether or
    /// not the first one was appended (`act::act`'s exactly-once retries). The game is given up
    /// after [`RETRIES`] failures without a message in between, or at the deadline.
    async fn play_on_streams(
        &mut self,
        game_id: &str,
        tokens: &[String],
        acknowledged: &Acknowledged,
        think: Duration,
        deadline: Instant,
    ) -> Result<bool, tonic::Code> {
        use pb::play_response::Kind;
        let first = self.home.unwrap_or_else(|| self.replicas.replica(self.rng));
        let mut failures = 0;
        let mut streams = loop {
            match self
                .open_play_streams(first + failures as usize, game_id, tokens)
                .await
            {
                Ok(streams) => break streams,
                Err(code) => self.retry_streams(code, &mut failures, deadline).await?,
            }
        };
        // One timer for the whole game, not one per message.
        let until = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline));
        tokio::pin!(until);
        let mut version = 0;
        let mut next_request = 0_u64;
        // Messages that arrived while a seat waited for its answer, in order.
        let mut held = std::collections::VecDeque::new();
        loop {
            let message = match held.pop_front() {
                Some(message) => message,
                None => match self
                    .next_on_streams(&mut streams, game_id, tokens, None, &mut until, deadline)
                    .await?
                {
                    Some(message) => message,
                    None => return Ok(false),
                },
            };
            let (seat, Kind::Turn(turn)) = message else {
                continue;
            };
            self.tally.seat_messages.fetch_add(1, Ordering::Relaxed);
            if turn.version < version {
                continue;
            }
            version = turn.version;
            let status = turn.status.unwrap_or_default();
            if status.finished {
                return Ok(true);
            }
            if status.to_act != Some(seat) {
                continue;
            }
            let mut legal = turn.legal_actions;
            // The seat moves until its turn passes: each answer lists its next legal actions.
            loop {
                if legal.is_empty() {
                    return Err(tonic::Code::Internal);
                }
                let action = self.decide(&legal, think).await;
                next_request += 1;
                let act = pb::PlayRequest {
                    kind: Some(pb::play_request::Kind::Act(pb::ActRequest {
                        // The stream's game.
                        game_id: String::new(),
                        action: Some(action),
                        expected_version: Some(version),
                        request_id: format!("load-{}-{next_request}", self.lane),
                        narrate: false,
                        omit_view: self.omit_views,
                    })),
                };
                let begin = Instant::now();
                // Kept until answered, to be sent again on new streams if these fail first. A
                // send that fails here means the stream has failed: reading it says so.
                streams.send(seat, act.clone(), deadline).await;
                let pending = (seat, act);
                let answer = loop {
                    match self
                        .next_on_streams(
                            &mut streams,
                            game_id,
                            tokens,
                            Some(&pending),
                            &mut until,
                            deadline,
                        )
                        .await?
                    {
                        Some((from, kind @ (Kind::Acted(_) | Kind::Refused(_))))
                            if from == seat =>
                        {
                            break kind;
                        }
                        Some(other) => held.push_back(other),
                        None => return Ok(false),
                    }
                };
                let answer = match answer {
                    Kind::Acted(answer) => answer,
                    Kind::Refused(refusal) => {
                        let code = tonic::Code::from(refusal.code as i32);
                        self.tally.error(code);
                        return Err(code);
                    }
                    Kind::Turn(_) => return Err(tonic::Code::Internal),
                };
                record(self.latencies, begin.elapsed());
                self.tally.acts.fetch_add(1, Ordering::Relaxed);
                acknowledged.record(answer.version, Instant::now());
                version = answer.version;
                let status = answer.status.unwrap_or_default();
                if status.finished {
                    return Ok(true);
                }
                if status.to_act != Some(seat) || answer.legal_actions.is_empty() {
                    break;
                }
                legal = answer.legal_actions;
            }
        }
    }

    /// Opens every seat's `Play` stream on the game's `replica` (modulo their number), each with
    /// its `start` sent.
    async fn open_play_streams(
        &mut self,
        replica: usize,
        game_id: &str,
        tokens: &[String],
    ) -> Result<SeatStreams, tonic::Code> {
        let replica = replica % self.replicas.channels.len();
        // Every seat's stream, read by the game's task alone (no reader task and channel per
        // seat: a message costs one poll there, as a client's own loop would).
        let mut streams = SeatStreams {
            replica,
            inbound: futures::stream::SelectAll::new(),
            outbound: Vec::with_capacity(tokens.len()),
        };
        for (seat, token) in tokens.iter().enumerate() {
            let (requests, outgoing) = tokio::sync::mpsc::channel::<pb::PlayRequest>(4);
            let start = pb::PlayRequest {
                kind: Some(pb::play_request::Kind::Start(pb::PlayStart {
                    game_id: game_id.to_owned(),
                    omit_view: self.omit_views,
                    narrate: false,
                })),
            };
            requests
                .send(start)
                .await
                .map_err(|_| tonic::Code::Internal)?;
            let request = with_token(
                tokio_stream::wrappers::ReceiverStream::new(outgoing),
                Some(token),
            );
            let responses = self
                .replicas
                .client(replica, self.lane)
                .play(request)
                .await
                .map_err(|status| status.code())?
                .into_inner();
            streams.outbound.push(requests);
            streams
                .inbound
                .push(futures::stream::repeat(seat as u32).zip(responses));
        }
        Ok(streams)
    }

    /// The next message on the seats' streams (`None` at the deadline). When they fail, it
    /// counts the failure and opens them again on the next replica ([`Player::retry_streams`]),
    /// sending `pending` (a seat's move not yet answered) again on the new ones.
    async fn next_on_streams(
        &mut self,
        streams: &mut SeatStreams,
        game_id: &str,
        tokens: &[String],
        pending: Option<&(u32, pb::PlayRequest)>,
        until: &mut std::pin::Pin<&mut tokio::time::Sleep>,
        deadline: Instant,
    ) -> Result<Option<(u32, pb::play_response::Kind)>, tonic::Code> {
        let mut failures = 0;
        loop {
            match streams.next(until, deadline).await {
                Ok(message) => return Ok(message),
                Err(code) => self.retry_streams(code, &mut failures, deadline).await?,
            }
            // Open the streams again on the next replica, and on the one after it while that
            // fails too.
            let mut replica = streams.replica;
            loop {
                replica += 1;
                match self.open_play_streams(replica, game_id, tokens).await {
                    Ok(reopened) => {
                        *streams = reopened;
                        break;
                    }
                    Err(code) => self.retry_streams(code, &mut failures, deadline).await?,
                }
            }
            if let Some((seat, act)) = pending {
                streams.send(*seat, act.clone(), deadline).await;
            }
        }
    }

    /// After the seats' streams failed with `code`, the `failures`-th time in a row: counts it,
    /// and either pauses as a call's retry does ([`Player::pause_before_retry`]) before they are
    /// opened again on the next replica, or gives the game up (a code not worth retrying, too many
    /// failures, or the deadline).
    async fn retry_streams(
        &self,
        code: tonic::Code,
        failures: &mut u32,
        deadline: Instant,
    ) -> Result<(), tonic::Code> {
        self.tally.error(code);
        if !retryable(code) || *failures == RETRIES || Instant::now() >= deadline {
            return Err(code);
        }
        self.pause_before_retry(*failures).await;
        *failures += 1;
        Ok(())
    }

    /// The seat's view at `known` or later: like a client that read the version of its game's
    /// last Act answer, it lets a replica that has that version answer without asking the store.
    pub(super) async fn view(
        &mut self,
        game_id: &str,
        token: &str,
        known: u64,
    ) -> Result<pb::GetViewResponse, tonic::Code> {
        let omit_view = self.omit_views;
        let view = self
            .with_retries(|mut client| {
                let request = authorized(
                    pb::GetViewRequest {
                        game_id: game_id.to_owned(),
                        version: None,
                        min_version: Some(known),
                        narrate: false,
                        omit_view,
                    },
                    token,
                );
                async move { client.get_view(request).await }
            })
            .await?;
        self.tally.views.fetch_add(1, Ordering::Relaxed);
        Ok(view)
    }

    /// Sends one Act, retrying a failure in transit with the same request id on the next replica.
    pub(super) async fn act(
        &mut self,
        request: pb::ActRequest,
        token: &str,
    ) -> Result<pb::ActResponse, tonic::Code> {
        let begin = Instant::now();
        let answer = loop {
            let answer = self
                .with_retries(|mut client| {
                    let request = authorized(request.clone(), token);
                    async move { client.act(request).await }
                })
                .await;
            match (answer, self.retry_exhausted) {
                (Err(tonic::Code::ResourceExhausted), Some(pause))
                    if Instant::now() + pause < self.deadline =>
                {
                    tokio::time::sleep(pause).await;
                }
                (answer, _) => break answer?,
            }
        };
        record(self.latencies, begin.elapsed());
        self.tally.acts.fetch_add(1, Ordering::Relaxed);
        Ok(answer)
    }

    /// Makes `call` on a replica picked per attempt, retrying failures in transit (with backoff,
    /// up to [`RETRIES`] times); every failure is counted by its code.
    pub(super) async fn with_retries<T, Call, Answer>(
        &mut self,
        call: Call,
    ) -> Result<T, tonic::Code>
    where
        Call: FnMut(pb::game_service_client::GameServiceClient<Channel>) -> Answer,
        Answer: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        Ok(self.with_retries_on(call).await?.1)
    }

    /// [`Player::with_retries`], with the replica that answered.
    async fn with_retries_on<T, Call, Answer>(
        &mut self,
        mut call: Call,
    ) -> Result<(usize, T), tonic::Code>
    where
        Call: FnMut(pb::game_service_client::GameServiceClient<Channel>) -> Answer,
        Answer: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
    {
        // The attempts go round the replicas from the first, so that a replica that is down
        // cannot take every attempt of a call.
        let first = self.home.unwrap_or_else(|| self.replicas.replica(self.rng));
        let mut attempt = 0;
        loop {
            let replica = (first + attempt as usize) % self.replicas.channels.len();
            match call(self.replicas.client(replica, self.lane)).await {
                Ok(answer) => {
                    // The game's calls stay where they last succeeded.
                    if self.home.is_some() {
                        self.home = Some(replica);
                    }
                    return Ok((replica, answer.into_inner()));
                }
                Err(status) => {
                    self.tally.error(status.code());
                    // A flooding client (`--retry-exhausted`) resends a refused Act after its own
                    // pause, not this backoff's.
                    let flooding = self.retry_exhausted.is_some()
                        && status.code() == tonic::Code::ResourceExhausted;
                    if flooding || !retryable(status.code()) || attempt == RETRIES {
                        return Err(status.code());
                    }
                    self.pause_before_retry(attempt).await;
                    attempt += 1;
                }
            }
        }
    }

    /// [`pause_before_retry`] among this game's replicas.
    async fn pause_before_retry(&self, attempt: u32) {
        pause_before_retry(attempt, self.replicas.channels.len()).await;
    }
}

/// Before the retry of a call or stream whose `attempt`-th try (from 0) failed, on the next of
/// `replicas`: the backoff once every replica has failed it in this round, and no pause while a
/// replica not yet tried remains (a client tries another server at once).
async fn pause_before_retry(attempt: u32, replicas: usize) {
    let replicas = u32::try_from(replicas).unwrap_or(u32::MAX).max(1);
    if (attempt + 1).is_multiple_of(replicas) {
        backoff(attempt / replicas).await;
    }
}

/// Follows `game_id` as a spectator from `from_version` (the game's creation, so it sees every
/// move however late its stream opens) until the game ends or `deadline`; returns each move's
/// delay from its acknowledgement to its arrival here.
pub(super) async fn spectate(
    home: StreamHome,
    game_id: String,
    from_version: u64,
    acknowledged: Arc<Acknowledged>,
    deadline: Instant,
    tally: Arc<Tally>,
) -> Histogram<u64> {
    let mut delays = new_histogram();
    let mut last = from_version;
    let counted = tally.clone();
    follow(
        home,
        game_id,
        None,
        from_version,
        deadline,
        tally,
        |message, arrived| {
            counted.observe_messages.fetch_add(1, Ordering::Relaxed);
            // The first message of a resumed stream repeats the version it resumed at.
            if message.action.is_some() && message.version > last {
                record(&mut delays, acknowledged.delay(message.version, arrived));
            }
            last = last.max(message.version);
        },
    )
    .await;
    delays
}

/// Follows `game_id` on Observe from `from_version` (as the seat of `token`, or as a spectator)
/// until the game ends or `deadline`, handing every message and its arrival time to `on_message`.
///
/// Like a real client, it resumes after its last version when its call or stream fails in transit
/// (up to [`RETRIES`] times in a row), on the next replica (`home` is where it starts); every
/// failure is counted by its code, so a stream that ends early shows in the report's errors
/// rather than only as missing deliveries.
pub(super) async fn follow(
    mut home: StreamHome,
    game_id: String,
    token: Option<String>,
    from_version: u64,
    deadline: Instant,
    tally: Arc<Tally>,
    mut on_message: impl FnMut(pb::ObserveResponse, Instant),
) {
    let until = tokio::time::Instant::from_std(deadline);
    let mut last = from_version;
    let mut attempt = 0;
    loop {
        // No call timeout: a stream lasts the game. Its deadline is `until`.
        let request = with_token(
            pb::ObserveRequest {
                game_id: game_id.clone(),
                from_version: Some(last),
                narrate: false,
            },
            token.as_deref(),
        );
        let failure = match tokio::time::timeout_at(until, home.client().observe(request)).await {
            Err(_) => return,
            Ok(Err(status)) => status.code(),
            Ok(Ok(stream)) => {
                let mut stream = stream.into_inner();
                loop {
                    let next = match tokio::time::timeout_at(until, stream.next()).await {
                        Err(_) => return,
                        Ok(None) => break tonic::Code::Unavailable,
                        Ok(Some(Err(status))) => break status.code(),
                        Ok(Some(Ok(message))) => message,
                    };
                    attempt = 0;
                    last = last.max(next.version);
                    let finished = next.status.as_ref().is_some_and(|status| status.finished);
                    on_message(next, Instant::now());
                    if finished {
                        return;
                    }
                }
            }
        };
        tally.error(failure);
        if !retryable(failure) || attempt == RETRIES {
            return;
        }
        // Any replica serves any game: resume on the next one, in case this one is gone, at once
        // while one not yet tried remains, as a call's retry does.
        pause_before_retry(attempt, home.replicas.channels.len()).await;
        attempt += 1;
        home.move_on();
    }
}

/// The replica a stream is open on, and how to move it to the next one.
pub(super) struct StreamHome {
    replicas: Arc<Replicas>,
    replica: usize,
    lane: usize,
}

impl StreamHome {
    pub(super) fn new(replicas: &Arc<Replicas>, replica: usize, lane: usize) -> StreamHome {
        StreamHome {
            replicas: replicas.clone(),
            replica,
            lane,
        }
    }

    fn client(&self) -> pb::game_service_client::GameServiceClient<Channel> {
        self.replicas.client(self.replica, self.lane)
    }

    /// The next replica, after the one that failed.
    fn move_on(&mut self) {
        self.replica = (self.replica + 1) % self.replicas.channels.len();
    }
}

/// A call as `token`'s seat, with the call deadline every unary call has.
pub(super) fn authorized<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut request = with_token(message, Some(token));
    request.set_timeout(CALL_TIMEOUT);
    request
}

/// A request as `token`'s seat (a spectator's without one), with no call deadline of its own.
fn with_token<T>(message: T, token: Option<&str>) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Some(token) = token
        && let Ok(value) = format!("Bearer {token}").parse()
    {
        request.metadata_mut().insert("authorization", value);
    }
    request
}

/// Failures in transit or of a replica, after which the same call may be sent again.
pub(super) fn retryable(code: tonic::Code) -> bool {
    matches!(
        code,
        tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Cancelled
            | tonic::Code::Unknown
            | tonic::Code::ResourceExhausted
    )
}

pub(super) async fn backoff(attempt: u32) {
    tokio::time::sleep(Duration::from_millis(20 << attempt.min(5))).await;
}

/// A legal action drawn at random, with its amount (if it has one) drawn from its range, smaller
/// amounts more often so games look like play.
pub fn choose(legal: &[pb::LegalAction], rng: &mut GameRng) -> pb::Action {
    let entry = &legal[rng.index(legal.len())];
    let action = entry.action.clone().unwrap_or_default();
    match &entry.amount_range {
        Some(range) if range.max >= range.min => {
            let top = if rng.below(4) == 0 {
                range.max
            } else {
                range.max.min(range.min.saturating_add(30))
            };
            let amount = range.min + rng.below(top - range.min + 1);
            hosting::with_amount(&action, amount)
        }
        _ => action,
    }
}

/// A request id for one CreateGame: random, since a tenant's request ids name its games across
/// every run of the load generator (empty, for no request id, if the OS has no randomness).
fn creation_request_id() -> String {
    let mut bytes = [0u8; 16];
    match getrandom::fill(&mut bytes) {
        Ok(()) => format!("load-{}", hex::encode(bytes)),
        Err(_) => String::new(),
    }
}
