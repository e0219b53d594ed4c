//! Community file formats: the per-move trace line (trace-format.md, block 1)
//! and the per-game record of `drop7 play --out`.

use serde::{Deserialize, Serialize};

use crate::cascade::Wave;

/// One trace line: the golden files' first block of keys, in their order
/// (trace-format.md). Serialises to exactly the golden key order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TraceRecord {
    /// Game seed (u32).
    pub seed: u32,
    /// Moves played after this move (1-based move number).
    #[serde(rename = "move")]
    pub move_number: u32,
    /// Disc dropped.
    pub disc: u8,
    /// Column played, 0..6.
    pub column: usize,
    /// Points earned by this move.
    pub score_delta: u64,
    /// Score after the move.
    pub score: u64,
    /// Level after the move.
    pub level: u32,
    /// Drops left before the next rise, after the move.
    pub moves_remaining: u8,
    /// Terminal flag after the move.
    pub game_over: bool,
    /// A clear bonus was paid.
    pub cleared_board: bool,
    /// A rise happened.
    pub level_advanced: bool,
    /// Waves, first cascade then rise cascade.
    pub waves: Vec<Wave>,
    /// Board after the move, 49 chars, row 0 first.
    pub board: String,
}

/// Why a cohort game stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Row 0 occupied at the rise.
    BlockedRise,
    /// Every column full after the move.
    NoLegalColumn,
    /// The move cap stopped the game (censored).
    MoveCap,
}

/// One line of `drop7 play --out`: a whole game's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GameRecord {
    /// Game seed as `"0x…"` hex.
    pub seed: String,
    /// Policy name (`center`, `random`, `fair:d4s7`, …).
    pub policy: String,
    /// Driver name (`headless` or `stream`).
    pub driver: String,
    /// Final score.
    pub score: u64,
    /// Moves played.
    pub moves: u32,
    /// Final level (1 + successful rises).
    pub levels: u32,
    /// Moves that paid a clear bonus.
    pub clears: u32,
    /// Gray discs revealed.
    pub reveals: u64,
    /// Deepest wave of the game (0 if nothing ever popped).
    pub chain_max_depth: u32,
    /// `blocked-rise`, `no-legal-column` or `move-cap`.
    pub terminal_reason: StopReason,
    /// True when the move cap stopped the game.
    pub censored: bool,
}

/// Formats a seed as the record's `"0x…"` string (lowercase, 8 digits).
pub fn seed_hex(seed: u32) -> String {
    format!("0x{seed:08x}")
}

/// Parses a seed given in decimal or `0x` hex.
///
/// # Errors
/// A message naming the text when it is not a u32 in either form.
pub fn parse_seed(text: &str) -> Result<u32, String> {
    let t = text.trim();
    let parsed = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16),
        None => t.parse::<u32>(),
    };
    parsed.map_err(|_| format!("invalid seed {text:?}: expected a u32 in decimal or 0x hex"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds() {
        assert_eq!(parse_seed("0xA5270000"), Ok(0xA527_0000));
        assert_eq!(parse_seed("17"), Ok(17));
        assert!(parse_seed("0xZZ").is_err());
        assert!(parse_seed("4294967296").is_err());
        assert_eq!(seed_hex(0xA5), "0x000000a5");
    }
}
