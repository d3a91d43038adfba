//! `tabula play`: play a game from a terminal against the server's bots (issue #15).
//!
//! The game is created with the bot seats the `--seats` list names (bots have no token); the
//! human seats are played from this terminal (several human seats take turns at the same
//! keyboard). Against `--server` it is any running deployment; without it, an embedded replica
//! on the in-memory store is started in this process and played through the same gRPC client.
//!
//! The board is each game's view message printed compactly, one field a line (`text.rs`); the
//! legal actions are numbered, and an action that takes an amount asks for it within its range.
//! Bots move by themselves on the server: their moves arrive on an Observe stream and are printed
//! as they come. At the end the ranking is printed.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, BufReader};
use tonic::transport::Channel;

use super::text;
use crate::games::Seed;
use crate::hosting;
use crate::proto::v1 as pb;

type Client = pb::game_service_client::GameServiceClient<Channel>;

/// `tabula play`'s options.
#[derive(clap::Args, Debug)]
pub struct PlayArgs {
    /// The game, by name (e.g. medici-vs-strozzi, manila; an unknown name is answered with the
    /// list of games).
    #[arg(long)]
    pub game: String,
    /// Players at the table (default: the fewest the game allows).
    #[arg(long)]
    pub players: Option<u32>,
    /// Who plays each seat, in seat order, comma-separated: `human`, `bot` (the search bot),
    /// `search` or `random`; e.g. `human,bot,bot,bot`. Default: a human, then bots.
    #[arg(long, value_delimiter = ',')]
    pub seats: Vec<String>,
    /// The search bots' iterations per decision (0: the server's default, 500).
    #[arg(long, default_value_t = 0)]
    pub bot_iterations: u32,
    /// A running server (`host:port` or a URI); without it, an embedded in-memory server is
    /// started in this process.
    #[arg(long, env = "TABULA_SERVER")]
    pub server: Option<String>,
    /// PEM CA certificate(s) to verify an https:// server with.
    #[arg(long, env = "TABULA_CA_CERT")]
    pub ca_cert: Option<PathBuf>,
    /// A seed for the game (the embedded server accepts it; a server needs --allow-client-seed).
    #[arg(long)]
    pub seed: Option<u64>,
    /// The embedded server's bot thinking time per decision, in milliseconds: 1 to 60000.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=60_000))]
    pub bot_think_ms: u64,
}

/// A seat's player, as `--seats` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Player {
    Human,
    Bot(pb::BotKind),
}

fn parse_seat(word: &str) -> anyhow::Result<Player> {
    match word.trim().to_ascii_lowercase().as_str() {
        "human" | "me" => Ok(Player::Human),
        "bot" | "search" => Ok(Player::Bot(pb::BotKind::Search)),
        "random" => Ok(Player::Bot(pb::BotKind::Random)),
        other => bail!("--seats: {other:?} is not a player: use human, bot, search or random"),
    }
}

/// The game `game` names, for `players` seats (default: the fewest it allows), with every option
/// at its default; and the table's seat count.
fn game_config(game: &str, players: Option<u32>) -> anyhow::Result<(pb::game_config::Game, u32)> {
    let registered = hosting::find_game(game).map_err(|error| anyhow::anyhow!("--game {error}"))?;
    let facts = registered.game_type;
    let players = players.unwrap_or(facts.min_seats);
    if !facts.seats().contains(&players) {
        if facts.min_seats == facts.max_seats {
            bail!(
                "{} is a {}-player game",
                facts.display_name,
                facts.min_seats
            );
        }
        bail!(
            "{} is played by {} to {} players, not {players}",
            facts.display_name,
            facts.min_seats,
            facts.max_seats
        );
    }
    Ok((registered.config_case(players), players))
}

/// Plays a game from this terminal until it ends, the player quits or standard input closes.
/// Output that nobody reads any more (a closed pipe) ends the session quietly, as it ends `cat`.
pub async fn run(args: &PlayArgs) -> anyhow::Result<()> {
    match play(args).await {
        Err(error) if super::is_closed_pipe(&error) => Ok(()),
        other => other,
    }
}

async fn play(args: &PlayArgs) -> anyhow::Result<()> {
    let (game, seats) = game_config(&args.game, args.players)?;
    let players: Vec<Player> = if args.seats.is_empty() {
        (0..seats)
            .map(|seat| {
                if seat == 0 {
                    Player::Human
                } else {
                    Player::Bot(pb::BotKind::Search)
                }
            })
            .collect()
    } else {
        args.seats
            .iter()
            .map(|word| parse_seat(word))
            .collect::<anyhow::Result<_>>()?
    };
    if players.len() != seats as usize {
        bail!(
            "--seats names {} players but the table has {seats} seats",
            players.len()
        );
    }
    let bots: Vec<pb::BotSeat> = players
        .iter()
        .enumerate()
        .filter_map(|(seat, player)| match player {
            Player::Bot(kind) => Some(pb::BotSeat {
                seat: seat as u32,
                kind: *kind as i32,
                iterations: args.bot_iterations,
            }),
            Player::Human => None,
        })
        .collect();

    let (channel, _embedded) = match &args.server {
        Some(server) => (
            super::connect(server, args.ca_cert.as_deref(), Duration::from_secs(10)).await?,
            None,
        ),
        None => {
            let (channel, embedded) = embedded_server(args.bot_think_ms).await?;
            (channel, Some(embedded))
        }
    };
    let mut client = Client::new(channel);
    let created = client
        .create_game(pb::CreateGameRequest {
            config: Some(pb::GameConfig {
                game: Some(game),
                table: Some(pb::TableConfig {
                    bots,
                    ..Default::default()
                }),
            }),
            seed: args.seed.map(|seed| Seed::from_u64(seed).0.to_vec()),
            players: Vec::new(),
            rules_version: String::new(),
            webhooks: Vec::new(),
            ..Default::default()
        })
        .await
        .map_err(|status| anyhow::anyhow!("CreateGame: {}", super::describe_status(&status)))?
        .into_inner();
    let tokens: Vec<(u32, String)> = created
        .seats
        .iter()
        .map(|seat| (seat.seat, seat.token.clone()))
        .collect();
    say!(
        "Game {} ({} seats): {}",
        created.game_id,
        seats,
        players
            .iter()
            .enumerate()
            .map(|(seat, player)| format!(
                "seat {seat} {}",
                match player {
                    Player::Human => "human",
                    Player::Bot(pb::BotKind::Random) => "random bot",
                    Player::Bot(_) => "search bot",
                }
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Table {
        client,
        game_id: created.game_id,
        tokens,
        seats,
        input: BufReader::new(tokio::io::stdin()).lines(),
        embedded: _embedded.is_some(),
    }
    .play()
    .await
}

/// A replica on the in-memory store, in this process, on a loopback port; stopped when the
/// returned sender is dropped.
async fn embedded_server(
    think_ms: u64,
) -> anyhow::Result<(Channel, tokio::sync::oneshot::Sender<()>)> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .context("starting the embedded server")?;
    let address = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = crate::service::ServiceOptions {
        allow_client_seed: true,
        bots: crate::service::BotOptions {
            threads: 1,
            think_time: Duration::from_millis(think_ms.max(1)),
        },
        ..Default::default()
    };
    let store = Arc::new(crate::store::memory::MemoryStore::new());
    tokio::spawn(crate::server::serve(listener, store, options, async {
        let _ = stopped.await;
    }));
    let channel = super::connect(&address.to_string(), None, Duration::from_secs(10)).await?;
    Ok((channel, stop))
}

/// How a human's turn ended.
enum Turn {
    /// A move was sent (or the game moved on without it): follow the stream.
    Played,
    /// The player typed `q`.
    Quit,
    /// Standard input closed (Ctrl-D at a terminal).
    InputClosed,
}

struct Table {
    client: Client,
    game_id: String,
    tokens: Vec<(u32, String)>,
    seats: u32,
    input: tokio::io::Lines<BufReader<tokio::io::Stdin>>,
    /// Whether the server runs in this process (it stops when the session ends).
    embedded: bool,
}

impl Table {
    /// What happens to the game when this terminal leaves it.
    fn what_becomes_of_it(&self) -> String {
        if self.embedded {
            "It ends with this session (its server ran in this process).".into()
        } else {
            format!("Game {} stays on the server.", self.game_id)
        }
    }

    fn token(&self, seat: u32) -> Option<&str> {
        self.tokens
            .iter()
            .find(|(s, _)| *s == seat)
            .map(|(_, token)| token.as_str())
    }

    fn authorized<T>(&self, message: T, seat: u32) -> anyhow::Result<tonic::Request<T>> {
        let mut request = tonic::Request::new(message);
        if let Some(token) = self.token(seat) {
            request.metadata_mut().insert(
                "authorization",
                format!("Bearer {token}")
                    .parse()
                    .context("a seat token is ASCII")?,
            );
        }
        Ok(request)
    }

    async fn play(mut self) -> anyhow::Result<()> {
        let mut stream = self
            .client
            .observe(pb::ObserveRequest {
                game_id: self.game_id.clone(),
                from_version: Some(0),
                // The log in sentences, the same words the web client shows.
                narrate: true,
            })
            .await
            .map_err(|status| anyhow::anyhow!("Observe: {}", super::describe_status(&status)))?
            .into_inner();
        while let Some(message) = stream.next().await {
            let message = message.map_err(|status| {
                anyhow::anyhow!("Observe: {}", super::describe_status(&status))
            })?;
            let sentences: Vec<&str> = message
                .events
                .iter()
                .map(|event| event.text.as_str())
                .filter(|text| !text.is_empty())
                .collect();
            for sentence in &sentences {
                say!("  {sentence}");
            }
            if let (Some(logged), true) = (&message.action, sentences.is_empty()) {
                say!("  {}", describe_logged(logged));
            }
            let status = message.status.clone().unwrap_or_default();
            if status.finished {
                self.show_end(&message)?;
                return Ok(());
            }
            let Some(seat) = status.to_act else { continue };
            if self.token(seat).is_none() {
                say!("Waiting for bot seat {seat}...");
                continue;
            }
            match self.human_turn(seat, message.version).await? {
                Turn::Played => {}
                Turn::Quit => {
                    say!("You left the game (q). {}", self.what_becomes_of_it());
                    return Ok(());
                }
                Turn::InputClosed => {
                    // The prompt is still on its line: end it before saying goodbye.
                    say!();
                    say!(
                        "Input closed (Ctrl-D): you left the game. {}",
                        self.what_becomes_of_it()
                    );
                    return Ok(());
                }
            }
        }
        bail!("the server ended the game's stream before the game ended")
    }

    /// The human `seat` moves at `version`.
    async fn human_turn(&mut self, seat: u32, version: u64) -> anyhow::Result<Turn> {
        let request = self.authorized(
            pb::GetViewRequest {
                game_id: self.game_id.clone(),
                version: None,
                // The stream told this client of `version`: any replica that has it may answer.
                min_version: Some(version),
                // The moves in words.
                narrate: true,
                omit_view: false,
            },
            seat,
        )?;
        let view = self
            .client
            .get_view(request)
            .await
            .map_err(|status| anyhow::anyhow!("GetView: {}", super::describe_status(&status)))?
            .into_inner();
        if view.version != version {
            // The stream is behind the game; its next messages catch up.
            return Ok(Turn::Played);
        }
        say!();
        say!("=== version {version}: seat {seat} to act ===");
        if let Some(board) = &view.view {
            say_part!("{}", text::board(board));
        }
        let legal = &view.legal_actions;
        for (index, entry) in legal.iter().enumerate() {
            let action = if entry.label.is_empty() {
                entry.action.as_ref().map(text::action).unwrap_or_default()
            } else {
                entry.label.clone()
            };
            match &entry.amount_range {
                Some(range) => say!(
                    "  {:>3}) {action}  [amount {}..{}]",
                    index + 1,
                    range.min,
                    range.max
                ),
                None => say!("  {:>3}) {action}", index + 1),
            }
        }
        loop {
            let Some(choice) = self
                .ask(&format!(
                    "seat {seat}, your move [1-{}] (q quits)",
                    legal.len()
                ))
                .await?
            else {
                return Ok(Turn::InputClosed);
            };
            if choice.eq_ignore_ascii_case("q") {
                return Ok(Turn::Quit);
            }
            let Some(entry) = choice
                .parse::<usize>()
                .ok()
                .and_then(|number| number.checked_sub(1))
                .and_then(|index| legal.get(index))
            else {
                say!("Type a number from 1 to {}.", legal.len());
                continue;
            };
            let mut action = entry.action.clone().unwrap_or_default();
            if let Some(range) = &entry.amount_range {
                let amount = loop {
                    let Some(answer) = self
                        .ask(&format!("amount [{}..{}]", range.min, range.max))
                        .await?
                    else {
                        return Ok(Turn::InputClosed);
                    };
                    match answer.parse::<u64>() {
                        Ok(amount) if (range.min..=range.max).contains(&amount) => break amount,
                        _ => say!("Type an amount from {} to {}.", range.min, range.max),
                    }
                };
                action = hosting::with_amount(&action, amount);
            }
            let request = self.authorized(
                pb::ActRequest {
                    game_id: self.game_id.clone(),
                    action: Some(action),
                    expected_version: Some(version),
                    request_id: format!("play-{version}"),
                    narrate: false,
                    omit_view: false,
                },
                seat,
            )?;
            match self.client.act(request).await {
                Ok(_) => return Ok(Turn::Played),
                Err(status) => {
                    say!("Refused: {}", super::describe_status(&status));
                    if status.code() == tonic::Code::Aborted
                        || status.code() == tonic::Code::FailedPrecondition
                    {
                        return Ok(Turn::Played);
                    }
                }
            }
        }
    }

    /// Prompts and reads one trimmed line; `None` when standard input closed.
    async fn ask(&mut self, prompt: &str) -> anyhow::Result<Option<String>> {
        say_part!("{prompt}: ");
        Ok(self
            .input
            .next_line()
            .await?
            .map(|line| line.trim().to_owned()))
    }

    fn show_end(&self, message: &pb::ObserveResponse) -> anyhow::Result<()> {
        let status = message.status.clone().unwrap_or_default();
        say!();
        say!("=== game over at version {} ===", message.version);
        if let Some(board) = &message.view {
            say_part!("{}", text::board(board));
        }
        let ending = pb::GameEnding::try_from(status.ending)
            .map(|ending| text::enum_word(ending.as_str_name(), "GameEnding"))
            .unwrap_or_default();
        say!("Ended by: {ending}");
        if !status.abort_reason.is_empty() {
            say!("Reason: {}", status.abort_reason);
        }
        let mut ranking: Vec<(u32, Option<i64>)> = (0..self.seats)
            .map(|seat| (seat, status.scores.get(seat as usize).copied()))
            .collect();
        ranking.sort_by_key(|(seat, score)| {
            (
                !status.winners.contains(seat),
                status.resigned.contains(seat),
                std::cmp::Reverse(*score),
                *seat,
            )
        });
        say!("Ranking:");
        for (place, (seat, score)) in ranking.iter().enumerate() {
            let who = if self.token(*seat).is_some() {
                "human"
            } else {
                "bot"
            };
            let score = score
                .map(|score| format!(", score {score}"))
                .unwrap_or_default();
            let winner = if status.winners.contains(seat) {
                " (winner)"
            } else {
                ""
            };
            say!("  {}. seat {seat} ({who}{score}){winner}", place + 1);
        }
        Ok(())
    }
}

fn describe_logged(logged: &pb::LoggedAction) -> String {
    let action = logged.action.as_ref().map(text::action).unwrap_or_default();
    if logged.system {
        format!("server: {action}")
    } else {
        format!("seat {} played: {action}", logged.seat)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seats_and_games_parse() {
        assert_eq!(parse_seat("Human").expect("human"), Player::Human);
        assert_eq!(
            parse_seat("bot").expect("bot"),
            Player::Bot(pb::BotKind::Search)
        );
        assert!(parse_seat("alien").is_err());
        assert_eq!(game_config("manila", Some(4)).expect("manila").1, 4);
        assert_eq!(game_config("medici-vs-strozzi", None).expect("medici").1, 2);
        assert!(game_config("medici", Some(3)).is_err());
        assert!(game_config("manila", Some(6)).is_err());
        assert_eq!(game_config("la-strada", None).expect("la strada").1, 2);
        assert!(game_config("chess", None).is_err());
    }
}
