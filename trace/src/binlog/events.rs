//! The event record: one tag byte that carries the kind and flags, then varints.
//!
//! ```text
//! tag      bits 0-4: kind + 1 (1..=17; 0 never starts a record), bit 5: FLAG_VALUE,
//!          bit 6: a value field follows, bit 7: a stamp delta follows (else delta 0)
//! [stamp delta]  uvarint, stamp minus the previous record's stamp in this chunk
//! [target]       uvarint, absent for begin, end and branch
//! loc delta      zigzag varint, loc minus the previous record's loc in this chunk
//! [value]        zigzag varint (for enter: the reachable-set id)
//! ```
//! Deltas restart from 0 at every chunk, so each chunk decodes on its own.

use super::varint::{put_uvarint, zigzag, Cursor};
use crate::model::*;

/// Longest event record: tag, stamp delta, target, loc delta, value.
pub const MAX_EVENT_RECORD: usize = 1 + 10 + 5 + 5 + 10;

const TAG_VALUE_FLAG: u8 = 1 << 5;
const TAG_HAS_VALUE: u8 = 1 << 6;
const TAG_HAS_STAMP: u8 = 1 << 7;

fn has_target(k: Kind) -> bool {
    !matches!(k, Kind::Begin | Kind::End | Kind::Branch)
}

/// Delta state of one chunk, shared by encoder and decoder.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeltaState {
    pub stamp: u64,
    pub loc: u32,
}

/// Encodes `e` at `stamp` into `buf`, returning the record length. `stamp` must not be
/// below `st.stamp`.
#[inline]
pub fn encode(
    st: &mut DeltaState,
    stamp: u64,
    e: &Event,
    buf: &mut [u8; MAX_EVENT_RECORD],
) -> usize {
    let mut tag = e.kind as u8 + 1;
    if e.flags & FLAG_VALUE != 0 {
        tag |= TAG_VALUE_FLAG;
    }
    let has_value = e.value != 0 || e.flags & FLAG_VALUE != 0;
    if has_value {
        tag |= TAG_HAS_VALUE;
    }
    let delta = stamp.wrapping_sub(st.stamp);
    let mut p = 1;
    if delta != 0 {
        tag |= TAG_HAS_STAMP;
        p = put_uvarint(buf, p, delta);
    }
    if has_target(e.kind) {
        p = put_uvarint(buf, p, e.target as u64);
    }
    p = put_uvarint(buf, p, zigzag(e.loc as i64 - st.loc as i64));
    if has_value {
        p = put_uvarint(buf, p, zigzag(e.value));
    }
    buf[0] = tag;
    st.stamp = stamp;
    st.loc = e.loc;
    p
}

/// Decodes one record at the cursor (whose tag is known to be non-zero).
pub fn decode(
    st: &mut DeltaState,
    c: &mut Cursor,
    thread: ThreadId,
) -> Result<(u64, Event), String> {
    let tag = c.u8("a record tag")?;
    let code = tag & 0x1f;
    let Some(kind) = code.checked_sub(1).and_then(Kind::from_u8) else {
        return Err(format!(
            "expected a record tag with a kind code 1..=17, found byte {tag:#04x}"
        ));
    };
    let mut stamp = st.stamp;
    if tag & TAG_HAS_STAMP != 0 {
        let d = c.uvarint("a stamp delta")?;
        stamp = stamp
            .checked_add(d)
            .ok_or("expected a stamp delta, found one that overflows 64 bits")?;
    }
    let target = if has_target(kind) {
        c.u32("the event's target id")?
    } else {
        0
    };
    let dl = c.svarint("a location delta")?;
    let loc = u32::try_from(st.loc as i64 + dl)
        .map_err(|_| format!("expected a location delta, found {dl} (location out of range)"))?;
    let mut e = Event::new(thread, kind, target, loc);
    if tag & TAG_HAS_VALUE != 0 {
        e.value = c.svarint("the event's value")?;
    }
    if tag & TAG_VALUE_FLAG != 0 {
        e.flags |= FLAG_VALUE;
    }
    st.stamp = stamp;
    st.loc = loc;
    Ok((stamp, e))
}
