//! `drop7 show TAPE | --seed S --policy P`: a game move by move in the
//! terminal (ratatui): coloured discs, solid and cracked grays, score, level,
//! drops to the rise, the move's waves. Arrow keys step, space plays at
//! `--speed`; a step forward animates the move (the disc landing, each wave's
//! pops, cracks and reveals, each fall, the rise; frames from
//! [`drop7::frames`], `--wave-ms` each). `q` (or Esc, Ctrl-C) quits and
//! restores the terminal. `--plain` prints every position as text instead (no
//! terminal needed; for tests and pipes).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::Args;
use drop7::board::{CELLS, SIZE};
use drop7::cascade::Wave;
use drop7::formats::parse_seed;
use drop7::game::DriverKind;
use drop7::gravity::Portable;
use drop7::latent::{CoreEngine, TrackedGame};
use drop7::runner::{EngineGame, PackedEngine, Policy};
use drop7::tape::replay;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use super::spec::{GameArgs, with_policy};

/// Options of `drop7 show`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["tape", "seed"])))]
pub struct ShowArgs {
    /// A recorded tape to show (else a game is played from --seed).
    #[arg(value_name = "TAPE")]
    tape: Option<PathBuf>,
    /// Play and show the game of this seed (decimal or 0x hex).
    #[arg(long, value_name = "SEED", allow_hyphen_values = true)]
    seed: Option<String>,
    /// Policy of a played game: center, random, greedy, fair, fair:dDsS or d7p:"COMMAND".
    #[arg(long, default_value = "center", value_name = "POLICY")]
    policy: String,
    /// Driver of a played game: headless or stream.
    #[arg(long, default_value = "headless", value_name = "DRIVER")]
    driver: String,
    /// Move cap of a played game.
    #[arg(
        long,
        default_value_t = 2000,
        value_name = "M",
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    max_moves: u32,
    /// Print the board after every move (and the opening) as plain text and exit (no terminal needed).
    #[arg(long)]
    plain: bool,
    /// Milliseconds per move when playing (space toggles play); a value under
    /// 10 plays at 10.
    #[arg(
        long,
        default_value_t = 400,
        value_name = "MS",
        allow_negative_numbers = true
    )]
    speed: u64,
    /// Milliseconds each animation frame of a move is shown (the disc landing,
    /// each wave's pops and falls, the rise) when stepping forward; 0 turns the
    /// animation off.
    #[arg(
        long,
        default_value_t = 120,
        value_name = "MS",
        allow_negative_numbers = true
    )]
    wave_ms: u64,
}

/// The move that led to a frame: column, disc, scoreDelta, waves, terminal reason.
type LastMove = (usize, u8, u64, Vec<Wave>, Option<&'static str>);

/// One frame: the state after `moves` moves.
struct Frame {
    moves: u32,
    cells: [u8; CELLS],
    score: u64,
    level: u32,
    rise: u8,
    next: Option<u8>,
    /// (column, disc, scoreDelta, waves, terminal reason) of the move that led here.
    last: Option<LastMove>,
    /// Animation frames of that move (empty for the opening position).
    steps: Vec<drop7::frames::Frame>,
    /// On the last frame of a game that is not over: why it stopped.
    stopped: Option<Stopped>,
}

/// Why a game that is not over stops (the last frame's note).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stopped {
    /// `--seed` play reached `--max-moves` (the value).
    Cap(u32),
    /// The tape ends before the game does (`replay`'s `incomplete-game`);
    /// `next_known`: the tape holds the disc after its last move (drop7's
    /// tapes hold only the discs dropped, so the header says `next ?`).
    TapeEnds { next_known: bool },
}

fn frame<G: EngineGame>(g: &G, last: Option<LastMove>) -> Frame {
    let p = g.position();
    Frame {
        moves: g.moves_played(),
        cells: p.board.to_cells(),
        score: g.score(),
        level: g.level(),
        rise: p.moves_remaining,
        next: (!p.game_over).then_some(p.next_disc),
        last,
        steps: Vec::new(),
        stopped: None,
    }
}

/// Plays `columns` (or asks `choose`) on `game`, collecting frames.
fn collect<C: drop7::latent::EngineCore>(
    mut game: TrackedGame<C>,
    max_moves: u32,
    mut choose: impl FnMut(&TrackedGame<C>) -> Option<usize>,
) -> Vec<Frame> {
    let mut frames = vec![frame(&game, None)];
    while game.moves_played() < max_moves && !game.position().game_over {
        let Some(c) = choose(&game) else { break };
        let before = game.position();
        let disc = before.next_disc;
        let mut waves = Vec::new();
        let mut reveals = Vec::new();
        let Ok(s) = game.play_move_logged(c, &mut waves, &mut reveals) else {
            break;
        };
        let term = s.terminal.map(|t| t.as_str());
        let mut f = frame(&game, Some((c, disc, s.score_delta, waves, term)));
        // The animation is drawn from the core's reveals and checked against
        // the core's board; a disagreement (a bug) just shows no animation.
        if let Some(m) = drop7::frames::play(
            &before.board.to_cells(),
            before.moves_remaining,
            c,
            disc,
            &reveals,
        ) && m.frames.last().map(|x| x.board.as_str())
            == Some(drop7::frames::board_text(&f.cells).as_str())
        {
            f.steps = m.frames;
        }
        frames.push(f);
    }
    if game.moves_played() >= max_moves
        && !game.position().game_over
        && let Some(last) = frames.last_mut()
    {
        last.stopped = Some(Stopped::Cap(max_moves));
    }
    frames
}

fn from_tape(path: &std::path::Path) -> Result<(String, Vec<Frame>)> {
    let bytes =
        super::read_capped(path).with_context(|| format!("cannot read tape {}", path.display()))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let what = super::not_utf8(e.as_bytes());
        anyhow!("tape {}: {what}", path.display())
    })?;
    let rep = replay(PackedEngine(Portable), &text);
    if !rep.valid && rep.failure.as_deref() != Some("incomplete-game") {
        bail!(
            "tape {}: {} ({})",
            path.display(),
            rep.failure.unwrap_or_default(),
            rep.error.unwrap_or_default()
        );
    }
    let v: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{FEFF}'))?;
    let nums = |k: &str| -> Vec<u8> {
        v[k].as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_u64())
                    .map(|x| x as u8)
                    .collect()
            })
            .unwrap_or_default()
    };
    let columns = nums("columns");
    let discs = nums("discs");
    let next_known = discs.len() > columns.len();
    let rows: Vec<[u8; SIZE]> = serde_json::from_value(v["coveredRows"].clone())
        .map_err(|e| anyhow!("tape {}: coveredRows: {e}", path.display()))?;
    let game = TrackedGame::latent_with(PackedEngine(Portable), rows, discs, 1);
    let mut i = 0;
    let mut frames = collect(game, u32::MAX, |_| {
        i += 1;
        columns.get(i - 1).map(|&c| usize::from(c))
    });
    // A game stopped by a move cap, or a cut tape: the last frame says so.
    if !rep.valid
        && let Some(last) = frames.last_mut()
    {
        last.stopped = Some(Stopped::TapeEnds { next_known });
    }
    // What the tape says of itself (drop7's tapes name these; other
    // writers' may not): round, seed, policy, driver.
    let mut about: Vec<String> = Vec::new();
    for (key, label) in [
        ("round", "round"),
        ("seed", "seed"),
        ("policy", "policy"),
        ("driver", "driver"),
    ] {
        if let Some(x) = v[key].as_str() {
            // Quoted as JSON: a control character stays on one line.
            let shown = serde_json::to_string(x).unwrap_or_default();
            let shown = if x.chars().any(super::hides_text) {
                shown.as_str()
            } else {
                x
            };
            about.push(format!("{label} {shown}"));
        }
    }
    let title = if about.is_empty() {
        format!("tape {}", path.display())
    } else {
        format!("tape {} ({})", path.display(), about.join(", "))
    };
    Ok((title, frames))
}

/// The game of `--seed`: its title, its frames and the error to report
/// after showing it (a D7P engine given up).
fn from_seed(args: &ShowArgs, seed: &str) -> Result<(String, Vec<Frame>, Option<anyhow::Error>)> {
    let seed = parse_seed(seed).map_err(|e| anyhow!("--seed: {e}"))?;
    let game_args = GameArgs {
        policy: args.policy.clone(),
        table: None,
        max_work: None,
        driver: args.driver.clone(),
        seed_start: seed.to_string(),
        max_moves: args.max_moves,
        engine: "packed".into(),
        gravity: Some("portable".into()),
    };
    let setup = game_args.resolve(1)?;
    super::d7p::kill_engines_of(&setup.policy)?;
    // Before the game is played, which can take minutes.
    need_terminal(args)?;
    let engine = PackedEngine(Portable);
    // The whole game is played before the first picture: a searching policy
    // (fair, or an external engine) takes seconds to minutes, so say so.
    let slow = matches!(
        setup.policy,
        super::spec::PolicySpec::Fair(_) | super::spec::PolicySpec::D7p(_)
    );
    let progress = slow && io::stderr().is_terminal();
    let played = with_policy!(setup, |make| {
        let mut policy = make();
        policy.new_game(seed);
        let game = start(engine, setup.driver, seed);
        let mut moves = 0u32;
        let frames = collect(game, setup.max_moves, |g| {
            if progress {
                eprint!(
                    "\rshow       playing the game before showing it ({} searches every move): move {}",
                    setup.policy,
                    moves + 1
                );
                moves += 1;
            }
            policy.choose_in(g)
        });
        (frames, policy.game_tallies())
    });
    if progress {
        eprint!("{}", super::CLEAR_LINE);
    }
    let (frames, tallies) = played?;
    let mut title = format!(
        "seed 0x{seed:08x}, policy {}, driver {}",
        setup.policy,
        setup.driver.as_str()
    );
    // A D7P engine that failed or chose a full column: its moves were the
    // first legal column's, which the title says; an engine given up is an
    // error once the game has been shown (exit 1, as `play` and `trace`).
    if let Some((failures, illegal)) = tallies.filter(|&(f, i)| f + i > 0) {
        title.push_str(&format!(
            ", {}, {}: first legal column played",
            super::count(failures, "engine failure"),
            super::count(illegal, "illegal choice")
        ));
    }
    let after = match &setup.policy {
        super::spec::PolicySpec::D7p(cmd) => super::d7p::check_gave_up(cmd).err(),
        _ => None,
    };
    Ok((title, frames, after))
}

/// The interactive viewer's one requirement (`--plain` has none).
fn need_terminal(args: &ShowArgs) -> Result<()> {
    if !args.plain && !io::stdout().is_terminal() {
        bail!("drop7 show needs a terminal (use --plain for a text dump)");
    }
    Ok(())
}

fn start<E: CoreEngine>(engine: E, driver: DriverKind, seed: u32) -> TrackedGame<E::Core> {
    match driver {
        DriverKind::Headless => TrackedGame::headless(engine, seed),
        DriverKind::Stream => TrackedGame::stream(engine, seed),
    }
}

/// Runs `drop7 show`.
pub fn run(args: &ShowArgs) -> Result<()> {
    let (title, frames, after) = match (&args.tape, &args.seed) {
        (Some(t), _) => {
            let (title, frames) = from_tape(t)?;
            (title, frames, None)
        }
        (None, Some(s)) => from_seed(args, s)?,
        (None, None) => bail!("give a TAPE file or --seed S (with --policy P)"),
    };
    let shown = show(args, &title, &frames);
    match after {
        Some(e) => shown.and(Err(e)),
        None => shown,
    }
}

/// Shows the frames: a text dump (`--plain`) or the interactive viewer.
fn show(args: &ShowArgs, title: &str, frames: &[Frame]) -> Result<()> {
    if args.plain {
        let mut o = Vec::new();
        writeln!(o, "{title}: {}", super::count(frames.len() - 1, "move"))?;
        writeln!(
            o,
            "legend: . empty, 1-7 numbered disc, # solid gray, % cracked gray"
        )?;
        for f in frames {
            writeln!(o)?;
            for l in header(f, frames.len() - 1, None) {
                writeln!(o, "{l}")?;
            }
            for r in 0..SIZE {
                let row: Vec<String> = (0..SIZE)
                    .map(|c| plain_cell(f.cells[r * SIZE + c]).to_string())
                    .collect();
                writeln!(o, "  {}", row.join(" "))?;
            }
            // Column numbers, as the header's "in column C" counts them.
            writeln!(o, "  0 1 2 3 4 5 6")?;
        }
        let mut stdout = io::stdout().lock();
        return stdout
            .write_all(&o)
            .and_then(|()| stdout.flush())
            .context("writing to stdout");
    }
    need_terminal(args)?;
    interactive(
        title,
        frames,
        Duration::from_millis(args.speed.max(10)),
        Duration::from_millis(args.wave_ms),
    )
}

fn plain_cell(v: u8) -> char {
    match v {
        0 => '.',
        8 => '#',
        9 => '%',
        d => char::from(b'0' + d),
    }
}

/// The text lines above the board of a frame. `before` is the frame before
/// it while the move into `f` is being animated: the score and level are
/// then still those before the move (its points and any level are paid when
/// the animation ends), and the first line says so.
fn header(f: &Frame, total: usize, before: Option<&Frame>) -> Vec<String> {
    // While the move is animated, the whole position line is the one before
    // it (the disc shown as next is the one falling), but for the move count.
    let (shown, pending) = match (before, &f.last) {
        // (A move that scores nothing has nothing to come.)
        (Some(b), Some((_, _, 0, _, _))) => (b, String::new()),
        (Some(b), Some((_, _, delta, _, _))) => (b, format!(" (+{delta} when the move ends)")),
        _ => (f, String::new()),
    };
    let next = match (shown.next, shown.stopped) {
        (Some(_), Some(Stopped::TapeEnds { next_known: false })) => "?".to_string(),
        (Some(n), _) => n.to_string(),
        (None, _) => "-".to_string(),
    };
    let mut lines = vec![format!(
        "move {}/{total}  score {}{pending}  level {}  rise in {}  next {next}",
        f.moves, shown.score, shown.level, shown.rise
    )];
    match &f.last {
        None => lines.push("opening position".into()),
        Some((c, d, delta, waves, term)) => {
            let mut s = format!("dropped {d} in column {c}: +{delta}");
            let bonus = bonus_words(delta.saturating_sub(waves.iter().map(|w| w.points).sum()));
            if !bonus.is_empty() {
                s.push_str(&format!(" ({bonus})"));
            }
            if let Some(t) = term {
                s.push_str(&format!("  GAME OVER ({t})"));
            }
            match f.stopped {
                Some(Stopped::Cap(cap)) => {
                    s.push_str(&format!("  STOPPED by the move cap (--max-moves {cap})"));
                }
                Some(Stopped::TapeEnds { .. }) => {
                    s.push_str("  TAPE ENDS, game not over (incomplete-game)");
                }
                None => {}
            }
            lines.push(s);
            let w: Vec<String> = waves
                .iter()
                .map(|w| {
                    let mut s = format!("wave {}: {} popped +{}", w.depth, w.cleared, w.points);
                    if w.revealed > 0 {
                        s.push_str(&format!(", {} revealed", w.revealed));
                    }
                    s
                })
                .collect();
            lines.push(if w.is_empty() {
                "no waves".into()
            } else {
                w.join(" | ")
            });
        }
    }
    lines
}

/// A move's points beyond its waves' in words: the 17,000 level bonus of a
/// rise and the 70,000 bonus of each emptied board (rules.md: a move can
/// empty the board after its waves and again after the rise's cascade).
fn bonus_words(bonus: u64) -> String {
    const LEVEL: u64 = 17_000;
    const CLEAR: u64 = 70_000;
    let (level, clears) = if bonus % CLEAR == LEVEL {
        (1, (bonus - LEVEL) / CLEAR)
    } else {
        (0, bonus / CLEAR)
    };
    if level * LEVEL + clears * CLEAR != bonus {
        return format!("+{bonus} bonus");
    }
    let mut parts = Vec::new();
    if level == 1 {
        parts.push(format!("+{LEVEL} level bonus"));
    }
    match clears {
        0 => {}
        1 => parts.push(format!("+{CLEAR} clear bonus")),
        n => parts.push(format!("+{} clear bonus ×{n}", CLEAR * n)),
    }
    parts.join(", ")
}

fn disc_style(v: u8) -> (String, Style) {
    let colour = match v {
        1 => Color::Green,
        2 => Color::Yellow,
        // Orange (xterm-256 colour 208): light yellow was hard to tell from 2.
        3 => Color::Indexed(208),
        4 => Color::Red,
        5 => Color::Magenta,
        6 => Color::Cyan,
        7 => Color::Blue,
        _ => Color::Reset,
    };
    match v {
        0 => (" · ".into(), Style::default().fg(Color::DarkGray)),
        8 => (
            " ■ ".into(),
            Style::default().fg(Color::White).bg(Color::DarkGray),
        ),
        9 => (
            " □ ".into(),
            Style::default().fg(Color::White).bg(Color::DarkGray),
        ),
        d => (
            format!(" {d} "),
            Style::default()
                .fg(Color::Black)
                .bg(colour)
                .add_modifier(Modifier::BOLD),
        ),
    }
}

/// What an animation frame shows, in words.
fn step_caption(s: &drop7::frames::Frame) -> String {
    match s.kind {
        "drop" => "the disc lands".into(),
        "pop" => {
            let mut t = format!("wave {}: {} pop", s.depth, s.popped.len());
            if !s.changed.is_empty() {
                t.push_str(&format!(", {} gray hit", s.changed.len()));
            }
            t
        }
        "fall" => format!("wave {}: the discs above fall", s.depth),
        "rise" => "the rise: a row of solid grays comes up".into(),
        k => k.to_string(),
    }
}

/// Cells of an animation frame's 49-character board.
fn step_cells(s: &drop7::frames::Frame) -> [u8; CELLS] {
    let mut cells = [0u8; CELLS];
    for (c, b) in cells.iter_mut().zip(s.board.bytes()) {
        *c = b.wrapping_sub(b'0');
    }
    cells
}

fn interactive(title: &str, frames: &[Frame], speed: Duration, wave: Duration) -> Result<()> {
    let signal = viewer_signals()?;
    let mut terminal = ratatui::try_init().context("cannot start the terminal UI")?;
    let result = (|| -> Result<()> {
        // Keys typed while the game was being played (a queued `q` would
        // quit the moment the viewer appears) are dropped.
        while event::poll(Duration::ZERO)? {
            event::read()?;
        }
        let mut at = 0usize;
        let mut playing = false;
        let mut speed = speed;
        let mut last_step = Instant::now();
        let total = frames.len() - 1;
        // The animation of the move into frame `at`: (step, when it started).
        let mut anim: Option<(usize, Instant)> = None;
        loop {
            let f = &frames[at];
            if let Some((i, t)) = anim
                && t.elapsed() >= wave
            {
                anim = (i + 1 < f.steps.len()).then(|| (i + 1, Instant::now()));
            }
            let step = anim.map(|(i, _)| &f.steps[i]);
            let (cells, marked, hit) = match step {
                Some(s) => (step_cells(s), s.popped.clone(), s.changed.clone()),
                None => (f.cells, Vec::new(), Vec::new()),
            };
            terminal.draw(|fr| {
                let area = fr.area();
                // The header, the bordered board and a line of help.
                let (need_w, need_h) = ((SIZE as u16) * 3 + 2, 5 + SIZE as u16 + 2 + 1);
                if area.width < need_w || area.height < need_h {
                    fr.render_widget(
                        Paragraph::new(format!(
                            "terminal too small: {}x{}, need {need_w}x{need_h} (q quits)",
                            area.width, area.height
                        ))
                        .wrap(ratatui::widgets::Wrap { trim: true }),
                        area,
                    );
                    return;
                }
                let [top, board_area, help] = Layout::vertical([
                    Constraint::Length(5),
                    Constraint::Length(SIZE as u16 + 2),
                    Constraint::Min(1),
                ])
                .areas(area);
                let mut lines: Vec<Line> = vec![Line::from(Span::styled(
                    title.to_string(),
                    Style::default().add_modifier(Modifier::BOLD),
                ))];
                // While the move into `at` is animated, the score and level
                // before it (the board is not there yet).
                let before = step.and(at.checked_sub(1)).map(|b| &frames[b]);
                lines.extend(header(f, total, before).into_iter().map(Line::from));
                if let Some(s) = step {
                    lines.push(Line::from(Span::styled(
                        format!("▶ {}", step_caption(s)),
                        Style::default().add_modifier(Modifier::BOLD),
                    )));
                }
                fr.render_widget(Paragraph::new(lines), top);
                let rows: Vec<Line> = (0..SIZE)
                    .map(|r| {
                        Line::from(
                            (0..SIZE)
                                .map(|c| {
                                    let i = r * SIZE + c;
                                    let (mut t, mut s) = disc_style(cells[i]);
                                    if marked.contains(&i) {
                                        // The landing disc, or a popped cell.
                                        if cells[i] == 0 {
                                            t = " ✶ ".into();
                                        }
                                        // White: no disc has it (a light
                                        // red was a 4's colour).
                                        s = s
                                            .fg(Color::Black)
                                            .bg(Color::White)
                                            .add_modifier(Modifier::BOLD);
                                    } else if hit.contains(&i) {
                                        s = s.add_modifier(Modifier::UNDERLINED | Modifier::BOLD);
                                    }
                                    Span::styled(t, s)
                                })
                                .collect::<Vec<_>>(),
                        )
                    })
                    .collect();
                let board = Paragraph::new(rows)
                    .block(
                        Block::default()
                            .borders(Borders::ALL)
                            .title(" board ")
                            // Column numbers under the cells (3 columns each).
                            .title_bottom(" 0  1  2  3  4  5  6 "),
                    );
                let w = (SIZE as u16) * 3 + 2;
                let board_rect = ratatui::layout::Rect {
                    width: w.min(board_area.width),
                    ..board_area
                };
                fr.render_widget(board, board_rect);
                let state = if playing { "playing" } else { "paused" };
                fr.render_widget(
                    // The keys first: in a short terminal the wrapped
                    // legend is what is cut.
                    Paragraph::new(vec![
                        Line::from(format!(
                            "←/→ step  Home/End first/last  space play/pause ({state}, {} ms/move)  +/- speed  q quit",
                            speed.as_millis()
                        )),
                        Line::from("■ solid gray  □ cracked gray  1-7 numbered discs  white: landing or popping, underlined: gray hit"),
                    ])
                    .wrap(ratatui::widgets::Wrap { trim: true }),
                    help,
                );
            })?;
            if let Some(stopped) = interrupted_by(&signal) {
                return Err(stopped.into());
            }
            // At most SIGNAL_CHECK between looks at `signal` (the loop
            // redraws and checks the clock, so nothing else changes).
            let timeout = match anim {
                Some((_, t)) => wave.saturating_sub(t.elapsed()),
                None if playing => speed.saturating_sub(last_step.elapsed()),
                None => Duration::from_millis(250),
            }
            .min(SIGNAL_CHECK);
            if event::poll(timeout)? {
                if let Event::Key(k) = event::read()?
                    && k.kind != KeyEventKind::Release
                {
                    // A key ends a running animation; stepping forward starts one.
                    anim = None;
                    let was = at;
                    match k.code {
                        KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                        // Raw mode: Ctrl-C arrives as a key, and quits too.
                        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                            return Ok(());
                        }
                        KeyCode::Right | KeyCode::Char('l') => at = (at + 1).min(total),
                        KeyCode::Left | KeyCode::Char('h') => at = at.saturating_sub(1),
                        KeyCode::Home => at = 0,
                        KeyCode::End => at = total,
                        KeyCode::Char(' ') => {
                            playing = !playing;
                            last_step = Instant::now();
                        }
                        KeyCode::Char('+') => speed = (speed / 2).max(Duration::from_millis(10)),
                        // Slower, up to 10 s a move (a slower --speed stays).
                        KeyCode::Char('-') => {
                            speed = (speed * 2).min(Duration::from_secs(10)).max(speed);
                        }
                        _ => {}
                    }
                    if at == was + 1 && !wave.is_zero() && !frames[at].steps.is_empty() {
                        anim = Some((0, Instant::now()));
                    }
                }
            } else if anim.is_none() && playing && last_step.elapsed() >= speed {
                last_step = Instant::now();
                if at < total {
                    at += 1;
                    if !wave.is_zero() && !frames[at].steps.is_empty() {
                        anim = Some((0, Instant::now()));
                    }
                } else {
                    playing = false;
                }
            }
        }
    })();
    ratatui::restore();
    result
}

/// How often the viewer looks for a signal (see [`viewer_signals`]).
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// How long after a signal the watcher thread waits for the viewer to end
/// by itself before it restores the terminal and exits (see
/// [`viewer_signals`]).
const SIGNAL_GRACE: Duration = Duration::from_millis(400);

/// The signal (SIGTERM, SIGHUP, SIGINT or SIGQUIT from outside: in raw mode
/// Ctrl-C and Ctrl-\ are keys) that asked the viewer to end, 0 while none
/// has. Caught so that the terminal is restored first (a `kill`, `timeout`
/// or a closed ssh session left it raw, in the alternate screen, the
/// cursor hidden); the exit status is 128 + its number. SIGHUP left ignored
/// (`nohup`) stays so.
type ViewerSignal = std::sync::Arc<std::sync::atomic::AtomicUsize>;

/// Starts a thread that takes those signals: it sets the flag the viewer's
/// loop checks, and if the viewer has not ended [`SIGNAL_GRACE`] later (a
/// terminal that is gone leaves the key reader spinning on end of file,
/// never back in the loop) it restores what it can of the terminal and
/// exits itself.
#[cfg(unix)]
fn viewer_signals() -> Result<ViewerSignal> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let which = ViewerSignal::default();
    let caught: Vec<i32> = [SIGTERM, SIGHUP, SIGINT, SIGQUIT]
        .into_iter()
        .filter(|&sig| !(sig == SIGHUP && super::d7p::signal_ignored(sig)))
        .collect();
    let mut signals =
        signal_hook::iterator::Signals::new(&caught).context("installing signal handlers")?;
    let flag = which.clone();
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            flag.store(sig as usize, std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(SIGNAL_GRACE);
            ratatui::restore();
            if let Some(e) = interrupted_by(&flag) {
                // Not `eprintln!`, which panics when stderr is a terminal
                // that is gone: this thread must reach the exit.
                let _ = writeln!(io::stderr(), "error: {e}");
                std::process::exit(i32::from(e.status));
            }
        }
    });
    Ok(which)
}

/// No signals are caught off unix.
#[cfg(not(unix))]
fn viewer_signals() -> Result<ViewerSignal> {
    Ok(ViewerSignal::default())
}

/// The error that ends the viewer once `signal` is set.
fn interrupted_by(signal: &ViewerSignal) -> Option<super::ExitWith> {
    let sig = signal.load(std::sync::atomic::Ordering::SeqCst);
    if sig == 0 {
        return None;
    }
    // (Only the four of `viewer_signals` are ever set.)
    #[cfg(unix)]
    let name = super::signal_name(sig as i32).unwrap_or("a signal");
    #[cfg(not(unix))]
    let name = "a signal";
    Some(super::ExitWith {
        status: 128 + sig as u8,
        message: format!("drop7 show: interrupted by {name}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A wave of `points` (its depth and count do not matter here).
    fn wave(points: u64) -> Wave {
        Wave {
            depth: 1,
            cleared: 1,
            points,
            ..Wave::default()
        }
    }

    fn frame_with(moves: u32, score: u64, level: u32, last: Option<LastMove>) -> Frame {
        Frame {
            moves,
            cells: [0; CELLS],
            score,
            level,
            rise: 4,
            next: Some(3),
            last,
            steps: Vec::new(),
            stopped: None,
        }
    }

    #[test]
    fn header_shows_the_score_before_the_move_while_it_is_animated() {
        let mut before = frame_with(6, 1_200, 2, None);
        let after = frame_with(7, 1_540, 3, Some((3, 5, 340, vec![wave(340)], None)));
        let done = header(&after, 40, None);
        assert_eq!(done[0], "move 7/40  score 1540  level 3  rise in 4  next 3");
        assert_eq!(done[1], "dropped 5 in column 3: +340");
        (before.rise, before.next) = (1, Some(5));
        let animated = header(&after, 40, Some(&before));
        // All of the position line is the one before the move: the disc
        // falling is the one shown as next.
        assert_eq!(
            animated[0],
            "move 7/40  score 1200 (+340 when the move ends)  level 2  rise in 1  next 5"
        );
        assert_eq!(animated[1..], done[1..]);
        // A move that scores nothing says nothing of points to come.
        let quiet = frame_with(7, 1_200, 2, Some((3, 5, 0, vec![], None)));
        assert_eq!(
            header(&quiet, 40, Some(&before))[0],
            "move 7/40  score 1200  level 2  rise in 1  next 5"
        );
        // The opening position has no move to animate.
        let opening = header(&before, 40, Some(&before));
        assert_eq!(
            opening[0],
            "move 6/40  score 1200  level 2  rise in 1  next 5"
        );
    }

    /// The last frame of a game stopped by the move cap says so (a game
    /// that ended says GAME OVER instead).
    #[test]
    fn a_game_stopped_by_the_move_cap_says_so() {
        let game = start(PackedEngine(Portable), DriverKind::Headless, 1);
        let frames = collect(game, 3, |_| Some(3));
        assert_eq!(frames.len(), 4);
        assert_eq!(frames[3].stopped, Some(Stopped::Cap(3)));
        assert!(frames[..3].iter().all(|f| f.stopped.is_none()));
        let last = header(&frames[3], 3, None);
        assert!(
            last[1].ends_with("  STOPPED by the move cap (--max-moves 3)"),
            "{last:?}"
        );
        // Played to its end under a cap it never reaches: no mark.
        let game = start(PackedEngine(Portable), DriverKind::Headless, 1);
        let frames = collect(game, 10_000, |_| Some(3));
        assert!(frames.iter().all(|f| f.stopped.is_none()));
    }

    #[test]
    fn bonuses_are_named() {
        assert_eq!(bonus_words(0), "");
        assert_eq!(bonus_words(17_000), "+17000 level bonus");
        assert_eq!(bonus_words(70_000), "+70000 clear bonus");
        assert_eq!(
            bonus_words(87_000),
            "+17000 level bonus, +70000 clear bonus"
        );
        assert_eq!(
            bonus_words(157_000),
            "+17000 level bonus, +140000 clear bonus ×2"
        );
        assert_eq!(bonus_words(140_000), "+140000 clear bonus ×2");
        assert_eq!(bonus_words(5), "+5 bonus");
        let f = frame_with(5, 17_007, 2, Some((4, 5, 17_007, vec![wave(7)], None)));
        assert_eq!(
            header(&f, 9, None)[1],
            "dropped 5 in column 4: +17007 (+17000 level bonus)"
        );
    }
}
