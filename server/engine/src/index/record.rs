//! Record layouts: a clustered record carries the row and its transaction metadata; a
//! secondary record carries (secondary key columns ++ primary key columns) encoded, so every
//! key in any index is unique.
//!
//! A record lives in its leaf page's byte heap (see [`crate::index::page`]) in a compact
//! stored form, and is read in place through a view ([`Record::Ref`]); the owned types are
//! what an insert hands the tree and what an in-place change edits before the page writes
//! the result back.
//!
//! Stored forms (integers little-endian, lengths LEB128):
//! - clustered: `[key len][row len][key][info 1][trx_id][roll_ptr][row]`. The info byte
//!   holds the delete mark, the bytes trx_id takes and whether roll_ptr is there; it follows
//!   the key so that finding the key never waits on reading the header's length. A record
//!   that never had an older version (inserted and not changed since: most rows of a loaded
//!   table) keeps trx_id in as few bytes as it needs and no roll pointer; any other keeps
//!   both in full, 6 and 7 bytes, so a later change of its header is written in place;
//! - secondary: `[info 1: delete mark, primary-key offset][key len][key]`, the offset in the
//!   info byte's upper seven bits up to 126, else 127 there and the offset as LEB128 after it.

use std::fmt;
use std::sync::OnceLock;

use crate::index::key_buf::KeyBuf;
use crate::lock::LockHint;
use crate::row_buf::RowBuf;

/// What a B+tree stores: a record with a memcomparable key, unique within its index, and a
/// stored form the page keeps in its byte heap.
pub trait Record: Sized + Send + Sync + 'static {
    /// A stored record read in place (valid while the page latch is held).
    type Ref<'a>: RecordRef<'a>;

    /// The encoded key.
    fn key(&self) -> &[u8];

    /// Bytes of the stored form.
    fn stored_len(&self) -> usize;

    /// Appends the stored form (exactly [`Record::stored_len`] bytes) to `out`.
    fn store(&self, out: &mut Vec<u8>);

    /// Bytes of the stored record that starts at `bytes[0]` (`bytes` may run on).
    fn stored_size(bytes: &[u8]) -> usize;

    /// The key of a stored record.
    fn stored_key(bytes: &[u8]) -> &[u8];

    /// An owned copy of a stored record (exactly its bytes).
    fn load(bytes: &[u8]) -> Self;

    /// A view of the stored record that starts at `bytes[0]` (`bytes` may run on: the view
    /// reads the record's own lengths) with its lock hint.
    fn view<'a>(bytes: &'a [u8], hint: HintRef<'a>) -> Self::Ref<'a>;
}

/// A view of a stored record.
pub trait RecordRef<'a>: Copy {
    /// The encoded key.
    fn key(&self) -> &'a [u8];
}

/// Where a stored record's lock hint is: a page keeps hints in a side table made when a
/// record of the page is first locked, so records that are never locked pay nothing.
#[derive(Clone, Copy)]
pub struct HintRef<'a> {
    table: &'a OnceLock<Vec<LockHint>>,
    slot: usize,
    slots: usize,
}

impl<'a> HintRef<'a> {
    /// The hint of `slot` among `slots` records in `table` (the slot count is stable while
    /// the page's latch is held, shared or exclusive).
    pub(crate) fn new(table: &'a OnceLock<Vec<LockHint>>, slot: usize, slots: usize) -> Self {
        HintRef { table, slot, slots }
    }

    /// The record's hint, making the page's table if it has none.
    pub fn get(&self) -> &'a LockHint {
        let t = self
            .table
            .get_or_init(|| (0..self.slots).map(|_| LockHint::default()).collect());
        &t[self.slot]
    }
}

impl fmt::Debug for HintRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HintRef")
            .field("slot", &self.slot)
            .field("table", &self.table.get().is_some())
            .finish()
    }
}

/// Appends `v` as LEB128.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: usize) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes `v` takes as LEB128.
pub(crate) fn varint_len(v: usize) -> usize {
    (usize::BITS - (v | 1).leading_zeros()).div_ceil(7) as usize
}

/// Reads a LEB128 value at `*at`, advancing it. Stored forms are written by this module, so a
/// malformed one is a bug (panics on a truncated input).
pub(crate) fn get_varint(bytes: &[u8], at: &mut usize) -> usize {
    let (mut v, mut shift) = (0usize, 0);
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= usize::from(b & 0x7F) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn put_le(out: &mut Vec<u8>, v: u64, bytes: usize) {
    assert!(
        bytes == 8 || v >> (8 * bytes) == 0,
        "a stored field overflowed"
    );
    out.extend_from_slice(&v.to_le_bytes()[..bytes]);
}

fn get_le(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(b)
}

/// The bit of [`ClusteredRec`]'s packed roll pointer word that holds the delete mark (roll
/// pointers count up from 1 and stay far below it).
const DELETE_MARK: u64 = 1 << 63;

/// Bytes of DB_TRX_ID and of DB_ROLL_PTR in a stored clustered record's full header.
const FULL_TRX: usize = 6;
/// See [`FULL_TRX`].
const FULL_ROLL: usize = 7;

/// A secondary record's info byte's delete-mark bit.
const INFO_MARK: u8 = 1;

/// A stored clustered record's info byte: the delete mark.
const HEAD_MARK: u8 = 0x80;
/// A stored clustered record's info byte: the roll pointer's [`FULL_ROLL`] bytes follow
/// trx_id's (without it the record has no older version: roll_ptr 0).
const HEAD_ROLL: u8 = 0x08;
/// A stored clustered record's info byte: the bytes trx_id takes, 0 to [`FULL_TRX`].
const HEAD_TRX_BYTES: u8 = 0x07;

/// The largest roll pointer a stored record holds.
const MAX_ROLL: u64 = (1 << (8 * FULL_ROLL)) - 1;

/// Bytes `v` takes little-endian without its high zero bytes.
fn le_bytes(v: u64) -> usize {
    (u64::BITS - v.leading_zeros()).div_ceil(8) as usize
}

/// The `n` (at most 8) little-endian bytes at `bytes[at..]`: one 8-byte load, masked,
/// where `bytes` runs on far enough (a record's lengths, key and row follow its header).
fn get_le_at(bytes: &[u8], at: usize, n: usize) -> u64 {
    match bytes.get(at..at + 8) {
        Some(word) => {
            let v = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            match n {
                0 => 0,
                n => v & (u64::MAX >> (64 - 8 * n)),
            }
        }
        None => get_le(&bytes[at..at + n]),
    }
}

/// A stored clustered record's header (info byte, trx_id, roll_ptr) read in place: the
/// bytes from the info byte on (they may run on past the header).
#[derive(Clone, Copy)]
struct Head<'a>(&'a [u8]);

impl Head<'_> {
    /// Bytes of the header whose info byte is `info`.
    fn len(info: u8) -> usize {
        head_bytes(usize::from(info & HEAD_TRX_BYTES), info & HEAD_ROLL != 0)
    }

    fn trx_bytes(self) -> usize {
        usize::from(self.0[0] & HEAD_TRX_BYTES)
    }

    /// The roll pointer's bytes are there (the full header).
    fn has_roll(self) -> bool {
        self.0[0] & HEAD_ROLL != 0
    }

    fn trx_id(self) -> u64 {
        get_le_at(self.0, 1, self.trx_bytes())
    }

    fn roll_ptr(self) -> u64 {
        if !self.has_roll() {
            return 0;
        }
        get_le_at(self.0, 1 + self.trx_bytes(), FULL_ROLL)
    }

    fn delete_mark(self) -> bool {
        self.0[0] & HEAD_MARK != 0
    }
}

/// The bytes trx_id takes in a stored clustered record's header, and whether the roll
/// pointer's are there: in full where `full` or where the record has an older version,
/// else trx_id in its own bytes and no roll pointer.
fn head_form(trx_id: u64, roll_ptr: u64, full: bool) -> (usize, bool) {
    if full || roll_ptr != 0 {
        (FULL_TRX, true)
    } else {
        (le_bytes(trx_id), false)
    }
}

/// Bytes of a stored clustered record's header: the info byte, trx_id's and the roll
/// pointer's if there.
fn head_bytes(trx_bytes: usize, has_roll: bool) -> usize {
    1 + trx_bytes + if has_roll { FULL_ROLL } else { 0 }
}

/// Appends a stored clustered record's header in the form [`head_form`] gives.
fn put_head(out: &mut Vec<u8>, trx_id: u64, roll_ptr: u64, delete_mark: bool, full: bool) {
    assert!(roll_ptr <= MAX_ROLL, "a roll pointer overflowed");
    let (trx_bytes, full) = head_form(trx_id, roll_ptr, full);
    let mut info = trx_bytes as u8;
    if full {
        info |= HEAD_ROLL;
    }
    if delete_mark {
        info |= HEAD_MARK;
    }
    out.push(info);
    put_le(out, trx_id, trx_bytes);
    if full {
        put_le(out, roll_ptr, FULL_ROLL);
    }
}

/// A clustered (primary) index record.
#[derive(Clone)]
pub struct ClusteredRec {
    /// The primary key, encoded (or the 6-byte hidden row id).
    pub key: KeyBuf,
    /// The whole row, encoded by the table's `RowCodec`.
    pub row: RowBuf,
    /// Id of the transaction that last wrote this record (DB_TRX_ID).
    pub trx_id: u64,
    /// The roll pointer (DB_ROLL_PTR) with the delete mark in its top bit (see
    /// [`ClusteredRec::roll_ptr`]).
    roll: u64,
    /// Stored with the full header even without an older version (it was stored so).
    full: bool,
}

impl ClusteredRec {
    /// A live record written by `trx_id`, with no older version.
    pub fn new(key: KeyBuf, row: RowBuf, trx_id: u64) -> ClusteredRec {
        ClusteredRec {
            key,
            row,
            trx_id,
            roll: 0,
            full: false,
        }
    }

    /// Pointer into the last writer's undo for the previous version (DB_ROLL_PTR; 0: none).
    pub fn roll_ptr(&self) -> u64 {
        self.roll & !DELETE_MARK
    }

    /// Points the record at its previous version.
    pub fn set_roll_ptr(&mut self, ptr: u64) {
        debug_assert_eq!(ptr & DELETE_MARK, 0, "a roll pointer overflowed");
        self.roll = (self.roll & DELETE_MARK) | (ptr & !DELETE_MARK);
    }

    /// Deleted, awaiting purge.
    pub fn delete_mark(&self) -> bool {
        self.roll & DELETE_MARK != 0
    }

    /// Sets or clears the delete mark; returns the mark it had.
    pub fn set_delete_mark(&mut self, marked: bool) -> bool {
        let was = self.delete_mark();
        self.roll = if marked {
            self.roll | DELETE_MARK
        } else {
            self.roll & !DELETE_MARK
        };
        was
    }
}

/// Equal when key, row, trx_id, roll pointer and delete mark are (the header's stored width
/// is not compared).
impl PartialEq for ClusteredRec {
    fn eq(&self, other: &ClusteredRec) -> bool {
        (&self.key, &self.row, self.trx_id, self.roll)
            == (&other.key, &other.row, other.trx_id, other.roll)
    }
}

impl Eq for ClusteredRec {}

impl fmt::Debug for ClusteredRec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusteredRec")
            .field("key", &self.key)
            .field("row", &self.row)
            .field("trx_id", &self.trx_id)
            .field("roll_ptr", &self.roll_ptr())
            .field("delete_mark", &self.delete_mark())
            .finish()
    }
}

/// Where a stored clustered record's key is, read from its lengths alone: (key start, key
/// end = header start, row length).
fn clustered_key_span(bytes: &[u8]) -> (usize, usize, usize) {
    let mut at = 0;
    let key_len = get_varint(bytes, &mut at);
    let row_len = get_varint(bytes, &mut at);
    (at, at + key_len, row_len)
}

/// Positions of a stored clustered record's parts: (key start, key end = header start, row
/// start, row end).
fn clustered_parts(bytes: &[u8]) -> (usize, usize, usize, usize) {
    let (key, head, row_len) = clustered_key_span(bytes);
    let row = head + Head::len(bytes[head]);
    (key, head, row, row + row_len)
}

impl Record for ClusteredRec {
    type Ref<'a> = ClusteredRef<'a>;

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn stored_len(&self) -> usize {
        let (trx_bytes, has_roll) = head_form(self.trx_id, self.roll_ptr(), self.full);
        head_bytes(trx_bytes, has_roll)
            + varint_len(self.key.len())
            + varint_len(self.row.len())
            + self.key.len()
            + self.row.len()
    }

    fn store(&self, out: &mut Vec<u8>) {
        put_varint(out, self.key.len());
        put_varint(out, self.row.len());
        out.extend_from_slice(&self.key);
        let (roll, mark) = (self.roll_ptr(), self.delete_mark());
        put_head(out, self.trx_id, roll, mark, self.full);
        out.extend_from_slice(&self.row);
    }

    fn stored_size(bytes: &[u8]) -> usize {
        clustered_parts(bytes).3
    }

    fn stored_key(bytes: &[u8]) -> &[u8] {
        // A binary search's probe: the header is not read.
        let (k, h, _) = clustered_key_span(bytes);
        &bytes[k..h]
    }

    fn load(bytes: &[u8]) -> ClusteredRec {
        ClusteredRef::parse(bytes, None).to_owned()
    }

    fn view<'a>(bytes: &'a [u8], hint: HintRef<'a>) -> ClusteredRef<'a> {
        ClusteredRef::parse(bytes, Some(hint))
    }
}

/// A clustered record read in place.
#[derive(Clone, Copy)]
pub struct ClusteredRef<'a> {
    head: Head<'a>,
    key: &'a [u8],
    row: &'a [u8],
    hint: Option<HintRef<'a>>,
}

impl<'a> ClusteredRef<'a> {
    fn parse(bytes: &'a [u8], hint: Option<HintRef<'a>>) -> ClusteredRef<'a> {
        let (k, h, r, end) = clustered_parts(bytes);
        ClusteredRef {
            head: Head(&bytes[h..]),
            key: &bytes[k..h],
            row: &bytes[r..end],
            hint,
        }
    }

    /// The primary key, encoded.
    pub fn key(&self) -> &'a [u8] {
        self.key
    }

    /// The row, encoded by the table's `RowCodec`.
    pub fn row(&self) -> &'a [u8] {
        self.row
    }

    /// Id of the transaction that last wrote this record (DB_TRX_ID).
    pub fn trx_id(&self) -> u64 {
        self.head.trx_id()
    }

    /// Pointer to the previous version (DB_ROLL_PTR; 0: none).
    pub fn roll_ptr(&self) -> u64 {
        self.head.roll_ptr()
    }

    /// Deleted, awaiting purge.
    pub fn delete_mark(&self) -> bool {
        self.head.delete_mark()
    }

    /// A granted lock on this record, for SKIP LOCKED and NOWAIT checks.
    pub fn lock_hint(&self) -> &'a LockHint {
        self.hint.expect("a view of a page's record").get()
    }

    /// An owned copy (the row bytes copied).
    pub fn to_owned(&self) -> ClusteredRec {
        let mut rec =
            ClusteredRec::new(KeyBuf::from(self.key), RowBuf::new(self.row), self.trx_id());
        rec.set_roll_ptr(self.roll_ptr());
        rec.set_delete_mark(self.delete_mark());
        rec.full = self.head.has_roll();
        rec
    }
}

/// A stored clustered record edited in place: its transaction fields and delete mark can
/// change where they fit its header, its key and row cannot (they keep their length, so the
/// record keeps its slot).
pub(crate) struct ClusteredMut<'a> {
    key: &'a [u8],
    head: &'a mut [u8],
    row: &'a [u8],
}

impl<'a> ClusteredMut<'a> {
    /// The record whose stored form is exactly `bytes`.
    pub(crate) fn parse(bytes: &'a mut [u8]) -> ClusteredMut<'a> {
        let (k, h, r, end) = clustered_parts(bytes);
        let (front, back) = bytes.split_at_mut(r);
        let (front, head) = front.split_at_mut(h);
        ClusteredMut {
            key: &front[k..],
            head,
            row: &back[..end - r],
        }
    }

    fn view(&self) -> Head<'_> {
        Head(self.head)
    }

    /// The row, encoded by the table's `RowCodec`.
    pub(crate) fn row(&self) -> &[u8] {
        self.row
    }

    /// Id of the transaction that last wrote this record (DB_TRX_ID).
    pub(crate) fn trx_id(&self) -> u64 {
        self.view().trx_id()
    }

    /// Pointer to the previous version (DB_ROLL_PTR; 0: none).
    pub(crate) fn roll_ptr(&self) -> u64 {
        self.view().roll_ptr()
    }

    /// Deleted, awaiting purge.
    pub(crate) fn delete_mark(&self) -> bool {
        self.view().delete_mark()
    }

    /// Sets DB_TRX_ID, DB_ROLL_PTR and the delete mark where they fit the stored header
    /// (always, for a record stored with the full one); else returns the record with them,
    /// for the page to store in this one's place (`Records::replace`).
    pub(crate) fn set_header(
        &mut self,
        trx_id: u64,
        roll_ptr: u64,
        delete_mark: bool,
    ) -> Option<ClusteredRec> {
        let (trx_bytes, has_roll) = (self.view().trx_bytes(), self.view().has_roll());
        if le_bytes(trx_id) > trx_bytes || (roll_ptr != 0 && !has_roll) {
            let mut rec =
                ClusteredRec::new(KeyBuf::from(self.key), RowBuf::new(self.row()), trx_id);
            rec.set_roll_ptr(roll_ptr);
            rec.set_delete_mark(delete_mark);
            rec.full = true;
            return Some(rec);
        }
        let mark = if delete_mark { HEAD_MARK } else { 0 };
        self.head[0] = (self.head[0] & !HEAD_MARK) | mark;
        self.head[1..1 + trx_bytes].copy_from_slice(&trx_id.to_le_bytes()[..trx_bytes]);
        if has_roll {
            assert!(roll_ptr <= MAX_ROLL, "a roll pointer overflowed");
            self.head[1 + trx_bytes..].copy_from_slice(&roll_ptr.to_le_bytes()[..FULL_ROLL]);
        }
        None
    }
}

impl<'a> RecordRef<'a> for ClusteredRef<'a> {
    fn key(&self) -> &'a [u8] {
        self.key
    }
}

impl fmt::Debug for ClusteredRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusteredRef")
            .field("key", &KeyBuf::from(self.key))
            .field("row_len", &self.row.len())
            .field("trx_id", &self.trx_id())
            .field("roll_ptr", &self.roll_ptr())
            .field("delete_mark", &self.delete_mark())
            .finish()
    }
}

/// Key bytes a secondary record holds inline (longer keys are boxed).
const SEC_INLINE: usize = 20;

/// The info byte's primary-key offset field value meaning "the offset follows as LEB128".
const SEC_OFFSET_FOLLOWS: usize = 127;

/// A secondary record's key with its primary-key offset and delete mark packed beside the
/// bytes, in 24 bytes: inline up to [`SEC_INLINE`] bytes (every sysbench entry: `k` and
/// `id`, 8 bytes), boxed beyond.
#[derive(Clone)]
enum SecKey {
    Inline {
        len: u8,
        pk_offset: u8,
        marked: bool,
        buf: [u8; SEC_INLINE],
    },
    Heap {
        pk_offset: u32,
        marked: bool,
        buf: Box<[u8]>,
    },
}

/// A secondary index record: secondary key columns followed by the primary key columns,
/// encoded, and a delete mark.
#[derive(Clone)]
pub struct SecondaryRec {
    key: SecKey,
}

impl SecondaryRec {
    /// A live record with key `key` whose primary key part starts at `pk_offset`. Panics if
    /// `pk_offset` is past the key's end or the key is 4 GiB or longer.
    pub fn new(key: &[u8], pk_offset: usize) -> SecondaryRec {
        assert!(
            pk_offset <= key.len(),
            "the primary key starts inside the key"
        );
        let key = match (u8::try_from(key.len()), u8::try_from(pk_offset)) {
            (Ok(len), Ok(off)) if key.len() <= SEC_INLINE => {
                let mut buf = [0u8; SEC_INLINE];
                buf[..key.len()].copy_from_slice(key);
                SecKey::Inline {
                    len,
                    pk_offset: off,
                    marked: false,
                    buf,
                }
            }
            _ => SecKey::Heap {
                pk_offset: u32::try_from(pk_offset).expect("a key shorter than 4 GiB"),
                marked: false,
                buf: key.into(),
            },
        };
        SecondaryRec { key }
    }

    /// Where the primary key part of the key starts.
    pub fn pk_offset(&self) -> usize {
        match &self.key {
            SecKey::Inline { pk_offset, .. } => usize::from(*pk_offset),
            SecKey::Heap { pk_offset, .. } => *pk_offset as usize,
        }
    }

    /// Deleted or superseded, awaiting purge.
    pub fn delete_mark(&self) -> bool {
        match &self.key {
            SecKey::Inline { marked, .. } | SecKey::Heap { marked, .. } => *marked,
        }
    }

    /// Sets or clears the delete mark; returns the mark it had.
    pub fn set_delete_mark(&mut self, mark: bool) -> bool {
        match &mut self.key {
            SecKey::Inline { marked, .. } | SecKey::Heap { marked, .. } => {
                std::mem::replace(marked, mark)
            }
        }
    }

    /// The primary key part of the key.
    pub fn primary_key(&self) -> &[u8] {
        &self.key()[self.pk_offset()..]
    }
}

/// A stored secondary record's parts: (delete mark, primary-key offset, key start, key end).
fn secondary_parts(bytes: &[u8]) -> (bool, usize, usize, usize) {
    let info = bytes[0];
    let mut at = 1;
    let mut off = usize::from(info >> 1);
    if off == SEC_OFFSET_FOLLOWS {
        off = get_varint(bytes, &mut at);
    }
    let len = get_varint(bytes, &mut at);
    (info & INFO_MARK != 0, off, at, at + len)
}

impl Record for SecondaryRec {
    type Ref<'a> = SecondaryRef<'a>;

    fn key(&self) -> &[u8] {
        match &self.key {
            SecKey::Inline { len, buf, .. } => &buf[..usize::from(*len)],
            SecKey::Heap { buf, .. } => buf,
        }
    }

    fn stored_len(&self) -> usize {
        let off = self.pk_offset();
        let extra = if off >= SEC_OFFSET_FOLLOWS {
            varint_len(off)
        } else {
            0
        };
        1 + extra + varint_len(self.key().len()) + self.key().len()
    }

    fn store(&self, out: &mut Vec<u8>) {
        let off = self.pk_offset();
        let field = off.min(SEC_OFFSET_FOLLOWS) as u8;
        out.push(field << 1 | u8::from(self.delete_mark()));
        if off >= SEC_OFFSET_FOLLOWS {
            put_varint(out, off);
        }
        put_varint(out, self.key().len());
        out.extend_from_slice(self.key());
    }

    fn stored_size(bytes: &[u8]) -> usize {
        secondary_parts(bytes).3
    }

    fn stored_key(bytes: &[u8]) -> &[u8] {
        let (_, _, start, end) = secondary_parts(bytes);
        &bytes[start..end]
    }

    fn load(bytes: &[u8]) -> SecondaryRec {
        SecondaryRef::parse(bytes, None).to_owned()
    }

    fn view<'a>(bytes: &'a [u8], hint: HintRef<'a>) -> SecondaryRef<'a> {
        SecondaryRef::parse(bytes, Some(hint))
    }
}

/// A secondary record read in place.
#[derive(Clone, Copy)]
pub struct SecondaryRef<'a> {
    key: &'a [u8],
    pk_offset: usize,
    marked: bool,
    hint: Option<HintRef<'a>>,
}

impl<'a> SecondaryRef<'a> {
    fn parse(bytes: &'a [u8], hint: Option<HintRef<'a>>) -> SecondaryRef<'a> {
        let (marked, pk_offset, start, end) = secondary_parts(bytes);
        SecondaryRef {
            key: &bytes[start..end],
            pk_offset,
            marked,
            hint,
        }
    }

    /// The key: secondary key columns followed by the primary key columns.
    pub fn key(&self) -> &'a [u8] {
        self.key
    }

    /// Where the primary key part of the key starts.
    pub fn pk_offset(&self) -> usize {
        self.pk_offset
    }

    /// Deleted or superseded, awaiting purge.
    pub fn delete_mark(&self) -> bool {
        self.marked
    }

    /// The secondary key columns part of the key.
    pub(crate) fn secondary_part(&self) -> &'a [u8] {
        &self.key[..self.pk_offset]
    }

    /// The primary key part of the key.
    pub fn primary_key(&self) -> &'a [u8] {
        &self.key[self.pk_offset..]
    }

    /// A granted lock on this record, for SKIP LOCKED and NOWAIT checks.
    pub fn lock_hint(&self) -> &'a LockHint {
        self.hint.expect("a view of a page's record").get()
    }

    /// An owned copy.
    pub fn to_owned(&self) -> SecondaryRec {
        let mut r = SecondaryRec::new(self.key, self.pk_offset);
        r.set_delete_mark(self.marked);
        r
    }
}

impl<'a> RecordRef<'a> for SecondaryRef<'a> {
    fn key(&self) -> &'a [u8] {
        self.key
    }
}

impl fmt::Debug for SecondaryRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_owned(), f)
    }
}

impl PartialEq for SecondaryRec {
    /// Records are equal when their keys, primary-key offsets and delete marks are.
    fn eq(&self, other: &SecondaryRec) -> bool {
        self.key() == other.key()
            && self.pk_offset() == other.pk_offset()
            && self.delete_mark() == other.delete_mark()
    }
}

impl Eq for SecondaryRec {}

impl fmt::Debug for SecondaryRec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecondaryRec")
            .field("key", &KeyBuf::from(self.key()))
            .field("pk_offset", &self.pk_offset())
            .field("delete_mark", &self.delete_mark())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<R: Record + fmt::Debug + PartialEq>(r: &R) {
        let mut out = vec![0xEE];
        r.store(&mut out);
        assert_eq!(out.len(), 1 + r.stored_len(), "{r:?}");
        out.push(0xAB); // bytes after the record are not read
        let bytes = &out[1..];
        assert_eq!(R::stored_size(bytes), r.stored_len());
        assert_eq!(R::stored_key(bytes), r.key());
        assert_eq!(&R::load(&bytes[..r.stored_len()]), r);
        // A view is made from the page heap's tail: it reads only the record's own bytes.
        let hints = std::sync::OnceLock::new();
        assert_eq!(R::view(bytes, HintRef::new(&hints, 0, 1)).key(), r.key());
    }

    #[test]
    fn the_delete_mark_and_the_roll_pointer_are_independent() {
        let mut r = ClusteredRec::new(KeyBuf::from(&b"k"[..]), RowBuf::new(b"row"), 7);
        assert_eq!((r.roll_ptr(), r.delete_mark()), (0, false));
        round_trip(&r);
        assert!(!r.set_delete_mark(true));
        assert_eq!((r.roll_ptr(), r.delete_mark()), (0, true));
        round_trip(&r);
        let big = MAX_ROLL;
        r.set_roll_ptr(big);
        assert_eq!((r.roll_ptr(), r.delete_mark()), (big, true));
        round_trip(&r);
        assert!(r.set_delete_mark(false));
        assert_eq!((r.roll_ptr(), r.delete_mark()), (big, false));
        r.set_roll_ptr(5);
        r.trx_id = (1 << 48) - 1;
        assert_eq!((r.roll_ptr(), r.delete_mark()), (5, false));
        round_trip(&r);
        let dbg = format!("{r:?}");
        assert!(
            dbg.contains("roll_ptr: 5") && dbg.contains("delete_mark: false"),
            "{dbg}"
        );
    }

    #[test]
    fn a_loaded_sysbench_row_stores_in_199_bytes() {
        // Written by transaction 70,000 and never changed: trx_id in 3 bytes, no roll
        // pointer; the info byte, the key's and the row's lengths, the key, the row.
        let mut r = ClusteredRec::new(
            KeyBuf::from(&[0x80, 0, 0, 1][..]),
            RowBuf::new(&[7; 188]),
            70_000,
        );
        assert_eq!(r.stored_len(), 1 + 3 + 1 + 2 + 4 + 188);
        round_trip(&r);
        // With an older version the header is stored in full.
        r.set_roll_ptr(1);
        assert_eq!(r.stored_len(), 1 + 6 + 7 + 1 + 2 + 4 + 188);
        round_trip(&r);
        let long = ClusteredRec::new(KeyBuf::from(vec![3u8; 300]), RowBuf::new(&[7; 70_000]), 9);
        round_trip(&long);
        let sec = SecondaryRec::new(&[1; 8], 4);
        assert_eq!(sec.stored_len(), 10);
    }

    /// Stores `r` and applies `set_header(trx_id, roll_ptr, mark)` to the stored bytes;
    /// returns the record the bytes then hold, and whether it was rewritten in place.
    fn set_stored_header(
        r: &ClusteredRec,
        trx_id: u64,
        roll_ptr: u64,
        mark: bool,
    ) -> (ClusteredRec, bool) {
        let mut bytes = Vec::new();
        r.store(&mut bytes);
        let mut stored = ClusteredMut::parse(&mut bytes);
        assert_eq!(
            (
                stored.trx_id(),
                stored.roll_ptr(),
                stored.delete_mark(),
                stored.row()
            ),
            (r.trx_id, r.roll_ptr(), r.delete_mark(), &r.row[..])
        );
        match stored.set_header(trx_id, roll_ptr, mark) {
            None => (ClusteredRec::load(&bytes), true),
            Some(rec) => {
                // Stored again, it keeps the full header.
                let mut again = Vec::new();
                rec.store(&mut again);
                assert_eq!(again.len(), rec.stored_len());
                assert_eq!(ClusteredRec::load(&again), rec);
                assert!(ClusteredRec::load(&again).full, "{rec:?}");
                (rec, false)
            }
        }
    }

    #[test]
    fn a_stored_header_changes_in_place_where_it_fits() {
        let fresh = ClusteredRec::new(KeyBuf::from(&b"key"[..]), RowBuf::new(b"row"), 300);
        let want = |trx_id, roll_ptr, mark| {
            let mut w = fresh.clone();
            w.trx_id = trx_id;
            w.set_roll_ptr(roll_ptr);
            w.set_delete_mark(mark);
            w
        };
        // A fresh record's two trx_id bytes take a trx_id up to 65,535 and the mark; a
        // larger trx_id or any roll pointer needs the full header.
        for (trx_id, roll_ptr, mark, in_place) in [
            (65_535, 0, true, true),
            (0, 0, false, true),
            (65_536, 0, false, false),
            (301, 5, true, false),
        ] {
            assert_eq!(
                set_stored_header(&fresh, trx_id, roll_ptr, mark),
                (want(trx_id, roll_ptr, mark), in_place)
            );
        }
        // A record stored with the full header takes any header in place, a roll pointer of
        // 0 (a rollback to the record's first version) included.
        let (full, _) = set_stored_header(&fresh, 301, 5, true);
        let max = (1 << 48) - 1;
        assert_eq!(
            set_stored_header(&full, max, MAX_ROLL, false),
            (want(max, MAX_ROLL, false), true)
        );
        let (back, in_place) = set_stored_header(&full, 300, 0, false);
        assert_eq!((back, in_place), (fresh.clone(), true));
    }

    #[test]
    fn secondary_records_store_key_offset_and_mark() {
        for len in [0usize, 8, SEC_INLINE, SEC_INLINE + 1, 126, 127, 128, 300] {
            let key: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5A).collect();
            for off in [0, len / 2, len] {
                let mut r = SecondaryRec::new(&key, off);
                assert_eq!(r.key(), &key[..], "{len}");
                assert_eq!((r.pk_offset(), r.delete_mark()), (off, false));
                assert_eq!(r.primary_key(), &key[off..]);
                round_trip(&r);
                assert!(!r.set_delete_mark(true));
                assert_eq!(
                    (r.key(), r.pk_offset(), r.delete_mark()),
                    (&key[..], off, true)
                );
                round_trip(&r);
                assert_ne!(r, SecondaryRec::new(&key, off), "marks differ");
                assert!(r.set_delete_mark(false));
                assert_eq!(r, SecondaryRec::new(&key, off));
            }
        }
        let long_offset = SecondaryRec::new(&[1u8; 300], 299);
        assert_eq!(long_offset.pk_offset(), 299);
        let dbg = format!("{long_offset:?}");
        assert!(dbg.contains("pk_offset: 299"), "{dbg}");
    }

    #[test]
    fn a_masked_load_reads_what_a_short_copy_reads() {
        let bytes: Vec<u8> = (1..=20).collect();
        for at in 0..bytes.len() {
            for n in 0..=8.min(bytes.len() - at) {
                assert_eq!(
                    get_le_at(&bytes, at, n),
                    get_le(&bytes[at..at + n]),
                    "{at} {n}"
                );
            }
        }
    }

    #[test]
    fn varints_round_trip() {
        for v in [0usize, 1, 127, 128, 16_383, 16_384, usize::MAX >> 1] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out.len(), varint_len(v), "{v}");
            let mut at = 0;
            assert_eq!(get_varint(&out, &mut at), v);
            assert_eq!(at, out.len());
        }
    }
}
