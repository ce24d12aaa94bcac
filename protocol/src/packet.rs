//! Packet framing: a 4-byte header (3-byte payload length, 1-byte sequence id) before each
//! payload, and payloads of 16 MiB or more split into continuation fragments.
//!
//! Invariant: a fragment of exactly [`MAX_PAYLOAD`] bytes is always followed by another
//! fragment of the same logical packet (possibly empty); a shorter fragment ends it.

use crate::error::ProtocolError;

/// The largest payload one fragment carries; a fragment this long continues in the next one.
pub const MAX_PAYLOAD: usize = 0xFF_FFFF;

/// The size of a packet header.
pub const HEADER_LEN: usize = 4;

/// How many fragments a joined payload of `len` bytes occupies on the wire. The sequence id
/// advances once per fragment, so this is how far it moves for one logical packet.
pub fn fragment_count(len: usize) -> usize {
    len / MAX_PAYLOAD + 1
}

/// Parses a packet header: the payload length and sequence id, or `None` if fewer than four
/// bytes are buffered.
pub fn frame_header(buf: &[u8]) -> Option<(usize, u8)> {
    match buf {
        [a, b, c, seq, ..] => Some((
            usize::from(*a) | usize::from(*b) << 8 | usize::from(*c) << 16,
            *seq,
        )),
        _ => None,
    }
}

fn put_header(out: &mut Vec<u8>, len: usize, seq: u8) {
    out.extend_from_slice(&[len as u8, (len >> 8) as u8, (len >> 16) as u8, seq]);
}

/// Appends `payload` as one logical packet, split into fragments as needed, starting at `*seq`;
/// `*seq` ends one past the last fragment's id (wrapping).
///
/// ```
/// use protocol::packet::{write_packet, Framer};
///
/// let (mut wire, mut seq) = (Vec::new(), 0);
/// write_packet(&mut wire, &mut seq, b"\x0e"); // COM_PING
/// assert_eq!(wire, [1, 0, 0, 0, 0x0e]);
/// assert_eq!(seq, 1);
///
/// let mut framer = Framer::new(1024);
/// framer.push(&wire[..3]);
/// assert_eq!(framer.next_packet(), Ok(None)); // incomplete header: wait for more
/// framer.push(&wire[3..]);
/// assert_eq!(framer.next_packet(), Ok(Some((0, vec![0x0e]))));
/// ```
pub fn write_packet(out: &mut Vec<u8>, seq: &mut u8, payload: &[u8]) {
    out.reserve(payload.len() + HEADER_LEN * fragment_count(payload.len()));
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_PAYLOAD);
        put_header(out, n, *seq);
        *seq = seq.wrapping_add(1);
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        if n < MAX_PAYLOAD {
            return;
        }
    }
}

/// Appends one logical packet whose payload `f` writes directly into `out`: the header is
/// reserved first and patched afterwards, so the payload is not copied (except in the rare
/// case where it reaches [`MAX_PAYLOAD`] and must be split).
pub fn write_packet_with(out: &mut Vec<u8>, seq: &mut u8, f: impl FnOnce(&mut Vec<u8>)) {
    let start = out.len();
    out.extend_from_slice(&[0; HEADER_LEN]);
    f(out);
    let len = out.len() - start - HEADER_LEN;
    if len < MAX_PAYLOAD {
        out[start..start + HEADER_LEN].copy_from_slice(&[
            len as u8,
            (len >> 8) as u8,
            (len >> 16) as u8,
            *seq,
        ]);
        *seq = seq.wrapping_add(1);
    } else {
        let payload = out.split_off(start + HEADER_LEN);
        out.truncate(start);
        write_packet(out, seq, &payload);
    }
}

/// Reassembles logical packets from bytes as they arrive, in any chunking.
///
/// Bytes go in with [`Framer::push`]; whole packets come out of [`Framer::next_packet`], which
/// answers `Ok(None)` while a packet is incomplete. Continuation fragments are joined and their
/// sequence ids checked; a packet larger than `max_packet` is refused as soon as a header
/// announces it, before its bytes are buffered. Errors are sticky: the stream cannot be
/// resynchronised after one.
#[derive(Debug)]
pub struct Framer {
    max_packet: usize,
    /// Raw bytes received; `buf[start..]` is not yet consumed.
    buf: Vec<u8>,
    start: usize,
    /// Fragments of a logical packet joined so far, with the first fragment's sequence id and
    /// the id the next fragment must carry.
    partial: Option<Partial>,
    failed: Option<ProtocolError>,
    /// The sequence id of the last header examined (the one refused, after an error).
    last_seq: u8,
    /// A payload buffer handed back with [`Framer::recycle`], reused by the next packet.
    spare: Option<Vec<u8>>,
}

/// The largest buffer a framer hands back for reuse ([`Framer::recycle`],
/// [`Framer::return_buffers`]); larger ones are freed.
const MAX_LENT_BUFFER: usize = 64 * 1024;

/// A framer's buffers while no connection uses them: its input buffer and a recycled
/// payload buffer ([`Framer::borrow_buffers`], [`Framer::return_buffers`]). A server keeps
/// one per thread.
#[derive(Debug, Default)]
pub struct FramerBuffers {
    input: Vec<u8>,
    spare: Option<Vec<u8>>,
}

#[derive(Debug)]
struct Partial {
    first_seq: u8,
    next_seq: u8,
    payload: Vec<u8>,
}

impl Framer {
    /// A framer that refuses logical packets longer than `max_packet` bytes
    /// (`max_allowed_packet` on the server side).
    pub fn new(max_packet: usize) -> Self {
        Self {
            max_packet,
            buf: Vec::new(),
            start: 0,
            partial: None,
            failed: None,
            last_seq: 0,
            spare: None,
        }
    }

    /// The sequence id of the last packet header examined: after
    /// [`ProtocolError::PacketTooLarge`], the refused one, so the error reply can follow it
    /// (with this id plus one) as mysqld's does.
    pub fn last_header_seq(&self) -> u8 {
        self.last_seq
    }

    /// Hands back a payload buffer taken from [`Self::next_packet`] once its owner is done
    /// with it: the next packet's payload is copied into it instead of a new allocation (one
    /// spare is kept, none above 64 KiB of capacity). Optional; the framer works without it.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if buf.capacity() > 0 && buf.capacity() <= MAX_LENT_BUFFER {
            buf.clear();
            self.spare = Some(buf);
        }
    }

    /// The configured maximum logical packet size.
    pub fn max_packet(&self) -> usize {
        self.max_packet
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 4096 && self.start * 2 > self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Takes the buffers in `from` for the coming packets, where this framer holds none of
    /// its own: a server lends each command a thread's buffers ([`Framer::return_buffers`]
    /// gives them back), so a busy thread allocates none per command.
    pub fn borrow_buffers(&mut self, from: &mut FramerBuffers) {
        if self.buf.capacity() == 0 && !self.has_buffered() {
            std::mem::swap(&mut self.buf, &mut from.input);
            self.buf.clear();
            self.start = 0;
        }
        if self.spare.is_none() {
            self.spare = from.spare.take();
        }
    }

    /// Moves its buffers into `to` when nothing is buffered, so an idle connection holds no
    /// read buffer (a server with thousands of idle connections calls this after each
    /// command). An input buffer above 64 KiB is freed instead; buffered bytes keep theirs.
    pub fn return_buffers(&mut self, to: &mut FramerBuffers) {
        if !self.has_buffered() {
            let mut input = std::mem::take(&mut self.buf);
            self.start = 0;
            input.clear();
            if input.capacity() <= MAX_LENT_BUFFER && input.capacity() > to.input.capacity() {
                to.input = input;
            }
        }
        if let Some(spare) = self.spare.take() {
            to.spare.get_or_insert(spare);
        }
    }

    /// True when bytes are buffered that do not yet form a whole packet, or a whole packet
    /// waits to be taken (the session's "pipelined input" check).
    pub fn has_buffered(&self) -> bool {
        self.start < self.buf.len() || self.partial.is_some()
    }

    /// The next whole logical packet as (sequence id of its first fragment, joined payload),
    /// `Ok(None)` if more bytes are needed. Fragments after the first must carry consecutive
    /// ids; whether the first id fits the exchange (0 for a new command) is the caller's
    /// check. The next id after this packet is `seq + fragment_count(payload.len())`.
    pub fn next_packet(&mut self) -> Result<Option<(u8, Vec<u8>)>, ProtocolError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.next_inner();
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    fn next_inner(&mut self) -> Result<Option<(u8, Vec<u8>)>, ProtocolError> {
        loop {
            let avail = &self.buf[self.start..];
            let Some((len, seq)) = frame_header(avail) else {
                return Ok(None);
            };
            self.last_seq = seq;
            let joined = self.partial.as_ref().map_or(0, |p| p.payload.len());
            if joined + len > self.max_packet {
                return Err(ProtocolError::PacketTooLarge);
            }
            if let Some(p) = &self.partial {
                if seq != p.next_seq {
                    return Err(ProtocolError::BadSequence {
                        expected: p.next_seq,
                        got: seq,
                    });
                }
            }
            let Some(body) = avail.get(HEADER_LEN..HEADER_LEN + len) else {
                return Ok(None);
            };
            self.start += HEADER_LEN + len;
            match (self.partial.take(), len == MAX_PAYLOAD) {
                (None, false) => return Ok(Some((seq, payload_of(&mut self.spare, body)))),
                (Some(mut p), false) => {
                    p.payload.extend_from_slice(body);
                    return Ok(Some((p.first_seq, p.payload)));
                }
                (None, true) => {
                    let payload = payload_of(&mut self.spare, body);
                    self.partial = Some(Partial {
                        first_seq: seq,
                        next_seq: seq.wrapping_add(1),
                        payload,
                    });
                }
                (Some(mut p), true) => {
                    p.payload.extend_from_slice(body);
                    p.next_seq = seq.wrapping_add(1);
                    self.partial = Some(p);
                }
            }
        }
    }
}

/// `body` copied into the `spare` buffer if there is one, else into a new one.
fn payload_of(spare: &mut Option<Vec<u8>>, body: &[u8]) -> Vec<u8> {
    match spare.take() {
        Some(mut v) => {
            v.extend_from_slice(body);
            v
        }
        None => body.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lent_buffers_serve_the_next_framer_and_come_back_when_idle() {
        let mut wire = Vec::new();
        let mut seq = 0;
        write_packet(&mut wire, &mut seq, b"SELECT 1");
        let mut pool = FramerBuffers::default();
        let mut a = Framer::new(1024);
        a.borrow_buffers(&mut pool);
        a.push(&wire);
        let (_, payload) = a.next_packet().unwrap().unwrap();
        a.recycle(payload);
        a.return_buffers(&mut pool);
        assert!(pool.input.capacity() >= wire.len() && pool.spare.is_some());
        let input_at = pool.input.as_ptr();
        // A second framer (another connection on the same thread) receives into them.
        let mut b = Framer::new(1024);
        b.borrow_buffers(&mut pool);
        assert_eq!(pool.input.capacity(), 0);
        b.push(&wire);
        assert_eq!(b.buf.as_ptr(), input_at);
        let (_, again) = b.next_packet().unwrap().unwrap();
        assert_eq!(again, b"SELECT 1");
        // Bytes still buffered keep their buffer with the framer.
        b.push(&wire[..3]);
        b.return_buffers(&mut pool);
        assert!(b.has_buffered());
        assert_eq!(b.buf.as_ptr(), input_at);
    }

    #[test]
    fn recycled_buffer_carries_the_next_payload() {
        let mut wire = Vec::new();
        let mut seq = 0;
        write_packet(&mut wire, &mut seq, b"first row");
        write_packet(&mut wire, &mut seq, b"second");
        let mut f = Framer::new(1024);
        f.push(&wire);
        let (_, first) = f.next_packet().unwrap().unwrap();
        let ptr = first.as_ptr();
        f.recycle(first);
        let (seq, second) = f.next_packet().unwrap().unwrap();
        assert_eq!((seq, second.as_slice()), (1, &b"second"[..]));
        assert_eq!(second.as_ptr(), ptr, "the recycled allocation is reused");
    }

    #[test]
    fn small_packets_in_one_byte_chunks() {
        let mut wire = Vec::new();
        let mut seq = 0;
        write_packet(&mut wire, &mut seq, b"hello");
        write_packet(&mut wire, &mut seq, b"");
        assert_eq!(seq, 2);
        let mut f = Framer::new(1024);
        let mut got = Vec::new();
        for b in &wire {
            f.push(std::slice::from_ref(b));
            while let Some(p) = f.next_packet().unwrap() {
                got.push(p);
            }
        }
        assert_eq!(got, vec![(0, b"hello".to_vec()), (1, Vec::new())]);
        assert!(!f.has_buffered());
    }

    #[test]
    fn write_packet_with_patches_header() {
        let mut out = vec![9];
        let mut seq = 255;
        write_packet_with(&mut out, &mut seq, |o| o.extend_from_slice(b"abc"));
        assert_eq!(out, [9, 3, 0, 0, 255, b'a', b'b', b'c']);
        assert_eq!(seq, 0);
    }

    #[test]
    fn oversized_packet_refused_from_header_alone() {
        let mut f = Framer::new(10);
        f.push(&[11, 0, 0, 0]);
        assert_eq!(f.next_packet(), Err(ProtocolError::PacketTooLarge));
        assert_eq!(f.next_packet(), Err(ProtocolError::PacketTooLarge));
    }

    #[test]
    fn refused_header_sequence_is_reported() {
        let mut f = Framer::new(MAX_PAYLOAD + 10);
        f.push(&[0xFF, 0xFF, 0xFF, 0]);
        f.push(&vec![0; MAX_PAYLOAD]);
        f.push(&[20, 0, 0, 1]);
        assert_eq!(f.next_packet(), Err(ProtocolError::PacketTooLarge));
        assert_eq!(f.last_header_seq(), 1);
    }

    #[test]
    fn continuation_sequence_checked() {
        let mut f = Framer::new(usize::MAX);
        f.push(&[0xFF, 0xFF, 0xFF, 3]);
        f.push(&vec![0; MAX_PAYLOAD]);
        f.push(&[0, 0, 0, 5]);
        assert_eq!(
            f.next_packet(),
            Err(ProtocolError::BadSequence {
                expected: 4,
                got: 5
            })
        );
    }

    #[test]
    fn exact_max_payload_gets_empty_trailer() {
        let payload = vec![7u8; MAX_PAYLOAD];
        let mut wire = Vec::new();
        let mut seq = 0;
        write_packet_with(&mut wire, &mut seq, |o| o.extend_from_slice(&payload));
        assert_eq!(seq, 2);
        assert_eq!(wire.len(), MAX_PAYLOAD + 8);
        let mut f = Framer::new(MAX_PAYLOAD);
        f.push(&wire);
        assert_eq!(f.next_packet(), Ok(Some((0, payload))));
    }
}
