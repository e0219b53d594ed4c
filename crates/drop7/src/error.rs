//! Error types of the library (the CLI adds context with `anyhow`).

use thiserror::Error;

/// A board text that is not a valid 49-character board (rules.md §1).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BoardError {
    /// The text does not have exactly 49 characters.
    #[error("board must have 49 characters, got {0}")]
    Length(usize),
    /// A character is not a cell code `0`-`9`.
    #[error("board character {index} (0-based) is {found:?}, expected a cell code 0-9")]
    BadCell {
        /// 0-based character index (row-major, row 0 = top).
        index: usize,
        /// The offending character.
        found: char,
    },
    /// An occupied cell sits above an empty one (columns must be bottom-packed).
    #[error(
        "board column {column} is not bottom-packed: row {row} is occupied above an empty cell"
    )]
    Floating {
        /// Column 0..6.
        column: usize,
        /// Row 0..6 (0 = top) of the floating cell.
        row: usize,
    },
}

/// A move that cannot be played; the state is left unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MoveError {
    /// The column is not in 0..=6.
    #[error("column {0} is out of range 0-6")]
    OutOfRange(usize),
    /// The column is full (its top cell is occupied).
    #[error("column {0} is full")]
    ColumnFull(usize),
    /// The game is already over.
    #[error("the game is over")]
    GameOver,
}
