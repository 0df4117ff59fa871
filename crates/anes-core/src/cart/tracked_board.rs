//! The board, watched for change: every mutable access marks it changed, so the sync digest
//! (`state/digest.rs`) can keep the sum of its registers while nothing has touched them. The field
//! is private: the compiler sees to it that no change goes unmarked.

use core::ops::{Deref, DerefMut};

use super::board::Board;

#[derive(Debug, Clone)]
pub(super) struct TrackedBoard {
    board: Board,
    /// Set by [`DerefMut`]; cleared by [`TrackedBoard::mark_digest_fresh`]. Not state.
    digest_stale: bool,
}

impl TrackedBoard {
    pub(super) fn new(board: Board) -> TrackedBoard {
        TrackedBoard { board, digest_stale: true }
    }

    /// True when the board may have changed since [`TrackedBoard::mark_digest_fresh`].
    #[inline(always)]
    pub(super) fn digest_stale(&self) -> bool {
        self.digest_stale
    }

    /// The console has summed the board's registers as they stand.
    #[inline(always)]
    pub(super) fn mark_digest_fresh(&mut self) {
        self.digest_stale = false;
    }
}

impl Deref for TrackedBoard {
    type Target = Board;

    #[inline(always)]
    fn deref(&self) -> &Board {
        &self.board
    }
}

impl DerefMut for TrackedBoard {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut Board {
        self.digest_stale = true;
        &mut self.board
    }
}
