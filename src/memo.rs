//! [`MemoLeaf`]: a leaf evaluator wrapper that remembers recent leaf values.
//!
//! About a third of the leaf calls of a decision re-evaluate a position seen
//! before (the same afterstate reached through different sample paths). The
//! leaf is a pure function of (board, next disc, moves remaining), so a
//! direct-mapped cache keyed by the full position returns bit-for-bit the value
//! recomputation would give. The search still counts every call as work.
//!
//! ```
//! use drop7::leaf::{FairLeaf, Leaf};
//! use drop7::memo::MemoLeaf;
//! use drop7::position::Position;
//! let mut leaf = MemoLeaf::new(FairLeaf, 1 << 10);
//! let pos = Position::initial(4);
//! assert_eq!(leaf.evaluate(&pos), FairLeaf.evaluate(&pos));
//! assert_eq!(leaf.evaluate(&pos).to_bits(), FairLeaf.evaluate(&pos).to_bits());
//! ```

use crate::leaf::Leaf;
use crate::position::Position;
use crate::table::Key;

/// One memo slot: the full key (no false hits) and the value (40 bytes).
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    key: Key,
    value: f64,
}

/// A leaf evaluator with a direct-mapped memo of `entries` slots (a power of
/// two). The all-zero key marks an empty slot: real keys carry the next disc
/// (≥ 1) in their first word.
#[derive(Clone, Debug)]
pub struct MemoLeaf<L: Leaf> {
    inner: L,
    slots: Vec<Slot>,
    mask: usize,
}

impl<L: Leaf> MemoLeaf<L> {
    /// Wraps `inner` with a memo of `entries` slots (rounded up to a power of two).
    pub fn new(inner: L, entries: usize) -> Self {
        let n = entries.max(1).next_power_of_two();
        MemoLeaf {
            inner,
            slots: vec![Slot::default(); n],
            mask: n - 1,
        }
    }

    /// Bytes held by the memo.
    pub fn memory_bytes(&self) -> usize {
        self.slots.len() * std::mem::size_of::<Slot>()
    }
}

impl<L: Leaf> Leaf for MemoLeaf<L> {
    #[inline]
    fn evaluate(&mut self, pos: &Position) -> f64 {
        let key = Key::new(pos, 0);
        let slot = &mut self.slots[key.hash() as usize & self.mask];
        if slot.key == key {
            return slot.value;
        }
        let value = self.inner.evaluate(pos);
        *slot = Slot { key, value };
        value
    }
}
