//! `tabula play` driven through a real pseudo-terminal (openpty): the process sees a terminal on
//! its standard input and output, as a person at a keyboard would give it. A few Manila moves
//! against three search bots (the bots answer on their own), and a whole Medici vs Strozzi game,
//! human against a search bot, to the ranking.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TABULA: &str = env!("CARGO_BIN_EXE_tabula");

/// A process on a pseudo-terminal, and everything it has printed so far.
struct Terminal {
    child: Child,
    master: File,
    output: Arc<Mutex<String>>,
    /// How much of the output the test has read past.
    cursor: usize,
}

impl Terminal {
    fn spawn(args: &[&str]) -> Terminal {
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes two new descriptors into the integers it is given; the null
        // name, termios and window size pointers are allowed ("use the defaults").
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both descriptors were just opened by openpty and are owned by nobody else.
        let (master, slave) = unsafe { (File::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let child = Command::new(TABULA)
            .args(args)
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave))
            .spawn()
            .expect("tabula play starts");
        let output = Arc::new(Mutex::new(String::new()));
        let mut reader = master.try_clone().expect("dup master");
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            // Ends when the process's side of the terminal closes (EIO) or on EOF.
            while let Ok(read) = reader.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                sink.lock()
                    .expect("output")
                    .push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        });
        Terminal {
            child,
            master,
            output,
            cursor: 0,
        }
    }

    /// Waits for the first of `patterns` after the cursor; moves the cursor past it and returns
    /// its index and the text from the cursor to the end of the match.
    fn expect_any(&mut self, patterns: &[&str], within: Duration) -> (usize, String) {
        let deadline = Instant::now() + within;
        loop {
            {
                let output = self.output.lock().expect("output");
                let rest = &output[self.cursor..];
                let found = patterns
                    .iter()
                    .enumerate()
                    .filter_map(|(index, pattern)| rest.find(pattern).map(|at| (at, index)))
                    .min();
                if let Some((at, index)) = found {
                    let end = at + patterns[index].len();
                    let text = rest[..end].to_owned();
                    self.cursor += end;
                    return (index, text);
                }
                assert!(
                    Instant::now() < deadline,
                    "none of {patterns:?} within {within:?}; the output ends with:\n{}",
                    &output[output.len().saturating_sub(3000)..]
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The rest of the current line after the cursor, once it is complete... or the prompt's
    /// remainder up to `until`.
    fn read_until(&mut self, until: &str, within: Duration) -> String {
        let (_, text) = self.expect_any(&[until], within);
        text
    }

    fn send(&mut self, line: &str) {
        self.master
            .write_all(format!("{line}\n").as_bytes())
            .expect("typing into the terminal");
    }

    fn wait(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(Instant::now() < deadline, "tabula play did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn output(&self) -> String {
        self.output.lock().expect("output").clone()
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const STEP: Duration = Duration::from_secs(60);

/// Answers the prompt just matched: the first legal action, or the smallest amount.
fn answer(terminal: &mut Terminal, prompt: usize) {
    match prompt {
        // "your move [1-": pick the first entry.
        0 => {
            terminal.read_until("(q quits): ", STEP);
            terminal.send("1");
        }
        // "amount [": the range's minimum.
        1 => {
            let range = terminal.read_until("]: ", STEP);
            let min = range
                .split("..")
                .next()
                .and_then(|min| min.trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("an amount range, not {range:?}"));
            terminal.send(&min.to_string());
        }
        other => unreachable!("prompt {other}"),
    }
}

#[test]
fn a_few_manila_moves_against_three_bots() {
    let mut terminal = Terminal::spawn(&[
        "play",
        "--game",
        "manila",
        "--players",
        "4",
        "--seats",
        "human,bot,bot,bot",
        "--bot-iterations",
        "10",
        "--seed",
        "3",
    ]);
    terminal.expect_any(&["seat 0 human, seat 1 search bot"], STEP);
    let mut moves = 0;
    while moves < 4 {
        let (prompt, text) = terminal.expect_any(&["your move [1-", "amount ["], STEP);
        if prompt == 0 {
            // The board and the numbered actions come before each prompt.
            assert!(text.contains("=== version"), "{text}");
            assert!(text.contains("  1) "), "{text}");
            moves += 1;
        }
        answer(&mut terminal, prompt);
    }
    let output = terminal.output();
    // The log is in sentences naming the seats (the server's narration), not field dumps.
    for seat in 0..4 {
        assert!(
            output.contains(&format!("  Seat {seat} ")),
            "seat {seat}'s moves are told in sentences:\n{output}"
        );
    }
    assert!(!output.contains("played: "), "{output}");
    terminal.expect_any(&["your move [1-"], STEP);
    terminal.read_until("(q quits): ", STEP);
    terminal.send("q");
    terminal.expect_any(&["You left the game (q). It ends with this session"], STEP);
    assert!(terminal.wait(STEP).success());
}

/// Ctrl-D at the prompt (end of input) leaves with a message on a line of its own.
#[test]
fn end_of_input_leaves_the_game_with_a_message() {
    let mut terminal = Terminal::spawn(&[
        "play",
        "--game",
        "medici-vs-strozzi",
        "--seats",
        "human,random",
        "--seed",
        "2",
    ]);
    terminal.expect_any(&["your move [1-"], STEP);
    terminal.read_until("(q quits): ", STEP);
    // Ctrl-D at the start of a line: the terminal ends the input.
    terminal
        .master
        .write_all(&[4])
        .expect("typing Ctrl-D into the terminal");
    let (_, text) = terminal.expect_any(&["Input closed (Ctrl-D): you left the game."], STEP);
    assert!(
        text.trim_end_matches("Input closed (Ctrl-D): you left the game.")
            .ends_with('\n'),
        "the message starts its own line: {text:?}"
    );
    assert!(terminal.wait(STEP).success());
}

/// `tabula play … | head`: the reader leaves early, and the client ends quietly (no panic, no
/// error) at its next write.
#[test]
fn a_closed_pipe_ends_the_session_quietly() {
    let mut child = Command::new(TABULA)
        .args([
            "play",
            "--game",
            "medici-vs-strozzi",
            "--seats",
            "human,random",
            "--seed",
            "4",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tabula play starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stdin = child.stdin.take().expect("stdin");
    // What `head -c 256` does: read a little, then close the pipe. The client is then at its
    // prompt; the move typed next makes it write again, to nobody.
    let mut first = [0u8; 256];
    let read = stdout.read(&mut first).expect("the first output");
    assert!(read > 0);
    drop(stdout);
    // (It may already have met the closed pipe and left: then nobody reads this either.)
    let _ = stdin.write_all(b"1\n").and_then(|()| stdin.flush());
    let deadline = Instant::now() + STEP;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "tabula play did not notice the closed pipe"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(status.success(), "{status:?}: {stderr}");
}

#[test]
fn a_whole_medici_vs_strozzi_game_against_a_search_bot() {
    let mut terminal = Terminal::spawn(&[
        "play",
        "--game",
        "medici-vs-strozzi",
        "--seats",
        "human,bot",
        "--bot-iterations",
        "10",
        "--seed",
        "5",
    ]);
    let mut moves = 0;
    loop {
        let (prompt, _) =
            terminal.expect_any(&["your move [1-", "amount [", "=== game over"], STEP);
        if prompt == 2 {
            break;
        }
        moves += usize::from(prompt == 0);
        answer(&mut terminal, prompt);
        assert!(moves < 5000, "the game does not end");
    }
    let ranking = terminal.read_until("\n  2. seat", STEP);
    assert!(ranking.contains("Ranking:"), "{ranking}");
    assert!(ranking.contains("  1. seat"), "{ranking}");
    assert!(terminal.wait(STEP).success());
    let output = terminal.output();
    assert!(moves > 0);
    assert!(
        output.contains("  Strozzi "),
        "the bot's moves are told:\n{output}"
    );
}
